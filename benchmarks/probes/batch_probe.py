"""Device-resident batches against one launch per iteration, to set RESIDENT_MAX_MOVES: per
iteration time of B tabu starts (2,000 iterations) in both modes. On the GPU machine:
    python -m benchmarks.probes.batch_probe [--data .data]"""
import argparse
import time
from pathlib import Path

from lsmgpu.backends.cuda import batch as cuda_batch
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.parallel.batch import BatchTabuSearch
from lsmgpu.parallel.multistart import spawn_seeds
from lsmgpu.problems import QAP

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=".data")
args = parser.parse_args()
problems = [QAP.from_file(QAP.shipped("tai12a")), QAP.from_file(Path(args.data) / "qaplib" / "tai30a.dat"),
            QAP.from_file(Path(args.data) / "qaplib" / "tai100a.dat")]
limits = cuda_batch.RESIDENT_MAX_MOVES, cuda_batch.RESIDENT_MAX_BATCH
for problem in problems:
    for starts in (1, 16, 64, 256):
        row = []
        for mode, moves in (("resident", 10**9), ("queued launches, one per iteration", 0)):
            cuda_batch.RESIDENT_MAX_MOVES = cuda_batch.RESIDENT_MAX_BATCH = moves
            search = BatchTabuSearch(problem, spawn_seeds(0, starts), backend=CudaBackend(tune=False))
            search.run(64)                                        # compile, warm up
            t0 = time.perf_counter()
            result = search.run(2000)
            seconds = time.perf_counter() - t0
            row.append(f"{mode} {1e6 * seconds / 2000:.1f} us/it")
            assert result.runs[0].iterations == 2000
        print(f"{problem.name} ({problem.neighbourhood.size} moves) x {starts} starts: " + ", ".join(row), flush=True)
cuda_batch.RESIDENT_MAX_MOVES, cuda_batch.RESIDENT_MAX_BATCH = limits
