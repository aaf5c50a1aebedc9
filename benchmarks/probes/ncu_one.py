"""One MMAS construction (m = n ants, candidate lists of 32, one warp an ant) of a TSPLIB instance,
for Nsight Compute's per-instruction stall samples:

    ncu -k regex:construct --launch-skip 1 --launch-count 1 --set full -o rep \
        python -m benchmarks.probes.ncu_one .data/tsplib/pr1002.tsp roulette ct
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass.csv
"""
import sys

import numpy as np

from lsmgpu.backends import resolve
from lsmgpu.backends.colony import Construction, colony_for
from lsmgpu.problems import TSP

if __name__ == "__main__":
    problem = TSP.from_file(sys.argv[1])
    n = problem.n
    construction = Construction(selection=sys.argv[2], tabu=sys.argv[3], beta=2.0, tau0=1e-4, warps=1)
    colony = colony_for(resolve("cuda"), problem.colony_model(32), construction, n, n)
    for k in range(2):
        colony.construct(7, k, np.random.default_rng(0).integers(0, n, n))
    print(colony.kernel_seconds)
