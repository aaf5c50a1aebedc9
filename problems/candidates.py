"""Candidate lists and start tours for large TSPs, in O(n log n) with a k-d tree.

Candidate lists bound a neighbourhood to promising edges (Fosin et al.; Johnson & McGeoch):
each city keeps its k nearest cities, or k/4 nearest in each of the four quadrants around it
(better on clustered instances). The lists never need an n x n matrix. scipy's k-d tree is
imported where it is used: importing the problems (a QAP's command, a Ray worker) does not pay
scipy.spatial's import (0.65 s).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from lsmgpu.backends.base import HOST_THREADS

__all__ = ["nearest_candidates", "quadrant_candidates", "merged_candidates", "greedy_tour", "hilbert_tour",
           "strip_tour"]


def _check(coords: np.ndarray, k: int) -> np.ndarray:
    coords = np.asarray(coords, dtype=np.float64)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise ValueError(f"candidates: `coords` must have shape (n, 2), got {coords.shape}")
    if not 1 <= k < len(coords):
        raise ValueError(f"candidates: `k` must be in [1, n - 1] = [1, {len(coords) - 1}], got {k}")
    return coords


#: from this many cities the nearest cities come from the GPU where one answers (1,000,000 cities:
#: about 3 s of a 16-core k-d tree query), a k-d tree otherwise
GPU_NEAREST_FROM = 200_000


def _neighbours(coords: np.ndarray, count: int) -> np.ndarray:
    """(n, count): every city's ``count`` nearest other cities, nearest first: from the GPU at
    scale (lsmgpu/backends/cuda/nearest.py; ties to the lower index), else from one k-d tree query
    over all cores (the city itself dropped, wherever ties put it)."""
    if len(coords) >= GPU_NEAREST_FROM:
        lists = _nearest_on_gpu("nearest_on_gpu", coords, count)
        if lists is not None:
            return lists
    return _tree_neighbours(coords, count)


def _tree_neighbours(coords: np.ndarray, count: int) -> np.ndarray:
    """_neighbours from the k-d tree alone."""
    from scipy.spatial import cKDTree
    dist, idx = cKDTree(coords).query(coords, count + 1, workers=-1)
    if np.array_equal(idx[:, 0], np.arange(len(coords))):     # no coincident cities ahead of any city
        return idx[:, 1:]
    order = np.argsort(idx == np.arange(len(coords))[:, None], axis=1, kind="stable")[:, :count]
    return np.take_along_axis(idx, order, axis=1)


def on_gpu(make, what: str, instead: str):
    """``make()``, work of lsmgpu.backends.cuda's, or None where no GPU answers or that work fails
    (announced: ``what`` failed on the GPU, ``instead`` says what the host does)."""
    from lsmgpu.backends import cuda_available
    from lsmgpu.errors import LsmgpuError, announce_fallback
    if not cuda_available()[0]:
        return None
    try:
        return make()
    except LsmgpuError as exc:
        announce_fallback(f"{what}: the GPU's failed ({exc}); {instead}")
        return None


def _nearest_on_gpu(function: str, coords: np.ndarray, *sizes) -> np.ndarray | None:
    """lsmgpu.backends.cuda.nearest's ``function`` on the coordinates (``on_gpu``)."""
    def make():
        from lsmgpu.backends.cuda import nearest
        return getattr(nearest, function)(coords, *sizes)
    return on_gpu(make, "candidate lists: the nearest cities", "a k-d tree on the host makes them")


def nearest_candidates(coords, k: int) -> np.ndarray:
    """(n, k) int32: each city's k nearest other cities, nearest first (Euclidean)."""
    coords = _check(coords, k)
    return _neighbours(coords, k).astype(np.int32)


def quadrant_candidates(coords, k: int) -> np.ndarray:
    """(n, k) int32: up to k/4 nearest cities in each quadrant around each city, the rest of the
    k slots filled with the nearest cities not yet chosen; each row nearest first. From
    GPU_NEAREST_FROM cities all on the GPU where one answers; else vectorised over blocks of
    QUADRANT_ROWS cities (the block's arrays stay in the cache), the blocks over threads."""
    coords = _check(coords, k)
    n = len(coords)
    per = max(1, k // 4)
    pool = min(n - 1, max(4 * k, 32))
    if n >= GPU_NEAREST_FROM:
        lists = _nearest_on_gpu("quadrant_on_gpu", coords, k, pool)
        if lists is not None:
            return lists
    others = _tree_neighbours(coords, pool)     # nearest first (where the GPU could serve, it did above)
    out = np.empty((n, k), dtype=np.int32)

    def block(first):
        rows = slice(first, first + QUADRANT_ROWS)
        out[rows] = _quadrant_rows(coords, coords[rows], others[rows], k, per, pool)
    with ThreadPoolExecutor(HOST_THREADS) as threads:      # NumPy lets go of the GIL
        list(threads.map(block, range(0, n, QUADRANT_ROWS)))
    return out


def merged_candidates(first: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """(n, K) int32, K = extra's columns (at least first's): each city's ``first`` candidates in
    their order, then its ``extra`` ones not among them in theirs, up to K (LKH's extra candidate
    sets, e.g. the 5 α-nearest and the quadrant neighbours: the α-nearest miss edges of optimal
    tours that the quadrants catch)."""
    first, extra = np.asarray(first), np.asarray(extra)
    if first.shape[0] != extra.shape[0] or first.shape[1] > extra.shape[1]:
        raise ValueError(f"merged_candidates: first {first.shape} and extra {extra.shape} lists need the same cities "
                         "and at least as many extra columns")
    seen = (extra[:, :, None] == first[:, None, :]).any(axis=2)
    both = np.concatenate([first, extra], axis=1)
    again = np.concatenate([np.zeros(first.shape, dtype=bool), seen], axis=1)
    order = np.argsort(again, axis=1, kind="stable")[:, :extra.shape[1]]
    return np.take_along_axis(both, order, axis=1).astype(np.int32)


#: cities a block of quadrant_candidates's selection
QUADRANT_ROWS = 16384


def _quadrant_rows(coords, mine, others, k: int, per: int, pool: int) -> np.ndarray:
    """The quadrant choice of the rows ``mine`` (their coordinates) among their ``others`` (each
    row's pool, nearest first)."""
    quadrant = ((coords[others, 0] >= mine[:, :1]).astype(np.int8) * 2
                + (coords[others, 1] >= mine[:, 1:]))
    count = np.int16 if pool < 2**15 else np.int64               # running counts up to the pool's size
    chosen = np.zeros(others.shape, dtype=bool)
    for q in range(4):                                         # each quadrant's `per` nearest
        inside = quadrant == q
        chosen |= inside & (np.cumsum(inside, axis=1, dtype=count) <= per)
    if 4 * per > k:                                            # k < 4: the first k quadrants' picks
        key = np.where(chosen, quadrant.astype(np.int64) * pool + np.arange(pool), 4 * pool)
        chosen &= key <= np.sort(key, axis=1)[:, k - 1:k]
    missing = k - chosen.sum(axis=1, keepdims=True)            # fill with the nearest remaining
    chosen |= ~chosen & (np.cumsum(~chosen, axis=1, dtype=count) <= missing)
    # every row now holds exactly k chosen entries, in pool (distance) order
    return others[chosen].reshape(len(mine), k)


def greedy_tour(coords, k: int = 10) -> np.ndarray:
    """Greedy edge matching: take candidate edges shortest first when both ends have degree < 2
    and no cycle closes early (union-find); join the fragments end to end, nearest first."""
    from scipy.spatial import cKDTree
    coords = np.asarray(coords, dtype=np.float64)
    n = len(coords)
    cand = nearest_candidates(coords, min(k, n - 1))
    u = np.repeat(np.arange(n), cand.shape[1])
    v = cand.ravel().astype(np.int64)
    keep = u < v
    u, v = u[keep], v[keep]
    length = np.hypot(*(coords[u] - coords[v]).T)
    parent = list(range(n))                          # Python lists: the loop below reads them item by item

    def root(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    degree, full = [0] * n, np.zeros(n, dtype=bool)
    links = [[] for _ in range(n)]
    order = np.argsort(length, kind="stable")
    for first in range(0, len(order), 1 << 16):      # edges in order, a block at a time: an edge with an
        block = order[first:first + (1 << 16)]         # end of degree 2 at the block's start stays invalid
        block = block[~full[u[block]] & ~full[v[block]]]
        for a, b in zip(u[block].tolist(), v[block].tolist()):
            if degree[a] < 2 and degree[b] < 2 and root(a) != root(b):
                parent[root(a)] = root(b)
                degree[a] += 1
                degree[b] += 1
                links[a].append(b)
                links[b].append(a)
                full[a], full[b] = degree[a] == 2, degree[b] == 2
    # walk the fragments (paths); join each to the next by the nearest free end, from a k-d tree of
    # the ends rebuilt over the free ones when none of a city's 64 nearest is free (no O(ends^2) scans)
    ends = np.flatnonzero(np.array(degree) < 2)
    slot = {int(c): s for s, c in enumerate(ends)}
    free, left = np.ones(len(ends), dtype=bool), len(ends)
    active, tree = np.arange(len(ends)), cKDTree(coords[ends])
    tour, seen = [], bytearray(n)
    start = int(ends[0])
    while True:
        free[slot[start]] = False
        left -= 1
        prev, city = -1, start
        while True:                            # follow the path to its other end
            tour.append(city)
            seen[city] = 1
            nxt = [c for c in links[city] if c != prev and not seen[c]]
            if not nxt:
                break
            prev, city = city, nxt[0]
        if city in slot and free[slot[city]]:
            free[slot[city]] = False
            left -= 1
        if left == 0:
            break
        while True:
            _, near = tree.query(coords[city], min(64, len(active)))
            near = active[np.atleast_1d(near)]
            hits = near[free[near]]
            if hits.size:
                start = int(ends[hits[0]])
                break
            active = np.flatnonzero(free)
            tree = cKDTree(coords[ends[active]])
    return np.array(tour, dtype=np.int32)


#: levels of the Hilbert curve a step of hilbert_tour reads (a table of 4 states x 2^(2 LEVELS) rows)
HILBERT_LEVELS = 4


@cache
def _hilbert_tables(levels: int) -> tuple[np.ndarray, np.ndarray]:
    """The Hilbert curve as a 4-state automaton read ``levels`` levels a step: for (state, the
    levels' x bits, their y bits), the curve's 2 ``levels`` bits and the next state. A state is the
    turn the levels above left on the ones below: swapped (x, y) and/or both complemented."""
    width = 1 << levels
    digits = np.zeros(4 * width * width, dtype=np.uint32)
    nexts = np.zeros(4 * width * width, dtype=np.uint8)
    for state in range(4):
        for xs in range(width):
            for ys in range(width):
                complemented, swapped, d = state & 1, state >> 1, 0
                for level in range(levels - 1, -1, -1):
                    bx, by = (xs >> level) & 1, (ys >> level) & 1
                    if swapped:
                        bx, by = by, bx
                    rx, ry = bx ^ complemented, by ^ complemented
                    d = (d << 2) | ((3 * rx) ^ ry)
                    if not ry:
                        swapped ^= 1
                        complemented ^= rx
                row = (state * width + xs) * width + ys
                digits[row], nexts[row] = d, complemented | (swapped << 1)
    return digits, nexts


def _cells(values: np.ndarray, top: int) -> np.ndarray:
    """``values`` spread over the cells 0 .. ``top`` of their range (a column at a time: a
    reduction down a column of an (n, 2) array is ten times slower)."""
    lo = values.min()
    span = values.max() - lo
    return ((values - lo) / (span if span > 0 else 1) * top).astype(np.uint32)


def hilbert_tour(coords, order: int = 16) -> np.ndarray:
    """Cities sorted along a Hilbert curve of 2^order x 2^order cells over the bounding box
    (O(n log n)): HILBERT_LEVELS levels of the curve a step through _hilbert_tables, then a sort."""
    coords = np.asarray(coords, dtype=np.float64)
    if order % HILBERT_LEVELS or not 0 < order <= 16:
        raise ValueError(f"hilbert_tour: `order` must be a multiple of {HILBERT_LEVELS} up to 16, got {order}")
    digits, nexts = _hilbert_tables(HILBERT_LEVELS)
    x, y = (_cells(coords[:, axis], (1 << order) - 1) for axis in (0, 1))
    mask, width = np.uint32((1 << HILBERT_LEVELS) - 1), 1 << HILBERT_LEVELS
    d = np.zeros(len(coords), dtype=np.uint32)
    state = np.zeros(len(coords), dtype=np.uint32)
    for shift in range(order - HILBERT_LEVELS, -1, -HILBERT_LEVELS):
        row = (state * width + ((x >> shift) & mask)) * width + ((y >> shift) & mask)
        d = (d << np.uint32(2 * HILBERT_LEVELS)) | digits[row]
        state = nexts[row].astype(np.uint32)
    return np.argsort(d, kind="stable").astype(np.int32)


def strip_tour(coords: np.ndarray) -> np.ndarray:
    """Boustrophedon start for large instances: cut the plane into about sqrt(n / 2) vertical
    strips, visit each strip's cities by y, alternately up and down (O(n log n), typically
    25-40 % above optimal, where a nearest-neighbour tour costs O(n^2))."""
    n = len(coords)
    x, y = coords[:, 0], coords[:, 1]
    strips = max(1, int(np.sqrt(n / 2)))
    span = (x.max() - x.min()) or 1.0
    strip = np.minimum(((x - x.min()) / span * strips).astype(np.int64), strips - 1)
    key_y = np.where(strip % 2 == 0, y, -y)
    return np.lexsort((key_y, strip)).astype(np.int32)
