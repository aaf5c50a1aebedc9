"""The genetic algorithm's generation on a backend: the settings, the NumPy reference, the factory.

A population of m genes (permutations) in G groups of g = m / G contiguous slots; in each group
(Kang et al. 2016, fixed places so that no thread waits for another):

1. fixed rivals: slot j < g/2 against slot j + g/2, the better (lower value; ties: j) kept at j;
2. fixed partners: parents 2p and 2p + 1 (p < g/4) make a child at g/2 + p and, for the
   two-child crossovers, one at 3g/4 + p (``bcscx`` and ``scx``: one child, slots 3g/4.. keep
   their genes; ``arx``: the child started by each parent; ``hybrid``: a BCSCX child and an ARX child;
   ``ox``: OX(p0, p1) and OX(p1, p0), for problems without an edge distance);
3. mutation: each child, with probability ``mutation``, a random 2-opt move;
4. the children's values (tour lengths on the backend where the problem has an edge distance).

Every few generations the search moves each group's best gene to a random other group
(``migrate``). Random numbers are counter-based, ``counter_uniform(seed, generation, slot,
draw)`` (draw 0: the mutation's coin, 1-2 its positions, 3-4 the pair's switch points or cuts,
taken at the pair's first child slot; 5: a group's migration target, at the group's index), so
the GPU (templates/skeleton/genetic.cu.j2) makes the same children as this reference.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..budget import check_deadline
from ..neighbourhoods.crowns import counter_uniform
from .crossover import arx_privilege, construct, order_crossover, reverse_segments, sequential_crossover
from .fallback import kernel_or_host

__all__ = ["Breeding", "CpuGenetic", "genetic_for", "migration", "CROSSOVERS", "children_of", "draw_below"]

CROSSOVERS = ("bcscx", "arx", "hybrid", "scx", "ox")
#: crossovers that read an edge distance
CONSTRUCTIVE = ("bcscx", "arx", "hybrid", "scx")
#: crossovers that make one child a pair (slots 3g/4.. keep their genes)
ONE_CHILD = ("bcscx", "scx")
BOTH, FIRST, SECOND = 2, 0, 1


@dataclass(frozen=True)
class Breeding:
    """How a generation breeds: the crossover, the mutation probability, the genes and groups,
    ``lanes`` per child on the GPU (1: a thread a child, the paper's; 32: a warp; None: by size)."""

    crossover: str = "hybrid"
    mutation: float = 0.1
    genes: int = 2048
    groups: int = 1
    lanes: int | None = None

    def __post_init__(self):
        if self.crossover not in CROSSOVERS:
            raise ValueError(f"genetic algorithm: `crossover` must be one of {CROSSOVERS}, got {self.crossover!r}")
        if not (isinstance(self.mutation, (int, float)) and 0.0 <= self.mutation <= 1.0):
            raise ValueError(f"genetic algorithm: `mutation` must be a probability in [0, 1], got {self.mutation!r}")
        for name in ("genes", "groups"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"genetic algorithm: `{name}` must be an integer >= 1, got {value!r}")
        if self.genes % (4 * self.groups):
            raise ValueError(f"genetic algorithm: `genes` ({self.genes}) must be a multiple of 4 x `groups` "
                             f"({4 * self.groups}): each group pairs its better half and fills its other half")
        if self.lanes not in (None, 1, 32):
            raise ValueError(f"genetic algorithm: `lanes` must be None, 1 or 32, got {self.lanes!r}")

    @property
    def group_size(self) -> int:
        return self.genes // self.groups

    @property
    def children_per_group(self) -> int:
        return self.group_size // 4 * (1 if self.crossover in ONE_CHILD else 2)


def draw_below(u: np.ndarray, count) -> np.ndarray:
    """Integers in [0, count) from uniforms: floor(u * count), the kernels' (int)(u * count)."""
    return np.floor(np.asarray(u) * count).astype(np.int64)


def children_of(breeding: Breeding) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every child of a generation in the kernel's order: (its slot, its parents' first slot, its
    role: 0 the pair's first child, 1 the second)."""
    g, q = breeding.group_size, breeding.group_size // 4
    per = breeding.children_per_group
    c = np.arange(breeding.groups * per)
    group, k = c // per, c % per
    role = (k >= q).astype(np.int64)
    pair = k - q * role
    slot = group * g + g // 2 + q * role + pair
    return slot, group * g + 2 * pair, role


class CpuGenetic:
    """The generation on the host over NumPy arrays (the reference): genes (m, n) int32 and their
    values (m,) float64, minimised."""

    name = "cpu"
    device = ""

    def __init__(self, breeding: Breeding, n: int, between=None):
        if breeding.crossover in CONSTRUCTIVE and between is None:
            raise ValueError(f"genetic algorithm: `crossover={breeding.crossover!r}` needs the problem's edge "
                             "distance; use 'ox'")
        self.b, self.n, self.between = breeding, int(n), between
        self.genes = np.zeros((breeding.genes, self.n), dtype=np.int32)
        self.values = np.zeros(breeding.genes, dtype=np.float64)

    # --- the population ------------------------------------------------------------------------
    def load(self, genes: np.ndarray, values: np.ndarray | None = None) -> None:
        """The genes, with their values (None: their tour lengths, computed here)."""
        self.genes[:] = genes
        self.values[:] = self.tour_lengths(self.genes) if values is None else values

    def rows(self, slots) -> np.ndarray:
        return self.genes[np.asarray(slots)].copy()

    def set_rows(self, slots, genes: np.ndarray | None, values: np.ndarray) -> None:
        slots = np.asarray(slots)
        if genes is not None:
            self.genes[slots] = genes
        self.values[slots] = values

    def value_array(self) -> np.ndarray:
        return self.values.copy()

    def copy_rows(self, dst, src) -> None:
        """Row src[k] copied to dst[k], in order (a later copy reads what an earlier one wrote)."""
        for d, s in zip(np.asarray(dst), np.asarray(src)):
            self.genes[d], self.values[d] = self.genes[s], self.values[s]

    def close(self) -> None:
        """Nothing to free on the host."""

    # --- a generation --------------------------------------------------------------------------
    def compete(self) -> None:
        """Fixed rivals: in every group, slot j against slot j + g/2, the better kept at j."""
        g = self.b.group_size
        j = (np.arange(self.b.groups)[:, None] * g + np.arange(g // 2)[None, :]).ravel()
        rival = j + g // 2
        won = self.values[rival] < self.values[j]
        self.copy_rows(j[won], rival[won])

    def breed(self, seed: int, generation: int) -> np.ndarray:
        """Compete, make every child and mutate it; the children's slots. Their values are tour
        lengths where the problem has an edge distance, else NaN (the search evaluates them)."""
        self.compete()
        slots, first, role = children_of(self.b)
        parent0, parent1 = self.genes[first], self.genes[first + 1]
        self.genes[slots] = self.cross(parent0, parent1, seed, generation, slots, role)
        self.mutate(seed, generation, slots)
        self.values[slots] = self.tour_lengths(self.genes[slots]) if self.between is not None else np.nan
        return slots

    def cross(self, parent0, parent1, seed, generation, slots, role) -> np.ndarray:
        n, kind = self.n, self.b.crossover
        pair_slot = slots - role * (self.b.group_size // 4)          # the pair's first child's slot
        u3, u4 = (counter_uniform(seed, generation, pair_slot, d) for d in (3, 4))
        if kind == "ox":
            a, b = draw_below(u3, n), draw_below(u4, n)
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            swapped = role == 1
            p0, p1 = np.where(swapped[:, None], parent1, parent0), np.where(swapped[:, None], parent0, parent1)
            return order_crossover(p0, p1, lo, hi)
        if kind == "scx":
            return sequential_crossover(parent0, parent1, self.between)
        a, b = 1 + draw_below(u3, n - 1), 1 + draw_below(u4, n - 1)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        if kind == "bcscx":
            arx_first = np.full(len(slots), -1)
        elif kind == "arx":
            arx_first = role                    # the first child: parent 0 starts; the second: parent 1
        else:
            arx_first = np.where(role == 0, -1, FIRST)   # hybrid: a BCSCX child, then ARX's first
        privilege = arx_privilege(len(slots), n, np.maximum(arx_first, 0), lo, hi)
        privilege[arx_first < 0] = BOTH
        return construct(parent0, parent1, self.between, privilege)

    def mutate(self, seed: int, generation: int, slots: np.ndarray) -> None:
        """A random 2-opt move on each child whose coin falls below ``mutation``."""
        n = self.n
        hit = counter_uniform(seed, generation, slots, 0) < self.b.mutation
        i = draw_below(counter_uniform(seed, generation, slots, 1), n)
        j = draw_below(counter_uniform(seed, generation, slots, 2), n - 1)
        j = j + (j >= i)
        reverse_segments(self.genes, slots[hit], np.minimum(i, j)[hit], np.maximum(i, j)[hit])

    def tour_lengths(self, tours: np.ndarray) -> np.ndarray:
        """The closed tours' lengths by the edge distance (the GA's fitness of a tour problem), about
        a million edges at a time, the run's deadline checked between them."""
        rows = max(1, 2**20 // max(1, tours.shape[1]))
        lengths = np.empty(len(tours))
        for first in range(0, len(tours), rows):
            check_deadline("the tours' lengths were summed")
            part = tours[first:first + rows]
            edges = self.between(part.ravel(), np.roll(part, -1, axis=1).ravel())
            lengths[first:first + rows] = np.asarray(edges, dtype=np.float64).reshape(part.shape).sum(axis=1)
        return lengths


def migration(values: np.ndarray, breeding: Breeding, seed: int, generation: int) -> tuple[np.ndarray, np.ndarray]:
    """Each group's best slot and the slot it overwrites: the worst of a random other group
    (chosen by draw 5 at the group's index; where two groups pick the same one, the later wins)."""
    groups, g = breeding.groups, breeding.group_size
    by_group = values.reshape(groups, g)
    best = np.arange(groups) * g + np.argmin(by_group, axis=1)
    worst = np.arange(groups) * g + np.argmax(by_group, axis=1)
    target = (np.arange(groups) + 1 + draw_below(counter_uniform(seed, generation, np.arange(groups), 5),
                                                 groups - 1)) % groups
    return worst[target], best


def genetic_for(backend, breeding: Breeding, n: int, distance, *, announce: str = "the genetic algorithm"):
    """The generation on ``backend``: the CUDA kernels where the backend has them, else the host's
    (announced by a BackendFallback warning on a backend other than the CPU). ``distance``: the
    problem's EdgeDistance or None."""
    between = None if distance is None else distance.between
    return kernel_or_host(backend, "genetic", (breeding, n, distance), lambda: CpuGenetic(breeding, n, between),
                          announce=announce, what="the generations run")
