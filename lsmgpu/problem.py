"""The plug-in contract: what a user writes to add a problem (docs/architecture.md).

A subclass sets its encoding and default neighbourhood in ``__init__`` and writes:

* ``evaluate(x)``: the full fitness in NumPy, the ground truth;
* the fitness change of every move, vectorised, per kind of move it evaluates: a method
  ``delta_<kind>(x, moves)`` for each ``Neighbourhood.move_kind`` (``delta_swap``,
  ``delta_twoopt``, ...; :meth:`Problem.delta` dispatches), or one ``delta(x, moves)`` for
  all; it must equal ``evaluate(after) - evaluate(before)`` (the tests check this);
* ``device_data()`` and a ``template`` for the CUDA backend: the arrays the kernel
  reads, each with a memory policy, and a Jinja2 file beside the problem's module that fills
  ``{% block delta %}`` for the kinds listed in ``device_move_kinds``.

:meth:`Problem.unsupported` is the one capability query: whether the problem can evaluate a
neighbourhood on a backend, and if not, why (``backend="auto"``, the CLI and the searches ask it).
The engine does the rest: moves, selection, tabu state, timing and the GPU launches.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .encodings import Encoding, Permutation
from .neighbourhoods import Neighbourhood

__all__ = ["Problem", "DeviceArray", "ColonyModel", "EdgeDistance", "MEMORY_POLICIES"]

#: where the kernel reads an input array from (docs/architecture.md, memory policies)
MEMORY_POLICIES = ("global", "readonly", "texture", "shared")


@dataclass
class DeviceArray:
    """One input array of a problem's kernel and the memory it should be read through."""

    array: np.ndarray
    policy: str = "readonly"

    def __post_init__(self):
        if self.policy not in MEMORY_POLICIES:
            raise ValueError(f"DeviceArray: `policy` must be one of {MEMORY_POLICIES}, got {self.policy!r}")
        self.array = np.ascontiguousarray(self.array)
        if self.array.dtype not in (np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8):
            raise TypeError(f"DeviceArray: unsupported dtype {self.array.dtype}")


@dataclass
class ColonyModel:
    """How ant colonies build a permutation of a problem (lsmgpu.search.colony).

    ``kind``: ``"successor"``: a tour, each item chosen after the previous one, the pheromone
    tau[previous, next] symmetric (TSP); ``"assignment"``: row i takes item x[i], the rows
    visited in a random order, the pheromone tau[i, item] (QAP: facility i on location x[i]).
    ``heuristic``: (n, n) eta >= 0, the desirability of a choice (TSP: 1 / distance), raised to
    the colony's beta; None: none (all ones). ``candidates``: (n, k) int32, each row's preferred
    items, best first: an ant chooses among the unvisited ones and falls back to every item
    (the best by pheromone x heuristic) once they are all visited; None: always every item.
    """

    kind: str
    heuristic: np.ndarray | None = None
    candidates: np.ndarray | None = None

    def __post_init__(self):
        if self.kind not in ("successor", "assignment"):
            raise ValueError(f"ColonyModel: `kind` must be 'successor' or 'assignment', got {self.kind!r}")
        if self.heuristic is not None:
            eta = np.asarray(self.heuristic, dtype=np.float64)
            if eta.ndim != 2 or eta.shape[0] != eta.shape[1] or not np.all(np.isfinite(eta)) or eta.min() < 0:
                raise ValueError("ColonyModel: `heuristic` must be a square matrix of finite values >= 0")
            self.heuristic = eta
        if self.candidates is not None:
            cand = np.asarray(self.candidates)
            if cand.ndim != 2 or not np.issubdtype(cand.dtype, np.integer) or cand.shape[1] > 32:
                raise ValueError("ColonyModel: `candidates` must be an (n, k) integer array with k <= 32 "
                                 f"(one warp reads a row), got shape {cand.shape}")
            self.candidates = np.ascontiguousarray(cand, dtype=np.int32)



@dataclass
class EdgeDistance:
    """The length of the edge between two items of a tour, on both backends (Problem.edge_distance).

    ``between(u, v)``: the lengths of the edges (u[k], v[k]), vectorised, integers or floats.
    ``table``: the one array the device code reads (coordinates, or an (n, n) matrix).
    ``device``: CUDA source defining ``table_t`` (the table's element type) and
    ``__device__ long long edge_distance(const table_t* table, long long n, int u, int v)``
    (integer lengths: the GPU's crossover and tour length are exact), or a function returning it
    (rendered only when a GPU kernel needs it: :meth:`device_source`).
    """

    between: object
    table: np.ndarray
    device: object

    def __post_init__(self):
        if not callable(self.between):
            raise TypeError("EdgeDistance: `between` must be a function of two item arrays")
        self.table = np.ascontiguousarray(self.table)

    def device_source(self) -> str:
        """The CUDA source of ``device``, rendered on first use."""
        if callable(self.device):
            self.device = self.device()
        return self.device

def check_problem(owner: str, problem) -> None:
    """TypeError naming `problem` unless it is a Problem (a file name or path says how to load it)."""
    if isinstance(problem, Problem):
        return
    hint = f"; load the instance first: lsmgpu.load({str(problem)!r})" if isinstance(problem, (str, Path)) else ""
    raise TypeError(f"{owner}: `problem` must be a Problem, got {type(problem).__name__} {problem!r:.60}{hint}")


class Problem:
    """Base class of optimisation problems.

    Class attributes a subclass may set:
    ``maximize`` (default False), ``integer`` (fitness values are integers: exact
    comparison between backends), ``template`` (the CUDA template file name, looked up
    next to the subclass's module, then in lsmgpu's ``templates/``), ``name``.
    """

    maximize: bool = False
    integer: bool = False
    #: the move kinds (Neighbourhood.move_kind) its CUDA template evaluates; None: not declared
    #: (a user's problem: the template is trusted with whatever neighbourhood it is given)
    device_move_kinds: tuple[str, ...] | None = None
    #: optimal or best known fitness, when the instance ships one (gaps are measured to it)
    best_known: float | None = None
    #: its CUDA template, a file beside the subclass's module (then looked up in lsmgpu's templates/)
    template: str | None = None
    name: str = ""

    def __init__(self, encoding: Encoding, neighbourhood: Neighbourhood):
        if not isinstance(encoding, Encoding):
            raise TypeError(f"{type(self).__name__}: `encoding` must be an Encoding, got {type(encoding).__name__}")
        self.encoding = encoding
        self.neighbourhood = self.bind(neighbourhood)
        self.name = self.name or type(self).__name__

    @property
    def n(self) -> int:
        """Length of a solution vector."""
        return self.encoding.n

    @property
    def sense(self) -> int:
        """+1 when minimising, -1 when maximising: the engine minimises ``sense * fitness``."""
        return -1 if self.maximize else 1

    def bind(self, neighbourhood: Neighbourhood) -> Neighbourhood:
        """``neighbourhood`` fixed to this problem's encoding."""
        if not isinstance(neighbourhood, Neighbourhood):
            raise TypeError(f"{type(self).__name__}: `neighbourhood` must be a Neighbourhood, "
                            f"got {type(neighbourhood).__name__}")
        return neighbourhood.bind(self.encoding)

    def with_neighbourhood(self, neighbourhood: Neighbourhood) -> "Problem":
        """A shallow copy of this problem whose default neighbourhood is ``neighbourhood``."""
        import copy
        other = copy.copy(self)
        other.neighbourhood = self.bind(neighbourhood)
        return other

    def cpu_chunk(self) -> int:
        """Moves per vectorised ``delta`` call on the CPU backend (bounds its memory)."""
        return 1 << 18

    # --- what a subclass writes ----------------------------------------------------------
    def evaluate(self, x: np.ndarray) -> float:
        """Full fitness of solution ``x`` (NumPy)."""
        raise NotImplementedError(f"{type(self).__name__} must implement evaluate(x)")

    def delta(self, x: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """Fitness change of each move applied to ``x`` (vectorised NumPy): the problem's
        ``delta_<kind>`` for the kind of move its neighbourhood yields."""
        kind = self.neighbourhood.move_kind
        method = getattr(self, f"delta_{kind}", None)
        if method is None:
            raise TypeError(self.unsupported(self.neighbourhood, "cpu") or
                            f"{type(self).__name__} must implement delta(x, moves) or delta_{kind}(x, moves)")
        return method(x, moves)

    def move_kinds(self) -> frozenset[str] | None:
        """The move kinds it evaluates on the CPU (its ``delta_<kind>`` methods), or None when it
        overrides ``delta`` itself (then any kind is tried)."""
        if type(self).delta is not Problem.delta:
            return None
        return frozenset(name[len("delta_"):] for name in dir(type(self)) if name.startswith("delta_")
                         and name not in vars(Problem) and callable(getattr(type(self), name)))

    def unsupported(self, neighbourhood: Neighbourhood, backend: str = "cpu") -> str | None:
        """Why this problem cannot evaluate ``neighbourhood`` on ``backend`` ("cpu" or "cuda"),
        or None when it can: the one capability query of the engine."""
        name, kind, kinds = type(self).__name__, neighbourhood.move_kind or "unnamed", self.move_kinds()
        if kinds is not None and kind not in kinds:
            return f"{name} evaluates {', '.join(sorted(kinds))} moves, not the {kind} moves of {neighbourhood!r}"
        if backend == "cpu":
            return None
        if self.template is None:
            return f"{name} has no CUDA template"
        if neighbourhood.device_code is None:
            return f"{neighbourhood!r} has no CUDA move code"
        if self.device_move_kinds is not None and kind not in self.device_move_kinds:
            return (f"{name}'s CUDA kernel evaluates {', '.join(self.device_move_kinds)} moves, not the {kind} "
                    f"moves of {neighbourhood!r}; use backend='cpu'")
        return None

    def device_data(self) -> dict[str, DeviceArray]:
        """The arrays the CUDA kernel reads, by name."""
        raise NotImplementedError(f"{type(self).__name__} has no CUDA kernel: define device_data() and template")

    def solution_data(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Arrays derived from the solution that the kernel reads, by name (default: none).

        They are uploaded with every new solution and kept current on the GPU by the
        template's ``{% block apply_state %}`` as moves are applied; e.g. the TSP keeps the
        coordinates in tour order and the length of each tour edge, so a 2-opt move reads
        two stored edges and computes only the two new ones.
        """
        return {}

    def refresh_items(self) -> int:
        """Work items of the template's grid-wide ``{% block refresh_state %}`` (default 0: none).

        ``apply_state`` runs in the one block that applies the move, which suits O(n) updates;
        state that costs more to rebuild (PPP's sign words, n times the occupied bins) is
        refreshed by a second launch over the whole GPU, after every applied move and after
        every upload of a solution (so ``solution_data`` may leave state for the GPU to
        complete), calling ``refresh_state(x, d, st, item)`` for every item below this count. When the count is a
        multiple of 32, the 32 lanes of a warp always hold 32 consecutive items of one solution,
        aligned on 32, so a template may let a warp share an item's work through shuffles (the
        QAP's delta table does).
        """
        return 0

    def lanes_per_move(self) -> int:
        """Threads that evaluate one move together (1, 2, 4, 8, 16 or 32). With more than one,
        the template's delta takes a ``lane`` argument and returns its lane's partial sum;
        the engine adds the partial sums. Worth it when one delta costs O(n) (the QAP)."""
        return 1

    def template_params(self) -> dict:
        """Options that decide the problem's kernel code, rendered into its source (one build per
        distinct value: kind-level choices such as a distance formula, not instance sizes)."""
        return {}

    def default_ils(self, candidates=None) -> dict:
        """``IteratedLocalSearch`` keywords (``neighbourhood``, ``polish``) measured best for this
        problem, used when the caller gives neither (over lists of ``candidates`` per item where it
        has them: K or "alpha"): {} keeps the problem's neighbourhood."""
        return {}

    def candidate_lists(self, k: int, kind: str = "near") -> np.ndarray | None:
        """(n, k) int32: each item's ``k`` preferred next items, best first, where the problem has
        near items (the colony model's lists by default; None: no such notion). A search given
        ``candidates=k`` (an int) reads its lists here. ``kind="alpha"`` (``candidates="alpha"``):
        the α-nearest, where the problem has them (the TSP); here a ValueError."""
        if kind == "alpha":
            raise ValueError(f"{self.name}: `candidates='alpha'` needs α-nearness, which only a TSP has")
        if kind != "near":
            raise ValueError(f"{self.name}: candidate lists are 'near' or 'alpha', got {kind!r}")
        model = self.colony_model(k)
        return None if model is None else model.candidates

    def colony_model(self, candidates: int | None = None) -> ColonyModel | None:
        """How the ant colonies build this problem's solutions (ColonyModel), with candidate lists
        of ``candidates`` items where the problem has a notion of near items (None: none). By
        default a permutation is an assignment without heuristic information; other encodings
        have no colony (None). A problem with a heuristic overrides it (TSP: 1 / distance)."""
        return ColonyModel("assignment") if isinstance(self.encoding, Permutation) else None

    def edge_distance(self) -> "EdgeDistance | None":
        """The length of the edge between two items where a solution is a tour (EdgeDistance):
        the genetic algorithm's constructive crossovers (BCSCX, ARX) choose the nearest of the
        parents' next items by it. None (the default): no such distance, and the genetic
        algorithm crosses solutions by order (OX)."""
        return None

    def device_constants(self) -> dict:
        """Instance numbers the problem's template reads from ``__constant__`` memory (name ->
        int or float; ints arrive as long long, floats as double), set when its kernel is loaded,
        so that every instance of the kind shares one build. ``N``, the neighbourhood size and
        array lengths (``LEN_<array>``) are the engine's already."""
        return {}

    @property
    def fitness_dtype(self) -> type:
        """NumPy type of fitness values and deltas: int64 for integer problems, else float64."""
        return np.int64 if self.integer else np.float64

    def template_dirs(self) -> list[Path]:
        """Where the problem's templates are looked up: next to its class's module first, then
        next to each base class's (a user's subclass of TSP keeps the TSP's templates); classes
        without a file (defined interactively) are skipped."""
        import inspect
        folders = []
        for cls in (c for c in type(self).__mro__ if issubclass(c, Problem) and c is not Problem):
            try:
                folders.append(Path(inspect.getfile(cls)).parent)
            except TypeError:                          # defined interactively: no file
                continue
        return list(dict.fromkeys(folders))            # each folder once, nearest class first

    #: whether ``initial_solution`` draws another start for each seed (else MultiStart warns: one start for all)
    start_is_drawn = True

    def initial_solution(self, rng: np.random.Generator) -> np.ndarray:
        """A start solution; by default uniformly random."""
        return self.encoding.random(rng)

    def perturb(self, x: np.ndarray, rng: np.random.Generator, strength: int) -> np.ndarray:
        """A kicked copy of ``x`` for iterated local search: the default neighbourhood's
        ``kick`` (``strength`` random moves; crowns: redrawn coordinates). Problems override it
        (TSP: double bridge)."""
        return self.neighbourhood.kick(x, rng, strength)

    def kick_moves(self, x: np.ndarray, rng: np.random.Generator, strength: int) -> np.ndarray | None:
        """The kick of ``x`` as moves of the neighbourhood (rows of its move format, applied in
        order), drawn from ``rng`` as ``perturb`` would draw it, or None. Iterated local search
        then applies them through ``Evaluator.apply_moves``, where the solution lives (on the
        GPU: no upload of a kicked solution, no host recomputation of its derived arrays, the
        kick's fitness change computed by the problem's delta). None (the default): the kick
        goes through ``perturb`` and a reload."""
        return None

    def kick_draws(self, rng: np.random.Generator) -> np.ndarray | None:
        """The random numbers of one unit of ``kick_moves`` (strength 1), drawn from ``rng`` as it
        draws them, for a kick made where the solutions live: the batched ILS hands them to the
        template's ``kick`` block (``kick_batch``), or to ``kick_of`` on the host. None (the
        default): no such kick; ``kick_of`` and the template block come with it."""
        return None

    def kick_of(self, x: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """The moves of one kick unit made from ``draws`` (``kick_draws``) around ``x``, kicked in place."""
        raise NotImplementedError(f"{self.name} draws no kick (kick_draws is None)")

    def lower_bound(self) -> float | None:
        """A value no solution beats, where the problem can prove one (TSP: Held-Karp), else None."""
        return None

    def gap(self, fitness: float) -> float | None:
        """Relative gap of ``fitness`` to ``best_known`` (0.01 = 1 %), or None."""
        return self.sense * (fitness - self.best_known) / abs(self.best_known) if self.best_known else None

    def write_solution(self, x: np.ndarray, path) -> None:
        """Save solution ``x`` (plain text, one value per line); problems use their own formats."""
        np.savetxt(path, np.asarray(x), fmt="%d" if np.issubdtype(np.asarray(x).dtype, np.integer) else "%.17g")

    def read_solution(self, path) -> np.ndarray:
        """A solution saved by ``write_solution`` (to continue from it: ``initial=``), validated
        against this problem's encoding; ValueError naming the file and what is wrong."""
        try:
            x = np.loadtxt(path, ndmin=1)
        except (ValueError, OSError) as exc:
            raise ValueError(f"{self.name}: {Path(path).name} is not a solution file: {exc}") from None
        return self.checked_solution(x, path)

    def checked_solution(self, x, source) -> np.ndarray:
        """``x`` as a solution of this problem (a ValueError names ``source``: its file, or what gave it)."""
        try:
            return self.encoding.validate(x)      # integers read as floats are checked and cast there
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{self.name}: {Path(source).name} does not hold a solution of this instance: "
                             f"{exc}") from None

    def tabu_tenure(self):
        """Default tabu tenure: an int or an inclusive (low, high) range drawn each iteration."""
        return max(1, self.n // 4)

    def tabu_forced_after(self) -> int:
        """Default long-term aspiration window of TabuSearch (``forced_after``; 0: off)."""
        return 0

    # --- what the engine calls -----------------------------------------------------------
    def start_solution(self, rng: np.random.Generator) -> np.ndarray:
        """``initial_solution(rng)`` validated against the encoding (a bad one is refused by name)."""
        return self.checked_solution(self.initial_solution(rng), "initial_solution()")

    def fitness(self, x) -> float:
        """Validated full evaluation of ``x``."""
        value = self.evaluate(self.encoding.validate(x))
        if not np.isfinite(value):
            raise ValueError(f"{self.name}: evaluate() returned {value} for a valid solution")
        return value

    def delta_of(self, x: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """``delta`` with a shape check, as the engine calls it."""
        d = np.asarray(self.delta(x, moves))
        if d.shape != (len(moves),):
            raise ValueError(f"{self.name}: delta() must return shape ({len(moves)},), got {d.shape}")
        return d.astype(self.fitness_dtype, copy=False)

    def __repr__(self) -> str:
        return f"{self.name}(n={self.n}, neighbourhood={self.neighbourhood!r})"
