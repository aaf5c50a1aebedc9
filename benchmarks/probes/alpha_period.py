"""Whether a longer Held-Karp ascent raises the α-lists' coverage of a near-optimal tour: each
instance's 5 α-nearest after the ascent with its default first period (alpha.PERIOD, 100) and with
LKH's n // 2, against LKH-3's tour (POPMUSIC, 60 s, in this process), with the lists' seconds.
The measurement behind PERIOD staying the α-lists' first period: n // 2 moves the coverage by
-0.06 to +0.04 points at 6-52 times the seconds (docs/benchmarks/tsp-depth.md).

    python -m benchmarks.probes.alpha_period .data/tsplib pr1002,u1817,rl5915,rl11849
"""
from __future__ import annotations

import sys
import time

from benchmarks.depth import LKH_CONFIGS, coverage, lkh_run
from problems.alpha import PERIOD, alpha_candidates, ascent
from problems.tsp import TSP


def main(folder: str, names: str) -> None:
    print("instance | n | reference gap % | period | α-5 coverage % | lists s | period | α-5 coverage % | lists s")
    for name in names.split(","):
        path = f"{folder}/{name}.tsp"
        tsp = TSP.from_file(path)
        tour, _ = lkh_run(path, LKH_CONFIGS["LKH-3 POPMUSIC"], 60)
        tour = tour[:tsp.n]
        row = [name, tsp.n, f"{100 * tsp.gap(tsp.evaluate(tour)):.3f}"]
        for period in (PERIOD, tsp.n // 2):
            t0 = time.perf_counter()
            lists, _ = alpha_candidates(tsp, 5, ascent(tsp, period=period))
            row += [period, f"{100 * coverage(tour, lists):.2f}", f"{time.perf_counter() - t0:.1f}"]
        print(" | ".join(str(x) for x in row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
