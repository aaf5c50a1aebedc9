"""α-nearness candidates and the Held-Karp lower bound (Helsgaun, EJOR 126 (2000), sections 4.1-4.2).

A minimum 1-tree (a spanning tree on the cities plus one more edge at a special leaf) is no
longer than any tour. Node penalties π change every edge (i, j) to c(i, j) + π_i + π_j, which
leaves the tours' order unchanged and lowers every tour by 2 Σ π; subgradient ascent on π
(π_i += t (d_i - 2), d the degrees in the 1-tree) raises the 1-tree's bound
w(π) = length(1-tree) - 2 Σ π towards the optimum (Held & Karp). At the best π, an edge's
α-value is how much the minimum 1-tree grows when it must contain that edge: 0 for the tree's
own edges; c(i, j) less the longest edge on the tree path from i to j otherwise. The 5 edges of
smallest α at each city hold almost all of an optimal tour's edges (Helsgaun: 99.9 % on his
instances), far more than the 5 nearest do.

Here the ascent runs over a sparse graph (the Delaunay triangulation of the coordinates with
each city's quadrant neighbours; the matrix's nearest cities without coordinates), as LKH does
with its sparse candidate sets: each iteration is one minimum spanning tree of O(n) edges
(Borůvka's rounds on the GPU from GPU_TREES_FROM cities where one answers, scipy's Kruskal
otherwise), and the path maxima come from one binary-lifting table over the tree, so the α of
all O(n) graph edges costs O(n log n). The bound over the sparse graph can exceed the bound over
the complete graph where the sparse tree misses an edge the complete one would take;
problems/held_karp.py's exact bound is the minimum 1-tree over every pair at the ascent's π.
scipy is imported where it is used, as in problems/candidates.py.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from lsmgpu.budget import check_deadline

from .candidates import on_gpu, quadrant_candidates

__all__ = ["Ascent", "Graph", "alpha_candidates", "ascent", "pool_alpha", "sparse_graph", "tour_graph"]

#: the ascent's graph: the triangulation's edges and each city's nearest in each quadrant (cities
#: the triangulation leaves out, duplicates, stay joined); its spanning trees take most of the time
ASCENT_NEIGHBOURS = 4
#: the α-candidates are chosen among the ascent's graph and these quadrant neighbours (2 a quadrant)
GRAPH_NEIGHBOURS = 8
#: from this many cities the ascent's spanning trees and the exact bound's come from the GPU where one
#: answers (H100: a tree of 3,038 cities 0.44 ms against scipy's 2.0 ms, of 1,002 cities 0.30 against
#: 0.50; benchmarks/probes/ascent_trees.py)
GPU_TREES_FROM = 2000
#: LKH's INITIAL_PERIOD in its POPMUSIC configuration: iterations of one step size at first
PERIOD = 100


@dataclass
class Ascent:
    """The subgradient ascent's outcome: the best penalties ``pi`` (float64, one per city),
    the bound they give over the graph (``bound``) with its 1-tree's special city, the graph's
    edges (u < v) and their lengths, the iterations made, its seconds, and whether a 1-tree was
    a tour (``tour``: then the bound is the optimum)."""

    pi: np.ndarray
    bound: float
    special: int
    u: np.ndarray
    v: np.ndarray
    length: np.ndarray
    iterations: int
    seconds: float
    tour: bool


def sparse_graph(tsp, neighbours: int = GRAPH_NEIGHBOURS) -> tuple[np.ndarray, np.ndarray]:
    """Edges (u, v), u < v, int64: the Delaunay triangulation (planar coordinates) together with
    every city's ``neighbours`` quadrant (planar) or nearest (GEO, matrix) neighbours; edges
    joining the graph's pieces are added where the lists alone leave it disconnected."""
    from scipy.spatial import Delaunay, QhullError
    n = tsp.n
    u, v = _near_edges(tsp, neighbours)
    if tsp.coords is not None and tsp.weight_type != "GEO" and n >= 3:
        try:
            simplices = Delaunay(tsp.coords).simplices.astype(np.int64)
            u = np.concatenate([u, simplices[:, 0], simplices[:, 1], simplices[:, 2]])
            v = np.concatenate([v, simplices[:, 1], simplices[:, 2], simplices[:, 0]])
        except QhullError:                          # all cities on a line: the neighbours alone
            pass
    u, v = _unique_edges(n, u, v)
    return _connected(tsp, u, v)


def tour_graph(tsp, tours, lists=None) -> tuple[np.ndarray, np.ndarray]:
    """Edges (u, v), u < v, int64: every edge of the ``tours`` (rows of cities) and, where given, of
    the candidate ``lists`` ((n, K): each city to its K), pieces joined as in sparse_graph. Good
    tours' edges, as LKH's POPMUSIC candidate graph holds good subtours': over them the short
    ascent's α-lists descend closer on the rl instances than over the triangulation
    (benchmarks/probes/lists_descent.py; docs/benchmarks/tsp-depth.md, "Bridging moves")."""
    tours = np.asarray(tours, dtype=np.int64)
    u, v = tours.ravel(), np.roll(tours, -1, axis=1).ravel()
    if lists is not None:
        lists = np.asarray(lists, dtype=np.int64)
        u, v = np.r_[u, np.repeat(np.arange(tsp.n), lists.shape[1])], np.r_[v, lists.ravel()]
    return _connected(tsp, *_unique_edges(tsp.n, u, v))


def _near_edges(tsp, neighbours: int) -> tuple[np.ndarray, np.ndarray]:
    """Edges (city, neighbour), int64, to each city's ``neighbours`` quadrant neighbours (planar
    coordinates) or nearest cities by the problem's own distances (GEO, matrix)."""
    k = min(neighbours, tsp.n - 1)
    planar = tsp.coords is not None and tsp.weight_type != "GEO"
    table = quadrant_candidates(tsp.coords, k) if planar else _nearest_by_distance(tsp, k)
    return np.repeat(np.arange(tsp.n, dtype=np.int64), table.shape[1]), table.ravel().astype(np.int64)


def _nearest_by_distance(tsp, k: int) -> np.ndarray:
    """(n, k): every city's k nearest by the problem's own distances, a block of rows at a time."""
    n, rows = tsp.n, []
    everyone = np.arange(n)
    for first in range(0, n, 512):
        block = everyone[first:first + 512]
        d = tsp.dist(block[:, None], everyone[None, :]).astype(np.float64)
        d[np.arange(len(block)), block] = np.inf
        rows.append(np.argsort(d, axis=1, kind="stable")[:, :k])
    return np.concatenate(rows).astype(np.int32)


def _unique_edges(n: int, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keep = lo != hi
    key = np.unique(lo[keep] * n + hi[keep])
    return key // n, key % n


def _connected(tsp, u, v) -> tuple[np.ndarray, np.ndarray]:
    """The graph with one edge from each piece's first city to the next piece's (clusters whose
    neighbour lists stay inside them), so that every spanning tree spans all cities."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    n = tsp.n
    pieces, label = connected_components(coo_matrix((np.ones(len(u)), (u, v)), shape=(n, n)), directed=False)
    if pieces == 1:
        return u, v
    _, first = np.unique(label, return_index=True)        # each piece's first city, pieces in order
    return _unique_edges(n, np.concatenate([u, first[:-1]]), np.concatenate([v, first[1:]]))


@dataclass
class OneTree:
    """A minimum 1-tree over a graph: its tree edges (indices into the graph's edges), the special
    leaf and its second edge (an index, or -1 when the leaf has no other edge), every city's
    degree, and its length under the penalties."""

    tree: np.ndarray
    special: int
    second: int
    degree: np.ndarray
    length: float


class Graph:
    """A sparse graph's edges (u < v, sorted by u n + v: the order of its CSR matrix's entries,
    so that each iteration of the ascent writes its weights straight into the matrix), and each
    city's edges (ascending). Its spanning trees come from the GPU with ``on_gpu`` where one
    answers (lsmgpu/backends/cuda/spanning.py; ``close()`` frees it), else from scipy's Kruskal."""

    def __init__(self, n: int, u: np.ndarray, v: np.ndarray, on_gpu: bool = False):
        from scipy.sparse import coo_matrix
        self.n, self.u, self.v = n, u, v
        self.keys = u * n + v
        if len(self.keys) > 1 and not np.all(np.diff(self.keys) > 0):
            raise ValueError("alpha: a graph's edges must be unique, u < v, sorted by u n + v")
        self.matrix = coo_matrix((np.ones(len(u)), (u, v)), shape=(n, n)).tocsr()
        ends, edges = np.r_[u, v], np.r_[np.arange(len(u)), np.arange(len(u))]
        order = np.lexsort((edges, ends))
        self.incident = edges[order]                             # each city's edges, city by city
        self.first = np.searchsorted(ends[order], np.arange(n + 1))
        self.has_edges = np.diff(self.first) > 0
        self.gpu = _gpu_trees(n, u, v) if on_gpu else None

    def close(self) -> None:
        if self.gpu is not None:
            self.gpu.close()
            self.gpu = None

    def spanning_tree(self, weight: np.ndarray) -> np.ndarray:
        """A minimum spanning tree's edges (ascending indices) under ``weight``."""
        if self.gpu is not None:
            return self.gpu.tree(weight)
        from scipy.sparse.csgraph import minimum_spanning_tree
        self.matrix.data = weight + (1.0 - float(weight.min()))       # scipy drops zero weights
        tree = minimum_spanning_tree(self.matrix).tocoo()
        return np.sort(np.searchsorted(self.keys, np.minimum(tree.row, tree.col).astype(np.int64) * self.n
                                       + np.maximum(tree.row, tree.col)))

    def tree_ends(self, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A minimum spanning tree's edges (ascending) under ``weight``, every city's degree in
        it and its cheapest edge outside it (inf where none): the GPU's own where it makes the tree."""
        tree_edges = self.spanning_tree(weight)
        if self.gpu is not None:
            return (tree_edges, *self.gpu.ends())
        degree = np.bincount(self.u[tree_edges], minlength=self.n) + np.bincount(self.v[tree_edges], minlength=self.n)
        outside = weight.copy()
        outside[tree_edges] = np.inf
        cheapest = np.full(self.n, np.inf)
        cheapest[self.has_edges] = np.minimum.reduceat(outside[self.incident], self.first[:-1][self.has_edges])
        return tree_edges, degree, cheapest

    def one_tree(self, weight: np.ndarray) -> OneTree:
        """The minimum spanning tree under ``weight``, closed into a 1-tree LKH's way: the special
        city is the leaf whose cheapest edge outside the tree is the longest, and that edge is
        added (removing a leaf from a minimum spanning tree leaves one of the other cities, and a
        leaf's tree edge is its cheapest; so this is the minimum 1-tree with that city special)."""
        u, v = self.u, self.v
        tree_edges, degree, cheapest = self.tree_ends(weight)
        leaves = np.flatnonzero(degree == 1)
        special = int(leaves[np.argmax(np.where(np.isfinite(cheapest[leaves]), cheapest[leaves], -np.inf))])
        length = float(weight[tree_edges].sum())
        second = -1
        if np.isfinite(cheapest[special]):
            mine = self.incident[self.first[special]:self.first[special + 1]]
            at = np.minimum(np.searchsorted(tree_edges, mine), len(tree_edges) - 1)
            outside = mine[tree_edges[at] != mine]
            second = int(outside[np.argmin(weight[outside])])
            length += float(weight[second])
            degree[u[second]] += 1
            degree[v[second]] += 1
        return OneTree(tree_edges, special, second, degree, length)


def _gpu_trees(n: int, u: np.ndarray, v: np.ndarray):
    """The graph's spanning trees on the GPU (GpuSpanningTrees), or None (no GPU answers, or it
    failed: announced)."""
    def make():
        from lsmgpu.backends.cuda.spanning import GpuSpanningTrees
        return GpuSpanningTrees(n, u, v)
    return on_gpu(make, "the Held-Karp ascent's spanning trees", "scipy's Kruskal on the host makes them")


def ascent(tsp, period: int = PERIOD, graph=None) -> Ascent:
    """Subgradient ascent on the penalties over the sparse graph, LKH's schedule (Helsgaun 2000,
    section 4.1): the step t starts at 1 and doubles while the bound improves in the initial
    phase; each period of ``period`` iterations ends with t and the period halved; the move is
    t (0.7 v + 0.3 v_previous), v = degree - 2. Stops when t, the period or the norm of v
    (a tour) reaches 0. It checks the run's deadline every iteration (DeadlineReached)."""
    t0 = time.perf_counter()
    n = tsp.n
    u, v = sparse_graph(tsp, ASCENT_NEIGHBOURS) if graph is None else graph
    sparse = Graph(n, u, v, on_gpu=n >= GPU_TREES_FROM)
    try:
        return _ascend(sparse, tsp.dist(u, v).astype(np.float64), period, t0)
    finally:
        sparse.close()


def _ascend(sparse: Graph, length: np.ndarray, period: int, t0: float) -> Ascent:
    """ascent's iterations over the graph ``sparse`` with edge lengths ``length``."""
    n, u, v = sparse.n, sparse.u, sparse.v
    pi = np.zeros(n)
    tree = sparse.one_tree(length)
    best_w, best_pi, special = tree.length, pi.copy(), tree.special
    direction = tree.degree - 2.0
    last = direction.copy()
    norm = float(direction @ direction)
    best_norm = norm
    step, initial_phase, iterations = 1.0, True, 0
    span = max(1, int(period))
    while span > 0 and step > 0 and norm != 0:
        p = 1
        while step > 0 and p <= span and norm != 0:
            check_deadline("the Held-Karp ascent ended")
            pi += step * (0.7 * direction + 0.3 * last)
            last = direction
            tree = sparse.one_tree(length + pi[u] + pi[v])
            iterations += 1
            w = tree.length - 2.0 * pi.sum()
            direction = tree.degree - 2.0
            norm = float(direction @ direction)
            if w > best_w or (w == best_w and norm < best_norm):
                best_w, best_norm, best_pi, special = w, norm, pi.copy(), tree.special
                if initial_phase:
                    step *= 2
            elif initial_phase and p > span // 2:
                initial_phase, p, step = False, 0, 3 * step / 4
            p += 1
        span //= 2
        step /= 2
    return Ascent(best_pi, float(best_w), special, u, v, length, iterations, time.perf_counter() - t0, best_norm == 0)


def _lifting(n: int, a: np.ndarray, b: np.ndarray, weight: np.ndarray):
    """Binary-lifting tables of the spanning tree of edges (a, b) with ``weight``, rooted at city 0:
    ``up[k][c]`` is c's ancestor 2^k edges up (the root its own), ``longest[k][c]`` the longest
    edge on the way there, and every city's depth; pointer jumping, vectorised over the cities
    (log n rounds)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order
    adjacency = coo_matrix((np.ones(2 * len(a)), (np.r_[a, b], np.r_[b, a])), shape=(n, n)).tocsr()
    _, parent = breadth_first_order(adjacency, 0, directed=False, return_predecessors=True)
    parent = parent.astype(np.int64)
    root = parent < 0
    parent[root] = np.flatnonzero(root)
    edge = np.zeros(n)
    child = np.where(parent[a] == b, a, b)          # the endpoint whose parent is the other
    edge[child] = weight
    up, longest = [parent], [edge]
    depth, ancestor = (~root).astype(np.int64), parent
    while (1 << len(up)) <= n:
        depth = depth + depth[ancestor]
        ancestor = ancestor[ancestor]
        longest.append(np.maximum(longest[-1], longest[-1][up[-1]]))
        up.append(up[-1][up[-1]])
    depth = depth + depth[ancestor]                 # 2^levels >= n hops: every depth complete
    return up, longest, depth


def path_longest(lifting, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The longest edge on the tree path between cities a[i] and b[i] (0 where a[i] == b[i])."""
    up, longest, depth = lifting
    a, b = a.astype(np.int64).copy(), b.astype(np.int64).copy()
    swap = depth[a] < depth[b]
    a[swap], b[swap] = b[swap], a[swap]
    result = np.zeros(len(a))
    rise = depth[a] - depth[b]
    for k in range(len(up)):                        # lift a to b's depth
        move = (rise >> k) & 1 == 1
        result[move] = np.maximum(result[move], longest[k][a[move]])
        a[move] = up[k][a[move]]
    for k in reversed(range(len(up))):              # both up while their ancestors differ
        move = up[k][a] != up[k][b]
        result[move] = np.maximum(result[move], np.maximum(longest[k][a[move]], longest[k][b[move]]))
        a[move], b[move] = up[k][a[move]], up[k][b[move]]
    last = a != b
    return np.where(last, np.maximum(result, np.maximum(longest[0][a], longest[0][b])), result)


def alpha_values(n: int, u, v, weight, tree: OneTree, at=None) -> np.ndarray:
    """α of the edges ``at`` = (a, b, their penalised weights) (default: the graph's own edges)
    against the 1-tree ``tree`` of the graph (u, v) under ``weight``: at the special city, the
    edge less the special's second edge; elsewhere the edge less the longest edge on the tree
    path between its ends (0 on the tree itself; the special is a leaf, so no such path passes it)."""
    a, b, w = (u, v, weight) if at is None else at
    alpha = w - path_longest(_lifting(n, u[tree.tree], v[tree.tree], weight[tree.tree]), a, b)
    if tree.second >= 0:
        special = (a == tree.special) | (b == tree.special)
        alpha[special] = w[special] - weight[tree.second]
    return np.maximum(alpha, 0.0)


def pool_alpha(tsp, run: Ascent, within_graph: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The edges the α-candidates are chosen from (u < v: the ascent's graph and every city's
    GRAPH_NEIGHBOURS quadrant or nearest neighbours; ``within_graph``: the graph's alone), their
    lengths and their α at the ascent's penalties."""
    n, u, v = tsp.n, run.u, run.v
    weight = run.length + run.pi[u] + run.pi[v]
    tree = Graph(n, u, v).one_tree(weight)
    near_u, near_v = (np.zeros(0, np.int64),) * 2 if within_graph else _near_edges(tsp, GRAPH_NEIGHBOURS)
    pu, pv = _unique_edges(n, np.r_[u, near_u], np.r_[v, near_v])
    length = tsp.dist(pu, pv).astype(np.float64)
    return pu, pv, length, alpha_values(n, u, v, weight, tree, (pu, pv, length + run.pi[pu] + run.pi[pv]))


def alpha_candidates(tsp, k: int = 5, run: Ascent | None = None, within_graph: bool = False,
                     penalised_ties: bool = False) -> tuple[np.ndarray, Ascent]:
    """(n, k) int32: every city's k neighbours of smallest α among the ascent's graph and its
    GRAPH_NEIGHBOURS quadrant (or nearest) neighbours (``within_graph``: among the graph's edges
    alone, as LKH-3 orders its POPMUSIC candidates, the edges of good tours), after the ascent
    (``run``, or a new one); and the Ascent. Ties of α (most of a clustered instance's edges have
    α 0) go to the shorter edge, c(i, j). ``penalised_ties``: to the edge shorter under the
    penalties, c(i, j) + π_i + π_j, LKH-3's order, which holds more of the optimal tour's edges
    (pr1002 99.40 % against 99.30, rl5915 99.17 against 99.09) and kept rl5915's colonies out of
    their trap, but left FocusedACO's 60 s runs on rl11849 at 0.07-0.15 % against 0.009-0.048; a
    TSP's lists take the order its ``alpha_ties`` names, by default by size
    (docs/benchmarks/tsp-depth.md, "α's ties by size"). A city with fewer than k such neighbours repeats
    its last one (the searches skip a candidate already tried)."""
    n = tsp.n
    k = min(int(k), n - 1)
    run = ascent(tsp) if run is None else run
    pu, pv, length, alpha = pool_alpha(tsp, run, within_graph)
    tie = length + run.pi[pu] + run.pi[pv] if penalised_ties else length
    return first_per_city(n, pu, pv, alpha, tie, k), run


def first_per_city(n: int, u: np.ndarray, v: np.ndarray, key: np.ndarray, tie: np.ndarray,
                   k: int) -> np.ndarray:
    """(n, k) int32: each city's first k neighbours over the edges (u, v) in the order of ``key``,
    ties broken by ``tie``; a city with fewer than k neighbours repeats its last one."""
    city, other = np.r_[u, v], np.r_[v, u]
    order = np.lexsort((np.r_[tie, tie], np.r_[key, key], city))
    city, other = city[order], other[order]
    start = np.searchsorted(city, np.arange(n))
    count = np.diff(np.r_[start, len(city)])
    rank = np.minimum(np.arange(k)[None, :], count[:, None] - 1)
    return other[start[:, None] + rank].astype(np.int32)
