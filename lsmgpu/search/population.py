"""What the population methods share (DESIGN section 7): the set-up checks, the local search
every new solution gets, the run loop, the budgets and the result.

A population search (the ant colonies, the genetic algorithm) makes many solutions an
iteration on its backend and hands them all at once to ``local_search``: a neighbourhood or a
chain descended through lsmgpu.backends.population (one launch for every solution's
neighbourhood on CUDA). Its run follows the searches' contract: ``run(iterations=, seconds=,
target=, stagnation=)``, ``seconds`` counted from the call with the set-up included,
callbacks, Ctrl-C returning the best so far, a SearchResult, reproducible from a seed.

A subclass writes ``_set_up()`` (its parts on the backend, ``self.parts`` to close; the start
solution, ``self.start_x``, is already recorded as the best so far) and ``_iterate()`` (one
iteration, recording its best through ``_record``). Long steps on the host check the run's
deadline (lsmgpu.budget.check_deadline), so a budget ends inside them, not after.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..backends import resolve
from ..backends.population import RULES, auto_chain, population_for
from ..callbacks import State
from ..neighbourhoods import Neighbourhood
from ..problem import Problem, check_problem
from ..result import SearchResult
from ..validation import check_host_memory
from .dontlook import DontLookDescent
from .loop import Search
from .short_tabu import ShortTabuSearch

__all__ = ["PopulationSearch", "check_rule"]

log = logging.getLogger("lsmgpu")


def check_rule(owner: str, rule) -> str:
    """The descents' step rule, "best" or "first" (ValueError naming it otherwise)."""
    if rule not in RULES:
        raise ValueError(f"{owner}: `rule` must be one of {RULES}, got {rule!r}")
    return rule


#: the local searches other than descent chains, by name
IMPROVEMENTS = {"tabu": ShortTabuSearch, "dontlook": DontLookDescent}


class PopulationSearch(Search):
    """The shared part of the population methods.

    local_search : None, "auto", "tabu", "dontlook", a Neighbourhood, a sequence of them, a
        ShortTabuSearch or a DontLookDescent: improves every new solution: descents (a chain:
        variable neighbourhood descent; "auto": the problem's measured ILS chain, TSP: candidate
        2-opt, Or-opt, candidate 3-opt, else its neighbourhood), a short tabu search on each
        ("tabu": ShortTabuSearch(), 4 n iterations) or don't-look-bit 2-opt + Or-opt descents of
        tours ("dontlook": DontLookDescent())
    rule : "best" | "first"       the descents' step rule
    backend, seed, callbacks, history : as for every search
    """

    algorithm = "PopulationSearch"
    needs_budget = True
    #: islands over Ray exchange every this many of its iterations by default (tens of milliseconds
    #: and more each: the classic colonies', the GA's; lsmgpu.parallel.ray_islands)
    island_exchange_every = 10

    def __init__(self, problem: Problem, *, local_search=None, rule: str = "best", backend="auto", seed=None,
                 callbacks=None, history: str = "improvements"):
        check_problem(self.algorithm, problem)
        check_rule(self.algorithm, rule)
        self.problem, self.rule = problem, rule
        if isinstance(local_search, str) and local_search in IMPROVEMENTS:
            local_search = IMPROVEMENTS[local_search]()
        if isinstance(local_search, (ShortTabuSearch, DontLookDescent)):
            self.improvement, self.chain = local_search, []
            checked = local_search.bound(problem)         # a problem it cannot improve fails here
            bound = checked if isinstance(local_search, ShortTabuSearch) else problem
        else:
            self.improvement, self.chain = None, self._chain(local_search)
            bound = problem.with_neighbourhood(self.chain[0]) if self.chain else problem
        self.backend = resolve(backend, bound)
        self._init_run(seed, callbacks, history)
        self._migrant, self.migrants = None, 0         # an offered solution (offer), those taken

    def _chain(self, local_search) -> list[Neighbourhood]:
        if local_search is None:
            return []
        if isinstance(local_search, str):
            if local_search != "auto":
                raise ValueError(f"{self.algorithm}: `local_search` must be None, 'auto', 'tabu', 'dontlook', a "
                                 "Neighbourhood, a sequence of them, a ShortTabuSearch or a DontLookDescent, got "
                                 f"{local_search!r}")
            return auto_chain(self.problem)
        chain = [local_search] if isinstance(local_search, Neighbourhood) else list(local_search)
        if not chain or not all(isinstance(nb, Neighbourhood) for nb in chain):
            raise TypeError(f"{self.algorithm}: `local_search` must be None, 'auto', 'tabu', 'dontlook', a "
                            "Neighbourhood, a non-empty sequence of them, a ShortTabuSearch or a DontLookDescent")
        for nb in chain:
            self.problem.with_neighbourhood(nb)       # binds it: a wrong encoding fails here
        return chain

    #: host bytes a population keeps per item of each of its solutions (the solutions, their
    #: positions and the copies the construction, the descents and the best-so-far keep)
    BYTES_PER_ITEM = 24

    def _check_memory(self, name: str, count: int) -> None:
        """Refuse a population of ``count`` solutions (the parameter ``name``) that would not fit in
        half of the host's memory, before anything is allocated (the GPU's own check comes where
        its arrays are made)."""
        each = self.BYTES_PER_ITEM * self.problem.n
        check_host_memory(self.algorithm, f"`{name}`={count:,} ({self.problem.n:,} items each)", count * each, each)

    # --- what a population method writes ------------------------------------------------------
    def _set_up(self) -> None:
        raise NotImplementedError

    def _iterate(self) -> None:
        raise NotImplementedError

    def _ready(self) -> bool:
        """Whether the search can take a solution from elsewhere now (see ``offer``)."""
        return True

    def _welcome(self, value: float, x: np.ndarray) -> bool:
        """Take an offered solution (``value`` minimised) where the search has a place for it;
        whether it was taken (the best so far is the caller's to record)."""
        raise NotImplementedError(f"{self.algorithm} takes no solutions from elsewhere")

    # --- islands -----------------------------------------------------------------------------
    def offer(self, solution) -> None:
        """A solution from elsewhere (another island: lsmgpu.parallel.ray_islands), taken in after
        the running iteration where the search has a place for it (the best offered so far waits
        until the search is ready for it; ValueError naming a solution that is not one of the
        problem's)."""
        x = self.problem.encoding.validate(np.asarray(solution))
        value = self.problem.sense * float(self.problem.fitness(x))
        if self._migrant is None or value < self._migrant[0]:
            self._migrant = (value, x)

    def _take_migrant(self) -> None:
        """The offered solution into the search (``_welcome``), counted in ``migrants``; the best so
        far where it beats it (which may reach the target)."""
        if not self._ready():
            return
        (value, x), self._migrant = self._migrant, None
        if self._welcome(value, x):
            self.migrants += 1
            if value < self.best and self._record(x, value):
                self.status = self._budget_spent()

    # --- the run -----------------------------------------------------------------------------
    def _start(self) -> None:
        """The start solution, recorded as the best so far before any other set-up, then the
        search's parts (unless the budget is spent already: iterations=0, seconds=0)."""
        self.parts, self.improver, self.improver_rng, self.migrants, self._iteration_took = [], None, None, 0, 0.0
        self.start_x = self._start_solution()
        self._record(self.start_x, self.problem.sense * float(self.problem.fitness(self.start_x)))
        self.status = self._budget_spent()
        if self.status is None:
            self._set_up()

    def step(self) -> bool:
        """One iteration (the class docstring says what that is), unless one as long as the last
        would end past the budget's seconds (status "seconds"); then an offered solution is taken
        in. True once a stop criterion has fired."""
        if self.status is not None or self._no_time_for_another():
            return True
        started = time.perf_counter()
        self._iterate()
        self._iteration_took = time.perf_counter() - started
        if self._migrant is not None and self.status is None:
            self._take_migrant()
        return self.status is not None

    def _release(self) -> None:
        for part in getattr(self, "parts", ()):
            part.close()
        self.parts = []

    def _start_solution(self) -> np.ndarray:
        """The solution the run starts from, recorded as the best so far before any other set-up, so
        that a budget spent during the set-up (candidate lists, pheromone, kernel builds) or Ctrl-C
        returns it: the problem's start solution (a subclass with ``initial`` returns that)."""
        return self.problem.start_solution(self.rng)

    def _no_time_for_another(self) -> bool:
        """Whether an iteration as long as the last would end past the budget's seconds (an
        iteration is not cut: MMAS's n ants on 11,849 cities take seconds); the status is then
        "seconds". Where the part that makes the iterations cuts its work at the deadline itself
        (``cut_at_deadline``: the CPU's focused ants and don't-look chains), the run goes on to the
        deadline instead."""
        seconds = self.budget.seconds
        if seconds is None or getattr(self._iterating_part(), "cut_at_deadline", False) or \
                time.perf_counter() + self._iteration_took <= self.t0 + seconds:
            return False
        self.status = "seconds"
        return True

    def _iterating_part(self):
        """The backend part whose work makes an iteration (focused ACO's ants, the don't-look ILS's
        chains), where one does; None by default."""
        return None

    # --- checkpoints -------------------------------------------------------------------------
    def state(self) -> dict:
        state = super().state()
        state.update(start_x=self.start_x.copy(), migrants=self.migrants, migrant=self._migrant,
                     parts=self._part_states())
        return state

    def _restore(self, state: dict) -> None:
        """The fields first (the parts' set-up may read them: a key), then the parts, then the
        fields again (the set-up may have set them anew: MMAS's bounds) and the generator
        (whatever the set-up drew); a solution offered before the checkpoint and not yet taken
        is taken in then, as the run would have after that iteration."""
        super()._restore(state)
        self.parts, self.improver, self.improver_rng, self._iteration_took = [], None, None, 0.0
        self.start_x = state["start_x"]
        self._restore_parts(state["parts"])
        self._set_fields(state, self.state_fields)
        self.migrants = state["migrants"]
        self.rng.bit_generator.state = state["rng"]
        self._migrant = state.get("migrant")
        if self._migrant is not None:       # offered in the checkpointed iteration's callback: taken after it
            self._take_migrant()

    def _part_states(self) -> dict:
        """The state of the search's parts on the backend (a subclass adds its pheromone or
        population): here the local search's own generator (a short tabu search's tenures)."""
        rng = self.improver_rng
        return {"improver_rng": None if rng is None else rng.bit_generator.state}

    def _restore_parts(self, parts: dict) -> None:
        """Build the search's parts as a run's set-up does, without its start (no first
        population to draw and improve), and give them the checkpoint's state."""
        raise NotImplementedError(f"{self.algorithm} cannot be checkpointed")

    def _restore_improver(self, parts: dict, rows: int) -> None:
        """The local search of ``rows`` solutions, its generator where it has one as checkpointed."""
        self._improver(rows)
        if parts["improver_rng"] is not None:
            self.improver_rng.bit_generator.state = parts["improver_rng"]

    @property
    def local_search(self) -> bool:
        """Whether every new solution is improved."""
        return bool(self.chain) or self.improvement is not None

    def _improver(self, rows: int):
        """The population that improves ``rows`` solutions at once (None without local search)."""
        if self.improvement is not None:
            self.improver_rng = np.random.default_rng(self.rng.integers(2**63))       # the tenures' own stream
            self.improver = self.improvement.population(self.backend, self.problem, rows, self.improver_rng)
        elif self.chain:
            steps = [self.problem.with_neighbourhood(nb) for nb in self.chain]
            self.improver = population_for(self.backend, steps, rows, announce=self.algorithm)
        else:
            return None
        self.parts.append(self.improver)
        return self.improver

    def _improve(self, solutions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The solutions to local optima of the chain (unchanged without one) and their fitness
        (minimised: the problem's sense times its fitness)."""
        if self.improver is None:
            fitness = np.array([self.problem.evaluate(x) for x in solutions], dtype=np.float64)
            self.evaluations += len(solutions)
            return solutions, self.problem.sense * fitness
        self.improver.load(solutions)
        deadline = None if self.budget.seconds is None else self.t0 + self.budget.seconds
        _, evaluated, _ = self.improver.descend(np.ones(len(solutions), bool), self.rule, deadline)
        self.evaluations += int(evaluated.sum())
        return self.improver.solutions(), self.problem.sense * self.improver.values().astype(np.float64)

    def _finish_iteration(self, iteration_best: float, improved: bool) -> None:
        """Count the iteration, tell the callbacks, and stop where the budget says so."""
        sense = self.problem.sense
        if self.keep_every_iteration:
            self.history.append(sense * float(iteration_best))
        state = State(self.iteration, sense * float(iteration_best), sense * float(self.best), None, self.elapsed,
                      self.evaluations)
        if improved:
            self.callbacks.on_best(state)
        if self.callbacks.callbacks and self.callbacks.on_iteration(state):
            self.status = "callback"
        self.status = self.status or self._budget_spent()

    def _record(self, x, value: float) -> bool:
        """Keep ``x`` if it beats the best so far (``value`` minimised); whether it did."""
        self._since_best += 1
        if value >= self.best:
            return False
        self.best, self.best_x, self._since_best = float(value), np.array(x, copy=True), 0
        self.improvements.append((self.iteration, self.elapsed, self.problem.sense * self.best))
        if not self.keep_every_iteration:
            self.history.append(self.problem.sense * self.best)
        return True

    def result(self) -> SearchResult:
        """The SearchResult of the run so far: the best solution, re-evaluated exactly."""
        fitness = self.problem.fitness(self.best_x)          # exact
        return SearchResult(
            solution=self.best_x.copy(), fitness=fitness, iterations=self.iteration, evaluations=self.evaluations,
            seconds=self.elapsed, history=np.asarray(self.history), improvements=list(self.improvements),
            backend=self.backend.name, device=getattr(self, "device", "") or getattr(self.backend, "device", ""),
            status=self.status or "interrupted",
            algorithm=self.algorithm, problem=self.problem.name, work=self.work)
