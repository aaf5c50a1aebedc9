"""Taillard's delta table against the O(n) swap delta on the GPU, to set QAP.TABLE_MIN_N: time
per iteration of one tabu search and of batches of tai100a starts, both ways, from the
difference of a long and a short run (set-up, e.g. the tables of 256 starts, cancels out);
the two ways must follow the same trajectory. On the GPU machine:
    python -m benchmarks.probes.qap_table_probe [--data .data]"""
import argparse
import time
from pathlib import Path

import numpy as np

from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.parallel.batch import BatchTabuSearch
from lsmgpu.parallel.multistart import spawn_seeds
from lsmgpu.problems import QAP

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=".data")
parser.add_argument("--instances", default="tai20a,tai30a,tai40a,tai50a,tai60a,tai80a,tai100a")
args = parser.parse_args()


def per_iteration(make, iterations):
    """(seconds per iteration, the long run's result): a run of ``iterations`` less one of a
    fifth of them, after a warm-up (compilation)."""
    make().run(64)
    times, results = [], []
    for count in (iterations // 5, iterations):
        t0 = time.perf_counter()
        results.append(make().run(count))
        times.append(time.perf_counter() - t0)
    return (times[1] - times[0]) / (iterations - iterations // 5), results[1]


for name in args.instances.split(","):
    path = Path(args.data) / "qaplib" / f"{name}.dat"
    row, histories = [], []
    for table in (False, True):
        problem = QAP.from_file(path, delta_table=table)
        seconds, result = per_iteration(lambda: TabuSearch(problem, seed=0, backend=CudaBackend(tune=False), history="all"), 5000)
        histories.append(result.history)
        row.append(f"{'table' if table else 'O(n) sum'} {1e6 * seconds:.1f} us/it")
    assert np.array_equal(*histories), name
    print(f"{name}: 1 search, " + ", ".join(row) + " (same trajectory)", flush=True)

problem_paths = Path(args.data) / "qaplib" / "tai100a.dat"
for starts in (16, 64, 256):
    row, histories = [], []
    for table in (False, True):
        problem = QAP.from_file(problem_paths, delta_table=table)
        seconds, result = per_iteration(
            lambda: BatchTabuSearch(problem, spawn_seeds(0, starts), backend=CudaBackend(tune=False), history="all"), 2000)
        histories.append([r.history for r in result.runs])
        rate = starts * problem.neighbourhood.size / seconds
        kernel = result.runs[0].timings["kernel"] / result.seconds
        row.append(f"{'table' if table else 'O(n) sum'} {1e6 * seconds:.1f} us/it, {rate:.3e} evaluations/s "
                   f"({100 * kernel:.0f} % in launches)")
    assert all(np.array_equal(a, b) for a, b in zip(*histories))
    print(f"tai100a x {starts} starts: " + ", ".join(row) + " (same trajectories)", flush=True)
