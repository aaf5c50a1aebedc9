"""Where the host time of one iteration goes: cProfile of a tabu search on a tiny QAP (66 moves),
plus the per-phase timings with CUDA events. Run on the GPU machine:
    python -m benchmarks.profile_host [--data .data]"""
import argparse
import cProfile
import pstats
import time
from pathlib import Path

from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.problems import QAP, TSP

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=".data")
parser.add_argument("--instances", default="tai12a,tai100a,pr2392")
args = parser.parse_args()
for name in args.instances.split(","):
    qap = Path(args.data) / "qaplib" / f"{name}.dat"
    problem = QAP.from_file(qap) if qap.is_file() else \
        TSP.from_file(Path(args.data) / "tsplib" / f"{name}.tsp", neighbourhood="swap")
    TabuSearch(problem, seed=0, backend=CudaBackend()).run(100)
    for profile in (False, True):
        search = TabuSearch(problem, seed=0, backend=CudaBackend(profile=profile))
        t0 = time.perf_counter()
        res = search.run(10_000)
        wall = time.perf_counter() - t0
        print(f"{name} profile={profile}: {1e6 * wall / res.iterations:.1f} us/iteration; phases (us/iteration):",
              {k: round(1e6 * v / res.iterations, 1) for k, v in res.timings.items()})
    # GPU time alone: back-to-back launches (no host gap), CUDA events
    import pycuda.driver as cuda
    from lsmgpu.backends.base import Query
    ev = search.evaluator
    start, end = cuda.Event(), cuda.Event()
    start.record()
    for _ in range(200):
        ev._launch_select(*ev.config, 0, Query(current=0), 0)
    end.record()
    end.synchronize()
    print(f"{name}: kernel alone {1e3 * end.time_since(start) / 200:.1f} us, config {ev.config}")
    if name == args.instances.split(",")[0]:
        search = TabuSearch(problem, seed=0, backend=CudaBackend())
        cProfile.run("search.run(10_000)", "/tmp/prof")
        pstats.Stats("/tmp/prof").sort_stats("tottime").print_stats(14)
