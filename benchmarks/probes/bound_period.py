"""How much a longer first period of the Held-Karp ascent tightens ``TSP.lower_bound()``, and what it
costs: the bound's gap below the optimum and its seconds with the default period (alpha.PERIOD,
100) and with LKH's n // 2, on each instance. The measurement behind PERIOD staying the default
of ``lower_bound`` (``lsmgpu solve`` prints the gap to it after the run, where no optimum is known).

    python -m benchmarks.probes.bound_period .data/tsplib pr1002,u1817,pr2392,pcb3038,fnl4461,rl5915
"""
from __future__ import annotations

import sys
import time

from problems.alpha import PERIOD
from problems.tsp import TSP


def main(folder: str, names: str) -> None:
    print("instance | n | period | bound | gap below the optimum % | seconds")
    for name in names.split(","):
        tsp = TSP.from_file(f"{folder}/{name}.tsp")
        for period in (PERIOD, tsp.n // 2):
            t0 = time.perf_counter()
            bound = tsp.lower_bound(period=period)
            print(f"{name} | {tsp.n} | {period} | {bound} | {100 * (1 - bound / tsp.best_known):.3f} | "
                  f"{time.perf_counter() - t0:.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
