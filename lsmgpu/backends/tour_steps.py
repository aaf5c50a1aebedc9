"""2-opt steps on an array tour with its positions: how every don't-look move, kick and LK chain
is applied (lsmgpu/backends/dontlook.py); and the moves' edge lengths (``edge_lengths``). A step
is named by the two edges it removes; the reconnection that keeps a tour is then unique, whatever
the array's orientation. It reverses the array between the edges' positions, or the rest of the
cycle where that is shorter (ties: the inside), and updates the positions; the GPU's reverse()
(templates/skeleton/dontlook.cu.j2) makes the same arrays.
"""
from __future__ import annotations

import numpy as np

__all__ = ["edge_position", "apply_steps", "apply_checked", "edge_lengths"]


def edge_lengths(between):
    """``dist(a, b)``: the lengths of the edges (a, b) as floats, a and b broadcast against each
    other first (``between`` takes arrays of one shape: EdgeDistance's contract). The moves' checks
    call it for every candidate set, so it broadcasts by adding zeros, a few times cheaper than
    np.broadcast_arrays on such small arrays."""
    def dist(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            a, b = a + np.zeros_like(b), b + np.zeros_like(a)
        return between(a, b).astype(np.float64)
    return dist


def edge_position(x, pos, a, b) -> int:
    """Position e of the tour edge {a, b}: {x[e], x[e + 1 mod n]} = {a, b}."""
    n, e = len(x), int(pos[a])
    return e if x[(e + 1) % n] == b else (e - 1) % n


def apply_steps(x: np.ndarray, pos: np.ndarray, steps) -> None:
    """The 2-opt steps, each removing two given edges, applied to x and pos in place."""
    for (a, b), (c, d) in steps:
        _reverse(x, pos, *sorted((edge_position(x, pos, a, b), edge_position(x, pos, c, d))))


def _reverse(x, pos, e1: int, e2: int) -> None:
    """The tour between the edges at positions e1 < e2 reversed (or the rest of the cycle where
    that is shorter; ties: the inside), the positions following; its own inverse."""
    n = len(x)
    if 2 * (e2 - e1) <= n:
        idx = np.arange(e1 + 1, e2 + 1)
    else:
        idx = np.arange(e2 + 1, e1 + n + 1) % n
    x[idx] = x[idx[::-1]]
    pos[x[idx]] = idx


def _adjacent(x, pos, a, b) -> bool:
    n, e = len(x), int(pos[a])
    return x[(e + 1) % n] == b or x[(e - 1) % n] == b


def apply_checked(x: np.ndarray, pos: np.ndarray, steps, between, delta) -> bool:
    """The 2-opt steps of a move of change ``delta`` applied to x and pos where every edge they
    remove is still in the tour when its step comes and together they change its length by
    ``delta`` (each step's change read on the tour as it then is: the same move): whether they
    were; where not, the steps made are undone."""
    n, made, change = len(x), [], 0.0
    for (a, b), (c, d) in steps:
        if not (_adjacent(x, pos, a, b) and _adjacent(x, pos, c, d)):
            break
        e1, e2 = sorted((edge_position(x, pos, a, b), edge_position(x, pos, c, d)))
        u, u2, v, v2 = x[e1], x[e1 + 1], x[e2], x[(e2 + 1) % n]
        change += float(between(u, v) + between(u2, v2) - between(u, u2) - between(v, v2))
        _reverse(x, pos, e1, e2)
        made.append((e1, e2))
    else:
        if change == delta:
            return True
    for e1, e2 in reversed(made):
        _reverse(x, pos, e1, e2)
    return False
