"""Taillard's delta table against the O(n) swap delta on the GPU, to set QAP.TABLE_MIN_N: time
of one tabu search (5,000 iterations, after a warm-up) and of batches of tai100a starts (500
iterations), both ways; the two ways must follow the same trajectory. On the GPU machine:
    python -m benchmarks.qap_table_probe [--data .data]"""
import argparse
import time
from pathlib import Path

import numpy as np

from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.batch import BatchTabuSearch
from lsmgpu.multistart import spawn_seeds
from lsmgpu.problems import QAP

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=".data")
parser.add_argument("--instances", default="tai20a,tai30a,tai40a,tai50a,tai60a,tai80a,tai100a")
args = parser.parse_args()


def timed(make, iterations):
    make().run(200)                                   # compile, warm up
    t0 = time.perf_counter()
    result = make().run(iterations)
    return time.perf_counter() - t0, result


for name in args.instances.split(","):
    path = Path(args.data) / "qaplib" / f"{name}.dat"
    row, histories = [], []
    for table in (False, True):
        problem = QAP.from_file(path, delta_table=table)
        seconds, result = timed(lambda: TabuSearch(problem, seed=0, backend=CudaBackend(tune=False)), 5000)
        histories.append(result.history)
        row.append(f"{'table' if table else 'O(n) sum'} {1e6 * seconds / 5000:.1f} us/it")
    assert np.array_equal(*histories), name
    print(f"{name}: 1 search, " + ", ".join(row) + " (same trajectory)", flush=True)

problem_paths = Path(args.data) / "qaplib" / "tai100a.dat"
for starts in (16, 64, 256):
    row, histories = [], []
    for table in (False, True):
        problem = QAP.from_file(problem_paths, delta_table=table)
        seconds, result = timed(lambda: BatchTabuSearch(problem, spawn_seeds(0, starts), backend=CudaBackend(tune=False)),
                                500)
        histories.append([r.history for r in result.results])
        rate = result.evaluations / seconds
        row.append(f"{'table' if table else 'O(n) sum'} {1e6 * seconds / 500:.1f} us/it, {rate:.3e} evaluations/s")
    assert all(np.array_equal(a, b) for a, b in zip(*histories))
    print(f"tai100a x {starts} starts: " + ", ".join(row) + " (same trajectories)", flush=True)
