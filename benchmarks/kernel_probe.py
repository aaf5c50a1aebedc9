"""Launch one problem's evaluate_select a few times, for a profiler to look at:
    ncu --kernel-name evaluate_select --launch-skip 3 --launch-count 1 python -m benchmarks.kernel_probe d18512
"""
import sys
from pathlib import Path

import numpy as np

from lsmgpu.backends.base import Query
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.problems import TSP

name = sys.argv[1] if len(sys.argv) > 1 else "d18512"
problem = TSP.from_file(Path(".data/tsplib") / f"{name}.tsp", neighbourhood="2opt", start="random")
ev = CudaBackend(tune=False, threads=131072, block=512).evaluator(problem, problem.neighbourhood)
ev.load(np.random.default_rng(0).permutation(problem.n))
for _ in range(6):
    ev.select(Query(current=0))
print("chunk", ev.chunk, "config", ev.config)
