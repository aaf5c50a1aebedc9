"""Iterated local search: kick, descend to a local optimum, accept or go back."""
from __future__ import annotations

from .base import LocalSearch
from .hill_climbing import STRATEGIES

__all__ = ["IteratedLocalSearch"]

ACCEPTANCE = ("better", "better-equal", "always")


class IteratedLocalSearch(LocalSearch):
    """One iteration = perturb the accepted solution, hill-climb to a local optimum, accept.

    ``local_search``: "best" or "first" improvement, or "independent" (tour neighbourhoods:
    every improving move that does not overlap a better one, per descent step).
    ``strength``: size of the kick given to ``problem.perturb`` (random moves by default;
    double bridge for the TSP).
    ``acceptance``: "better" (strictly), "better-equal", "always", or a float r >= 0 to
    accept a worsening up to r times the accepted fitness (e.g. 0.01 for 1 %).
    """

    algorithm = "IteratedLocalSearch"

    def __init__(self, problem, *, local_search: str = "best", strength: int = 1,
                 acceptance="better-equal", **options):
        super().__init__(problem, **options)
        if local_search not in STRATEGIES:
            raise ValueError(f"IteratedLocalSearch: `local_search` must be one of {STRATEGIES}, got {local_search!r}")
        if not isinstance(strength, int) or strength < 1:
            raise ValueError(f"IteratedLocalSearch: `strength` must be an integer >= 1, got {strength!r}")
        if acceptance not in ACCEPTANCE and not (isinstance(acceptance, float) and acceptance >= 0):
            raise ValueError(f"IteratedLocalSearch: `acceptance` must be one of {ACCEPTANCE} or a float >= 0, "
                             f"got {acceptance!r}")
        self.local_search, self.strength, self.acceptance = local_search, strength, acceptance

    def _descend(self) -> None:
        """Apply improving moves until none is left, or the time budget is spent (a descent
        from a poor start can take many moves: the time limit holds inside it too)."""
        limit = self.budget["seconds"]
        while limit is None or self.elapsed < limit:
            if not self._improve(self.local_search, 0)[0]:   # step 0, as the descents always used
                return

    def _start_hook(self):
        self._descend()
        self.home_x, self.home = self.evaluator.x.copy(), self.current
        if self.current < self.best:
            self.best, self.best_x = self.current, self.home_x.copy()
        self.history[0] = self.current * self.problem.sense

    def _accepts(self, candidate: float) -> bool:
        if self.acceptance == "better":
            return candidate < self.home
        if self.acceptance == "better-equal":
            return candidate <= self.home
        if self.acceptance == "always":
            return True
        return candidate <= self.home + self.acceptance * abs(self.home)

    def _iterate(self):
        self._load(self.problem.perturb(self.home_x, self.rng, self.strength))
        self._descend()
        if self._accepts(self.current):
            self.home_x, self.home = self.evaluator.x.copy(), self.current
        else:
            self._load(self.home_x)
        return None
