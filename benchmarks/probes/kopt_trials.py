"""Whether lsmgpu's own moves reach LKH-3's level with LKH's trials, on the CPU before any GPU kernel.

Each trial descends a start with the 5-opt LK chain (``lk_move=5``, chains of 12 over the 5
α-nearest; lsmgpu/backends/kopt.py), from every city, and then:
- ``kick``: the start is the best tour after a segment-local double bridge (problems/kicks.py, the
  ILS chains' kick), and the result replaces the best where shorter (an ILS);
- ``kick+merge``: the same start, the result merged into the best by partition crossover
  (lsmgpu/search/partition.py);
- ``walk+merge``: LKH's trial start (its ChooseInitialTour): a walk from a random city that takes
  the best tour's edge of α 0 to an unvisited candidate where there is one, else a random unvisited
  candidate, else a random unvisited city; the result merged into the best.
All three start from the greedy tour's descent, with the same seed. The gaps are counts of trials,
the same on every machine; the seconds are the host's (NumPy).

    python -m benchmarks.probes.kopt_trials .data/tsplib pr1002 kick,kick+merge,walk+merge 50
"""
from __future__ import annotations

import sys
import time

import numpy as np

from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules
from lsmgpu.problems import TSP
from lsmgpu.search.partition import partition_crossover
from problems import alpha
from problems.candidates import greedy_tour
from problems.kicks import double_bridge

#: the chain of every trial's descent: levels, and candidates a city (α-nearest)
DEPTH, CANDIDATES = 12, 5


def alpha_zero(tsp, run) -> set:
    """The edges of α 0 (in a minimum 1-tree at the ascent's penalties) among the α-lists' pool."""
    u, v, _, values = alpha.pool_alpha(tsp, run)
    return {(int(a), int(b)) for a, b in zip(u[values <= 1e-9], v[values <= 1e-9])}


def walk_start(best: np.ndarray, candidates: np.ndarray, zero: set, rng) -> np.ndarray:
    """LKH's trial start (module docstring): a walk over the candidates that keeps the best tour's
    edges of α 0 where it can."""
    n = len(best)
    pos = np.empty(n, dtype=np.int64)
    pos[best] = np.arange(n)
    unvisited, where = list(range(n)), list(range(n))
    tour, city = [], int(rng.integers(n))

    def visit(c):
        last = unvisited.pop()
        if last != c:
            unvisited[where[c]], where[last] = last, where[c]
        tour.append(c)
    visit(city)
    seen = np.zeros(n, dtype=bool)
    seen[city] = True
    while len(tour) < n:
        free = [int(c) for c in candidates[city] if not seen[c]]
        kept = [c for c in free if (min(city, c), max(city, c)) in zero
                and abs(int(pos[city]) - int(pos[c])) in (1, n - 1)]
        city = kept[0] if kept else free[int(rng.integers(len(free)))] if free else unvisited[int(rng.integers(len(unvisited)))]
        seen[city] = True
        visit(city)
    return np.array(tour, dtype=np.int64)


def main(data: str, name: str, variants: str, trials: int, seed: int = 0) -> None:
    tsp = TSP.from_file(f"{data}/{name}.tsp")
    run = alpha.ascent(tsp)
    table, _ = alpha.alpha_candidates(tsp, CANDIDATES, run)
    zero = alpha_zero(tsp, run)
    rules = DontLookRules(table, 3, lk_depth=DEPTH, lk_move=5)
    distance = tsp.edge_distance()
    descent = CpuDontLook(rules, distance, 1, wide=1)

    def descend(tour):
        descent.load(np.asarray(tour)[None])
        descent.descend(np.ones(1, bool))
        return descent.solutions()[0].astype(np.int64)
    first = descend(greedy_tour(tsp.coords))
    print(f"{name}: greedy tour's 5-opt descent {100 * tsp.gap(tsp.evaluate(first)):.3f} %; {len(zero)} edges of α 0")
    print("instance | variant | trials | gap % | host s")
    for variant in variants.split(","):
        rng, best, t0 = np.random.default_rng(seed), first.copy(), time.perf_counter()
        for trial in range(1, trials + 1):
            start = walk_start(best, table, zero, rng) if variant == "walk+merge" else double_bridge(best, rng)
            found = descend(start)
            if variant == "kick":
                best = found if tsp.evaluate(found) < tsp.evaluate(best) else best
            else:
                child, _ = partition_crossover(best, found, distance.between)
                best = min((child, found, best), key=tsp.evaluate)
            if trial in (1, 10, trials) or trial % 25 == 0:
                print(f"{name} | {variant} | {trial} | {100 * tsp.gap(tsp.evaluate(best)):.3f} | "
                      f"{time.perf_counter() - t0:.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), *(int(a) for a in sys.argv[5:]))
