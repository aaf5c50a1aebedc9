"""Tabu search with attribute-based tabu memory and aspiration by objective."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends.base import MAX_TENURE, TENURE_BLOCK, Query
from ..validation import check_count, check_flag
from .base import LocalSearch, Stop

__all__ = ["TabuSearch", "TabuParams", "check_tenure"]


def check_tenure(tenure, owner: str = "TabuSearch", functions: bool = True):
    """A tenure: an int, an inclusive range (low, high) or, where ``functions``, a function
    (fitness, rng) -> int; returned as the range or the function."""
    if callable(tenure) and functions:
        return tenure
    if isinstance(tenure, tuple) and len(tenure) == 2:
        low, high = (check_count(owner, "tenure", t, 0, MAX_TENURE) for t in tenure)
        if low > high:
            raise ValueError(f"{owner}: `tenure` range (low, high) needs low <= high, got {tenure!r}")
        return (low, high)
    if isinstance(tenure, (list, str, float, bool, np.bool_)) or tenure is None or callable(tenure):
        kinds = "an int >= 0, a range (low, high)" + (" or a function (fitness, rng) -> int" if functions else "")
        raise TypeError(f"{owner}: `tenure` must be {kinds}, got {tenure!r}")
    value = check_count(owner, "tenure", tenure, 0, MAX_TENURE)
    return (value, value)


def _check_forced_after(value) -> int:
    if value is None or value is False:
        return 0
    return check_count("TabuSearch", "forced_after", value, 0, MAX_TENURE)


@dataclass(frozen=True)
class TabuParams:
    """Tabu search's own options (TabuSearch's docstring says what each does); None: the
    problem's default (``tabu_tenure()``, ``tabu_forced_after()``). Checked here, at construction."""

    tenure: object = None
    aspiration: bool = True
    forced_after: int | None = None

    def __post_init__(self):
        if self.tenure is not None:
            object.__setattr__(self, "tenure", check_tenure(self.tenure))
        object.__setattr__(self, "aspiration", check_flag("TabuSearch", "aspiration", self.aspiration))
        if self.forced_after is not None:
            object.__setattr__(self, "forced_after", _check_forced_after(self.forced_after))


class TabuSearch(LocalSearch):
    """Move to the best admissible neighbour every iteration, improving or not.

    Applying a move forbids, for ``tenure`` iterations, the attributes it removed (see
    :mod:`lsmgpu.neighbourhoods`); ``tenure`` may be a range (low, high), drawn anew each
    iteration as in Taillard's robust tabu search, or a function ``(fitness, rng) -> int``
    of the current fitness (TabuCol's reactive tenure). With ``aspiration`` a tabu move is
    admissible when it beats the best fitness so far. The default tenure is the
    problem's ``tabu_tenure()`` (QAP: Taillard's [0.9 n, 1.1 n]).

    ``forced_after = t`` turns on Taillard's long-term diversification: a move that adds an
    attribute not forbidden for t iterations (a facility back on a location it has not held
    for that long) is taken before every other move, as is one that beats the best fitness
    (lsmgpu.backends.base). Default: the problem's ``tabu_forced_after()`` (QAP: 2 n^2, as
    in Taillard's robust tabu search; others: off).
    """

    algorithm = "TabuSearch"
    Params = TabuParams
    iteration_unit = "moves"
    uses_tabu = True
    needs_budget = True
    state_fields = ("_tenures",)

    def __init__(self, problem, *, params: TabuParams | None = None, neighbourhood=None, backend="auto", seed=None,
                 initial=None, callbacks=None, history: str = "improvements", **options):
        self.params = params = self._params(params, options)
        super().__init__(problem, neighbourhood=neighbourhood, backend=backend, seed=seed, initial=initial,
                         callbacks=callbacks, history=history)
        if self.neighbourhood.tabu_shape() is None:
            raise TypeError(f"TabuSearch: {self.neighbourhood!r} defines no tabu attributes; "
                            "use HillClimbing or IteratedLocalSearch")
        self.tenure = check_tenure(problem.tabu_tenure()) if params.tenure is None else params.tenure
        self.aspiration = params.aspiration
        self.forced_after = (_check_forced_after(problem.tabu_forced_after()) if params.forced_after is None
                             else params.forced_after)

    def _start_hook(self):
        self._tenures = []

    def _next_tenure(self) -> int:
        """The tenure of this iteration's move, drawn in batches (one generator call per 1,024)."""
        if callable(self.tenure):
            tenure = self.tenure(self.current * self.problem.sense, self.rng)
            return check_count("TabuSearch", "tenure function's value", tenure, 0, MAX_TENURE)
        low, high = self.tenure
        if low == high:
            return low
        if not self._tenures:
            self._tenures = self.rng.integers(low, high + 1, TENURE_BLOCK).tolist()[::-1]
        return self._tenures.pop()

    def _iterate(self):
        query = Query(rule="best", step=self.iteration, current=self.current, best=self.best,
                      tabu=True, aspiration=self.aspiration, forced_after=self.forced_after)
        sel, move = self._move(query, tabu_until=self.iteration + 1 + self._next_tenure())
        if not sel.found:
            raise Stop("no_admissible_move")
        return move
