"""The genetic algorithm's operators on permutations, in NumPy, B children in lock step (the
reference the GPU's kernels equal; templates/skeleton/genetic.cu.j2).

Constructive crossovers (Kang et al. 2016) build a child item after item from two parents
read as circular sequences. Each parent keeps *jump indices* (f, b: how far its next and
previous unvisited positions are from each position), so the unvisited item nearest in the
sequence before and after the current item is found in O(1): visiting the item at position i
links its neighbours, f[i - b[i]] += f[i] and b[i + f[i]] += b[i] (indices mod n, Eq. 1).

* BCSCX: the next item is the nearest (by the problem's edge distance) of four candidates,
  the unvisited items after and before the current one in each parent (ties: parent 0 before
  parent 1, after before before);
* SCX (Ahmed's sequential constructive crossover, as Kang et al. state it): one direction,
  the parents read with ends: the next item is the nearer of each parent's first unvisited item
  after the current one; a parent with none after it offers the first unvisited item of
  0, 1, ..., n - 1 (the template); ties go to parent 1's (``d_pa < d_pb`` takes a, else b);
* ARX: one parent has the privilege and recommends its two candidates, the nearer taken; the
  privilege passes to the other parent from child position A to B - 1 (two random switch
  points), so the two children of a pair (one started by each parent) inherit evenly.
* OX (Davis's order crossover), for problems without an edge distance: the child keeps parent
  0's items at positions lo..hi, the others follow from hi + 1 on in parent 1's order from its
  position hi + 1.
* Mutation: a random 2-opt move, the positions a + 1 .. b reversed.

Children start at item 0, as the paper's genes do.
"""
from __future__ import annotations

import numpy as np

from ..budget import check_deadline

__all__ = ["JumpIndices", "construct", "sequential_crossover", "arx_privilege", "order_crossover", "reverse_segments",
           "positions_of"]


def positions_of(parents: np.ndarray) -> np.ndarray:
    """pos[k, item] = the position of item in parents[k]; of one permutation (1-D), pos[item] (a
    plain scatter, no row index: partition crossover's hot path)."""
    pos = np.empty_like(parents)
    if parents.ndim == 1:
        pos[parents] = np.arange(len(parents), dtype=parents.dtype)
        return pos
    rows, n = parents.shape
    pos[np.arange(rows)[:, None], parents] = np.arange(n, dtype=parents.dtype)
    return pos


class JumpIndices:
    """The forward and backward jump indices of B parents (one per child), all positions unvisited."""

    def __init__(self, parents: np.ndarray):
        self.parents = parents
        self.rows, self.n = parents.shape
        self.pos = positions_of(parents)
        self.forward = np.ones(parents.shape, dtype=np.int64)
        self.backward = np.ones(parents.shape, dtype=np.int64)
        self._row = np.arange(self.rows)

    def visit(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mark ``items`` (one per row) visited; return the unvisited items after and before them
        (the item itself where it was the last unvisited)."""
        r, n = self._row, self.n
        i = self.pos[r, items]
        f, b = self.forward[r, i], self.backward[r, i]
        after, before = (i + f) % n, (i - b) % n
        self.forward[r, before] += f
        self.backward[r, after] += b
        return self.parents[r, after], self.parents[r, before]


def construct(parent0: np.ndarray, parent1: np.ndarray, between, privilege: np.ndarray) -> np.ndarray:
    """Children of the row pairs (parent0[k], parent1[k]) by the constructive rule: privilege[k, t]
    is who recommends the item at child position t + 1: 0 or 1 (ARX: that parent's two
    candidates), 2 (BCSCX: both parents' four). ``between(u, v)``: the edge distances."""
    rows, n = parent0.shape
    child = np.empty((rows, n), dtype=parent0.dtype)
    jumps = (JumpIndices(parent0), JumpIndices(parent1))
    current = np.zeros(rows, dtype=parent0.dtype)
    child[:, 0] = current
    for t in range(n - 1):
        if t % 16 == 15:
            check_deadline("the children were made")
        after0, before0 = jumps[0].visit(current)
        after1, before1 = jumps[1].visit(current)
        candidates = np.stack([after0, before0, after1, before1], axis=1)
        lengths = np.asarray(between(np.repeat(current, 4), candidates.ravel()), dtype=np.float64).reshape(rows, 4)
        side = privilege[:, t]
        lengths[side == 1, :2] = np.inf            # parent 1 alone recommends
        lengths[side == 0, 2:] = np.inf            # parent 0 alone recommends
        current = candidates[np.arange(rows), np.argmin(lengths, axis=1)]       # first of the nearest
        child[:, t + 1] = current
    return child


def sequential_crossover(parent0: np.ndarray, parent1: np.ndarray, between) -> np.ndarray:
    """SCX children of the row pairs (parent0[k], parent1[k]) from item 0. Each parent is a doubly
    linked list by item (-1 past either end) from which visited items are unlinked, so the first
    unvisited item after the current one is its link; the template's first unvisited item is a
    pointer that only moves forward."""
    rows, n = parent0.shape
    r = np.arange(rows)
    lists = []
    for parent in (parent0, parent1):
        after = np.full((rows, n), -1, dtype=np.int64)
        before = np.full((rows, n), -1, dtype=np.int64)
        after[r[:, None], parent[:, :-1]] = parent[:, 1:]
        before[r[:, None], parent[:, 1:]] = parent[:, :-1]
        lists.append((after, before))
    visited = np.zeros((rows, n), dtype=bool)
    first_free = np.zeros(rows, dtype=np.int64)
    child = np.empty((rows, n), dtype=parent0.dtype)
    current = np.zeros(rows, dtype=np.int64)
    child[:, 0] = current
    for t in range(n - 1):
        if t % 16 == 15:
            check_deadline("the children were made")
        visited[r, current] = True
        offers = []
        for after, before in lists:                 # unlink the current item; its successor is the offer
            a, b = after[r, current], before[r, current]
            linked = b >= 0
            after[r[linked], b[linked]] = a[linked]
            linked = a >= 0
            before[r[linked], a[linked]] = b[linked]
            offers.append(a)
        while (stuck := visited[r, first_free]).any():
            first_free[stuck] += 1
        a, b = (np.where(offer >= 0, offer, first_free) for offer in offers)
        lengths = np.asarray(between(np.concatenate([current, current]), np.concatenate([a, b])), dtype=np.float64)
        current = np.where(lengths[:rows] < lengths[rows:], a, b)
        child[:, t + 1] = current
    return child


def arx_privilege(rows: int, n: int, first: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """ARX's privilege over child positions 1 .. n - 1: ``first`` outside [lo, hi), the other inside."""
    k = np.arange(1, n)[None, :]
    inside = (k >= lo[:, None]) & (k < hi[:, None])
    return np.where(inside, 1 - first[:, None], first[:, None]).astype(np.int8).reshape(rows, n - 1)


def order_crossover(parent0: np.ndarray, parent1: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """OX children: parent0's positions lo..hi kept, the rest filled from hi + 1 on (circularly) with
    parent1's remaining items in its order from its position hi + 1."""
    rows, n = parent0.shape
    child = np.empty_like(parent0)
    for k in range(rows):
        if k % 64 == 63:
            check_deadline("the children were made")
        a, b = int(lo[k]), int(hi[k])
        keep = np.zeros(n, dtype=bool)
        keep[parent0[k, a:b + 1]] = True
        child[k, a:b + 1] = parent0[k, a:b + 1]
        order = np.roll(parent1[k], -(b + 1))
        rest = order[~keep[order]]
        places = (b + 1 + np.arange(len(rest))) % n
        child[k, places] = rest
    return child


def reverse_segments(xs: np.ndarray, rows: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """The 2-opt mutation in place: in row rows[k], positions a[k] + 1 .. b[k] reversed (a < b)."""
    for row, first, last in zip(rows, a + 1, b):
        xs[row, first:last + 1] = xs[row, first:last + 1][::-1].copy()
