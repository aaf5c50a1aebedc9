"""One don't-look descent of the greedy tour with each LK move, on the CPU (the NumPy reference):
how far the 5-opt basis move (``lk_move=5``, lsmgpu/backends/kopt.py) takes a descent beyond the
chain of 2-opt moves, with the quadrant and the α-nearest candidates. The gaps are the same on
every machine; the seconds are the host's (the GPU has no 5-opt kernel yet).

    python -m benchmarks.probes.kopt_descent .data/tsplib pr1002,pcb3038
"""
from __future__ import annotations

import sys
import time

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
            ("LK 5-opt chain 12, alpha 5", lambda: DontLookDescent("alpha", lk_depth=12, lk_move=5)))


def main(data: str, names: str) -> None:
    print("instance | greedy % | descent | gap % | host s")
    for name in names.split(","):
        tsp = TSP.from_file(f"{data}/{name}.tsp")
        start = greedy_tour(tsp.coords)
        for label, descent in DESCENTS:
            t0 = time.perf_counter()
            done = improve(tsp, start[None, :], descent(), backend="cpu")
            print(f"{name} | {100 * tsp.gap(tsp.evaluate(start)):.3f} | {label} | {100 * tsp.gap(done.fitness[0]):.3f} | "
                  f"{time.perf_counter() - t0:.1f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
