"""Iterated local search: kick, descend to a local optimum, accept or go back."""
from __future__ import annotations

from dataclasses import dataclass

from ..backends import evaluator_for
from ..budget import check_deadline
from ..neighbourhoods import Neighbourhood
from ..problem import Problem
from ..validation import check_count
from .base import LocalSearch
from .hill_climbing import STRATEGIES

__all__ = ["IteratedLocalSearch", "ILSParams"]

ACCEPTANCE = ("better", "better-equal", "always")


@dataclass(frozen=True)
class ILSParams:
    """The iterated local search's own options (IteratedLocalSearch's docstring says what each
    does); ``polish`` None and no neighbourhood: the problem's ``default_ils()``. ``strength``
    is checked against the problem's size by the search."""

    rule: str = "best"
    strength: int = 1
    acceptance: object = "better-equal"
    polish: object = None
    patience: int = 1
    candidates: object = None

    def __post_init__(self):
        owner = "IteratedLocalSearch"
        if self.candidates is not None and self.candidates != "alpha":
            object.__setattr__(self, "candidates", check_count(owner, "candidates", self.candidates, 1, 1024))
        if self.rule not in STRATEGIES:
            raise ValueError(f"{owner}: `rule` must be one of {STRATEGIES}, got {self.rule!r}")
        object.__setattr__(self, "strength", check_count(owner, "strength", self.strength, 1))
        if self.acceptance not in ACCEPTANCE and not (isinstance(self.acceptance, float) and self.acceptance >= 0):
            raise ValueError(f"{owner}: `acceptance` must be one of {ACCEPTANCE} or a float >= 0, "
                             f"got {self.acceptance!r}")
        object.__setattr__(self, "patience", check_count(owner, "patience", self.patience, 1))
        polish = self.polish
        polish = () if polish is None else (polish,) if isinstance(polish, Neighbourhood) else tuple(polish)
        for nb in polish:
            if not isinstance(nb, Neighbourhood):
                raise TypeError(f"{owner}: `polish` must be a Neighbourhood or a sequence of them, "
                                f"got {type(nb).__name__}")
        object.__setattr__(self, "polish", None if self.polish is None else polish)


class IteratedLocalSearch(LocalSearch):
    """One iteration = perturb the accepted solution, hill-climb to a local optimum, accept.

    ``rule``: the descents' step: "best", "first" or "random" improvement, or "independent" (tour
    neighbourhoods: every improving move that does not overlap a better one, per descent step).
    ``strength``: size of the kick, 1 .. n: ``strength`` units of ``problem.kick_moves`` (double
    bridges for the TSP, applied on the GPU as moves, the clock looked at between them) or one
    ``problem.perturb`` of that strength (random moves by default). A search that never stops by
    itself: ``run`` needs a budget.
    ``acceptance``: "better" (strictly), "better-equal", "always", or a float r >= 0 to
    accept a worsening up to r times the accepted fitness (e.g. 0.01 for 1 %).
    ``polish``: a second neighbourhood (e.g. ``OrOpt`` beside candidate 2-opt), or a sequence of
    them (e.g. ``[OrOpt, CandidateThreeOpt]``): a descent ends only where none improves
    (variable neighbourhood descent: the main one first, then steps of the first polish
    neighbourhood with the same ``rule``, back to the main one if those improved,
    else on to the next); ``candidate_polish(candidates)`` is that chain for a TSP over
    candidate lists. Each runs on the search's backend where that has move code for it, else
    on the CPU.
    ``patience``: a descent ends after this many steps in a row without an improving neighbour
    (default 1). On a neighbourhood drawn anew each step (crowns) each step is a fresh draw, so a
    larger value looks further before kicking; at equal time, more kicks paid more on the CEC
    Weierstrass function (patience 1: 0.69, 3: 0.84, n = 10, 8 s on the CPU).
    Given neither ``neighbourhood`` nor ``polish``, the search takes the problem's
    ``default_ils()`` (a TSP with coordinates and its default neighbourhood: candidate 2-opt
    polished by Or-opt and candidate 3-opt, the configuration measured best), over lists of
    ``candidates`` per city where given (an int K, or "alpha": the 5 α-nearest; TSP default 10
    quadrant neighbours; Fosin et al.'s GPU 2-opt/3-opt ILS used 40).
    """

    algorithm = "IteratedLocalSearch"
    Params = ILSParams
    iteration_unit = "kicks"
    needs_budget = True
    state_fields = ("home", "_draws")

    def __init__(self, problem, *, params: ILSParams | None = None, neighbourhood=None, backend="auto", seed=None,
                 initial=None, callbacks=None, history: str = "improvements", **options):
        self.params = params = self._params(params, options)
        polish = params.polish
        if params.candidates is not None and (neighbourhood is not None or polish is not None):
            raise ValueError(f"{self.algorithm}: `candidates` sizes the problem's default ILS lists; with your own "
                             "`neighbourhood` or `polish`, build them over the lists you want")
        if neighbourhood is None and polish is None and isinstance(problem, Problem):
            preferred = problem.default_ils() if params.candidates is None else problem.default_ils(params.candidates)
            if params.candidates is not None and not preferred:
                raise ValueError(f"{self.algorithm}: `candidates` applies to a problem whose default ILS runs over "
                                 f"candidate lists (a TSP with coordinates); {problem.name} has none")
            neighbourhood, polish = preferred.get("neighbourhood"), preferred.get("polish")
        super().__init__(problem, neighbourhood=neighbourhood, backend=backend, seed=seed, initial=initial,
                         callbacks=callbacks, history=history)
        self.patience, self._draws = params.patience, 0
        polish = [] if polish is None else [polish] if isinstance(polish, Neighbourhood) else list(polish)
        self.polish = [self.problem.with_neighbourhood(nb) for nb in polish]
        self._polishers = [None] * len(self.polish)
        self._home = None
        self.rule, self.acceptance = params.rule, params.acceptance
        self.strength = check_count("IteratedLocalSearch", "strength", params.strength, 1, self.problem.n)

    def _descend(self) -> None:
        """Apply improving moves until none is left (in the polish neighbourhoods too), or the
        time budget is spent (a descent from a poor start can take many moves: the time limit
        holds inside it too). A neighbourhood seen whole is read at step 0; a drawn one (crowns)
        gets a fresh draw each step and ends after ``patience`` failed draws in a row."""
        failures = 0
        while self._in_time():
            if self._improve(self.rule, self._next_draw())[0]:
                failures = 0
                continue
            failures += 1
            if failures < self.patience:
                continue
            if not any(self._polished(k) for k in range(len(self.polish))):   # stops at the first that improves
                return
            failures = 0

    def _next_draw(self) -> int:
        """The step index of the next descent step: 0 for a neighbourhood seen whole (its moves
        do not depend on it), a running count for a drawn one (a new sample each step)."""
        if self.neighbourhood.static:
            return 0
        self._draws += 1
        return self._draws

    def _polished(self, k: int) -> bool:
        """Descent steps of the k-th polish neighbourhood from the current solution, on its own
        evaluator; True (and the result loaded back) if any improved."""
        if self._polishers[k] is None:
            check_deadline("the polish neighbourhood's set-up")
            self._polishers[k] = evaluator_for(self.backend, self.polish[k])
        main, self.evaluator = self.evaluator, self._polishers[k]
        improved = False
        try:
            self.evaluator.load_from(main)
            while self._in_time() and self._improve(self.rule, 0)[0]:
                improved = True
        finally:
            polisher, self.evaluator = self.evaluator, main
        if improved:
            main.load_from(polisher)
        return improved

    def _start_hook(self):
        self._draws = 0
        self._descend()
        self.home = self.current
        self._set_up_home()
        self._home.load_from(self.evaluator)
        if self.current < self.best:
            self.best, self.best_x = self.current, self._home.x.copy()
        self.history[0] = self.current * self.problem.sense

    def _set_up_home(self) -> None:
        """The accepted solution's place (its host copy is _home.x), kept where the backend keeps
        solutions: going back to it after a rejected kick is then a copy on the GPU, not a host
        recomputation and an upload."""
        if self._home is None:
            check_deadline("the accepted solution's copy was set up")
            self._home = self.backend.evaluator(self.problem, self.neighbourhood)

    def state(self) -> dict:
        state = super().state()
        state["home_x"] = self._home.x.copy()
        return state

    def _restore(self, state: dict) -> None:
        super()._restore(state)
        self._set_up_home()
        self._home.load(state["home_x"])

    def _accepts(self, candidate: float) -> bool:
        if self.acceptance == "better":
            return candidate < self.home
        if self.acceptance == "better-equal":
            return candidate <= self.home
        if self.acceptance == "always":
            return True
        return candidate <= self.home + self.acceptance * abs(self.home)

    def _kick(self) -> None:
        """Kick the accepted solution (the evaluator holds it here). A kick the problem gives as
        moves is applied where the solution lives (on the GPU), one unit (strength 1) at a time
        with the clock looked at between them; else the kicked copy is loaded."""
        for unit in range(self.strength):
            if unit and not self._in_time():
                return
            moves = self.problem.kick_moves(self.evaluator.x, self.rng, 1)
            if moves is None:
                self._load(self.problem.perturb(self._home.x, self.rng, self.strength))
                return
            self.current += self.problem.sense * self.evaluator.apply_moves(moves)

    def _unrecorded(self):
        """The descent's current solution, a polisher's and the accepted one (Ctrl-C or the clock
        may have cut a descent or a polish short)."""
        held = [self._home] + [p for p in self._polishers if p is not None]
        return super()._unrecorded() + [e.x for e in held if e is not None and e.x is not None]

    def _iterate(self):
        self._kick_descend_accept()
        return None

    def _kick_descend_accept(self) -> bool:
        """Kick the accepted solution, descend, and accept the local optimum or go back to the
        accepted one; whether it was accepted."""
        self._kick()
        self._descend()
        if self._accepts(self.current):
            self.home = self.current
            self._home.load_from(self.evaluator)
            return True
        self.evaluator.load_from(self._home)
        self.current = self.home
        return False
