"""The Held-Karp lower bound on every tour (Helsgaun, EJOR 126 (2000), section 4.1): the
ascent's penalties (problems/alpha.py), then the minimum 1-tree over every pair of cities at
them, which is a lower bound whatever the penalties are. The sparse graph's own bound can exceed
it where its trees miss an edge the complete graph's take.
"""
from __future__ import annotations

import numpy as np

from lsmgpu.budget import check_deadline

from .alpha import GPU_TREES_FROM, GRAPH_NEIGHBOURS, PERIOD, ascent, sparse_graph
from .candidates import on_gpu
from .distances import distance

__all__ = ["exact_bound", "held_karp_bound"]


def held_karp_bound(tsp, period: int = PERIOD) -> float:
    """A lower bound on every tour: the ascent over the denser graph (the triangulation and
    GRAPH_NEIGHBOURS quadrant neighbours a city: penalties whose 1-trees over all pairs stay
    close to the sparse ones; over the α-lists' sparser graph the exact bound fell 1-4 % below
    the optimum where this one is 0.5-1.9 %: docs/benchmarks/tsp-depth.md), ``period`` its first
    period, then the exact 1-tree over all pairs at its penalties."""
    run = ascent(tsp, period=period, graph=sparse_graph(tsp, GRAPH_NEIGHBOURS))
    return exact_bound(tsp, run.pi, run.special)


def exact_bound(tsp, pi: np.ndarray, special: int = 0) -> float:
    """The minimum 1-tree over all pairs of cities at penalties ``pi``, less 2 Σ π: a lower
    bound on every tour whatever ``pi`` is. Prim's algorithm on the cities but ``special`` (on
    the GPU from GPU_TREES_FROM cities where one answers: lsmgpu/backends/cuda/spanning.py's
    prim_length, the same steps), then ``special``'s two shortest edges. O(n^2) time, O(n)
    memory (distances a row at a time, no n x n table)."""
    others = np.delete(np.arange(tsp.n), special)
    total = _gpu_prim(tsp, pi, others) if tsp.n >= GPU_TREES_FROM and len(others) >= 2 else None
    if total is None:
        total = _host_prim(tsp, pi, others)
    edges = np.sort(tsp.dist(np.full(len(others), special), others) + pi[others] + pi[special])
    return float(total + edges[0] + edges[1] - 2.0 * pi.sum())


def _gpu_prim(tsp, pi: np.ndarray, others: np.ndarray) -> float | None:
    """exact_bound's spanning tree on the GPU, or None (no GPU answers, or it failed: announced)."""
    def make():
        from lsmgpu.backends.cuda.spanning import prim_length
        return prim_length(tsp.edge_distance(), pi, others,
                           lambda: check_deadline("the lower bound's spanning tree was complete"))
    return on_gpu(make, "the lower bound's spanning tree", "Prim's algorithm on the host makes it")


def _host_prim(tsp, pi: np.ndarray, others: np.ndarray) -> float:
    """The minimum spanning tree's length over ``others`` (grown from others[0]) at penalties
    ``pi``, on the host: the cities outside the tree kept at the front of their arrays (the one
    joined swapped with the last), so that each step reads only them; distances from the matrix
    or from the outside cities' own copy of their coordinates."""
    outside, penalty, key = others.copy(), pi[others].astype(np.float64), np.full(len(others), np.inf)
    points = None if tsp.matrix is not None else tsp.coords[others].astype(np.float64)
    arrays = (outside, penalty, key) if points is None else (outside, penalty, key, points)
    total, current, left = 0.0, 0, len(others)
    for step in range(len(others) - 1):
        if step % 4096 == 0:
            check_deadline("the lower bound's spanning tree was complete")
        city, city_penalty = int(outside[current]), penalty[current]
        left -= 1
        for array in arrays:
            array[current] = array[left]
        lengths = (tsp.matrix[city, outside[:left]] if points is None
                   else distance(tsp.weight_type, tsp.coords[city], points[:left]))
        np.minimum(key[:left], lengths + penalty[:left] + city_penalty, out=key[:left])
        current = int(np.argmin(key[:left]))
        total += key[current]
    return total
