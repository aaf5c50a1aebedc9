"""Where a PPP tabu iteration goes on the GPU: evaluate + reduce only (evaluate_select
without applying, CUDA events) against a whole iteration (search.step(), wall time, which
adds the apply_state rebuild in one block, the wait and the host bookkeeping). Run on the
GPU machine:  python -m benchmarks.ppp_probe 1301-1317 2"""
import statistics
import sys
import time

import pycuda.driver as cuda

from lsmgpu import TabuSearch
from lsmgpu.backends.base import Query
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.problems import PPP

for size in sys.argv[1].split(","):
    m, n = map(int, size.split("-"))
    distance = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    problem, _ = PPP.planted(m, n, 0, distance=distance)
    search = TabuSearch(problem, seed=0, backend=CudaBackend())
    search.start(iterations=10**9)
    for _ in range(20):
        search.step()
    ev = search.evaluator
    q = Query(current=search.current)
    launches = []
    for _ in range(20):
        start, end = cuda.Event(), cuda.Event()
        start.record()
        ev._launch_select(*ev.config, 0, q, 0)
        end.record()
        end.synchronize()
        launches.append(end.time_since(start) * 1e3)
    steps = []
    for _ in range(50):
        t0 = time.perf_counter()
        search.step()
        steps.append((time.perf_counter() - t0) * 1e6)
    print(f"PPP {size} hamming {distance}: {problem.neighbourhood.size} moves, config {ev.config}, "
          f"evaluate+reduce {statistics.median(launches):.1f} us, whole iteration {statistics.median(steps):.1f} us",
          flush=True)
