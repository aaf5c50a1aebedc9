"""Bridging moves: LKH's non-sequential Gain23 moves of its first kind (Helsgaun 2009, "General
k-opt submoves for the Lin-Kernighan TSP heuristic", section 5.3; LKH's Gain23 and BridgeGain),
the NumPy reference of the GPU ants' ``bridges`` (templates/skeleton/focused.cu.j2).

A sequential move (an LK chain's, a 5-opt move's) cannot make a double bridge: its removed and
added edges form one alternating cycle, a double bridge's two. LKH looks for them where its
sequential search stands still. A nonfeasible 2-opt move removes {s1, s2} and {s3, s4} (s2 the
next city of s1, s4 of s3, in one of the tour's two directions; s3 one of s2's candidates) and
adds {s2, s3} and {s4, s1}: the tour splits into two cycles, the stretch s2 .. s3 closed on
itself and s4 .. s1, and the split's gain G = d(s1, s2) - d(s2, s3) + d(s3, s4) - d(s4, s1)
must be positive (LKH's gain criterion). A 2-opt move across the two cycles joins them again:
it removes a tour edge {t1, t2} of the shorter cycle (t2 next after t1 along it) and a tour
edge {t3, t4} of the other (t3 one of t2's candidates there, t4 either of its neighbours on
that cycle) and adds {t2, t3} and {t4, t1}; any such pair makes one tour, of length
G + d(t1, t2) - d(t2, t3) + d(t3, t4) - d(t4, t1) shorter. Among the split's positive gains
and their joins, the largest total gain wins (ties: the first split in the order (direction,
s1's position, s2's candidate rank), then the first join in the order (t1's place on the
shorter cycle, t2's candidate rank, t4 after t3 before t4 before it)). Most splits cut off a
short stretch (a dozen cities on average on tours of 10,000-20,000 cities), so the search over
every city costs a few sequential descents' checks.

The new tour, as the GPU writes it: the shorter cycle from t2 round to t1, then the other from
t4 round to t3.
"""
from __future__ import annotations

import numpy as np

from ..budget import check_deadline

__all__ = ["Bridge", "find_bridge", "apply_bridge"]


class Bridge:
    """A bridging move found on a tour: its gain (the length it takes off), its eight cities
    (s1, s2, s3, s4, t1, t2, t3, t4: what the descent checks again) and the new tour."""

    def __init__(self, gain: float, cities: list[int], tour: np.ndarray):
        self.gain, self.cities, self.tour = gain, cities, tour


def _splits(x: np.ndarray, pos: np.ndarray, candidates: np.ndarray, dist):
    """Every nonfeasible 2-opt move of positive gain: (direction, position of s1, rank, gain), in the
    order the search tries them."""
    n, K = len(x), candidates.shape[1]
    out = []
    for way in (1, -1):
        p = np.arange(n)
        s1, s2 = x, x[(p + way) % n]
        after_s2 = x[(p + 2 * way) % n]
        for rank in range(K):
            s3 = candidates[s2, rank]
            s4 = x[(pos[s3] + way) % n]
            legal = (s3 != s1) & (s3 != after_s2) & (s4 != s1)
            gain = ((dist(s1, s2) - dist(s2, s3)) + dist(s3, s4)) - dist(s4, s1)
            for q in np.flatnonzero(legal & (gain > 0)):
                out.append((way, int(q), rank, float(gain[q])))
    out.sort(key=lambda s: (0 if s[0] == 1 else 1, s[1], s[2]))
    return out


def find_bridge(x: np.ndarray, pos: np.ndarray, candidates: np.ndarray, between) -> Bridge | None:
    """The bridging move of largest gain on tour ``x`` (positions ``pos``) over ``candidates``
    (module docstring), or None where none shortens the tour. Inside a search whose time is up it
    raises DeadlineReached between splits (a scan of a poor tour of 18,512 cities takes seconds
    on the host)."""
    n = len(x)
    candidates = np.asarray(candidates, dtype=np.int64)

    def dist(a, b):
        return between(np.asarray(a), np.asarray(b)).astype(np.float64)

    best = None
    for way, q, rank, split in _splits(x, pos, candidates, dist):
        check_deadline("the bridging move was found")
        s2 = int(x[(q + way) % n])
        s3 = int(candidates[s2, rank])
        stretch = ((pos[s3] - (q + way)) * way) % n + 1           # s2 .. s3 along the direction
        if stretch <= n - stretch:
            short_at, other_at, short = (q + way) % n, (pos[s3] + way) % n, stretch
        else:
            short_at, other_at, short = (pos[s3] + way) % n, (q + way) % n, n - stretch
        other = n - short
        W = x[(short_at + way * np.arange(short)) % n]
        t1, t2 = W[:-1], W[1:]
        d12 = dist(t1, t2)
        for rank2 in range(candidates.shape[1]):
            t3 = candidates[t2, rank2]
            at = ((pos[t3] - other_at) * way) % n                # t3's place on the other cycle
            for side in (1, -1):
                j = at + side
                legal = (at < other) & (j >= 0) & (j < other)
                t4 = x[(other_at + way * np.clip(j, 0, other - 1)) % n]
                gain = (((split + d12) - dist(t2, t3)) + dist(t3, t4)) - dist(t4, t1)
                gain = np.where(legal, gain, -np.inf)
                m = int(np.argmax(gain))
                order = (m, rank2, 0 if side == 1 else 1)
                if gain[m] > 0 and (best is None or gain[m] > best[0]
                                    or (gain[m] == best[0] and (way, q, rank) == best[1] and order < best[2])):
                    best = (float(gain[m]), (way, q, rank), order, (short_at, other_at, short, way, int(at[m]), side))
    if best is None:
        return None
    gain, (way, q, rank), (m, rank2, _), layout = best
    return Bridge(gain, _cities(x, pos, candidates, way, q, rank, m, rank2, layout), apply_bridge(x, m, *layout))


def _cities(x, pos, candidates, way, q, rank, m, rank2, layout) -> list[int]:
    n = len(x)
    short_at, other_at, short, _, at, side = layout
    s1, s2 = int(x[q]), int(x[(q + way) % n])
    s3 = int(candidates[s2, rank])
    s4 = int(x[(pos[s3] + way) % n])
    t1, t2 = int(x[(short_at + way * m) % n]), int(x[(short_at + way * (m + 1)) % n])
    t3 = int(candidates[t2, rank2])
    t4 = int(x[(other_at + way * (at + side)) % n])
    return [s1, s2, s3, s4, t1, t2, t3, t4]


def apply_bridge(x: np.ndarray, m: int, short_at: int, other_at: int, short: int, way: int, at: int,
                 side: int) -> np.ndarray:
    """The tour after the bridge whose shorter cycle starts at position ``short_at`` (``short``
    cities along ``way``) and the other at ``other_at``, removing the shorter cycle's edge after
    its m-th city and the other's edge between its places ``at`` and ``at + side``: the shorter
    cycle from t2 round to t1, then the other from t4 round to t3."""
    n = len(x)
    other = n - short
    i = np.arange(short)
    first = x[(short_at + way * ((m + 1 + i) % short)) % n]
    i = np.arange(other)
    step = (at + 1 + i) % other if side == 1 else (at - 1 - i) % other
    return np.concatenate([first, x[(other_at + way * step) % n]])
