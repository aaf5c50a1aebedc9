"""One don't-look descent of the greedy tour with each LK move, on the CPU (the NumPy reference):
how far the 5-opt basis move (``lk_move=5``, lsmgpu/backends/kopt.py) takes a descent beyond the
chain of 2-opt moves, with the quadrant and the α-nearest candidates (with the α-nearest the
chain's gain criterion reads the ascent's penalties, as LKH's), and without the Or-opt moves that
the descent otherwise makes first; LKH-3's one trial from the same tour beside (its Lin-Kernighan
with 2-, 3- and 5-opt moves). The gaps are the same on every machine; the seconds are the host's
(the GPU has no 5-opt kernel yet; LKH's include its ascent).

    python -m benchmarks.probes.kopt_descent .data/tsplib pr1002,pcb3038

With a count of starts (``... .data/tsplib pr1002 8`` and optionally depths, ``... 8 12,40,100``):
the 5-opt chain alone, chains of each depth (12 by default), the same chains after the best 2-opt
and Or-opt moves (the descents' default order), and LKH-3's LK with 5-opt moves (no GAIN23) from
the same starts, the greedy tour and nearest-neighbour tours from spread cities,
each start's gap and the mean (one start's descent is noisy: 0.2-1.6 % on pr1002).
"""
from __future__ import annotations

import sys
import time
from collections import deque
from importlib.util import find_spec

import numpy as np

from lsmgpu.backends.dontlook import DontLookRules, enqueue
from lsmgpu.backends.kopt import kopt_check
from lsmgpu.backends.tour_steps import apply_steps
from lsmgpu.parallel import improve
from lsmgpu.problems import TSP
from lsmgpu.search.dontlook import DontLookDescent
from problems.candidates import greedy_tour

#: (label, descent): the chains compared, each descent's other moves the defaults (2-opt, Or-opt 3)
DESCENTS = (("2-opt + Or-opt, quadrant 10", lambda: DontLookDescent()),
            ("LK 2-opt chain 6, quadrant 10", lambda: DontLookDescent(lk_depth=6)),
            ("LK 5-opt chain 8, quadrant 10 (first 5)", lambda: DontLookDescent(lk_depth=8, lk_move=5)),
            ("LK 2-opt chain 6, alpha 5", lambda: DontLookDescent("alpha", lk_depth=6)),
            ("LK 5-opt chain 8, alpha 5", lambda: DontLookDescent("alpha", lk_depth=8, lk_move=5)),
            ("LK 5-opt chain 12, alpha 5", lambda: DontLookDescent("alpha", lk_depth=12, lk_move=5)),
            ("LK 5-opt chain 12, alpha 5, no Or-opt", lambda: DontLookDescent("alpha", segment=0, lk_depth=12, lk_move=5)))


#: (label, LKH-3 parameter lines): its one trial (one Lin-Kernighan run) from the same greedy tour,
#: over its own 5 α-nearest, with 2-, 3- and 5-opt basis moves, without and with its
#: non-sequential closings (GAIN23), where elkai is installed
LKH_RUNS = (("LKH-3 LK, 2-opt moves, alpha 5", "MOVE_TYPE = 2\nGAIN23 = NO\n"),
            ("LKH-3 LK, 3-opt moves, alpha 5", "MOVE_TYPE = 3\nGAIN23 = NO\n"),
            ("LKH-3 LK, 5-opt moves, alpha 5", "GAIN23 = NO\n"),
            ("LKH-3 LK, 5-opt moves and GAIN23, alpha 5", ""))


def chain_alone(tsp, rules: DontLookRules, start) -> np.ndarray:
    """``start`` descended by the 5-opt chain of ``rules`` alone, no 2-opt or Or-opt move first (as
    LKH's LK, whose 5-opt search holds its 2-opt moves): the don't-look queue of kopt_check."""
    between = tsp.edge_distance().between
    x = np.array(start, dtype=np.int64)
    pos = np.empty(tsp.n, dtype=np.int64)
    pos[x] = np.arange(tsp.n)
    queue, queued = deque(range(tsp.n)), np.ones(tsp.n, dtype=bool)
    while queue:
        city = queue.popleft()
        queued[city] = False
        found = kopt_check(city, x, pos, rules, between)
        if found is not None:
            apply_steps(x, pos, found[2])
            enqueue(found[3] + [city], queue, queued)
    return x


def nearest_neighbour_tour(coords: np.ndarray, first: int) -> np.ndarray:
    """The nearest-neighbour tour from city ``first`` by the coordinates' exact distances (the
    logged starts; problems.tsp's nearest_neighbour_tour reads the rounded lengths, whose ties
    make other tours on pr1002 and pcb3038)."""
    left = np.ones(len(coords), dtype=bool)
    tour = [first]
    left[first] = False
    for _ in range(len(coords) - 1):
        d = ((coords - coords[tour[-1]]) ** 2).sum(axis=1)
        d[~left] = np.inf
        tour.append(int(np.argmin(d)))
        left[tour[-1]] = False
    return np.array(tour, dtype=np.int64)


def several_starts(data: str, name: str, count: int, depths: str = "12") -> None:
    """The 5-opt chain alone, chains of each of ``depths`` levels, and LKH-3's LK (5-opt moves, no
    GAIN23; its chains have no fixed depth) from ``count`` starts. The depths may pass
    DontLookDescent's MAX_KOPT_DEPTH: the rules are made directly."""
    from benchmarks.probes.lkh_from_tour import lkh_trials
    path = f"{data}/{name}.tsp"
    tsp = TSP.from_file(path)
    starts = [greedy_tour(tsp.coords)] + [nearest_neighbour_tour(tsp.coords, (k * 7919) % tsp.n) for k in range(count - 1)]
    alpha = DontLookDescent("alpha", lk_depth=12, lk_move=5).bound(tsp)
    rows = [(f"LK 5-opt chain {depth} alone, alpha 5",
             lambda start, depth=int(depth): chain_alone(tsp, DontLookRules(alpha.candidates, alpha.segment, lk_depth=depth,
                                                                            lk_move=5, penalties=alpha.penalties), start))
            for depth in depths.split(",")]
    rows += [(f"2-opt and Or-opt moves first, then LK 5-opt chain {depth}, alpha 5",
              lambda start, depth=int(depth): improve(tsp, start[None, :], DontLookDescent("alpha", lk_depth=depth, lk_move=5),
                                                      backend="cpu").solutions[0])
             for depth in depths.split(",")]
    rows.append(("LKH-3 LK, 5-opt moves, alpha 5", lambda start: lkh_trials(path, 1, start, "GAIN23 = NO\n", candidates="")[0]))
    print(f"instance | descent | gap % from each of {count} starts | mean % | host s")
    for label, descend in rows:
        t0 = time.perf_counter()
        gaps = [100 * tsp.gap(tsp.evaluate(descend(start))) for start in starts]
        print(f"{name} | {label} | {' '.join(f'{g:.3f}' for g in gaps)} | {np.mean(gaps):.3f} | "
              f"{time.perf_counter() - t0:.1f}", flush=True)


def main(data: str, names: str) -> None:
    lkh_trials = None                      # LKH-3's rows where elkai is installed
    if find_spec("elkai") is not None:
        from benchmarks.probes.lkh_from_tour import lkh_trials
    print("instance | greedy % | descent | gap % | host s")
    for name in names.split(","):
        path = f"{data}/{name}.tsp"
        tsp = TSP.from_file(path)
        start = greedy_tour(tsp.coords)

        def row(label, tour, seconds):
            print(f"{name} | {100 * tsp.gap(tsp.evaluate(start)):.3f} | {label} | {100 * tsp.gap(tsp.evaluate(tour)):.3f} | "
                  f"{seconds:.1f}", flush=True)
        for label, descent in DESCENTS:
            t0 = time.perf_counter()
            row(label, improve(tsp, start[None, :], descent(), backend="cpu").solutions[0], time.perf_counter() - t0)
        t0 = time.perf_counter()
        alone = chain_alone(tsp, DontLookDescent("alpha", lk_depth=12, lk_move=5).bound(tsp), start)
        row("LK 5-opt chain 12 alone (no 2-opt or Or-opt move first), alpha 5", alone, time.perf_counter() - t0)
        for label, extra in LKH_RUNS if lkh_trials else ():
            row(label, *lkh_trials(path, 1, start, extra, candidates=""))


if __name__ == "__main__":
    if len(sys.argv) > 3:
        several_starts(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
    else:
        main(*sys.argv[1:3])
