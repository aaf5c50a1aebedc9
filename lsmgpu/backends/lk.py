"""The variable-depth Lin-Kernighan move of the don't-look descents (``lk_depth``): the NumPy
reference that the GPU's kernel (templates/skeleton/lk.cu.j2) equals.

Where none of city c's other moves improves (lsmgpu/backends/dontlook.py), a check searches a
chain of up to ``lk_depth`` 2-opt moves from t1 = c, Lin-Kernighan's sequential move made of
reversals (the "LK with 2-opt moves" of Johnson & McGeoch; LKH chains its 5-opt basis moves the
same way):

* t2 is t1's neighbour going ``way`` (+1 or -1 in the array's order), the edge {t1, t2} the
  chain's first removed edge, its gain G = d(t1, t2).
* A level adds {t2, t3} for t3 a candidate of t2, removes {t3, t4} with t4 the city before t3
  going ``way`` from t1, and closes the tour with {t4, t1}: the 2-opt move that reverses the path
  t2 .. t4. After it t4 is t1's neighbour going ``way`` and the next level's t2, with
  G <- G - d(t2, t3) + d(t3, t4). The tour closed after a level is d(t4, t1) - G longer.
* LK's rules: each partial gain G - d(t2, t3) is positive; an added edge was not removed before in
  the chain, a removed edge not added before; t3 is at least 3 cities from t1 going ``way`` (else
  it is t1, t2 or already t2's neighbour).

The search runs in stages of ``lk_stage`` levels (3; 2 when lk_depth is 2): a stage evaluates
every chain of its levels at once (2 K^s of them in the first stage, both ways; K^s later, s the
stage's levels), numbered i = (way K^s) + sum_j r_j K^(s-1-j) with r_j the level's candidate rank
(way 0: +1). Each chain's best closing (least delta; the shallowest on ties) competes with the
others' (least delta, then the lowest number). An improving closing is the move. Otherwise the
chain that kept all its levels legal with the largest G (the lowest number on ties) is kept, and
the next stage goes on from its last t4, until lk_depth levels in all.

Within a check the levels are evaluated on the tour as the kept levels and the chain's own left it
without changing the tour: every reversal is of the path at offsets 1 .. m from t1 going ``way``
(m = t3's offset less 1), so a city's offset after the reversals is its offset in the tour mapped
through o -> m + 1 - o (1 <= o <= m) by each, and the city at an offset is found by the
reversals undone in reverse order. The move is applied as its 2-opt steps ({t1, t2}, {t3, t4}),
one a level.
"""
from __future__ import annotations

import numpy as np

from .tour_steps import edge_lengths

__all__ = ["lk_check", "lk_stage"]


def lk_stage(depth: int) -> int:
    """Levels a stage of a chain of ``depth`` levels evaluates at once (1 where there is no chain)."""
    return min(3, max(depth, 1))


def _flip(o, m):
    """Offsets o after the reversal of offsets 1 .. m (elementwise)."""
    return np.where((o >= 1) & (o <= m), m + 1 - o, o)


def _same(u, v, a, b):
    """Whether the edges {u, v} and {a, b} are the same (elementwise)."""
    return ((u == a) & (v == b)) | ((u == b) & (v == a))


class _Kept:
    """The kept levels of a check's chain: the reversals, the edges removed and added, the steps,
    and the free end t2 with its gain."""

    def __init__(self, way: int, t1: int, t2: int):
        self.way, self.t2, self.gain = way, t2, 0.0
        self.flips, self.added, self.removed, self.steps = [], [], [(t1, t2)], []


def _stage(c, x, pos, rules, dist, kept: _Kept | None):
    """Every chain of the stage after ``kept`` (None: the first): (best closing deltas, their
    depths, whether each kept all its levels legal, its final G, and per level the arrays t2, t3,
    t4 and the reversal m)."""
    n, K, s = len(x), rules.k, min(lk_stage(rules.lk_depth), rules.lk_depth - (len(kept.flips) if kept else 0))
    per_way = K ** s
    i = np.arange(2 * per_way if kept is None else per_way)
    p1 = int(pos[c])
    if kept is None:
        way = np.where(i < per_way, 1, -1)
        t2 = x[(p1 + way) % n].astype(np.int64)
        gain = dist(c, t2)
        flips, added, removed = [], [], [(np.full(i.size, c), t2)]
    else:
        way, t2, gain = kept.way, np.full(i.size, kept.t2), np.full(i.size, kept.gain, dtype=np.float64)
        flips, added, removed = list(kept.flips), list(kept.added), list(kept.removed)
    ok = np.ones(i.size, dtype=bool)
    close, depth, path = np.full(i.size, np.inf), np.zeros(i.size, dtype=np.int64), []
    for j in range(s):
        r = (i % per_way) // K ** (s - 1 - j) % K
        t3 = rules.candidates[t2, r].astype(np.int64)
        o3 = ((pos[t3] - p1) * way) % n
        for m in flips:
            o3 = _flip(o3, m)
        g = gain - dist(t2, t3)
        ok &= (o3 >= 3) & (g > 0)
        for a, b in removed:
            ok &= ~_same(t2, t3, a, b)
        q = o3 - 1
        for m in reversed(flips):
            q = _flip(q, m)
        t4 = x[(p1 + way * q) % n].astype(np.int64)
        for a, b in added:
            ok &= ~_same(t3, t4, a, b)
        gain = g + dist(t3, t4)
        closing = dist(t4, c) - gain
        better = ok & (closing < close)
        close, depth = np.where(better, closing, close), np.where(better, j + 1, depth)
        path.append((t2, t3, t4, o3 - 1))
        flips.append(o3 - 1)
        added.append((t2, t3))
        removed.append((t3, t4))
        t2 = t4
    return close, depth, ok, gain, path


def lk_check(c: int, x: np.ndarray, pos: np.ndarray, rules, between):
    """City c's improving chain (module docstring): (delta, number, the 2-opt steps, the cities to
    queue) with number ``rules.moves`` (after the other moves'), or None where no chain improves."""
    dist = edge_lengths(between)
    kept = None
    while True:
        close, depth, ok, gain, path = _stage(c, x, pos, rules, dist, kept)
        best = int(np.argmin(close))
        if close[best] < 0:
            steps = (kept.steps if kept else []) + [((c, int(t2[best])), (int(t3[best]), int(t4[best])))
                                                    for (t2, t3, t4, _) in path[:int(depth[best])]]
            touched = [c, steps[0][0][1]] + [city for (_, edge) in steps for city in edge]
            return float(close[best]), rules.moves, steps, touched
        if len(path) + (len(kept.flips) if kept else 0) >= rules.lk_depth or not ok.any():
            return None
        on = int(np.argmax(np.where(ok, gain, -np.inf)))
        if kept is None:
            way = 1 if on < len(close) // 2 else -1
            kept = _Kept(way, c, int(path[0][0][on]))
        for t2, t3, t4, m in path:
            t2, t3, t4 = int(t2[on]), int(t3[on]), int(t4[on])
            kept.steps.append(((c, t2), (t3, t4)))
            kept.flips.append(int(m[on]))
            kept.added.append((t2, t3))
            kept.removed.append((t3, t4))
        kept.t2, kept.gain = int(path[-1][2][on]), float(gain[on])
