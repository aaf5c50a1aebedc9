"""Probe: threads a tour's block (``CHAIN_BLOCK`` of lsmgpu/backends/cuda/dontlook.py) for the
don't-look ILS chains and focused ACO's ants. A block evaluates a city's moves (260 at Or-opt segments of 3)
and applies the chosen move's reversals, both spread over its threads; the chains and ants are
the same at every block size (ties go to the lowest move), so the same fixed work (kicks a chain,
colony iterations) is timed at each size and the results are checked equal.

    python -m benchmarks.probes.block_threads .data/tsplib pr2392,rl11849,d18512 128,256,512
"""
import sys
import time

import numpy as np

from lsmgpu import DontLookILS, FocusedACO
from lsmgpu.backends.cuda.dontlook_chains import CudaChains
from lsmgpu.backends.cuda.focused import CudaFocusedAnts
from lsmgpu.problems import TSP
from lsmgpu.problems.candidates import greedy_tour


def timed(make, iterations):
    search = make()
    t0 = time.perf_counter()
    result = search.run(iterations=iterations)
    return time.perf_counter() - t0, result


def main(folder, names, blocks):
    print("instance,search,block,work,seconds,per_s,gap_pct,same_as_first")
    for name in names.split(","):
        problem = TSP.from_file(f"{folder}/{name}.tsp")
        start = greedy_tour(problem.coords)
        runs = {"DontLookILS": (lambda: DontLookILS(problem, initial=start, seed=0, backend="cuda"), 5000),
                "FocusedACO": (lambda: FocusedACO(problem, initial=start, seed=0, backend="cuda"), 1000)}
        for label, (make, iterations) in runs.items():
            first = None
            for block in (int(b) for b in blocks.split(",")):
                CudaChains.block = CudaFocusedAnts.block = block
                timed(make, 2)                                            # build the kernels
                seconds, result = timed(make, iterations)
                first = first or result
                work = iterations * (256 if label == "DontLookILS" else make().ants)
                same = result.fitness == first.fitness and np.array_equal(result.solution, first.solution)
                print(f"{name},{label},{block},{work},{seconds:.2f},{work / seconds:.0f},"
                      f"{100 * problem.gap(result.fitness):.3f},{same}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
