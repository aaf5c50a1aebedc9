"""Many tabu searches stepped together on one GPU: the GPU side of :mod:`lsmgpu.parallel.batch`.

``evaluate_select_batch`` (templates/skeleton/evaluate.cu.j2) runs a grid of (blocks per
start) x (starts): start k's blocks scan its neighbourhood, reduce to its best admissible move
(a segmented reduction: one ticket per start) and its last block applies the move, with the
tenure drawn on the host for that iteration, keeps the start's current and best fitness, best
solution and stop tests on the GPU and writes its fitness to a history in mapped host memory.
Nothing comes back per iteration: a chunk of iterations is queued as one launch each (plus
the problem's refresh) and the host waits once. Small neighbourhoods run a whole chunk in
one launch instead (``tabu_resident_batch``, one block per start).
The problem's input arrays are shared by the starts; its solution-derived arrays, the
solutions and the tabu matrices are held once per start, end to end.
"""
from __future__ import annotations

import time

import numpy as np

from ...kernels import KernelSpec
from ..base import DEVICE_STEP_LIMIT, TENURE_BLOCK, BatchChunk, BatchEvaluator
from ..tuning import default_configuration
from .driver import cuda, download, launch, pack, resident_threads, synchronize
from .program import DeviceArrays, Program, Refresh

__all__ = ["CudaBatchEvaluator", "batch_lanes"]

#: device-resident batches (one block per start, 64 iterations a launch) for neighbourhoods up
#: to RESIDENT_MAX_MOVES moves and batches up to RESIDENT_MAX_BATCH moves in all; measured on
#: the H100 (benchmarks/batch_probe.py, docs/bench/batch_probe.log): tai12a and tai30a run
#: 1.5x-3x faster resident, tai100a (4,950 moves) 2x slower for one start (one block is too
#: little for its neighbourhood), and 256 x tai30a slower than one launch per iteration
RESIDENT_MAX_MOVES = 1024
RESIDENT_MAX_BATCH = 65_536
#: threads of a queued batch launch, in waves of the GPU's resident threads, shared evenly by
#: the starts (at least 256 each, at most one group of lanes per move); measured on the H100
#: (benchmarks/batch_events.py, 256 x tai100a with the delta table): 1 wave 27.7 us per
#: launch, 2 waves 34.1, 4 waves 41.0
BATCH_WAVES = 1


def fewer_lanes(problem, moves: int, limit: int) -> int:
    """The problem's threads per move, halved while ``moves`` x lanes exceeds ``limit`` (lanes
    split a move's O(n) work at the price of shuffles; with enough moves one thread per move
    wastes nothing)."""
    lanes = KernelSpec(problem).lanes()
    while lanes > 1 and moves * lanes > limit:
        lanes //= 2
    return lanes


def resident_lanes(problem, neighbourhood, block: int) -> int:
    """Threads per move when one block of ``block`` threads scans a start's neighbourhood:
    at most 8 lane-tasks per thread."""
    return fewer_lanes(problem, neighbourhood.size, 8 * block)


def batch_lanes(problem, neighbourhood, starts: int, resident_threads: int) -> int:
    """Threads per move for a batch: the problem's lanes while the batch's moves leave the GPU
    idle, fewer as they fill it (twice the resident threads)."""
    return fewer_lanes(problem, starts * neighbourhood.size, 2 * resident_threads)


class CudaBatchEvaluator(BatchEvaluator):
    """``starts`` solutions of one problem searched together on one GPU."""

    backend = "cuda"
    max_steps = DEVICE_STEP_LIMIT

    def __init__(self, problem, neighbourhood, options, starts: int):
        device = options.context.get_device()
        sms = device.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
        resident = resident_threads(device)
        #: device-resident: small neighbourhoods, state kept current by apply_state alone
        self.resident = (neighbourhood.size <= RESIDENT_MAX_MOVES and starts * neighbourhood.size <= RESIDENT_MAX_BATCH
                         and not problem.refresh_items())
        self.resident_block = 1024 if starts <= sms else 256
        lanes = (resident_lanes(problem, neighbourhood, self.resident_block) if self.resident
                 else batch_lanes(problem, neighbourhood, starts, resident))
        # the resident kernel rewrites the solution-derived arrays and reads them again within
        # one launch: coherent (global) loads, not the read-only cache
        sample = problem.solution_data(problem.encoding.random(np.random.default_rng(0)))
        program = self.program = Program(problem, options, {**options.memory, **{name: "global" for name in sample}},
                                         lanes)
        self.problem, self.neighbourhood, self.starts = problem, neighbourhood, int(starts)
        self.device, self.integer = options.device, problem.integer
        shape = neighbourhood.tabu_shape()
        if shape is None:
            raise TypeError(f"{neighbourhood!r} defines no tabu attributes")
        self.tabu_size = shape[0] * shape[1]
        n, B = problem.n, self.starts
        self.sol_dtype, self.ftype = program.sol_dtype, program.fitness_dtype
        self.xs = cuda.mem_alloc(B * n * self.sol_dtype.itemsize)
        self.best_x = cuda.mem_alloc(B * n * self.sol_dtype.itemsize)
        self.tabu = cuda.mem_alloc(B * self.tabu_size * 4)
        self.tenure = cuda.to_device(np.zeros(B * TENURE_BLOCK, np.int32))
        self.current = cuda.mem_alloc(B * 8)
        self.best = cuda.mem_alloc(B * 8)
        self.active = cuda.to_device(np.ones(B, np.int32))
        self.since = cuda.to_device(np.zeros(B, np.int32))
        self.ticket = cuda.to_device(np.zeros(B, np.uint32))
        mapped = cuda.host_alloc_flags.DEVICEMAP
        self.made = cuda.pagelocked_empty(B, np.int32, mem_flags=mapped)
        self.code = cuda.pagelocked_empty(B, np.int32, mem_flags=mapped)
        self.history = None
        #: the problem's inputs, shared by the starts, and one copy of its solution-derived arrays per start
        self.arrays = DeviceArrays(program, copies=B)
        chars = self.arrays.chars
        # threads per start: the neighbourhood's units, up to an even share of a few waves
        share = max(256, int(BATCH_WAVES * program.resident_threads) // B)
        threads, self.block = default_configuration(min(program.units, share), program.resident_threads)
        self.blocks = threads // self.block
        groups = threads // program.lanes
        self.chunk = int(min(32, max(1, neighbourhood.size // groups)))
        self.partial = cuda.mem_alloc(B * self.blocks * program.candidate.itemsize)
        self.kernel = program.function("evaluate_select_batch")
        self._format = "PPPPiiiiiPPPPi" + program.fitness_char + "qPPPPP" + chars
        self._args = [int(a) for a in self.arrays.args]
        if self.resident:
            self.k_resident = program.function("tabu_resident_batch")
            self._resident_format = "PPPPiiiiPPPPi" + program.fitness_char + "qPPP" + chars
            self.resident_chunk = int(min(32, max(1, neighbourhood.size // (self.resident_block // program.lanes))))
        self.refresh = Refresh.of(program, self.arrays, self.xs, B)
        self.timings = {"kernel": 0.0}

    def load(self, xs: np.ndarray, current: np.ndarray) -> None:
        """Start solutions (starts x n) and their signed fitness; fresh tabu memory."""
        B = self.starts
        xs = np.ascontiguousarray(xs, dtype=self.sol_dtype)
        cuda.memcpy_htod(self.xs, xs)
        cuda.memcpy_htod(self.best_x, xs)
        cuda.memset_d32(self.tabu, 0, B * self.tabu_size)      # on the device: no host array of B matrices
        values = np.ascontiguousarray(current, dtype=self.ftype)
        cuda.memcpy_htod(self.current, values)
        cuda.memcpy_htod(self.best, values)
        cuda.memcpy_htod(self.active, np.ones(B, np.int32))
        cuda.memcpy_htod(self.since, np.zeros(B, np.int32))
        if self.arrays.state:
            self.arrays.upload_state(np.asarray(xs))
            if self.refresh:
                self.refresh()

    def restart(self, starts, xs, current) -> None:
        """Starts ``starts`` go on from solutions ``xs`` of signed fitness ``current``, with
        fresh tabu memory and solution-derived arrays (their best stays)."""
        n, isize = self.problem.n, self.sol_dtype.itemsize
        for k, x, value in zip(starts, xs, current):
            k = int(k)
            cuda.memcpy_htod(int(self.xs) + k * n * isize, np.ascontiguousarray(x, dtype=self.sol_dtype))
            cuda.memset_d32(int(self.tabu) + 4 * k * self.tabu_size, 0, self.tabu_size)
            cuda.memcpy_htod(int(self.current) + 8 * k, np.array([value], dtype=self.ftype))
            cuda.memset_d32(int(self.since) + 4 * k, 0, 1)
            self.arrays.upload_state([x], first=k)
        if self.refresh:
            self.refresh()

    def set_tenures(self, table: np.ndarray) -> None:
        """Tenures of the next TENURE_BLOCK iterations, one row per start."""
        cuda.memcpy_htod(self.tenure, np.ascontiguousarray(table, dtype=np.int32))

    def advance(self, step: int, count: int, rules, stagnation: int | None, target, ledger=None,
                deadline=None) -> BatchChunk:
        """Up to ``count`` iterations of every active start under ``rules`` (a best-rule tabu
        Query: aspiration, forced_after), queued without the host, with one wait at the end
        (the starts' current, best and stop state live on the GPU: ``ledger`` is not read; the
        chunk is sized by the caller to end near ``deadline``)."""
        B = self.starts
        if self.history is None or self.history.size < B * count:     # row k at k * count
            self.history = cuda.pagelocked_empty(B * count, self.ftype, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        self.made[:] = 0
        self.code[:] = 0
        flags = (4 if rules.aspiration else 0) | (8 if target is not None else 0)
        goal = 0 if target is None else (int(target) if self.integer else float(target))
        head = (int(self.xs), int(self.best_x), int(self.tabu), int(self.tenure))
        state = (int(self.current), int(self.best), int(self.active), int(self.since), int(stagnation or 0), goal)
        outputs = tuple(int(a.base.get_device_pointer()) for a in (self.made, self.code, self.history))
        t0 = time.perf_counter()
        if self.resident:
            args = pack(self._resident_format, *head, step, count, flags, rules.forced_after, *state,
                        self.resident_chunk, *outputs, *self._args)
            launch(self.k_resident, "tabu_resident_batch", (B, 1), self.resident_block, args, self.program.shared_bytes)
        else:
            for it in range(count):
                args = pack(self._format, *head, step + it, it, count, flags, rules.forced_after, *state, self.chunk,
                            int(self.partial), int(self.ticket), *outputs, *self._args)
                launch(self.kernel, "evaluate_select_batch", (self.blocks, B), self.block, args,
                       self.program.shared_bytes)
                if self.refresh:
                    self.refresh()
        synchronize(f"batch iterations {step}..{step + count - 1}", (self.blocks, B), (self.block,))
        self.timings["kernel"] += time.perf_counter() - t0
        return BatchChunk(self.made.copy(), self.history[:B * count].reshape(B, count).copy(), self.code.copy())

    def best_solutions(self) -> np.ndarray:
        """Each start's best solution (starts x n), as the GPU kept it."""
        return download(self.best_x, (self.starts, self.problem.n), self.sol_dtype).astype(self.problem.encoding.dtype)

    def snapshot(self) -> dict:
        """The starts' state read back from the GPU (BatchEvaluator.snapshot)."""
        B, n = self.starts, self.problem.n
        shape = self.neighbourhood.tabu_shape()
        return {"xs": download(self.xs, B * n, self.sol_dtype).reshape(B, n),
                "best_x": download(self.best_x, B * n, self.sol_dtype).reshape(B, n),
                "tabu": download(self.tabu, B * self.tabu_size, np.int32).reshape(B, *shape),
                "tenures": download(self.tenure, B * TENURE_BLOCK, np.int32).reshape(B, TENURE_BLOCK),
                "current": download(self.current, B, self.ftype), "best": download(self.best, B, self.ftype),
                "active": download(self.active, B, np.int32).astype(bool), "since": download(self.since, B, np.int32)}

    def restore(self, snapshot: dict) -> None:
        """A snapshot's state written to this evaluator's GPU memory, the solution-derived
        arrays rebuilt from its solutions (BatchEvaluator.restore)."""
        self.load(snapshot["xs"], snapshot["current"])
        for buffer, name, dtype in ((self.best_x, "best_x", self.sol_dtype), (self.tabu, "tabu", np.int32),
                                    (self.tenure, "tenures", np.int32), (self.best, "best", self.ftype),
                                    (self.active, "active", np.int32), (self.since, "since", np.int32)):
            cuda.memcpy_htod(buffer, np.ascontiguousarray(snapshot[name], dtype=dtype))

    def close(self) -> None:
        self.arrays.close()
