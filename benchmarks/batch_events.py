"""Where a batched chunk's time goes on the GPU: CUDA-event times of 64 queued
evaluate_select_batch launches alone, 64 refresh launches alone, and the two interleaved (as
the batch runs them), against the host's time to issue them; tai100a with B starts, after a
warm-up of 2,000 iterations. On the GPU machine:
    python -m benchmarks.batch_events [--data .data] [--starts 16,64,256]"""
import argparse
import time
from pathlib import Path

from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import batch as cuda_batch
from lsmgpu.backends.cuda import CudaBackend, cuda, pack
from lsmgpu.parallel.batch import BatchTabuSearch
from lsmgpu.parallel.multistart import spawn_seeds
from lsmgpu.problems import QAP

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=".data")
parser.add_argument("--starts", default="16,64,256")
parser.add_argument("--table", default="auto", choices=["auto", "on", "off"])
parser.add_argument("--waves", default="4", help="cuda_batch.BATCH_WAVES values to time")
args = parser.parse_args()
table = {"auto": None, "on": True, "off": False}[args.table]
problem = QAP.from_file(Path(args.data) / "qaplib" / "tai100a.dat", delta_table=table)
TabuSearch(problem, seed=0, backend=CudaBackend(tune=False)).run(10)


def events(launch, count=64):
    start, end = cuda.Event(), cuda.Event()
    start.record()
    t0 = time.perf_counter()
    for it in range(count):
        launch(it)
    issued = time.perf_counter() - t0
    end.record()
    end.synchronize()
    return end.time_since(start) * 1e3 / count, issued * 1e6 / count


for starts, waves in [(int(b), float(w)) for b in args.starts.split(",") for w in args.waves.split(",")]:
    cuda_batch.BATCH_WAVES = waves
    search = BatchTabuSearch(problem, spawn_seeds(0, starts), backend=CudaBackend(tune=False))
    captured = {}
    run_advance = None

    def keep(evaluator):
        captured["ev"] = evaluator
        return evaluator
    backend = search.backend
    original = backend.batch_evaluator
    backend.batch_evaluator = lambda *a: keep(original(*a))
    search.run(2000)
    ev = captured["ev"]
    # the evaluator's state after the run: starts still active; re-activate them for timing
    cuda.memcpy_htod(ev.active, __import__("numpy").ones(starts, "int32"))
    ev.history = cuda.pagelocked_empty(starts * 64, ev.ftype, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
    outputs = tuple(int(a.base.get_device_pointer()) for a in (ev.made, ev.code, ev.history))
    head = (int(ev.xs), int(ev.best_x), int(ev.tabu), int(ev.tenure))
    state = (int(ev.current), int(ev.best), int(ev.active), int(ev.since), 0, 0)

    def evaluate(it):
        a = pack(ev._format, *head, 5000 + it, it, 64, 4, search.rules.forced_after, *state, ev.chunk, int(ev.partial), int(ev.ticket),
                 *outputs, *ev._args)
        ev.kernel._launch_kernel((ev.blocks, starts), (ev.block, 1, 1), a, ev._single.shared_bytes, None)

    rows = [f"evaluate_select_batch {ev.blocks}x{starts} blocks of {ev.block}: %.1f us/it on the GPU, issued in %.1f us"
            % events(evaluate)]
    if ev.refresh:
        rows.append(f"refresh {ev.refresh.grid} blocks: %.1f us/it, issued in %.1f us" % events(lambda it: ev.refresh()))

        def both(it):
            evaluate(it)
            ev.refresh()
        rows.append("both: %.1f us/it, issued in %.1f us" % events(both))
    t0 = time.perf_counter()
    ev.advance(6000, 64, search.rules, None, None)
    rows.append(f"advance(64): {1e6 * (time.perf_counter() - t0) / 64:.1f} us/it")
    print(f"tai100a x {starts} (table {problem.delta_table}, {waves} waves): " + "; ".join(rows), flush=True)
    search.backend.batch_evaluator = original
