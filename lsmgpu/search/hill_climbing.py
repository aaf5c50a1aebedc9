"""Hill climbing: best or first improvement, with random restarts."""
from __future__ import annotations

from ..validation import check_count
from .base import LocalSearch, Stop

__all__ = ["HillClimbing", "STRATEGIES"]

#: how a descent picks its moves
STRATEGIES = ("best", "first", "independent")


class HillClimbing(LocalSearch):
    """Move to an improving neighbour until none is left.

    ``strategy="best"`` takes the best neighbour (ties: lowest index), ``"first"`` the
    improving neighbour of lowest index (it evaluates less), ``"independent"`` (tour
    neighbourhoods) every improving move that does not overlap a better one, in one
    iteration. A solution counts as a local optimum after ``patience`` consecutive iterations without an improving neighbour: by
    default 1 for a neighbourhood seen whole, 10 for one drawn anew each iteration (crowns),
    where another draw may still improve. At a local optimum the search restarts from a fresh
    random solution while ``restarts`` remain, else it stops with status ``"local_optimum"``.
    ``local_optima`` counts the optima reached.
    """

    algorithm = "HillClimbing"
    iteration_unit = "descent steps"
    state_fields = ("local_optima", "_failures")

    def __init__(self, problem, *, strategy: str = "best", restarts: int = 0, patience: int | None = None,
                 neighbourhood=None, backend="auto", seed=None, initial=None, callbacks=None,
                 history: str = "improvements"):
        super().__init__(problem, neighbourhood=neighbourhood, backend=backend, seed=seed, initial=initial,
                         callbacks=callbacks, history=history)
        if strategy not in STRATEGIES:
            raise ValueError(f"HillClimbing: `strategy` must be one of {STRATEGIES}, got {strategy!r}")
        restarts = check_count("HillClimbing", "restarts", restarts, 0)
        if patience is None:
            patience = 1 if self.neighbourhood.static else 10
        patience = check_count("HillClimbing", "patience", patience, 1)
        self.strategy, self.restarts, self.patience = strategy, restarts, patience

    def _start_hook(self):
        self.local_optima = 0
        self._failures = 0

    def _iterate(self):
        """One improving step (several moves with "independent"; the State then has no move)."""
        improved, move = self._improve(self.strategy, self.iteration)
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
        self._load(self.problem.initial_solution(self.rng))
        return None
