"""Probe: MMAS's construction (m = n ants, candidate lists of 32, one warp an ant, compact tabu)
with the candidate lists read from global memory (an ant a block) against a block's shared copy
(several ants a block), alternating twice; the kernel's median time of 11 constructions each, ms.

    python -m benchmarks.probes.shared_lists .data/tsplib d198,pcb442,rat783,pr1002
"""
import statistics
import sys

import numpy as np

from lsmgpu.backends import resolve
from lsmgpu.backends.colony import Construction, colony_for
from lsmgpu.backends.cuda import colony as cuda_colony
from lsmgpu.problems import TSP


def median_ms(colony, n: int, repeats: int = 11) -> float:
    rng, times = np.random.default_rng(0), []
    for k in range(repeats + 1):
        colony.construct(7, k, rng.integers(0, n, n))
        times.append(colony.kernel_seconds)
    return 1000 * statistics.median(times[1:])


if __name__ == "__main__":
    folder, names = sys.argv[1], sys.argv[2].split(",")
    backend = resolve("cuda")
    for name in names:
        problem = TSP.from_file(f"{folder}/{name}.tsp")
        n, model = problem.n, problem.colony_model(32)
        for selection in ("roulette", "wrs"):
            times, per_block = {False: [], True: []}, 0
            for share in (False, True, False, True):
                cuda_colony.SHARE_LISTS = share
                c = Construction(selection=selection, tabu="ct", beta=2.0, tau0=1e-4, warps=1)
                colony = colony_for(backend, model, c, n, n)
                try:
                    times[share].append(median_ms(colony, n))
                    per_block = max(per_block, colony.per_block)
                finally:
                    colony.close()
            print(f"{name} {selection}-ct global {' / '.join(f'{t:.3f}' for t in times[False])} ms, "
                  f"shared ({per_block} ants a block) {' / '.join(f'{t:.3f}' for t in times[True])} ms", flush=True)
