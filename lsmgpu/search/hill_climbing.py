"""Hill climbing: best or first improvement, with random restarts."""
from __future__ import annotations

from dataclasses import dataclass

from ..validation import check_count
from .base import LocalSearch, Stop

__all__ = ["HillClimbing", "HillClimbingParams", "STRATEGIES"]

#: how a descent picks its moves
STRATEGIES = ("best", "first", "random", "independent")


@dataclass(frozen=True)
class HillClimbingParams:
    """Hill climbing's own options (HillClimbing's docstring says what each does); ``patience``
    None: 1 for a neighbourhood seen whole, 10 for one drawn anew each iteration."""

    rule: str = "best"
    restarts: int = 0
    patience: int | None = None

    def __post_init__(self):
        if self.rule not in STRATEGIES:
            raise ValueError(f"HillClimbing: `rule` must be one of {STRATEGIES}, got {self.rule!r}")
        object.__setattr__(self, "restarts", check_count("HillClimbing", "restarts", self.restarts, 0))
        if self.patience is not None:
            object.__setattr__(self, "patience", check_count("HillClimbing", "patience", self.patience, 1))


class HillClimbing(LocalSearch):
    """Move to an improving neighbour until none is left.

    ``rule="best"`` takes the best neighbour (ties: lowest index), ``"first"`` the
    improving neighbour of lowest index (it evaluates less), ``"random"`` an improving neighbour
    drawn uniformly (Luong et al.'s third selection; its deltas read back to the host),
    ``"independent"`` (tour neighbourhoods) every improving move that does not overlap a better
    one, in one iteration. A solution counts as a local optimum after ``patience`` consecutive
    iterations without an improving neighbour: by default 1 for a neighbourhood seen whole, 10
    for one drawn anew each iteration (crowns), where another draw may still improve. At a local
    optimum the search restarts from a fresh random solution while ``restarts`` remain, else it
    stops with status ``"local_optimum"``. ``local_optima`` counts the optima reached.
    """

    algorithm = "HillClimbing"
    Params = HillClimbingParams
    iteration_unit = "descent steps"
    state_fields = ("local_optima", "_failures")

    def __init__(self, problem, *, params: HillClimbingParams | None = None, neighbourhood=None, backend="auto",
                 seed=None, initial=None, callbacks=None, history: str = "improvements", **options):
        self.params = params = self._params(params, options)
        super().__init__(problem, neighbourhood=neighbourhood, backend=backend, seed=seed, initial=initial,
                         callbacks=callbacks, history=history)
        self.rule, self.restarts = params.rule, params.restarts
        self.patience = (1 if self.neighbourhood.static else 10) if params.patience is None else params.patience

    def _start_hook(self):
        self.local_optima = 0
        self._failures = 0

    def _iterate(self):
        """One improving step (several moves with "independent"; the State then has no move)."""
        improved, move = self._improve(self.rule, self.iteration)
        if improved:
            self._failures = 0
            return move
        self._failures += 1
        if self._failures < self.patience:
            return None
        self._failures = 0
        self.local_optima += 1
        if self.local_optima > self.restarts:
            raise Stop("local_optimum")
        self._load(self.problem.start_solution(self.rng))
        return None
