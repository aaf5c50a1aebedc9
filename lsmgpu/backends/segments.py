"""Tour-segment decomposition: one tour cut into segments of m consecutive cities, every segment
improved at once as an open path with fixed ends by its own ILS chain (the chains of
lsmgpu/backends/dontlook_chains.py, one thread block a segment on the GPU), then spliced back.

A cut at ``offset`` makes B = n // m segments: segment k is the cities
ids[k] = tour[offset + k m .. offset + (k + 1) m - 1] (positions mod n; the n - B m cities after the
last segment stay as they are this cut), numbered 0 .. m - 1 in tour order. As a chain's tour a
segment is the cycle 0 1 .. m-1 closed by the edge {m-1, 0}, whose length is -FIXED_LENGTH: a
move or a kick that removes it lengthens the tour by FIXED_LENGTH, so no descent makes it and no
chain accepts a tour without it (a chain accepts what is not longer than its best). Read from 0
with m-1 last, the chain's cycle is an open path from ids[k][0] to ids[k][m-1] through the same
cities: put in the segment's place it keeps the tour a tour and changes its length by exactly the
chain's change (``SegmentCut.splice``).

A segment's candidates are each city's candidates in its own segment, renumbered; a candidate in
another segment is replaced by the city's tour neighbour in the segment at the cut (a move with it
is no move or no improving one). ``CpuSegmentChains`` is the NumPy reference; the GPU's
``backend.segment_chains`` (lsmgpu/backends/cuda/segments.py) equals it row by row.
"""
from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .base import HOST_THREADS
from .dontlook import DontLookRules, dontlook_for
from .dontlook_chains import CpuChains

__all__ = ["FIXED_LENGTH", "SegmentCut", "CpuSegmentChains", "fixed_end_source", "segment_chains_for"]

#: the closing edge's length is -FIXED_LENGTH: far beyond any tour's length, exact in a double
FIXED_LENGTH = 2**40

class SegmentCut:
    """The B = n // m segments of ``tour`` from position ``offset``, with the descent's ``rules``
    (the global candidate table, its moves), the edge distance's per-city ``table`` rows
    (coordinates) and the problem's ``dist(u, v)`` on global cities."""

    def __init__(self, tour, m: int, offset: int, rules: DontLookRules, table: np.ndarray, dist):
        tour = np.asarray(tour)
        n = len(tour)
        self.m, self.offset, self.dist = int(m), int(offset) % n, dist
        self.rows = n // self.m
        #: the tour read from the cut on (the segments first, then the cities after the last)
        self.order = order = np.roll(tour, -self.offset).astype(np.int64)
        self.ids = order[:self.rows * self.m].reshape(self.rows, self.m)
        # slot[c]: city c's place in the cut (-1 after the last segment); a candidate's place less
        # its row's first is its local number, inside the row exactly when in [0, m) (int32 and
        # an unsigned compare: no division over the n x K candidates)
        slot = np.full(n, -1, dtype=np.int32)
        slot[self.ids.ravel()] = np.arange(self.rows * self.m, dtype=np.int32)
        width = table.size // n
        self.candidates = np.empty((self.rows, self.m, rules.k), dtype=np.int32)
        self.table = np.empty(self.rows * self.m * width, dtype=table.dtype)
        #: every segment's length in tour order, its closing edge counted (the chains' start)
        self.start_lengths = np.empty(self.rows)
        inside = np.empty((self.rows, self.m), dtype=bool)
        bounds = np.linspace(0, self.rows, min(self.rows, 4 * HOST_THREADS) + 1).astype(int)
        with ThreadPoolExecutor(HOST_THREADS) as pool:        # NumPy's gathers and ufuncs let go of the GIL
            list(pool.map(lambda a, b: self._cut_rows(a, b, slot, rules, table.reshape(n, width), inside),
                          bounds[:-1], bounds[1:]))
        outside = np.ones(n, dtype=bool)
        outside[:self.rows * self.m] = ~inside.ravel()
        #: the cities whose moves are not all their segment's (in tour order from the cut): the
        #: whole tour's descent starts from them
        self.crossing = order[outside]
        #: the others: all their moves are their segment's, a segment's local optimum leaves them none
        self.inner = order[~outside]

    def _cut_rows(self, a: int, b: int, slot, rules, table, inside) -> None:
        """Segments a .. b - 1 of the cut: their local candidates, table rows, start lengths and
        which of their cities are inside (rows apart: the threads of a cut share no row)."""
        m, ids = self.m, self.ids[a:b]
        local = slot[rules.candidates[ids]] - (np.arange(a, b, dtype=np.int32) * m)[:, None, None]
        own = local.view(np.uint32) < m                                      # (b - a, m, K)
        i = np.arange(m, dtype=np.int32)
        neighbour = np.where(i < m - 1, i + 1, i - 1)[None, :, None]
        self.candidates[a:b] = np.where(own, local, neighbour)
        inside[a:b] = self._inside(rules, local)
        width = table.shape[1]
        self.table[a * m * width:b * m * width] = table[ids].ravel()
        self.start_lengths[a:b] = (np.asarray(self.dist(ids[:, :-1], ids[:, 1:]), dtype=np.float64).sum(axis=1)
                                   - float(FIXED_LENGTH))

    def _inside(self, rules, local) -> np.ndarray:
        """(B, m): whether every move of a city is a move inside its segment, the same on the tour
        (so a segment's local optimum leaves it none): the city at least max(S, 1) positions from
        its segment's ends (its Or-opt stretches and neighbours inside), its candidates inside the
        segment and not at its ends (their neighbours inside), and with Or-3opt or LK3 the same of
        the candidates' neighbours' candidates. ``local``: the candidates' local numbers (B, m, K),
        outside [0, m) for a candidate in another segment."""
        m, reach = self.m, max(rules.segment, 1)
        i = np.arange(m)
        settled = ((local - 1).view(np.uint32) < m - 2).all(axis=2)                  # all in 1 .. m-2
        inside = settled & ((i >= reach) & (i <= m - 1 - reach))[None, :]
        if rules.or3 or rules.lk:
            flat = settled.ravel()
            base = (np.arange(len(local), dtype=np.int32) * m)[:, None, None]
            near = base + np.clip(local, 1, m - 2)
            inside &= (flat[near - 1] & flat[near + 1]).all(axis=2)
        return inside

    def part(self, first: int, last: int) -> "SegmentCut":
        """Segments first .. last - 1 alone, renumbered from 0 (an actor's share of the cut; its
        ``dist`` is left for the actor to set from its own copy of the problem)."""
        part = copy.copy(self)
        width = self.table.size // (self.rows * self.m)
        part.ids, part.candidates = self.ids[first:last], self.candidates[first:last]
        part.start_lengths = self.start_lengths[first:last]
        part.table = self.table[first * self.m * width:last * self.m * width]
        part.rows, part.dist, part.crossing, part.inner, part.order = last - first, None, None, None, None
        return part

    def identity(self) -> np.ndarray:
        """Every chain's start: its segment in tour order (B, m)."""
        return np.ascontiguousarray(np.broadcast_to(np.arange(self.m, dtype=np.int32), (self.rows, self.m)))

    def _closing(self, u, v):
        return ((u == 0) & (v == self.m - 1)) | ((u == self.m - 1) & (v == 0))

    def between_of(self, k: int):
        """Segment k's edge lengths between its local cities (the closing edge: -FIXED_LENGTH)."""
        ids = self.ids[k]

        def between(u, v):
            u, v = np.asarray(u), np.asarray(v)
            return np.where(self._closing(u, v), -FIXED_LENGTH, self.dist(ids[u], ids[v]))
        return between

    def lengths(self, x, first: int = 0) -> np.ndarray:
        """The lengths of the chains' tours x (rows first, first + 1, ..), closing edges counted
        (the segments in tour order: their start lengths, not summed again)."""
        if (np.asarray(x) == np.arange(self.m)).all():
            return self.start_lengths[first:first + len(x)].copy()
        x = np.asarray(x, dtype=np.int64)
        rows = np.arange(first, first + len(x))[:, None]
        y = np.roll(x, -1, axis=1)
        d = self.dist(self.ids[rows, x], self.ids[rows, y]).astype(np.float64)
        return np.where(self._closing(x, y), -float(FIXED_LENGTH), d).sum(axis=1)

    def paths(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The chains' cycles x (B, m) as open paths from 0 to m-1 (rows that lost the closing edge,
        which no accepted tour does, are the segment in tour order), and which rows kept it."""
        x = np.asarray(x, dtype=np.int64)
        B, m = x.shape
        start = np.argmax(x == 0, axis=1)
        rolled = np.take_along_axis(x, (np.arange(m)[None, :] + start[:, None]) % m, axis=1)
        turned = rolled[:, 1] == m - 1
        paths = np.where(turned[:, None], np.concatenate([rolled[:, :1], rolled[:, :0:-1]], axis=1), rolled)
        kept = paths[:, -1] == m - 1
        paths[~kept] = np.arange(m)
        return paths, kept

    def splice(self, x, rows) -> np.ndarray:
        """The cut tour with the segments ``rows`` replaced by the chains' tours x (one row each,
        open paths from the segment's first city to its last)."""
        out = self.order.copy()
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows):
            paths, _ = self.paths(x)
            spans = rows[:, None] * self.m + np.arange(self.m)[None, :]
            out[spans] = np.take_along_axis(self.ids[rows], paths, axis=1)
        return np.roll(out, self.offset)


def fixed_end_source(source: str) -> str:
    """The edge distance's CUDA source (``edge_distance(table, n, u, v)``) for segments of n cities:
    the closing edge {n-1, 0} has length -FIXED_LENGTH, every other edge the problem's."""
    return (f"#define edge_distance problem_edge_distance\n{source}\n#undef edge_distance\n"
            f"#define FIXED_LENGTH {FIXED_LENGTH}LL\n"
            "__device__ __forceinline__ long long edge_distance(const table_t* t, long long n, int u, int v) {\n"
            "    return (u == 0 && v == n - 1) || (u == n - 1 && v == 0) ? -FIXED_LENGTH\n"
            "                                                         : problem_edge_distance(t, n, u, v);\n"
            "}\n")


class CpuSegmentChains(CpuChains):
    """The segments' chains stepped with NumPy, one after another (the reference): chain k kicks and
    descends segment k of the cut (``set_cut``) with that segment's candidates and lengths, by the
    descent's moves of ``rules`` (its Or-opt segment, Or-3opt and LK3 flags; its table is the
    problem's, the cut renumbers it)."""

    def __init__(self, rules: DontLookRules, kicks, rows: int, device: str = ""):
        self.moves, self.kick_rules, self.rows, self.device = rules, kicks, int(rows), device
        kicks.for_rows(self.rows)

    def set_cut(self, cut: SegmentCut) -> None:
        """The segments the next ``load`` starts from."""
        self.cut = cut

    def _tour_lengths(self, first: int, x) -> np.ndarray:
        return self.cut.lengths(x, first)

    def _advance(self, k: int, budget: int, deadline) -> None:
        self.rules = self.moves.with_candidates(self.cut.candidates[k])
        self.between = self.cut.between_of(k)
        super()._advance(k, budget, deadline)


def segment_chains_for(backend, rules: DontLookRules, kicks, distance, rows: int, m: int, announce: str):
    """The chains of ``rows`` segments of ``m`` cities: ``backend.segment_chains`` where the
    backend has that kernel, else the NumPy reference (announced on a backend other than the CPU)."""
    def host(rules, kicks, distance, rows, m, device):       # the reference needs no table: the cut brings it
        return CpuSegmentChains(rules, kicks, rows, device)
    return dontlook_for(backend, "segment_chains", host, rules, kicks, distance, rows, m, announce=announce,
                        what="the segments")
