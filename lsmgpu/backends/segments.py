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

import numpy as np

from .dontlook import DontLookRules
from .dontlook_chains import CpuChains

__all__ = ["FIXED_LENGTH", "SegmentCut", "CpuSegmentChains", "fixed_end_source"]

#: the closing edge's length is -FIXED_LENGTH: far beyond any tour's length, exact in a double
FIXED_LENGTH = 2**40


class SegmentCut:
    """B groups of m cities each, the rows of ``groups`` (global cities, each row in the tour's
    cyclic order), cut from ``tour``; with the descent's ``rules`` (the global candidate table, its
    moves), the edge distance's per-city ``table`` rows (coordinates) and the problem's
    ``dist(u, v)`` on global cities. ``along`` makes segments of the tour itself (one path each);
    ``across`` regions of space (several paths each)."""

    def __init__(self, tour, groups, rules: DontLookRules, table: np.ndarray, dist):
        self.tour = tour = np.asarray(tour, dtype=np.int64)
        self.n = n = len(tour)
        self.dist = dist
        self.pos = np.empty(n, dtype=np.int64)
        self.pos[tour] = np.arange(n)
        self.ids = np.asarray(groups, dtype=np.int64)
        self.rows, self.m = self.ids.shape
        at = self.pos[self.ids]
        #: links[k, i]: the link from local city i to i + 1 (the last: to 0) is fixed, the tour
        #: leaving the group there
        self.links = np.ones((self.rows, self.m), dtype=bool)
        self.links[:, :-1] = (at[:, 1:] - at[:, :-1]) % n != 1
        slot = np.full(n, -1, dtype=np.int64)
        slot[self.ids.ravel()] = np.arange(self.rows * self.m)
        found = slot[rules.candidates[self.ids]]                           # (B, m, K) slots of the candidates
        own = (found >= 0) & (found // self.m == np.arange(self.rows)[:, None, None])
        i = np.arange(self.m)
        neighbour = np.where(i < self.m - 1, i + 1, i - 1)[None, :, None]
        self.candidates = np.ascontiguousarray(np.where(own, found % self.m, neighbour), dtype=np.int32)
        outside = np.ones(n, dtype=bool)
        outside[self.ids.ravel()] = ~self._inside(rules, own, found % self.m).ravel()
        #: the cities whose moves are not all their group's, in tour order: the whole tour's
        #: descent starts from them
        self.crossing = tour[outside[tour]]
        width = table.size // n
        rows = np.concatenate([table.reshape(n, width)[self.ids], self.links[:, :, None].astype(table.dtype)], axis=2)
        self.table = np.ascontiguousarray(rows.ravel())

    @classmethod
    def along(cls, tour, m: int, offset: int, rules, table, dist) -> "SegmentCut":
        """Segments of the tour: n // m of m consecutive cities from position ``offset`` on (the
        n - B m after the last stay as they are)."""
        order = np.roll(np.asarray(tour), -int(offset))
        return cls(tour, order[:len(order) // m * m].reshape(-1, m), rules, table, dist)

    @classmethod
    def across(cls, tour, curve, m: int, offset: int, rules, table, dist) -> "SegmentCut":
        """Regions: n // m groups of m consecutive cities along the space-filling ``curve`` (a
        permutation of the cities) from ``offset`` on, each group in tour order."""
        tour = np.asarray(tour)
        pos = np.empty(len(tour), dtype=np.int64)
        pos[tour] = np.arange(len(tour))
        order = np.roll(np.asarray(curve, dtype=np.int64), -int(offset))
        groups = order[:len(order) // m * m].reshape(-1, m)
        return cls(tour, np.take_along_axis(groups, np.argsort(pos[groups], axis=1), axis=1), rules, table, dist)

    def _inside(self, rules, own, local) -> np.ndarray:
        """(B, m): whether every move of a city is a move inside its group, the same on the tour
        (so a group's local optimum leaves it none): the city at least max(S, 1) cities from its
        path's ends (its Or-opt stretches and neighbours inside), its candidates in the group and at
        no path's end (their neighbours inside), and with Or-3opt or LK3 the same of the candidates'
        neighbours' candidates."""
        m, reach = self.m, max(rules.segment, 1)
        i = np.arange(m)[None, :]
        starts = np.ones_like(self.links)
        starts[:, 1:] = self.links[:, :-1]
        ends_at = np.minimum.accumulate(np.where(self.links, i, m)[:, ::-1], axis=1)[:, ::-1]
        starts_at = np.maximum.accumulate(np.where(starts, i, -1), axis=1)
        rows = np.arange(self.rows)[:, None, None]
        settled = (own & ~(starts | self.links)[rows, local]).all(axis=2)                 # (B, m)
        inside = settled & (ends_at - i >= reach) & (i - starts_at >= reach)
        if rules.or3 or rules.lk:
            near = np.clip(local, 1, m - 2)
            inside &= (settled[rows, near - 1] & settled[rows, near + 1]).all(axis=2)
        return inside

    def identity(self) -> np.ndarray:
        """Every chain's start: its group in tour order (B, m)."""
        return np.ascontiguousarray(np.broadcast_to(np.arange(self.m, dtype=np.int32), (self.rows, self.m)))

    def _fixed(self, rows, u, v):
        """Whether the links (u, v) of the groups ``rows`` are fixed."""
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        return ((lo == 0) & (hi == self.m - 1)) | ((hi - lo == 1) & self.links[rows, lo])

    def between_of(self, k: int):
        """Group k's edge lengths between its local cities (a fixed link: -FIXED_LENGTH)."""
        ids = self.ids[k]

        def between(u, v):
            u, v = np.asarray(u), np.asarray(v)
            return np.where(self._fixed(k, u, v), -FIXED_LENGTH, self.dist(ids[u], ids[v]))
        return between

    def lengths(self, x, first: int = 0) -> np.ndarray:
        """The lengths of the chains' tours x (rows first, first + 1, ..), fixed links counted."""
        x = np.asarray(x, dtype=np.int64)
        rows = np.arange(first, first + len(x))[:, None]
        y = np.roll(x, -1, axis=1)
        d = self.dist(self.ids[rows, x], self.ids[rows, y]).astype(np.float64)
        return np.where(self._fixed(rows, x, y), -float(FIXED_LENGTH), d).sum(axis=1)

    def paths(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Segments of the tour (one path each): the chains' cycles x (B, m) as open paths from 0
        to m-1 (rows that lost the closing link, which no accepted tour does, are the segment in
        tour order), and which rows kept it."""
        x = np.asarray(x, dtype=np.int64)
        B, m = x.shape
        start = np.argmax(x == 0, axis=1)
        rolled = np.take_along_axis(x, (np.arange(m)[None, :] + start[:, None]) % m, axis=1)
        turned = rolled[:, 1] == m - 1
        paths = np.where(turned[:, None], np.concatenate([rolled[:, :1], rolled[:, :0:-1]], axis=1), rolled)
        kept = paths[:, -1] == m - 1
        paths[~kept] = np.arange(m)
        return paths, kept

    def compatible(self, rows, gains) -> np.ndarray:
        """Of the improved groups ``rows``, those spliced together: every segment of the tour (they
        commute); of regions, greedily by ``gains`` (one per row), those that do not interleave an
        already chosen one along the tour. Two regions interleave where neither lies in one gap
        between the other's cities: then the one's new cycle may reorder the stretches the other's
        fixed links stand for, and the two together need not make one tour."""
        rows = np.asarray(rows, dtype=np.int64)
        if not self.links[:, :-1].any():
            return rows
        placed, chosen = [], []
        for k in rows[np.argsort(-np.asarray(gains)[rows], kind="stable")]:
            at = self.pos[self.ids[k]]
            if all(len(np.unique(np.searchsorted(p, at) % len(p))) == 1 for p in placed):
                placed.append(np.sort(at))
                chosen.append(k)
        return np.sort(np.array(chosen, dtype=np.int64))

    def splice(self, x, rows) -> np.ndarray:
        """The tour with the groups ``rows`` replaced by the chains' tours x (one row each): a
        segment's path put in its place, a region's paths joined to the rest of the tour through
        its fixed links (the tour rebuilt from every city's two new neighbours)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return self.tour.copy()
        if not self.links[:, :-1].any():
            out = self.tour.copy()
            paths, _ = self.paths(x)
            spans = (self.pos[self.ids[rows, 0]][:, None] + np.arange(self.m)[None, :]) % self.n
            out[spans] = np.take_along_axis(self.ids[rows], paths, axis=1)
            return out
        return self._rejoin(np.asarray(x, dtype=np.int64), rows)

    def _rejoin(self, x, rows) -> np.ndarray:
        """The tour from every city's two neighbours: a region city keeps its links out of the
        region (a path's first city its predecessor, a path's last its successor) and takes its
        new cycle's free links; every other city keeps its two."""
        tour, n = self.tour, self.n
        nb = np.stack([np.roll(tour, 1), np.roll(tour, -1)], axis=1)[np.argsort(tour)]     # (prev, next) a city
        ids, links = self.ids[rows], self.links[rows]
        starts = np.ones_like(links)
        starts[:, 1:] = links[:, :-1]
        y = np.roll(x, -1, axis=1)
        free = ~self._fixed(rows[:, None], x, y)
        a, b = np.take_along_axis(ids, x, axis=1)[free], np.take_along_axis(ids, y, axis=1)[free]
        cities = np.concatenate([a, b, ids[starts], ids[links]])
        others = np.concatenate([b, a, nb[ids[starts], 0], nb[ids[links], 1]])
        if (np.bincount(cities, minlength=n)[ids.ravel()] != 2).any():
            raise RuntimeError("tour segments: a region's new cycle lost one of its fixed links")
        order = np.argsort(cities, kind="stable")
        nb[cities[order][::2]] = others[order].reshape(-1, 2)
        first, second = nb[:, 0].tolist(), nb[:, 1].tolist()
        out, prev, here = [int(tour[0])], int(tour[0]), first[int(tour[0])]
        for _ in range(n - 1):
            out.append(here)
            prev, here = here, (first[here] if first[here] != prev else second[here])
        out = np.array(out, dtype=np.int64)
        if here != out[0] or np.bincount(out, minlength=n).max() != 1:
            raise RuntimeError("tour segments: the regions' paths did not join into one tour")
        return out


def fixed_end_source(source: str, width: int) -> str:
    """The edge distance's CUDA source (``edge_distance(table, n, u, v)``) for groups of n local
    cities whose table rows are the problem's ``width`` entries and a fixed-link flag: the links
    {n-1, 0} and {i, i+1} where i's flag is set have length -FIXED_LENGTH, every other edge the
    problem's (from a copy of the two cities' rows)."""
    return (f"#define edge_distance problem_edge_distance\n{source}\n#undef edge_distance\n"
            f"#define FIXED_LENGTH {FIXED_LENGTH}LL\n#define ROW_WIDTH {width}\n"
            "__device__ __forceinline__ long long edge_distance(const table_t* t, long long n, int u, int v) {\n"
            "    const int lo = min(u, v), hi = max(u, v);\n"
            "    if ((lo == 0 && hi == n - 1) || (hi - lo == 1 && t[(long long)lo * (ROW_WIDTH + 1) + ROW_WIDTH] != 0))\n"
            "        return -FIXED_LENGTH;\n"
            "    table_t rows[2 * ROW_WIDTH];\n"
            "    for (int j = 0; j < ROW_WIDTH; ++j) {\n"
            "        rows[j] = t[(long long)u * (ROW_WIDTH + 1) + j];\n"
            "        rows[ROW_WIDTH + j] = t[(long long)v * (ROW_WIDTH + 1) + j];\n"
            "    }\n"
            "    return problem_edge_distance(rows, 2, 0, 1);\n"
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
        m = self.moves
        self.rules = DontLookRules(self.cut.candidates[k], m.segment, m.or3, m.lk)
        self.between = self.cut.between_of(k)
        super()._advance(k, budget, deadline)
