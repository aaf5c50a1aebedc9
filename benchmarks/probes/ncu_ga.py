"""One GA generation (hybrid crossover, a warp a child) of a TSPLIB instance, for Nsight Compute:

    ncu -k regex:breed --launch-skip 1 --launch-count 1 --set full -o rep \
        python -m benchmarks.probes.ncu_ga .data/tsplib/rl11849.tsp 128 1
"""
import sys

import numpy as np

from lsmgpu.backends import resolve
from lsmgpu.backends.genetic import Breeding, genetic_for
from lsmgpu.problems import TSP

if __name__ == "__main__":
    problem = TSP.from_file(sys.argv[1])
    genes, groups, n = int(sys.argv[2]), int(sys.argv[3]), problem.n
    breeder = genetic_for(resolve("cuda"), Breeding("hybrid", 0.1, genes, groups, 32), n, problem.edge_distance())
    breeder.load(np.random.default_rng(0).permuted(np.tile(np.arange(n, dtype=np.int32), (genes, 1)), axis=1))
    for k in range(3):
        breeder.breed(7, k)
        breeder.value_array()
    print(breeder.kernel_seconds)
