"""Whether LKH's bridging moves with a 3-opt join find what the 60 s runs left: a host count.

lsmgpu's bridging moves (lsmgpu/backends/bridge.py) join the two cycles of a nonfeasible 2-opt move
by a 2-opt move; LKH's BridgeGain joins them by a 2- or a 3-opt move (Helsgaun 2009, section 5.3).
The probe takes the tours a depth run kept (``python -m benchmarks depth ... --depth-tours``) and, over
each instance's 5 α-nearest (no penalties: every gain here is read on the lengths), counts the
improving moves of each kind on each tour: every nonfeasible 2-opt split (s1 s2 s3 s4 as
bridge.py's, s3 one of s2's candidates) of positive gain, or of any gain with ``any``, then t1 on the
shorter cycle with t2 its tour successor there, t3 one of t2's candidates on the other cycle, t4
either of t3's tour neighbours; the 2-opt join closes with {t4, t1}; the 3-opt join adds {t4, t5}
(t5 one of t4's candidates), removes {t5, t6} (t6 either of t5's tour neighbours) and closes with
{t6, t1}, kept where the result is one tour (walked whole). A tour with no improving 2-opt join
and some improving 3-opt joins is one that LKH's Gain23 would take further than the ants'. With
``second``, LKH's Gain23 moves of the second kind instead (``second_kind``: a sequential 3-opt move of
positive gain that splits the tour in two cycles, joined by a 2-opt move).

    python -m benchmarks.probes.bridge_joins docs/bench/issue43/small-t2close-e310321.npz .data/tsplib pcb3038
    python -m benchmarks.probes.bridge_joins FILE.npz .data/tsplib rl5915 any
    python -m benchmarks.probes.bridge_joins FILE.npz .data/tsplib rl5915 second
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lsmgpu.problems import TSP
from lsmgpu.search.dontlook import DontLookDescent


def one_tour(x: np.ndarray, removed, added) -> bool:
    """Whether the tour x less the ``removed`` edges with the ``added`` ones is one Hamiltonian cycle."""
    n = len(x)
    succ, pred = np.roll(x, -1), np.roll(x, 1)
    position = np.empty(n, dtype=np.int64)
    position[x] = np.arange(n)
    tour_near = lambda c: [int(pred[position[c]]), int(succ[position[c]])]      # noqa: E731
    near = {}
    for a, b in removed:
        near.setdefault(a, tour_near(a))
        near.setdefault(b, tour_near(b))
    for a, b in removed:
        if b not in near[a] or a not in near[b]:
            return False
        near[a].remove(b)
        near[b].remove(a)
    for c, d in added:
        near.setdefault(c, tour_near(c))
        near.setdefault(d, tour_near(d))
        if d in near[c]:
            return False
        near[c].append(d)
        near[d].append(c)
    if any(len(v) != 2 for v in near.values()):
        return False
    previous, city, seen = -1, int(x[0]), 0
    while True:
        nxt = near[city] if city in near else tour_near(city)
        step = nxt[0] if nxt[0] != previous else nxt[1]
        if nxt[0] == nxt[1]:
            return False
        previous, city, seen = city, step, seen + 1
        if city == int(x[0]):
            return seen == n
        if seen > n:
            return False


def joins(x: np.ndarray, cand: np.ndarray, dist, any_split: bool = False) -> dict:
    """The improving bridging moves on tour x: counts of splits tried, improving 2-opt joins and
    improving 3-opt joins (one tour), and the best gain of each."""
    n, K = len(x), cand.shape[1]
    pos = np.empty(n, dtype=np.int64)
    pos[x] = np.arange(n)
    out = {"splits": 0, "two": 0, "best_two": 0.0, "three": 0, "best_three": 0.0}
    for way in (1, -1):
        for q in range(n):
            s1, s2, after = int(x[q]), int(x[(q + way) % n]), int(x[(q + 2 * way) % n])
            for rank in range(K):
                s3 = int(cand[s2, rank])
                s4 = int(x[(pos[s3] + way) % n])
                if s3 in (s1, after) or s4 == s1:
                    continue
                g = dist(s1, s2) - dist(s2, s3) + dist(s3, s4) - dist(s4, s1)
                if g <= 0 and not any_split:
                    continue
                out["splits"] += 1
                stretch = ((pos[s3] - (q + way)) * way) % n + 1         # s2 .. s3 along `way`
                start = (q + way) % n if stretch <= n - stretch else (pos[s3] + way) % n
                short = min(stretch, n - stretch)
                a_cities = x[(start + way * np.arange(short)) % n]
                in_a = np.zeros(n, dtype=bool)
                in_a[a_cities] = True
                t1, t2 = a_cities[:-1], a_cities[1:]                    # tour edges inside the short cycle
                t3 = cand[t2]                                           # (m, K)
                ok3 = ~in_a[t3]
                for side in (1, -1):
                    t4 = x[(pos[t3] + side) % n]
                    bad = in_a[t4] | ((t3 == s3) & (t4 == s4)) | ((t3 == s4) & (t4 == s3)) \
                        | ((t3 == s1) & (t4 == s2)) | ((t3 == s2) & (t4 == s1))
                    ok = ok3 & ~bad
                    base = g + dist(t1, t2)[:, None] - dist(t2[:, None], t3) + dist(t3, t4)
                    two = base - dist(t4, t1[:, None])
                    good = ok & (two > 0)
                    if good.any():
                        out["two"] += int(good.sum())
                        out["best_two"] = max(out["best_two"], float(two[good].max()))
                    for rank5 in range(K):
                        t5 = cand[t4, rank5]
                        for side6 in (1, -1):
                            t6 = x[(pos[t5] + side6) % n]
                            total = base - dist(t4, t5) + dist(t5, t6) - dist(t6, t1[:, None])
                            fine = ok & (total > 0) & (t5 != t3) & (t6 != t4) & (t5 != t1[:, None]) \
                                & (t6 != t1[:, None]) & (t5 != t2[:, None])
                            for i, r in zip(*np.nonzero(fine)):
                                u1, u2, u3, u4 = int(t1[i]), int(t2[i]), int(t3[i, r]), int(t4[i, r])
                                u5, u6 = int(t5[i, r]), int(t6[i, r])
                                removed = [(s1, s2), (s3, s4), (u1, u2), (u3, u4), (u5, u6)]
                                added = [(s2, s3), (s4, s1), (u2, u3), (u4, u5), (u6, u1)]
                                if len({tuple(sorted(e)) for e in removed}) == 5 and one_tour(x, removed, added):
                                    out["three"] += 1
                                    out["best_three"] = max(out["best_three"], float(total[i, r]))
    return out


def _closed_stretch(x, pos, removed, added):
    """For a 3-opt move (three removed tour edges, three added ones) that splits the tour in two cycles
    with one of them a stretch of it closed on itself: that stretch's cities in tour order; else None
    (the move makes one tour, or three cycles)."""
    n = len(x)
    at = sorted(int(pos[a]) if x[(pos[a] + 1) % n] == b else int(pos[b]) for a, b in removed)
    stretches = [(at[i] + 1) % n for i in range(3)], [at[(i + 1) % 3] for i in range(3)]   # start, end positions
    ends = {tuple(sorted((int(x[f]), int(x[t])))) for f, t in zip(*stretches)}
    closed = [i for i, (f, t) in enumerate(zip(*stretches)) if f != t and tuple(sorted((int(x[f]), int(x[t])))) in
              {tuple(sorted(e)) for e in added}]
    if len(closed) != 1 or len(ends) < 3:
        return None
    f, t = stretches[0][closed[0]], stretches[1][closed[0]]
    return x[(f + np.arange((t - f) % n + 1)) % n]


def second_kind(x: np.ndarray, cand: np.ndarray, dist) -> dict:
    """LKH's Gain23 moves of the second kind on tour x: every sequential 3-opt move s1 .. s6 (s2 a tour
    neighbour of s1, s3 one of s2's candidates, s4 a tour neighbour of s3, s5 one of s4's candidates with
    d(s1, s2) - d(s2, s3) + d(s3, s4) - d(s4, s5) > 0, s6 a tour neighbour of s5) of positive gain
    that splits the tour in two cycles, joined by a 2-opt move across them (t1 t2 a tour edge of the
    smaller cycle, t3 one of t2's candidates on the other, t4 a tour neighbour of t3 there): counts
    of the splits and of the improving joins (each checked whole by ``one_tour``), the best gain."""
    n, K = len(x), cand.shape[1]
    pos = np.empty(n, dtype=np.int64)
    pos[x] = np.arange(n)
    succ, pred = x[(pos + 1) % n], x[(pos - 1) % n]
    out = {"splits3": 0, "joins3": 0, "best_join3": 0.0}
    s1 = np.arange(n)
    for s2 in (succ[s1], pred[s1]):
        for r3 in range(K):
            s3 = cand[s2, r3]
            for s4 in (succ[s3], pred[s3]):
                g2 = dist(s1, s2) - dist(s2, s3) + dist(s3, s4)
                base = (s3 != succ[s2]) & (s3 != pred[s2]) & ~((s3 == s1) & (s4 == s2))
                for r5 in range(K):
                    s5 = cand[s4, r5]
                    g3 = g2 - dist(s4, s5)
                    for s6 in (succ[s5], pred[s5]):
                        gain = g3 + dist(s5, s6) - dist(s6, s1)
                        ok = base & (g3 > 0) & (gain > 0) & (s5 != succ[s4]) & (s5 != pred[s4])
                        ok &= (s6 != s1) & (s6 != succ[s1]) & (s6 != pred[s1])
                        for i in np.flatnonzero(ok):
                            removed = [(int(s1[i]), int(s2[i])), (int(s3[i]), int(s4[i])), (int(s5[i]), int(s6[i]))]
                            added = [(int(s2[i]), int(s3[i])), (int(s4[i]), int(s5[i])), (int(s6[i]), int(s1[i]))]
                            if len({tuple(sorted(e)) for e in removed}) < 3:
                                continue
                            stretch = _closed_stretch(x, pos, removed, added)
                            if stretch is None:
                                continue
                            out["splits3"] += 1
                            _join(x, pos, cand, dist, stretch, removed, added, float(gain[i]), out)
    return out


def _join(x, pos, cand, dist, stretch, removed, added, gain, out) -> None:
    """The 2-opt joins of a split whose one cycle is ``stretch`` (the rest the other), from the smaller
    cycle's tour edges; the improving ones that make one tour counted into ``out``."""
    n = len(x)
    inside = np.zeros(n, dtype=bool)
    inside[stretch] = True
    cut = {tuple(sorted(e)) for e in removed}
    small = stretch if len(stretch) <= n - len(stretch) else x[~inside[x]]
    in_small = np.zeros(n, dtype=bool)
    in_small[small] = True
    for t1 in small:
        for t2 in (x[(pos[t1] + 1) % n],):
            if not in_small[t2] or tuple(sorted((int(t1), int(t2)))) in cut:
                continue
            for t3 in cand[t2]:
                if in_small[t3]:
                    continue
                for t4 in (x[(pos[t3] + 1) % n], x[(pos[t3] - 1) % n]):
                    if in_small[t4] or tuple(sorted((int(t3), int(t4)))) in cut:
                        continue
                    total = gain + dist(t1, t2) - dist(t2, t3) + dist(t3, t4) - dist(t4, t1)
                    if total > 0 and one_tour(x, removed + [(int(t1), int(t2)), (int(t3), int(t4))],
                                              added + [(int(t2), int(t3)), (int(t4), int(t1))]):
                        out["joins3"] += 1
                        out["best_join3"] = max(out["best_join3"], float(total))


def main(tours: str, folder: str, names: str, mode: str = "") -> None:
    data = np.load(tours)
    for name in names.split(","):
        tsp = TSP.from_file(Path(folder) / f"{name}.tsp")
        alpha = DontLookDescent("alpha", lk_depth=12, lk_move=5).bound(tsp)
        cand = np.ascontiguousarray(alpha.candidates[:, :5], dtype=np.int64)
        between = tsp.edge_distance().between
        dist = lambda a, b: between(*np.broadcast_arrays(np.asarray(a), np.asarray(b))).astype(np.float64)  # noqa: E731
        for key in (k for k in data.keys() if k.split("|")[0] == name):
            x = np.asarray(data[key], dtype=np.int64)
            found = second_kind(x, cand, dist) if mode == "second" else joins(x, cand, dist, any_split=mode == "any")
            print({"instance": name, "tour": key.split("|")[1].split(" (")[0], "seed": key.split("|")[2],
                   "gap_pct": round(100 * tsp.gap(tsp.evaluate(x)), 4), "splits": mode or "positive", **found},
                  flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
