"""The genetic algorithm of Kang et al. (2016) for permutations, memetic with the batched local
search (the population level, DESIGN section 7).

A generation (lsmgpu.backends.genetic: on the GPU a thread or a warp a child, or the NumPy
reference): in every group fixed rivals compete, fixed partners make children by a
constructive crossover (BCSCX, ARX, both, or the one-direction SCX they improve on, for tours with
an edge distance) or by order crossover (any permutation problem), a random 2-opt move mutates
some; ``local_search`` descends all the children at once to local optima. Every
``exchange_every`` generations each group's best gene replaces the worst of a random other group.
Iterations are generations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends.genetic import CONSTRUCTIVE, CROSSOVERS, Breeding, genetic_for, migration
from ..budget import check_deadline
from ..encodings import Permutation
from ..problem import Problem, check_problem
from ..backends.population import population_for
from .dontlook import DontLookDescent
from .population import PopulationSearch, check_rule

__all__ = ["GeneticAlgorithm", "GAParams"]

INITIAL = ("random", "problem", "2opt")


@dataclass(frozen=True)
class GAParams:
    """The genetic algorithm's own options (GeneticAlgorithm's docstring says what each does);
    ``genes`` None: 2,048, or 128 with a local search. The population's shape is checked by
    lsmgpu.backends.genetic.Breeding when the search is built."""

    genes: int | None = None
    groups: int = 1
    crossover: str = "auto"
    mutation: float = 0.1
    exchange_every: int = 10
    lanes: int | None = None
    local_search: object = None
    rule: str = "best"

    def __post_init__(self):
        owner = "GeneticAlgorithm"
        if self.crossover != "auto" and self.crossover not in CROSSOVERS:
            raise ValueError(f"{owner}: `crossover` must be 'auto' or one of {CROSSOVERS}, got {self.crossover!r}")
        if not isinstance(self.exchange_every, (int, np.integer)) or self.exchange_every < 1:
            raise ValueError(f"{owner}: `exchange_every` must be an integer >= 1, got {self.exchange_every!r}")
        check_rule(owner, self.rule)


class GeneticAlgorithm(PopulationSearch):
    """A genetic algorithm over permutations, in island groups, optionally memetic.

    Parameters
    ----------
    genes : int, optional          population size m (default 2,048; 128 with local search), a
                                   multiple of 4 x groups
    groups : int                   island groups of m / groups genes (genes compete and mate within)
    crossover : "auto" | "bcscx" | "arx" | "hybrid" | "scx" | "ox"
        "auto": "hybrid" where the problem has an edge distance (Problem.edge_distance: TSP),
        else "ox" (order crossover: QAP and any permutation problem)
    mutation : float               probability that a child gets a random 2-opt move
    exchange_every : int           generations between the groups' exchanges of their best genes
    initial : "random" (or None) | "2opt" | "problem" | a solution (n,) | array (genes, n)
        the first genes: random permutations (the paper's), the same descended to local optima
        (the paper's preprocessing: don't-look 2-opt over the candidate lists for a tour, the
        problem's own neighbourhood otherwise), the problem's start solution or the given one
        and kicked copies of it (Problem.perturb), or the given genes; descended first where
        there is a local search
    lanes : None | 1 | 32          threads a child on the GPU (1: the paper's thread a gene)
    local_search, rule, backend, seed, callbacks, history : as for every population method
        (lsmgpu.search.population): the local search improves every child
    """

    algorithm = "GeneticAlgorithm"
    Params = GAParams
    iteration_unit = "generations"
    state_fields = ("seed",)

    def __init__(self, problem: Problem, *, params: GAParams | None = None, initial="random", backend="auto",
                 seed=None, callbacks=None, history: str = "improvements", **options):
        check_problem(self.algorithm, problem)
        self.params = params = self._params(params, options)
        if not isinstance(problem.encoding, Permutation):
            raise TypeError(f"{self.algorithm}: the crossovers breed permutations; {problem.name}'s encoding is "
                            f"{problem.encoding!r}")
        self.distance = None if problem.maximize else problem.edge_distance()    # lengths are minimised
        crossover = params.crossover
        if crossover == "auto":
            crossover = "ox" if self.distance is None else "hybrid"
        if crossover in CONSTRUCTIVE and self.distance is None:
            raise ValueError(f"{self.algorithm}: `crossover={crossover!r}` chooses by an edge distance, which "
                             f"{problem.name} has not (Problem.edge_distance); use 'ox'")
        if crossover in CONSTRUCTIVE and problem.maximize:
            raise ValueError(f"{self.algorithm}: `crossover={crossover!r}` builds short tours; {problem.name} "
                             "maximises")
        genes = (2048 if params.local_search is None else 128) if params.genes is None else params.genes
        self.breeding = Breeding(crossover, params.mutation, genes, params.groups, params.lanes)
        self.exchange_every = params.exchange_every
        self.initial = self._initial(problem, initial)
        super().__init__(problem, local_search=params.local_search, rule=params.rule, backend=backend, seed=seed,
                         callbacks=callbacks, history=history)
        self._check_memory("genes", self.breeding.genes)

    def _initial(self, problem: Problem, initial):
        if initial is None:
            return "random"
        if isinstance(initial, str):
            if initial not in INITIAL:
                raise ValueError(f"{self.algorithm}: `initial` must be one of {INITIAL} or an array of genes, "
                                 f"got {initial!r}")
            return initial
        genes = np.asarray(initial)
        if genes.shape == (problem.n,):                 # one solution: it and kicked copies of it
            return problem.encoding.validate(genes).astype(np.int32)
        if genes.shape != (self.breeding.genes, problem.n):
            raise ValueError(f"{self.algorithm}: `initial` must be one solution of {problem.n} or have shape "
                             f"({self.breeding.genes}, {problem.n}) (genes x n), got {genes.shape}")
        for k, x in enumerate(genes):
            try:
                problem.encoding.validate(x)
            except ValueError as exc:
                raise ValueError(f"{self.algorithm}: `initial` row {k}: {exc}") from None
        return genes.astype(np.int32)

    @property
    def genes(self) -> int:
        return self.breeding.genes

    # --- the run -----------------------------------------------------------------------------
    def _start_solution(self) -> np.ndarray:
        """The first block of first genes, drawn before anything else (after the counter-based
        draws' key); its first gene is the run's start."""
        self.seed = int(self.rng.integers(2**63))
        self._blocks = self._gene_blocks()
        self._genes = [next(self._blocks)]
        return self.problem.encoding.validate(self._genes[0][0])

    def _set_up(self) -> None:
        for block in self._blocks:                       # the rest of the first genes
            check_deadline("the genetic algorithm's first genes were drawn")
            self._genes.append(block)
        genes, self._genes, self._blocks = np.concatenate(self._genes), None, None
        if isinstance(self.initial, str) and self.initial == "2opt":
            genes = self._local_optima(genes)
        self._build()
        self._improver(self.breeding.groups * self.breeding.children_per_group)
        check_deadline("the genetic algorithm's first genes were evaluated")
        if self.improver is None and self.distance is not None:
            self.breeder.load(genes)                     # lengths on the backend
            values = self.breeder.value_array()
            self.evaluations += len(genes)
        else:
            genes, values = self._values(genes)
            self.breeder.load(genes, values)
        best = int(np.argmin(values))
        self._record(genes[best], values[best])

    def _build(self) -> None:
        """The population's place on the backend."""
        self.breeder = genetic_for(self.backend, self.breeding, self.problem.n, self.distance, announce=self.algorithm)
        self.parts.append(self.breeder)
        self.device = getattr(self.breeder, "device", "")

    def _part_states(self) -> dict:
        every = np.arange(self.genes)
        return {**super()._part_states(), "genes": self.breeder.rows(every), "values": self.breeder.value_array()}

    def _restore_parts(self, parts: dict) -> None:
        self._build()
        self.breeder.load(parts["genes"], parts["values"])
        self._restore_improver(parts, self.breeding.groups * self.breeding.children_per_group)

    def _gene_blocks(self):
        """The first genes in blocks of about a million items (a budget can end between two): the
        given ones, random permutations (the same stream as one draw of them all), or a start (the
        given solution, else the problem's) and kicked copies of it."""
        n, m = self.problem.n, self.genes
        if isinstance(self.initial, np.ndarray) and self.initial.ndim == 2:
            yield self.initial.copy()
            return
        rows = max(1, 2**20 // n)
        if isinstance(self.initial, str) and self.initial in ("random", "2opt"):     # 2opt: descended in _set_up
            for first in range(0, m, rows):
                yield self.rng.permuted(np.tile(np.arange(n, dtype=np.int32), (min(rows, m - first), 1)), axis=1)
            return
        start = (self.initial.copy() if isinstance(self.initial, np.ndarray) else
                 self.problem.start_solution(self.rng))
        yield start[None, :]
        for first in range(1, m, 64):
            yield np.stack([self.problem.perturb(start.copy(), self.rng, 1) for _ in range(min(64, m - first))])

    def _local_optima(self, genes: np.ndarray) -> np.ndarray:
        """initial="2opt": the random first genes descended on the backend, all at once: a tour's
        by don't-look 2-opt (DontLookDescent(segment=0)), other problems' by their neighbourhood."""
        check_deadline("the first genes were descended")
        rows = len(genes)
        if self.distance is not None:
            descents = DontLookDescent(segment=0).population(self.backend, self.problem, rows, None)
        else:
            descents = population_for(self.backend, [self.problem], rows, announce=self.algorithm)
        self.parts.append(descents)
        deadline = None if self.budget.seconds is None else self.t0 + self.budget.seconds
        descents.load(genes)
        descents.descend(np.ones(rows, bool), "best", deadline)
        check_deadline("the first genes' descents ended")
        return descents.solutions().astype(np.int32)

    def _values(self, genes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Genes (descended where there is a local search) and their minimised values, in chunks
        of the local search's rows."""
        if self.improver is None:
            return self._improve(genes)
        rows = self.improver.rows
        parts = [self._improve(genes[k:k + rows]) for k in range(0, len(genes), rows)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _improve(self, solutions):
        if self.improver is not None and len(solutions) < self.improver.rows:   # a last, short chunk
            pad = np.repeat(solutions[:1], self.improver.rows - len(solutions), axis=0)
            xs, values = super()._improve(np.concatenate([solutions, pad]))
            return xs[:len(solutions)], values[:len(solutions)]
        return super()._improve(solutions)

    def _iterate(self) -> None:
        slots = self.breeder.breed(self.seed, self.iteration)
        self.evaluations += len(slots)
        if self.improver is not None or self.distance is None:
            xs, values = self._improve(self.breeder.rows(slots))
            self.breeder.set_rows(slots, xs if self.improver is not None else None, values)
        self.iteration += 1
        if self.breeding.groups > 1 and self.iteration % self.exchange_every == 0:
            dst, src = migration(self.breeder.value_array(), self.breeding, self.seed, self.iteration)
            self.breeder.copy_rows(dst, src)
        values = self.breeder.value_array()
        best = int(np.argmin(values))
        improved = values[best] < self.best and self._record(self.breeder.rows([best])[0], values[best])
        if not improved:
            self._since_best += 1
        self._finish_iteration(values[best], improved)

    @property
    def work(self) -> tuple[int, str]:
        return self.breeding.groups * self.breeding.children_per_group * self.iteration, "children"

    def _welcome(self, value, x) -> bool:
        """A gene from elsewhere replaces the population's worst where it is better."""
        values = self.breeder.value_array()
        worst = int(np.argmax(values))
        if value >= values[worst]:
            return False
        self.breeder.set_rows([worst], x[None, :].astype(np.int32), [value])
        return True

    def __repr__(self):
        return (f"{self.algorithm}({self.problem!r}, genes={self.genes}, groups={self.breeding.groups}, "
                f"crossover={self.breeding.crossover!r}, backend={self.backend.name})")
