"""Symmetric travelling salesman problem: swap and 2-opt neighbourhoods on a tour.

A solution is a tour: a permutation of the cities, closed back to its first city.
Distances follow TSPLIB (integer, rounded per EDGE_WEIGHT_TYPE). Up to ``matrix_limit``
cities the distances are tabulated once (an n x n int32 table); beyond, they are computed
from the coordinates on the fly, so pla85900 never needs a 30 GB matrix.

This module is long because every search asks the TSP for something of its own (start tours,
kicks, move deltas, candidate lists, bounds and estimates, TSPLIB files); each part is short.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lsmgpu.encodings import Permutation
from lsmgpu.neighbourhoods import (CandidateThreeOpt, CandidateTwoOpt, OrOpt, OverCandidates, Swap, ThreeExchange,
                                     TwoOpt, candidate_polish)
from lsmgpu.kernels import render_fragment
from lsmgpu.problem import ColonyModel, DeviceArray, EdgeDistance, Problem
from lsmgpu.budget import check_deadline, time_left
from lsmgpu.validation import INT32_MAX, check_count, check_number, check_points, check_size, check_square

from .candidates import greedy_tour, hilbert_tour, nearest_candidates, quadrant_candidates, strip_tour
from .distances import distance, geo_radians
from .instances import shipped
from .kicks import double_bridge, double_bridge_cuts, double_bridge_moves
from .alpha import PERIOD, alpha_candidates, ascent, tour_graph
from .held_karp import held_karp_bound
from .tsplib import COORDINATE_TYPES, read_optimum, read_tour, read_tsplib, write_tour

__all__ = ["TSP", "double_bridge", "double_bridge_cuts", "nearest_neighbour_tour", "strip_tour"]

NEIGHBOURHOODS = {"swap": Swap, "2opt": TwoOpt, "twoopt": TwoOpt, "3exchange": ThreeExchange}
#: from this many cities on, ILS kicks are segment-local double bridges over this many positions
#: (below, a double bridge across the whole tour did better on 1,000-3,000 cities than windows of
#: 50; above, a window of 1,000 did better than 100, and a whole-tour kick cost 3 ms at 18,512)
LOCAL_KICK_FROM, LOCAL_KICK_WINDOW = 10_000, 1000
#: neighbourhoods over candidate lists (10 quadrant neighbours per city), built from the coordinates
CANDIDATE_NEIGHBOURHOODS = {"2opt-candidates": CandidateTwoOpt, "oropt": OrOpt, "3opt-candidates": CandidateThreeOpt}


#: the Beardwood-Halton-Hammersley constant for uniform cities in the plane (Johnson, McGeoch & Rothberg 1996)
UNIFORM_TOUR = 0.7124
#: cities a grid cell holds on average in TSP.clustering()
CLUSTER_CELL = 8

#: ``start="auto"``: the greedy tour from this many cities on (with coordinates), the nearest-
#: neighbour tour from a random city below (a different start for every seed)
GREEDY_FROM = 5_000
#: below this many cities the α-lists break ties of α by LKH-3's order, from it by the plain length
#: (TSP's ``alpha_ties``; docs/benchmarks/tsp-depth.md, "α's ties by size")
PENALISED_TIES_BELOW = 10_000
ALPHA_TIES = ("length", "penalised")


def _tours_of(n: int, tours) -> np.ndarray:
    """``ascent_tours`` as an int64 (rows, n) array of tours of the n cities (a clear refusal otherwise)."""
    table = np.atleast_2d(np.asarray(tours))
    if table.ndim != 2 or table.shape[1] != n or table.dtype.kind not in "iu" or \
            not all(np.array_equal(np.sort(row), np.arange(n)) for row in table):
        raise ValueError(f"TSP: `ascent_tours` must be tours of the {n} cities (rows, each a permutation of "
                         f"0 .. {n - 1}), got an array of shape {table.shape} and type {table.dtype}")
    return table.astype(np.int64)


def nearest_neighbour_tour(tsp: "TSP", start: int) -> np.ndarray:
    """Greedy tour: from ``start``, always go to the nearest unvisited city (O(n^2): seconds from
    about 10,000 cities). Within a search whose time budget runs out meanwhile (lsmgpu.budget),
    the unvisited cities follow along a Hilbert curve over the cities (O(n log n); without
    coordinates in a fixed shuffled order): a valid tour at the deadline, not a late one, and not a
    random one (fnl4461 cut after 0.3 s was 20 times the optimum); never the file's order (some
    instances list their cities along an optimal tour, pr2392 does)."""
    n = tsp.n
    visited = np.zeros(n, dtype=bool)
    tour = np.empty(n, dtype=np.int32)
    city = start
    everyone = np.arange(n)
    for k in range(n):
        if k % 16 == 15 and (left := time_left()) is not None and left <= 0:
            visited[tour[:k]] = True
            order = hilbert_tour(tsp.coords) if tsp.coords is not None else np.random.default_rng(n).permutation(n)
            tour[k:] = order[~visited[order]]
            return tour
        tour[k] = city
        visited[city] = True
        if k == n - 1:
            break
        d = tsp.dist(np.full(n, city), everyone).astype(np.float64)
        d[visited] = np.inf
        city = int(np.argmin(d))
    return tour


class TSP(Problem):
    """Symmetric TSP from coordinates (``weight_type`` EUC_2D, CEIL_2D, ATT, GEO) or a matrix.

    ``neighbourhood``: ``"2opt"`` (the default: segment reversal, n(n-3)/2 moves), ``"swap"``
    (exchange two cities, n(n-1)/2 moves: the paper's benchmark setting), ``"3exchange"``,
    ``"2opt-candidates"`` (2-opt over 10 quadrant candidates per city, 10 n moves), ``"oropt"``
    (segments of 1-3 cities moved next to one of their first city's 10 candidates, both
    orientations, 60 n moves), ``"3opt-candidates"`` (the three block-exchange reconnections of
    3-opt over (city, candidate, candidate) triples, 300 n moves) or a Neighbourhood object.
    ``start``: ``"nearest"`` (nearest-neighbour tour from a random city, O(n^2)), ``"greedy"`` (greedy
    edge matching over 10-nearest candidate lists), ``"hilbert"`` (space-filling curve),
    ``"strips"`` (boustrophedon through vertical strips) - these three O(n log n) and for
    coordinates only - ``"random"``, or ``"auto"`` (the default: nearest up to GREEDY_FROM =
    5,000 cities, greedy beyond, where the nearest-neighbour tour takes seconds: 12.6 s on d18512
    against 0.1 s, and is longer, 794,458 against 752,481).
    ``best_known``: the optimal length, if known (read from ``optimal.txt`` by from_file).
    ``kick_window``: the ILS kick is a double bridge across the whole tour (None) or within
    that many consecutive positions (segment-local); "auto": local over 1,000 positions from
    10,000 cities on.
    ``ascent_period``: the first period of the Held-Karp ascent behind the α-lists, the penalties
    and the bound (problems/alpha.py): None for alpha.PERIOD (100 iterations), an integer, or
    "half" for LKH's INITIAL_PERIOD, n // 2 (at least 100): about 1.25 n iterations against 248.
    The 5-opt descents land closer over the longer ascent's lists, but it takes tens of seconds
    at 6,000-12,000 cities (rl11849 gains at 60 s, rl5915 not; docs/benchmarks/tsp-depth.md,
    "The ascent's period and the descents"), so the default stays 100.
    ``alpha_ties``: how the α-lists order a city's candidates of equal α (most of a clustered
    instance's edges have α 0): "length", by c(i, j); "penalised", by c(i, j) + π_i + π_j, as LKH-3
    orders its candidates; None (the default): "penalised" below PENALISED_TIES_BELOW = 10,000
    cities, "length" from there. In FocusedACO's 60 s runs LKH's order kept rl5915's colonies out of
    their trap (0.0101 % over thirteen seeds against 0.026 over fourteen) and left rl11849 at 0.106 %
    over four seeds against 0.024 (docs/benchmarks/tsp-depth.md, "α's ties by size").
    ``ascent_tours``: tours of the instance (rows) whose edges make the ascent's graph instead of the
    triangulation and quadrant neighbours (problems/alpha.py's tour_graph), for the α-lists and
    the penalties (not the bound, whose ascent keeps its denser graph): lists as LKH's POPMUSIC
    graph gives them; None: the triangulation's.
    With the default neighbourhood and coordinates, ``IteratedLocalSearch(tsp)`` runs the
    configuration measured best (:meth:`default_ils`).
    """

    integer = True
    template = "tsp.cu.j2"
    device_move_kinds = ("swap", "twoopt", "block_exchange")
    matrix_limit = 4000

    def __init__(self, coords=None, *, weight_type: str = "EUC_2D", matrix=None, name: str = "TSP",
                 best_known: int | None = None, neighbourhood=None, start: str = "auto",
                 kick_window: int | str | None = "auto", ascent_period: int | str | None = None,
                 ascent_tours=None, alpha_ties: str | None = None):
        if (coords is None) == (matrix is None):
            raise ValueError("TSP: give exactly one of `coords` and `matrix`")
        if start not in ("auto", "nearest", "greedy", "hilbert", "strips", "random"):
            raise ValueError(f"TSP: `start` must be 'auto', 'nearest', 'greedy', 'hilbert', 'strips' or "
                             f"'random', got {start!r}")
        if start in ("greedy", "hilbert", "strips") and coords is None:
            raise ValueError(f"TSP: `start={start!r}` needs coordinates")
        best_known = check_number("TSP", "best_known", best_known, minimum=0)
        self.weight_type = "EXPLICIT" if matrix is not None else str(weight_type).upper()
        self.coords = None
        if matrix is not None:
            m = check_square("TSP", "matrix", matrix)
            if not np.array_equal(m, m.T):
                raise ValueError("TSP: `matrix` must be symmetric")
            if not np.all(m == np.round(m)) or m.min() < 0:
                raise ValueError("TSP: `matrix` must hold non-negative integers")
            n = m.shape[0]
            if m.size and m.max() > INT32_MAX:
                raise ValueError(f"TSP: `matrix` holds a distance of {m.max():.6g}; distances must stay below 2^31 "
                                 "(edge lengths are 32-bit integers on both backends)")
            self.matrix = m.astype(np.int32)
            np.fill_diagonal(self.matrix, 0)
        else:
            if self.weight_type not in COORDINATE_TYPES:
                raise ValueError(f"TSP: `weight_type` must be one of {COORDINATE_TYPES}, got {weight_type!r}")
            c = check_points("TSP", "coords", coords)
            n = c.shape[0]
            self.coords = geo_radians(c) if self.weight_type == "GEO" else c
            span = float(np.hypot(*(c.max(axis=0) - c.min(axis=0)))) if n else 0.0
            if self.weight_type != "GEO" and span + 1 > INT32_MAX:
                raise ValueError(f"TSP: `coords` span {span:.6g} units; edge lengths must stay below 2^31 "
                                 "(32-bit integers on both backends): scale the coordinates down")
            self.matrix = None
        check_size("TSP", n, 4)
        self.name, self.best_known, self.start = name, best_known, start
        if kick_window == "auto":
            kick_window = LOCAL_KICK_WINDOW if n >= LOCAL_KICK_FROM else None
        if kick_window is not None and (not isinstance(kick_window, (int, np.integer)) or kick_window < 4):
            raise ValueError(f"TSP: `kick_window` must be an integer >= 4, None or 'auto', got {kick_window!r}")
        self.kick_window = kick_window
        if isinstance(ascent_period, str) and ascent_period != "half":
            raise ValueError(f"TSP: `ascent_period` must be an integer >= 1, 'half' or None, got {ascent_period!r}")
        if ascent_period != "half":
            ascent_period = check_count("TSP", "ascent_period", ascent_period, 1)
        self.ascent_period = ascent_period
        if alpha_ties is not None and alpha_ties not in ALPHA_TIES:
            raise ValueError(f"TSP: `alpha_ties` must be 'length', 'penalised' or None, got {alpha_ties!r}")
        if alpha_ties is None:
            alpha_ties = "penalised" if n < PENALISED_TIES_BELOW else "length"
        self.alpha_ties = alpha_ties
        self.ascent_tours = None if ascent_tours is None else _tours_of(n, ascent_tours)
        c = self.coords
        #: coordinates are integers below 2^24 (exact in float32): the kernel then rounds lengths
        #: with exact integer tests instead of double square roots (decided once, not per load)
        self.integer_coords = (c is not None and self.weight_type != "GEO" and bool(np.all(c == np.round(c)))
                               and float(np.abs(c).max()) < 2**24)
        #: the neighbourhood was left to the default (2-opt): searches may pick their measured best
        self.default_neighbourhood = neighbourhood is None
        self._default_candidates = None   # default_ils's candidate lists, made on first use
        self._ascent = None               # the Held-Karp ascent (problems/alpha.py), made on first use
        self._alpha_tables = {}           # k -> the k α-nearest, made from it on first use
        neighbourhood = "2opt" if neighbourhood is None else neighbourhood
        if isinstance(neighbourhood, str) and neighbourhood.lower() in CANDIDATE_NEIGHBOURHOODS:
            if coords is None:
                raise ValueError(f"TSP: {neighbourhood!r} needs coordinates")
            candidates = quadrant_candidates(coords, min(10, len(coords) - 1))
            neighbourhood = CANDIDATE_NEIGHBOURHOODS[neighbourhood.lower()](candidates)
        if isinstance(neighbourhood, str):
            if neighbourhood.lower() not in NEIGHBOURHOODS:
                raise ValueError(f"TSP: `neighbourhood` must be one of "
                                 f"{sorted(NEIGHBOURHOODS) + sorted(CANDIDATE_NEIGHBOURHOODS)}, got {neighbourhood!r}")
            neighbourhood = NEIGHBOURHOODS[neighbourhood.lower()]()
        super().__init__(Permutation(n), neighbourhood)
        if self.matrix is None and n <= self.matrix_limit:
            everyone = np.arange(n)
            self.matrix = self.dist(everyone[:, None], everyone[None, :]).astype(np.int32)

    def default_ils(self, candidates=None) -> dict:
        """With the default neighbourhood and coordinates: candidate 2-opt over 10 quadrant
        candidates (``candidates``: K quadrant neighbours, or "alpha": the 5 α-nearest), each
        descent polished by Or-opt then candidate 3-opt (double-bridge kicks are the TSP's
        kick_moves): the ILS measured best (docs/benchmarks.md, "Defaults")."""
        if not self.default_neighbourhood or self.coords is None or self.n < 8:
            return {}
        if candidates is not None:
            table = self._alpha_lists(5) if candidates == "alpha" else self.candidate_lists(int(candidates))
            return {"neighbourhood": CandidateTwoOpt(table), "polish": candidate_polish(table)}
        if self._default_candidates is None:          # once per instance (its copies share them)
            self._default_candidates = quadrant_candidates(self.coords, min(10, self.n - 1))
        candidates = self._default_candidates
        return {"neighbourhood": CandidateTwoOpt(candidates), "polish": candidate_polish(candidates)}

    def candidate_lists(self, k: int, kind: str = "near") -> np.ndarray:
        """"near": quadrant neighbours from the coordinates (the ILS's kind; GEO or a matrix: the
        nearest); "alpha": the k α-nearest after the Held-Karp ascent (problems/alpha.py), the
        ascent and each k's lists made once per instance (the ascent checks the run's deadline)."""
        if kind == "alpha":
            return self._alpha_lists(k)
        if kind != "near" or self.coords is None or self.weight_type == "GEO":
            return super().candidate_lists(k, kind)
        return quadrant_candidates(self.coords, min(k, self.n - 1))

    def _alpha_lists(self, k: int) -> np.ndarray:
        if k not in self._alpha_tables:
            self._alpha_tables[k] = self._alpha_table(k, self._held_karp_ascent())
        return self._alpha_tables[k].copy()

    def _alpha_table(self, k: int, run, within_graph: bool = False) -> np.ndarray:
        """The k α-nearest after the ascent ``run``, ties of α in the order ``alpha_ties`` names."""
        penalised = self.alpha_ties == "penalised"
        return alpha_candidates(self, k, run, within_graph=within_graph, penalised_ties=penalised)[0]

    def _held_karp_ascent(self):
        """The ascent of ``ascent_period`` (problems/alpha.py), made once per instance."""
        if self._ascent is None:
            graph = None if self.ascent_tours is None else tour_graph(self, self.ascent_tours)
            self._ascent = ascent(self, self._period(), graph)
        return self._ascent

    def alpha_over_tours(self, tours, k: int, lists=None, within_graph: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The k α-nearest (int32, (n, k)) and the penalties of an ascent of the instance's period
        over the edges of ``tours`` (tour_graph) and of the candidate ``lists`` ((n, K), where
        given), without keeping them: FocusedACO's ``ant_lists`` makes them from its ants' tours
        and its lists inside a run (the lists' edges beside the tours', so that no city is left with
        fewer choices than the lists gave; docs/benchmarks/tsp-depth.md, "The ants' tours as the
        ascent's graph"). ``within_graph``: the k chosen among that graph's edges alone (LKH-3's
        POPMUSIC lists; ``alpha_candidates``), not among the quadrant neighbours beside; ties of α
        ordered as ``alpha_ties`` says."""
        if lists is not None:
            lists = np.asarray(lists)
            if lists.ndim != 2 or lists.shape[0] != self.n or lists.dtype.kind not in "iu" or \
                    lists.min() < 0 or lists.max() >= self.n:
                raise ValueError(f"TSP.alpha_over_tours: `lists` must be an ({self.n}, K) table of cities 0 .. "
                                 f"{self.n - 1}, got an array of shape {lists.shape} and type {lists.dtype}")
        run = ascent(self, self._period(), tour_graph(self, _tours_of(self.n, tours), lists))
        return self._alpha_table(k, run, within_graph), run.pi

    def _period(self) -> int:
        """The ascent's first period ``ascent_period`` names."""
        if self.ascent_period is None:
            return PERIOD
        return max(PERIOD, self.n // 2) if self.ascent_period == "half" else self.ascent_period

    def penalties(self) -> np.ndarray:
        """The Held-Karp ascent's city penalties π (problems/alpha.py; the α-lists' ascent, run here
        where they have not been made): the 5-opt chain's gain criterion reads d(a, b) + π_a + π_b."""
        return self._held_karp_ascent().pi

    def uniform_length(self) -> float:
        """UNIFORM_TOUR sqrt(n A), A the cities' bounding box's area: the expected optimal length
        of n Euclidean cities uniform over it; an estimate (``lsmgpu solve --reference uniform``)."""
        if self.coords is None or self.weight_type not in ("EUC_2D", "CEIL_2D"):
            raise ValueError(f"TSP: the uniform estimate needs Euclidean coordinates; "
                             f"{self.name} has {self.weight_type}")
        (x0, y0), (x1, y1) = self.coords.min(axis=0), self.coords.max(axis=0)
        return UNIFORM_TOUR * float(np.sqrt(self.n * (x1 - x0) * (y1 - y0)))

    def clustering(self) -> float:
        """How clustered the cities are: the variance-to-mean ratio of their counts over a square
        grid of cells holding CLUSTER_CELL cities on average across their bounding box. About 1
        for cities uniform over it (Poisson counts), more the more they cluster (the DIMACS
        challenge's clustered instances about 40, pla85900 9, rl11849 4), less for a lattice.
        O(n); `lsmgpu solve` reads it to choose between the tour segments and focused ACO."""
        if self.coords is None:
            raise ValueError(f"TSP: clustering needs coordinates; {self.name} has an explicit matrix")
        side = max(1, int(np.sqrt(self.n / CLUSTER_CELL)))
        low = self.coords.min(axis=0)
        span = np.maximum(self.coords.max(axis=0) - low, np.finfo(np.float64).tiny)
        cell = np.minimum((side * (self.coords - low) / span).astype(np.int64), side - 1)
        counts = np.bincount(cell[:, 0] * side + cell[:, 1], minlength=side * side)
        return float(counts.var() / counts.mean())

    def lower_bound(self, period: int | None = None) -> int:
        """The Held-Karp bound, rounded up (lengths are integers): no tour is shorter (problems/
        held_karp.py's held_karp_bound: on one core of the 2-core development machine 0.8 s at
        4,461 cities, 4 s at 18,512, most of it the ascent; its spanning trees on the GPU where one
        answers, 0.9 s at 18,512 cities and 4.8 s at 85,900 on the H100 machine). ``period``: the
        ascent's first period (None: the instance's ``ascent_period``); a longer one is tighter and
        slower: LKH's ``n // 2`` takes 0.04-0.28 points off the gap at 1,000-18,512 cities, for
        about 1.25 n iterations against 248 (docs/benchmarks/tsp-depth.md, "A longer ascent for
        the bound")."""
        chosen = self._period() if period is None else check_count("TSP.lower_bound", "period", period, 1)
        return int(np.ceil(held_karp_bound(self, chosen) - 1e-6))

    def colony_model(self, candidates: int | None = None) -> ColonyModel:
        """Tours built city after city: heuristic 1 / (d + 0.1) (ACOTSP's, finite for coincident
        cities), candidates the ``candidates`` nearest cities (from the coordinates, or the matrix)."""
        n = self.n
        eta = np.empty((n, n), dtype=np.float64)
        everyone = np.arange(n)
        for first in range(0, n, 1024):                      # rows in slices: no n x n int64 temporary
            rows = everyone[first:first + 1024]
            check_deadline("the colony's heuristic information was computed")
            eta[rows] = 1.0 / (self.dist(rows[:, None], everyone[None, :]) + 0.1)
        k = min(int(candidates or 0), n - 1)
        if not k or (self.coords is not None and self.weight_type != "GEO"):
            return ColonyModel("successor", eta, nearest_candidates(self.coords, k) if k else None)
        order = np.argsort(-eta, axis=1, kind="stable")       # nearest by the problem's own distances
        return ColonyModel("successor", eta, np.array([r[r != i][:k] for i, r in enumerate(order)], dtype=np.int32))

    def edge_distance(self) -> EdgeDistance:
        """Tour edges in TSPLIB rounding for the genetic algorithm (tsp_edge.cu.j2): from the
        matrix where the move kernels read one, else from the coordinates."""
        matrix = self.gpu_matrix or self.coords is None
        table = self.matrix if matrix else self.coords.astype(np.float32 if self.integer_coords else np.float64)
        return EdgeDistance(self.dist, table.ravel(), lambda: render_fragment(
            self, "tsp_edge.cu.j2", use_matrix=matrix, weight_type=self.weight_type,
            integer_coords=self.integer_coords))

    @classmethod
    def from_file(cls, path, **options) -> "TSP":
        """Read a TSPLIB ``.tsp``; take the optimum from an ``optimal.txt`` beside it."""
        inst = read_tsplib(path)
        options.setdefault("best_known", read_optimum(path))
        if inst.matrix is not None:
            return cls(matrix=inst.matrix, name=inst.name, **options)
        return cls(inst.coords, weight_type=inst.weight_type, name=inst.name, **options)

    @staticmethod
    def shipped(name: str) -> Path:
        """Path of a TSPLIB instance bundled with lsmgpu (e.g. "berlin52")."""
        return shipped(name if name.endswith(".tsp") else f"{name}.tsp")

    def dist(self, u, v) -> np.ndarray:
        """Distances between the cities ``u`` and ``v`` (arrays of indices); 0 from a city to
        itself (TSPLIB's GEO formula alone would give 1)."""
        if self.matrix is not None:
            return self.matrix[u, v].astype(np.int64)
        return np.where(u == v, 0, distance(self.weight_type, self.coords[u], self.coords[v]))

    def evaluate(self, tour):
        return int(self.dist(tour, np.roll(tour, -1)).sum())

    def edge_lengths(self, tour) -> np.ndarray:
        """succ[p]: the length of tour edge (tour[p], tour[p+1]); the deltas read the edges a move
        removes from it (one O(n) pass per call), so each move computes only the edges it adds."""
        return self.dist(tour, np.roll(tour, -1))

    def delta_twoopt(self, tour, moves):
        """2-opt: reverse tour[i..j]."""
        i, j = moves[:, 0], moves[:, 1]
        succ, d = self.edge_lengths(tour), self.dist
        after = (j + 1) % self.n
        return d(tour[i - 1], tour[j]) + d(tour[i], tour[after]) - succ[i - 1] - succ[j]

    def delta_swap(self, tour, moves):
        """Exchange the cities at positions i < j."""
        i, j = moves[:, 0], moves[:, 1]
        n, d, succ = self.n, self.dist, self.edge_lengths(tour)
        a, b = tour[i], tour[j]
        pa, na, pb, nb = tour[i - 1], tour[(i + 1) % n], tour[j - 1], tour[(j + 1) % n]
        added = d(pa, b) + d(b, na) + d(pb, a) + d(a, nb)
        general = added - succ[i - 1] - succ[i] - succ[j - 1] - succ[j]
        # for adjacent positions the general formula counts the edge (a, b) twice as removed
        adjacent = np.flatnonzero((j == i + 1) | ((i == 0) & (j == n - 1)))
        general[adjacent] += 2 * d(a[adjacent], b[adjacent])
        return general

    def delta_three(self, tour, moves):
        """3-exchange: rotate the cities at three positions."""
        pos, new = ThreeExchange.targets(tour, moves)
        return self._position_delta(tour, self.edge_lengths(tour), pos, new)

    def delta_block_exchange(self, tour, moves):
        """Block exchanges (Or-opt, candidate 3-opt)."""
        return self._exchange_delta(tour, self.edge_lengths(tour), moves)

    def _exchange_delta(self, tour, succ, moves):
        """Deltas of block exchanges (i, j, k, mode) (BlockExchange's modes; -1: the null move)."""
        i, j, k, mode = moves.T
        d = self.dist
        before, x_first, x_last = tour[i - 1], tour[i], tour[j]
        y_first, y_last, after = tour[(j + 1) % self.n], tour[k], tour[(k + 1) % self.n]
        added = np.where(mode == 0, d(before, y_first) + d(y_last, x_first) + d(x_last, after),
                         np.where(mode == 1, d(before, y_first) + d(y_last, x_last) + d(x_first, after),
                                  np.where(mode == 2, d(before, y_last) + d(y_first, x_first) + d(x_last, after),
                                           d(before, x_last) + d(x_first, y_last) + d(y_first, after))))
        return np.where(mode < 0, 0, added - succ[i - 1] - succ[j] - succ[k])

    def _position_delta(self, tour, succ, pos, new):
        """Length change when the positions ``pos`` (m, q) receive the cities ``new``: every
        tour edge touching a changed position, each counted once, new length minus old."""
        n = self.n
        edges = np.sort(np.concatenate([(pos - 1) % n, pos], axis=1), axis=1)     # (m, 2q) edge starts
        first = np.ones(edges.shape, dtype=bool)
        first[:, 1:] = edges[:, 1:] != edges[:, :-1]

        def city(t):                      # the city at position t (m,) after the move
            c = tour[t]
            for u in range(pos.shape[1]):
                c = np.where(pos[:, u] == t, new[:, u], c)
            return c

        total = np.zeros(len(pos), dtype=np.int64)
        for c in range(edges.shape[1]):
            e = edges[:, c]
            change = self.dist(city(e), city((e + 1) % n)) - succ[e]
            total += np.where(first[:, c], change, 0)
        return total

    def _start_kind(self) -> str:
        """The start tour's kind, "auto" resolved (greedy from GREEDY_FROM cities with coordinates)."""
        if self.start != "auto":
            return self.start
        return "greedy" if self.n > GREEDY_FROM and self.coords is not None else "nearest"

    @property
    def start_is_drawn(self) -> bool:
        """The nearest-neighbour and random starts are drawn from the seed; greedy, strips and
        Hilbert tours are one tour whatever the seed."""
        return self._start_kind() in ("nearest", "random")

    def initial_solution(self, rng):
        start = self._start_kind()
        if start == "random":
            return self.encoding.random(rng)
        if start == "strips":
            return strip_tour(self.coords)
        if start == "greedy":
            return greedy_tour(self.coords)
        if start == "hilbert":
            return hilbert_tour(self.coords)
        return nearest_neighbour_tour(self, int(rng.integers(self.n)))

    def perturb(self, tour, rng, strength):
        for _ in range(strength):
            tour = double_bridge(tour, rng, self.kick_window)
        return tour

    def kick_moves(self, tour, rng, strength):
        """``strength`` double bridges as moves of the neighbourhood (2-opt reversals or block
        exchanges), their cuts drawn as ``perturb`` draws them (the same kick for strength 1;
        later cuts fall on the layout the moves leave): the backend applies them where the
        tour lives. None for the swap neighbourhood (its ILS kicks through ``perturb``)."""
        if not self._bridges_as_moves():
            return None
        kicked = np.array(tour)             # the moves are found on a copy they kick in turn
        return np.concatenate([self.kick_of(kicked, self.kick_draws(rng)) for _ in range(strength)])

    def _bridges_as_moves(self) -> bool:
        """Whether the neighbourhood's moves make a double bridge (2-opt, block exchange)."""
        return self.neighbourhood.move_kind in ("twoopt", "block_exchange")

    def kick_draws(self, rng):
        """A double bridge's cuts (a, b, c), drawn as ``perturb`` draws them."""
        if not self._bridges_as_moves():
            return None
        return np.array(double_bridge_cuts(self.n, rng, self.kick_window), dtype=np.int32)

    def kick_of(self, tour, draws):
        """The double bridge of cuts ``draws`` as moves of the neighbourhood; ``tour`` is kicked."""
        return double_bridge_moves(self.neighbourhood, tour, tuple(int(v) for v in draws))

    def tabu_tenure(self):
        return (max(1, self.n // 10), max(2, self.n // 5))

    @property
    def gpu_matrix(self) -> bool:
        """Whether the kernel reads a distance table (explicit and GEO weights) rather than
        computing distances from coordinates (EUC_2D, CEIL_2D, ATT)."""
        return self.weight_type in ("EXPLICIT", "GEO") and self.matrix is not None

    def device_data(self):
        data = {}
        if self.gpu_matrix:
            data["dist"] = DeviceArray(self.matrix, "readonly")
        if isinstance(self.neighbourhood, OverCandidates):
            data["candidates"] = DeviceArray(self.neighbourhood.candidates.astype(np.int32).ravel(), "readonly")
        return data

    def solution_data(self, tour):
        """Tour-ordered state the kernel keeps current: edge lengths, and coordinates; for
        neighbourhoods over candidate lists also each city's position in the tour (their moves
        are found from it)."""
        state = {"succ": self.dist(tour, np.roll(tour, -1)).astype(np.int32)}
        if not self.gpu_matrix:
            dtype = np.float32 if self.integer_coords else np.float64
            state["xy"] = np.ascontiguousarray(self.coords[tour], dtype=dtype).ravel()
        if isinstance(self.neighbourhood, OverCandidates):
            pos = np.empty(self.n, dtype=np.int32)
            pos[np.asarray(tour)] = np.arange(self.n, dtype=np.int32)
            state["pos"] = pos
        return state

    def template_params(self):
        return {"weight_type": self.weight_type, "use_matrix": self.gpu_matrix, "integer_coords": self.integer_coords}

    def read_solution(self, path) -> np.ndarray:
        """The tour of a TSPLIB ``.tour`` file (``write_solution``'s, LKH's); ValueError naming the
        file and line where it is no tour of this instance."""
        return self.checked_solution(read_tour(path, self.n), path)

    def write_solution(self, tour, path) -> None:
        """Write ``tour`` as a TSPLIB ``.tour`` file."""
        write_tour(path, self.name, tour, self.evaluate(np.asarray(tour)))
