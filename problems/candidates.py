"""Candidate lists and start tours for large TSPs, in O(n log n) with a k-d tree.

Candidate lists bound a neighbourhood to promising edges (Fosin et al.; Johnson & McGeoch):
each city keeps its k nearest cities, or k/4 nearest in each of the four quadrants around it
(better on clustered instances). The lists never need an n x n matrix.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["nearest_candidates", "quadrant_candidates", "greedy_tour", "hilbert_tour"]


def _check(coords: np.ndarray, k: int) -> np.ndarray:
    coords = np.asarray(coords, dtype=np.float64)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise ValueError(f"candidates: `coords` must have shape (n, 2), got {coords.shape}")
    if not 1 <= k < len(coords):
        raise ValueError(f"candidates: `k` must be in [1, n - 1] = [1, {len(coords) - 1}], got {k}")
    return coords


def nearest_candidates(coords, k: int) -> np.ndarray:
    """(n, k) int32: each city's k nearest other cities, nearest first (Euclidean)."""
    coords = _check(coords, k)
    _, idx = cKDTree(coords).query(coords, k + 1)
    n = len(coords)
    out = np.empty((n, k), dtype=np.int32)
    for row in range(n):                       # drop the city itself (not always column 0 on ties)
        others = idx[row][idx[row] != row]
        out[row] = others[:k]
    return out


def quadrant_candidates(coords, k: int) -> np.ndarray:
    """(n, k) int32: up to k/4 nearest cities in each quadrant around each city, the rest of the
    k slots filled with the nearest cities not yet chosen; each row nearest first."""
    coords = _check(coords, k)
    n = len(coords)
    per = max(1, k // 4)
    pool = min(n - 1, max(4 * k, 32))
    dist, idx = cKDTree(coords).query(coords, pool + 1)
    out = np.empty((n, k), dtype=np.int32)
    for row in range(n):
        keep = idx[row] != row
        others, d = idx[row][keep][:pool], dist[row][keep][:pool]
        delta = coords[others] - coords[row]
        quadrant = (delta[:, 0] >= 0).astype(int) * 2 + (delta[:, 1] >= 0)
        chosen = []
        for q in range(4):
            chosen += list(others[quadrant == q][:per])
        chosen = set(chosen[:k])
        for c in others:                       # fill up with the nearest remaining
            if len(chosen) >= k:
                break
            chosen.add(c)
        order = sorted(chosen, key=lambda c: d[np.flatnonzero(others == c)[0]])
        out[row] = order[:k]
    return out


def greedy_tour(coords, k: int = 10) -> np.ndarray:
    """Greedy edge matching: take candidate edges shortest first when both ends have degree < 2
    and no cycle closes early (union-find); join the fragments end to end, nearest first."""
    coords = np.asarray(coords, dtype=np.float64)
    n = len(coords)
    cand = nearest_candidates(coords, min(k, n - 1))
    u = np.repeat(np.arange(n), cand.shape[1])
    v = cand.ravel().astype(np.int64)
    keep = u < v
    u, v = u[keep], v[keep]
    length = np.hypot(*(coords[u] - coords[v]).T)
    parent = np.arange(n)

    def root(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    degree = np.zeros(n, dtype=np.int64)
    links = [[] for _ in range(n)]
    for e in np.argsort(length, kind="stable"):
        a, b = u[e], v[e]
        if degree[a] < 2 and degree[b] < 2 and root(a) != root(b):
            parent[root(a)] = root(b)
            degree[a] += 1
            degree[b] += 1
            links[a].append(b)
            links[b].append(a)
    # walk the fragments (paths); join each to the next by the nearest free end
    ends = [c for c in range(n) if degree[c] < 2]
    tree = cKDTree(coords[ends])
    free = np.ones(len(ends), dtype=bool)
    slot = {c: s for s, c in enumerate(ends)}
    tour, seen = [], np.zeros(n, dtype=bool)
    start = ends[0]
    while True:
        free[slot[start]] = False
        prev, city = -1, start
        while True:                            # follow the path to its other end
            tour.append(city)
            seen[city] = True
            nxt = [c for c in links[city] if c != prev and not seen[c]]
            if not nxt:
                break
            prev, city = city, nxt[0]
        if city in slot:
            free[slot[city]] = False
        if not free.any():
            break
        for m in (8, 64, len(ends)):           # nearest free end, widening the search
            _, near = tree.query(coords[city], min(m, len(ends)))
            near = np.atleast_1d(near)
            hits = near[free[near]]
            if hits.size:
                start = ends[hits[0]]
                break
    return np.array(tour, dtype=np.int32)


def hilbert_tour(coords, order: int = 16) -> np.ndarray:
    """Cities sorted along a Hilbert curve over the bounding box (O(n log n))."""
    coords = np.asarray(coords, dtype=np.float64)
    lo, span = coords.min(axis=0), np.ptp(coords, axis=0)
    side = 1 << order
    grid = ((coords - lo) / np.where(span > 0, span, 1) * (side - 1)).astype(np.int64)
    x, y = grid[:, 0].copy(), grid[:, 1].copy()
    d = np.zeros(len(coords), dtype=np.int64)
    s = side >> 1
    while s > 0:                               # the classic xy -> Hilbert index, vectorised
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx) ^ ry)
        flip = ~ry
        swap_x = np.where(flip & rx, s - 1 - x, x)
        swap_y = np.where(flip & rx, s - 1 - y, y)
        x, y = np.where(flip, swap_y, swap_x), np.where(flip, swap_x, swap_y)
        s >>= 1
    return np.argsort(d, kind="stable").astype(np.int32)
