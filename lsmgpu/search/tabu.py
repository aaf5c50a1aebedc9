"""Tabu search with attribute-based tabu memory and aspiration by objective."""
from __future__ import annotations

import numpy as np

from ..backends.base import Query
from .base import LocalSearch, Stop

__all__ = ["TabuSearch"]


def _check_tenure(tenure):
    if callable(tenure):
        return tenure
    if isinstance(tenure, int) and tenure >= 0:
        return (tenure, tenure)
    if (isinstance(tenure, tuple) and len(tenure) == 2 and all(isinstance(t, int) for t in tenure)
            and 0 <= tenure[0] <= tenure[1]):
        return tenure
    raise ValueError(f"TabuSearch: `tenure` must be an int >= 0, a range (low, high) or a function "
                     f"(fitness, rng) -> int, got {tenure!r}")


class TabuSearch(LocalSearch):
    """Move to the best admissible neighbour every iteration, improving or not.

    Applying a move forbids, for ``tenure`` iterations, the attributes it removed (see
    :mod:`lsmgpu.neighbourhoods`); ``tenure`` may be a range (low, high), drawn anew each
    iteration as in Taillard's robust tabu search, or a function ``(fitness, rng) -> int``
    of the current fitness (TabuCol's reactive tenure). With ``aspiration`` a tabu move is
    admissible when it beats the best fitness so far. The default tenure is the
    problem's ``tabu_tenure()`` (QAP: Taillard's [0.9 n, 1.1 n]).
    """

    algorithm = "TabuSearch"
    uses_tabu = True

    def __init__(self, problem, *, tenure=None, aspiration: bool = True, **options):
        super().__init__(problem, **options)
        self.tenure = _check_tenure(problem.tabu_tenure() if tenure is None else tenure)
        self.aspiration = bool(aspiration)

    def _start_hook(self):
        self._tenures = []

    def _next_tenure(self) -> int:
        """The tenure of this iteration's move, drawn in batches (one generator call per 1,024)."""
        if callable(self.tenure):
            tenure = self.tenure(self.current * self.problem.sense, self.rng)
            if not isinstance(tenure, (int, np.integer)) or tenure < 0:
                raise ValueError(f"TabuSearch: the tenure function returned {tenure!r}, not an int >= 0")
            return int(tenure)
        low, high = self.tenure
        if low == high:
            return low
        if not self._tenures:
            self._tenures = self.rng.integers(low, high + 1, 1024).tolist()[::-1]
        return self._tenures.pop()

    def _iterate(self):
        query = Query(rule="best", step=self.iteration, current=self.current, best=self.best,
                      tabu=True, aspiration=self.aspiration)
        sel, move = self._move(query, tabu_until=self.iteration + 1 + self._next_tenure())
        if not sel.found:
            raise Stop("no_admissible_move")
        return move
