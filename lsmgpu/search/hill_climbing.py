"""Hill climbing: best or first improvement, with random restarts."""
from __future__ import annotations

from ..backends.base import Query
from .base import LocalSearch, Stop

__all__ = ["HillClimbing"]


class HillClimbing(LocalSearch):
    """Move to an improving neighbour until none is left.

    ``strategy="best"`` takes the best neighbour (ties: lowest index), ``"first"`` the
    improving neighbour of lowest index (it evaluates less). At a local optimum the search
    restarts from a fresh random solution while ``restarts`` remain, else it stops with
    status ``"local_optimum"``. ``local_optima`` counts the optima reached.
    """

    algorithm = "HillClimbing"

    def __init__(self, problem, *, strategy: str = "best", restarts: int = 0, **options):
        super().__init__(problem, **options)
        if strategy not in ("best", "first"):
            raise ValueError(f"HillClimbing: `strategy` must be 'best' or 'first', got {strategy!r}")
        if not isinstance(restarts, int) or restarts < 0:
            raise ValueError(f"HillClimbing: `restarts` must be an integer >= 0, got {restarts!r}")
        self.strategy, self.restarts = strategy, restarts

    def _start_hook(self):
        self.local_optima = 0

    def _iterate(self):
        _, move = self._move(Query(rule=self.strategy, step=self.iteration, current=self.current),
                             improving_only=True)
        if move is not None:
            return move
        self.local_optima += 1
        if self.local_optima > self.restarts:
            raise Stop("local_optimum")
        self._load(self.problem.initial_solution(self.rng))
        return None
