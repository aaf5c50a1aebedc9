"""A cold run: FocusedACO with chains of 100 levels of 5-opt moves alone over the 5 α-nearest (the
command line's 5-opt default but its restarts, here the colony's own) for S seconds from a fresh process, with the kernel cache emptied first, so the
kernel builds and the α-lists' ascent count inside the budget as in a user's first
`lsmgpu solve`: the whole process's wall time, the gap and what was announced.

    rm -rf /tmp/cold && LSMGPU_CACHE=/tmp/cold python -m benchmarks.probes.cold_run .data/tsplib d18512 30
"""
from __future__ import annotations

import os
import sys
import time
import warnings

T0 = time.perf_counter()
os.environ["LSMGPU_QUICK_BUILDS"] = "1"          # a user's default, not the harness's (benchmarks/__init__.py)

from lsmgpu import FocusedACO  # noqa: E402
from lsmgpu.problems import TSP  # noqa: E402


def main(data: str, name: str, seconds: str) -> None:
    tsp = TSP.from_file(f"{data}/{name}.tsp")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = FocusedACO(tsp, seed=0, candidates="alpha", lk_depth=100, lk_move=5, chain_alone=True).run(
            seconds=float(seconds))
    print(name, "cold", seconds, "s: wall", round(time.perf_counter() - T0, 2), "gap %", round(100 * tsp.gap(result.fitness), 3),
          "iterations", result.iterations, "status", result.status, [str(w.message)[:150] for w in seen])


if __name__ == "__main__":
    main(*sys.argv[1:4])
