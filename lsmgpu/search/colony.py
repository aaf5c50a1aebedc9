"""Ant colonies: Ant Colony System and MAX-MIN Ant System, each ant's solution improved by the
batched local search (the population level, DESIGN section 7).

An iteration: B ants build solutions from the pheromone model (lsmgpu.backends.colony: on the
GPU one block an ant or one warp an ant beside the candidate lists in the block's shared memory,
or the NumPy reference), ``local_search`` descends all B to local optima at once
(lsmgpu.backends.population: one launch for every ant's neighbourhood on CUDA), and the
pheromone is updated on the backend (ACS: the best-so-far tour; MMAS: evaporation, one ant's
deposit, the bounds). The run's contract is the searches': ``run(iterations=, seconds=,
target=, stagnation=)`` (iterations are colony iterations), callbacks, Ctrl-C returns the best
so far, a SearchResult; seeds make runs reproducible.

The pheromone deposit is 1 / fitness: a colony minimises a positive fitness.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np

from ..backends.colony import Construction, colony_for
from ..budget import check_deadline
from ..encodings import Permutation
from ..problem import Problem, check_problem
from .population import PopulationSearch, check_rule
from .dontlook import ALPHA_CANDIDATES

__all__ = ["AntColony", "AntColonySystem", "MaxMinAntSystem", "ACSParams", "MMASParams"]

log = logging.getLogger("lsmgpu")


@dataclass(frozen=True)
class ColonyParams:
    """What both colonies' options share (AntColony's docstring says what each does)."""

    owner = "AntColony"
    ants: int | None = None
    beta: float = 2.0
    candidates: int | None = 32
    selection: str = "wrs"
    tabu: str = "ct"
    warps: int | None = None
    local_search: object = None
    rule: str = "best"

    def __post_init__(self):
        owner, candidates, ants = self.owner, self.candidates, self.ants
        if isinstance(candidates, str):
            if candidates != "alpha":
                raise ValueError(f"{owner}: `candidates` must be None, an integer in [1, 32], 'alpha' or an "
                                 f"(n, k <= 32) table, got {candidates!r}")
        elif isinstance(candidates, (int, np.integer)) and not isinstance(candidates, bool):
            if not 1 <= candidates <= 32:
                raise ValueError(f"{owner}: `candidates` must be None, an integer in [1, 32] or an (n, k <= 32) "
                                 f"table, got {candidates!r}")
        elif candidates is not None:
            table = np.asarray(candidates)
            if table.ndim != 2 or table.dtype.kind not in "iu" or not 1 <= table.shape[1] <= 32:
                raise ValueError(f"{owner}: `candidates` must be None, an integer in [1, 32] or an (n, k <= 32) "
                                 f"integer table, got shape {table.shape}")
        if ants is not None and (not isinstance(ants, (int, np.integer)) or ants < 1):
            raise ValueError(f"{owner}: `ants` must be an integer >= 1, got {ants!r}")
        check_rule(owner, self.rule)


@dataclass(frozen=True)
class ACSParams(ColonyParams):
    """Ant Colony System's options (AntColonySystem's docstring); ``q0`` None: (n - 20) / n."""

    owner = "AntColonySystem"
    beta: float = 3.0
    q0: float | None = None
    rho: float = 0.2
    xi: float = 0.01
    period: int = 1
    local_update: str = "atomic"
    memory: str = "matrix"
    slots: int = 8
    local_insert: bool = False

    def __post_init__(self):
        super().__post_init__()
        if not 0 < self.rho <= 1:
            raise ValueError(f"{self.owner}: `rho` must be in (0, 1], got {self.rho}")


@dataclass(frozen=True)
class MMASParams(ColonyParams):
    """MAX-MIN Ant System's options (MaxMinAntSystem's docstring)."""

    owner = "MaxMinAntSystem"
    rho: float = 0.5
    alpha: float = 1.0
    p_best: float = 0.01

    def __post_init__(self):
        super().__post_init__()
        if not 0 < self.rho <= 1:
            raise ValueError(f"{self.owner}: `rho` must be in (0, 1], got {self.rho}")
        if not 0 < self.p_best < 1:
            raise ValueError(f"{self.owner}: `p_best` must be in (0, 1), got {self.p_best}")


class AntColony(PopulationSearch):
    """What both colonies share: the construction settings, the iteration, the update's place.

    Parameters (both colonies)
    --------------------------
    ants : int, optional          ants an iteration (default: the colony's)
    beta : float                  weight of the heuristic information
    candidates : int | array | None  candidate list length (<= 32) where the problem has near
                                  items, or the lists themselves ((n, k <= 32) items), or "alpha"
                                  (a TSP's 5 α-nearest, their ascent within the run); None: every item
    selection : "wrs" | "roulette"  node selection (weighted reservoir sampling or roulette wheel)
    tabu : "ct" | "lc" | "bt"     the GPU's visited set (compact tabu, list compression, bitmask)
    warps : int | None            warps per ant on the GPU (None: by size)
    initial : array, optional     the start solution (else the problem's): the best so far from
                                  the start, and the reference of the pheromone's first values
    local_search, rule, backend, seed, callbacks, history : as for every population method
        (lsmgpu.search.population)
    """

    algorithm = "AntColony"
    iteration_unit = "colony iterations"
    state_fields = ("seed",)

    def __init__(self, problem: Problem, *, params: ColonyParams | None = None, backend="auto", seed=None,
                 initial=None, callbacks=None, history: str = "improvements", **options):
        check_problem(self.algorithm, problem)
        self.params = params = self._params(params, options)
        if problem.maximize:
            raise ValueError(f"{self.algorithm}: the ants deposit 1 / fitness, so a colony minimises; "
                             f"{problem.name} maximises")
        if not isinstance(problem.encoding, Permutation):
            raise TypeError(f"{self.algorithm}: ant colonies build permutations; {problem.name}'s encoding is "
                            f"{problem.encoding!r}")
        self.candidates, self.model = params.candidates, None      # the model (n x n tables) is built inside run()
        self.initial = None if initial is None else problem.encoding.validate(initial)
        self.ants = int(self.default_ants(problem, params.local_search) if params.ants is None else params.ants)
        self.beta = float(params.beta)
        self.selection, self.tabu, self.warps = params.selection, params.tabu, params.warps
        super().__init__(problem, local_search=params.local_search, rule=params.rule, backend=backend, seed=seed,
                         callbacks=callbacks, history=history)
        self._check_memory("ants", self.ants)

    @property
    def kind(self) -> str:
        """The colony model's kind; "successor" until run() has built the model (the settings'
        checks in the constructor do not depend on it)."""
        return "successor" if self.model is None else self.model.kind

    # --- what a colony decides ---------------------------------------------------------------
    def default_ants(self, problem: Problem, local_search) -> int:
        raise NotImplementedError

    def construction(self, tau0: float) -> Construction:
        """The ants' construction settings, pheromone starting at ``tau0``."""
        raise NotImplementedError

    def _start_pheromone(self, reference: float) -> float:
        """The initial tau from a reference solution's fitness."""
        raise NotImplementedError

    def _update(self, solutions: np.ndarray, fitness: np.ndarray) -> None:
        """The pheromone update after an iteration (solutions improved, fitness > 0)."""
        raise NotImplementedError

    # --- the iteration -----------------------------------------------------------------------
    def _set_up(self) -> None:
        self._build(float(self.best))
        self._improver(self.ants)
        self.seed = int(self.rng.integers(2**63))        # the counter-based draws' key

    def _build(self, reference: float) -> None:
        """The colony model and the pheromone, tau0 from the ``reference`` solution's fitness."""
        problem = self.problem
        if not reference > 0:
            raise ValueError(f"{self.algorithm}: a solution of {problem.name} has fitness {reference:g}; the "
                             "ants deposit 1 / fitness and need fitness > 0")
        check_deadline("the colony's heuristic information")
        table = problem.candidate_lists(ALPHA_CANDIDATES, "alpha") if isinstance(self.candidates, str) \
            else self.candidates
        given = table is not None and not isinstance(table, (int, np.integer))
        self.model = problem.colony_model(None if given else table)
        if given and self.model is not None:
            if len(table) != problem.n:
                raise ValueError(f"{self.algorithm}: `candidates` must have {problem.n} rows, got {len(table)}")
            self.model = dataclasses.replace(self.model, candidates=np.asarray(table))
        if self.model is None:
            raise TypeError(f"{self.algorithm}: {problem.name} has no colony model (give the problem a "
                            "colony_model to build its solutions)")
        if self.model.heuristic is not None and self.model.heuristic.shape != (problem.n, problem.n):
            raise ValueError(f"{self.algorithm}: {problem.name}'s heuristic must have shape ({problem.n}, {problem.n})")
        check_deadline("the colony's pheromone")
        tau0 = self._start_pheromone(reference)
        self.colony = colony_for(self.backend, self.model, self.construction(tau0), problem.n, self.ants,
                                 announce=self.algorithm)
        self.parts.append(self.colony)
        self.device = getattr(self.colony, "device", "")

    def _start_solution(self) -> np.ndarray:
        return super()._start_solution() if self.initial is None else self.initial.copy()

    def _part_states(self) -> dict:
        return {**super()._part_states(), "pheromone": self.colony.memory()}

    def _restore_parts(self, parts: dict) -> None:
        """The model and the colony as the start builds them (its reference: the start solution),
        then the checkpoint's pheromone and local search."""
        self._build(self.problem.sense * float(self.problem.fitness(self.start_x)))
        self.colony.load_memory(parts["pheromone"])
        self._restore_improver(parts, self.ants)

    def _firsts(self) -> np.ndarray:
        """Where each ant starts: a random item (tours), a random order of the rows (assignments)."""
        n = self.problem.n
        if self.model.kind == "successor":
            return self.rng.integers(0, n, self.ants)
        return np.argsort(self.rng.random((self.ants, n)), axis=1)

    def _iterate(self) -> None:
        solutions = self.colony.construct(self.seed, self.iteration, self._firsts())
        self.evaluations += self.ants * self.problem.n
        solutions, fitness = self._improve(solutions)
        self.iteration += 1
        best = int(np.argmin(fitness))
        improved = self._record(solutions[best], fitness[best])
        if not np.all(fitness > 0):
            raise ValueError(f"{self.algorithm}: an ant's solution of {self.problem.name} has fitness "
                             f"{fitness.min():g}; the ants deposit 1 / fitness and need fitness > 0")
        self._update(solutions, fitness)
        self._finish_iteration(fitness[best], improved)

    @property
    def work(self) -> tuple[int, str]:
        return self.ants * self.iteration, "ant tours"

    def _welcome(self, value, x) -> bool:
        """A solution from elsewhere is taken as the best so far where it is better (the updates
        that follow deposit on it)."""
        return value < self.best

    def __repr__(self):
        return f"{self.algorithm}({self.problem!r}, ants={self.ants}, backend={self.backend.name})"


class AntColonySystem(AntColony):
    """Ant Colony System (Dorigo & Gambardella 1997) as parallelised by Skinderowicz 2016.

    ``q0``: probability of the greedy choice (default (n - 20) / n, the paper's); ``rho``: the
    global update's rate on the best-so-far tour (tau <- (1 - rho) tau + rho / L_best); ``xi``: the
    local update's rate towards tau0 = 1 / (n L_ref), applied every ``period``-th edge an ant
    takes; ``local_update``: "atomic" (no update lost, the ants unsynchronised), "step" (ACS-GPU as
    the paper builds it: a launch a construction step, the ants synchronised per step; the GPU's
    ants equal the host's), "alt" (ACS-GPU-Alt: no atomics, lost updates accepted) or "none";
    ``memory``: "matrix" or "spm" (the selective pheromone memory, ``slots`` pairs a row;
    ``local_insert``: its local updates store pairs they do not find, as the paper's Fig. 5 does,
    instead of leaving them at tau_min). Defaults: the paper's (beta 3, rho 0.2, xi 0.01, cl 32),
    but for ``local_insert`` (off).
    On the GPU the ants of "atomic" and "alt" run unsynchronised, so a run depends on their timing
    and is not bit-reproducible from its seed ("step"'s and MMAS's are).
    """

    algorithm = "AntColonySystem"
    Params = ACSParams

    def __init__(self, problem: Problem, **options):
        check_problem(self.algorithm, problem)
        super().__init__(problem, **options)
        p = self.params
        self.q0 = max(0.0, (problem.n - 20) / problem.n) if p.q0 is None else p.q0
        self.rho, self.xi, self.period, self.local_update = float(p.rho), float(p.xi), p.period, p.local_update
        self.memory, self.slots, self.local_insert = p.memory, p.slots, p.local_insert
        self.construction(1.0)            # every option checked now, not at run()

    def default_ants(self, problem, local_search) -> int:
        return min(problem.n, 256) if local_search is None else min(problem.n, 64)

    def construction(self, tau0: float) -> Construction:
        return Construction(self.kind, self.selection, self.tabu, self.q0, 1.0, self.beta, self.local_update,
                            self.xi, tau0, self.period, self.memory, self.slots, self.warps, self.local_insert)

    def _start_pheromone(self, reference: float) -> float:
        return 1.0 / (self.problem.n * reference)

    def _update(self, solutions, fitness) -> None:
        self.colony.deposit(self.best_x, 1.0 - self.rho, self.rho / self.best)


class MaxMinAntSystem(AntColony):
    """MAX-MIN Ant System (Stuetzle & Hoos 2000) as parallelised by Skinderowicz 2020.

    Every iteration the pheromone evaporates (``rho``), one ant deposits 1 / L (the iteration's
    best, or the best since the last restart on ACOTSP's schedule), and tau is kept within
    [tau_min, tau_max]: tau_max = 1 / (rho L_best), tau_min from ``p_best`` (the probability of
    building the best tour again at convergence). Every 100 iterations the lambda-branching
    factor (lambda 0.05) is measured; below 1.00001, with 250 iterations since the restart's best
    improved, the pheromone is reset to tau_max (a restart). ``alpha``: the pheromone's exponent.
    Defaults: the paper's (rho 0.5, beta 2, p_best 0.01; ants = n without local search). With
    local search, 16 ants up to 1,500 items and 64 beyond: measured best of 16 / 64 / 256 ants and
    rho 0.2 / 0.5 at the paper's time on pr1002 and pr2392 (benchmarks/probes/colony_ants.py).
    """

    algorithm = "MaxMinAntSystem"
    Params = MMASParams
    state_fields = ("seed", "tau_min", "tau_max", "restart_x", "restart_best", "restart_iteration")
    RESTART_EVERY, RESTART_AFTER, LAMBDA, BRANCHING = 100, 250, 0.05, 1.00001

    def __init__(self, problem: Problem, **options):
        super().__init__(problem, **options)
        self.rho, self.alpha, self.p_best = float(self.params.rho), float(self.params.alpha), float(self.params.p_best)
        self.construction(1.0)            # every option checked now, not at run()

    def default_ants(self, problem, local_search) -> int:
        if local_search is None:
            return problem.n
        return min(problem.n, 16 if problem.n <= 1500 else 64)

    def construction(self, tau0: float) -> Construction:
        return Construction(self.kind, self.selection, self.tabu, 0.0, self.alpha, self.beta, "none",
                            0.0, tau0, 1, "matrix", 8, self.warps)

    def _bounds(self, best: float) -> tuple[float, float]:
        n = self.problem.n
        choices = self.model.candidates.shape[1] if self.model.candidates is not None else n
        high = 1.0 / (self.rho * best)
        root = self.p_best ** (1.0 / n)
        low = high * (1.0 - root) / (max(1.0, (choices + 1) / 2 - 1) * root)
        return min(low, high), high

    def _start_pheromone(self, reference: float) -> float:
        self.tau_min, self.tau_max = self._bounds(reference)
        self.restart_x, self.restart_best, self.restart_iteration = None, np.inf, 0
        return self.tau_max

    def _update(self, solutions, fitness) -> None:
        best = int(np.argmin(fitness))
        if fitness[best] < self.restart_best:
            self.restart_x, self.restart_best = solutions[best].copy(), float(fitness[best])
            self.restart_iteration = self.iteration
        self.tau_min, self.tau_max = self._bounds(self.best)
        since = self.iteration - self.restart_iteration
        every = (25 if not self.local_search or since < 25 else 5 if since < 75 else 3 if since < 125
                 else 2 if since < 250 else 1)
        x, length = ((self.restart_x, self.restart_best) if self.iteration % every == 0
                     else (solutions[best], float(fitness[best])))
        self.colony.evaporate(1.0 - self.rho)
        self.colony.deposit(x, 1.0, 1.0 / length)
        self.colony.clamp(self.tau_min, self.tau_max)
        if self.iteration % self.RESTART_EVERY == 0 and self.iteration - self.restart_iteration > self.RESTART_AFTER \
                and self.branching() < self.BRANCHING:
            log.info("%s: restart at iteration %d (branching factor below %g)", self.algorithm, self.iteration,
                     self.BRANCHING)
            self.colony.fill(self.tau_max)
            self.restart_x, self.restart_best, self.restart_iteration = None, np.inf, self.iteration

    def _welcome(self, value, x) -> bool:
        """As every colony's, and the best since the restart where it beats it (the deposits on
        ACOTSP's schedule then use it)."""
        if value < self.restart_best:
            self.restart_x, self.restart_best, self.restart_iteration = x.copy(), float(value), self.iteration
        return super()._welcome(value, x)

    def branching(self) -> float:
        """The mean lambda-branching factor: per row, the items (of its candidate list, else all)
        whose tau exceeds tau_min + lambda (tau_max - tau_min); halved for a symmetric tour model."""
        n = self.problem.n
        rows = np.arange(n)
        items = self.model.candidates if self.model.candidates is not None else np.tile(rows, (n, 1))
        tau = self.colony.values(rows[:, None], items)
        low, high = tau.min(axis=1, keepdims=True), tau.max(axis=1, keepdims=True)
        count = (tau > low + self.LAMBDA * (high - low)).sum(axis=1).mean()
        return float(count / 2 if self.model.kind == "successor" else count)
