"""Threads of a queued batch launch, to set BATCH_WAVES (lsmgpu/backends/cuda/batch.py): the GPU
time of a chunk of 64 batched tabu iterations (CUDA events around ``advance``, which queues 64
evaluate_select_batch launches and the problem's refreshes) against the host's time for it, on
tai100a with B starts, after a warm-up chunk, per value of BATCH_WAVES. On the GPU machine:
    python -m benchmarks.probes.batch_events [--data .data] [--starts 16,64,256] [--waves 1,2,4]"""
import argparse
import time
from pathlib import Path

import numpy as np

from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import CudaBackend, cuda
from lsmgpu.backends.cuda import batch as cuda_batch
from lsmgpu.backends.base import Query
from lsmgpu.backends.ledger import Ledger
from lsmgpu.problems import QAP

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=".data")
parser.add_argument("--starts", default="16,64,256")
parser.add_argument("--table", default="auto", choices=["auto", "on", "off"])
parser.add_argument("--waves", default="1,2,4", help="cuda_batch.BATCH_WAVES values to time")
args = parser.parse_args()
table = {"auto": None, "on": True, "off": False}[args.table]
problem = QAP.from_file(Path(args.data) / "qaplib" / "tai100a.dat", delta_table=table)
rules = Query(rule="best", tabu=True, aspiration=True, forced_after=problem.tabu_forced_after())
backend = CudaBackend(tune=False)
TabuSearch(problem, seed=0, backend=backend).run(10)          # context and kernel cache warm

for starts, waves in [(int(b), float(w)) for b in args.starts.split(",") for w in args.waves.split(",")]:
    cuda_batch.BATCH_WAVES = waves
    evaluator = backend.batch_evaluator(problem, problem.neighbourhood, starts)
    rng = np.random.default_rng(0)
    xs = np.stack([problem.initial_solution(rng) for _ in range(starts)])
    current = np.array([problem.fitness(x) for x in xs], dtype=np.int64)
    evaluator.load(xs, current)
    evaluator.set_tenures(rng.integers(90, 111, (starts, 1024)))
    ledger = Ledger(current, problem.neighbourhood.size)
    times = []
    for chunk in range(4):                                   # the first is the warm-up
        start, end = cuda.Event(), cuda.Event()
        start.record()
        t0 = time.perf_counter()
        evaluator.advance(64 * chunk, 64, rules, None, None, ledger)
        host = time.perf_counter() - t0
        end.record()
        end.synchronize()
        times.append((end.time_since(start) * 1e3 / 64, host * 1e6 / 64))
    gpu, host = np.median(np.array(times[1:]), axis=0)
    print(f"tai100a x {starts} (table {problem.delta_table}), {waves} waves, {evaluator.blocks} x {starts} blocks "
          f"of {evaluator.block}: {gpu:.1f} us per iteration on the GPU, {host:.1f} us on the host", flush=True)
    evaluator.close()
