"""A/B timing of one lsmgpu tree (whichever is on sys.path): medians of CUDA-timed passes and of
10,000-iteration tabu searches, after a warm-up; prints one JSON line."""
import json
import statistics
import sys
import time

import numpy as np
import pycuda.driver as cuda

from lsmgpu import TabuSearch
from lsmgpu.backends.base import Query
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.problems import QAP, TSP, shipped

data = sys.argv[1]
label = sys.argv[2]
out = {"tree": label}


def search_seconds(problem, repeats=5, **options):
    TabuSearch(problem, seed=0, backend=CudaBackend(**options)).run(1000)
    times, history = [], None
    for _ in range(repeats):
        search = TabuSearch(problem, seed=0, backend=CudaBackend(**options))
        t0 = time.perf_counter()
        result = search.run(10_000)
        times.append(time.perf_counter() - t0)
        history = result.history
    return statistics.median(times), int(np.asarray(history).sum() % 1_000_000_007)


def pass_seconds(problem, repeats=7, launches=20):
    ev = CudaBackend().evaluator(problem, problem.neighbourhood)
    ev.load(problem.encoding.random(np.random.default_rng(0)))
    query = Query(rule="best", current=0)
    ev.select(query)
    times = []
    for _ in range(repeats):
        start, end = cuda.Event(), cuda.Event()
        start.record()
        for _ in range(launches):
            ev._launch_select(*ev.config, 0, query, 0)
        end.record()
        end.synchronize()
        times.append(end.time_since(start) * 1e-3 / launches)
    return statistics.median(times)


tai12a = QAP.from_file(shipped("tai12a"))
out["overhead_us"] = search_seconds(tai12a)[0] * 100
out["overhead_1block_us"] = search_seconds(tai12a, threads=64, block=64)[0] * 100
for name in ("tai30a", "tai100a"):
    out[name] = search_seconds(QAP.from_file(f"{data}/qaplib/{name}.dat"))
for name in ("eil101", "pr2392"):
    out[f"{name}-swap"] = search_seconds(TSP.from_file(f"{data}/tsplib/{name}.tsp", neighbourhood="swap"))
for name in ("pr2392", "pla85900"):
    out[f"{name}-2opt-pass"] = pass_seconds(TSP.from_file(f"{data}/tsplib/{name}.tsp", neighbourhood="2opt", start="random"))
print(json.dumps(out), flush=True)
