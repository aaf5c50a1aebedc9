"""Many tabu searches in one launch per iteration: the GPU side of :mod:`lsmgpu.batch`.

``evaluate_select_batch`` (templates/skeleton/evaluate.cu.j2) runs a grid of (blocks per
start) x (starts): start k's blocks scan its neighbourhood, reduce to its best admissible move
(a segmented reduction: one ticket per start) and its last block applies the move, with the
tenure drawn on the host for that iteration, and keeps the start's current and best fitness
and best solution on the GPU. The host reads one 16-byte record per start per iteration.
The problem's input arrays are shared by the starts; its solution-derived arrays, the
solutions and the tabu matrices are held once per start, end to end.
"""
from __future__ import annotations

import copy
import time

import numpy as np

from .cuda import CudaEvaluator, KernelLaunchError, cuda, pack
from ..kernels import KernelSpec
from .tuning import default_configuration

__all__ = ["CudaBatchEvaluator", "batch_lanes"]

NONE = np.iinfo(np.int64).max


#: device-resident batches (one block per start, 64 iterations a launch) for neighbourhoods up
#: to RESIDENT_MAX_MOVES moves and batches up to RESIDENT_MAX_BATCH moves in all; measured on
#: the H100 (benchmarks/batch_probe.py, docs/bench/batch_probe.log): tai12a and tai30a run
#: 1.5x-3x faster resident, tai100a (4,950 moves) 2x slower for one start (one block is too
#: little for its neighbourhood), and 256 x tai30a slower than one launch per iteration
RESIDENT_MAX_MOVES = 1024
RESIDENT_MAX_BATCH = 65_536


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


class CudaBatchEvaluator:
    """``starts`` solutions of one problem searched together on one GPU."""

    backend = "cuda"

    def __init__(self, problem, neighbourhood, options, starts: int):
        dev = options.context.get_device()
        sms = dev.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
        resident = sms * dev.get_attribute(cuda.device_attribute.MAX_THREADS_PER_MULTIPROCESSOR)
        #: device-resident: small neighbourhoods, state kept current by apply_state alone
        self.resident = (neighbourhood.size <= RESIDENT_MAX_MOVES and starts * neighbourhood.size <= RESIDENT_MAX_BATCH
                         and not problem.refresh_items())
        self.resident_block = 1024 if starts <= sms else 256
        lanes = (resident_lanes(problem, neighbourhood, self.resident_block) if self.resident
                 else batch_lanes(problem, neighbourhood, starts, resident))
        # the resident kernel rewrites the solution-derived arrays and reads them again within
        # one launch: coherent (global) loads, not the read-only cache
        options = copy.copy(options)
        sample = problem.solution_data(problem.encoding.random(np.random.default_rng(0)))
        options.memory = {**options.memory, **{name: "global" for name in sample}}
        single = CudaEvaluator(problem, neighbourhood, options, lanes)
        self.problem, self.neighbourhood, self.starts = problem, neighbourhood, int(starts)
        self.device, self.integer = single.device, single.integer
        self._single = single
        shape = neighbourhood.tabu_shape()
        if shape is None:
            raise TypeError(f"{neighbourhood!r} defines no tabu attributes")
        self.tabu_size = shape[0] * shape[1]
        n, B = problem.n, self.starts
        ftype = np.int64 if self.integer else np.float64
        self.sol_dtype, self.ftype = single.sol_dtype, ftype
        self.xs = cuda.mem_alloc(B * n * self.sol_dtype.itemsize)
        self.best_x = cuda.mem_alloc(B * n * self.sol_dtype.itemsize)
        self.tabu = cuda.mem_alloc(B * self.tabu_size * 4)
        self.tenure = cuda.to_device(np.zeros(B * 1024, np.int32))
        self.current = cuda.mem_alloc(B * 8)
        self.best = cuda.mem_alloc(B * 8)
        self.active = cuda.to_device(np.ones(B, np.int32))
        self.ticket = cuda.to_device(np.zeros(B, np.uint32))
        self.out = cuda.pagelocked_empty(B, single.cand, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        out_ptr = self.out.base.get_device_pointer()
        # the solution-derived arrays: one copy per start, in place of the single copy
        self.state = {}
        args, chars = [], ""
        for a, arg in zip(single.array_specs, single.array_args):
            if a.state:
                dtype = single.state_buffers[a.name][1]
                self.state[a.name] = (cuda.mem_alloc(B * max(1, a.length) * np.dtype(dtype).itemsize), dtype, a.length)
                args.append(int(self.state[a.name][0]))
            else:
                args.append(int(arg))
            chars += "Q" if a.policy == "texture" else "P"
        # threads per start: the neighbourhood's units, up to an even share of a few waves
        share = max(256, 4 * single.resident_threads // B)
        threads, self.block = default_configuration(min(single.units, share), single.resident_threads)
        self.blocks = threads // self.block
        groups = threads // single.lanes
        self.chunk = int(min(32, max(1, neighbourhood.size // groups)))
        self.partial = cuda.mem_alloc(B * self.blocks * single.cand.itemsize)
        self.kernel = single.module.get_function("evaluate_select_batch")
        self._format = "PPPPiiPPPqPPP" + chars
        self._head = (int(self.xs), int(self.best_x), int(self.tabu), int(self.tenure))
        self._tail = (int(self.current), int(self.best), int(self.active), self.chunk, int(self.partial),
                      int(self.ticket), int(out_ptr), *args)
        if self.resident:
            self.k_resident = single.module.get_function("tabu_resident_batch")
            self._resident_format = "PPPPiiiPPPPi" + single.fit_char + "qPPP" + chars
            self.resident_chunk = int(min(32, max(1, neighbourhood.size // (self.resident_block // single.lanes))))
            self.since = cuda.to_device(np.zeros(B, np.int32))
            self.made = cuda.pagelocked_empty(B, np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
            self.code = cuda.pagelocked_empty(B, np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
            self.history = None
            self._args = args
        self.refresh = None
        if problem.refresh_items():
            self.refresh = single.module.get_function("refresh")
            self._refresh_args = pack("Pi" + chars, int(self.xs), B, *args)
            self._refresh_grid = int(min(-(-B * problem.refresh_items() // 256), 4 * single.resident_threads // 256))
        self.timings = {"kernel": 0.0}

    def load(self, xs: np.ndarray, current: np.ndarray) -> None:
        """Start solutions (starts x n) and their signed fitness; fresh tabu memory."""
        B = self.starts
        xs = np.ascontiguousarray(xs, dtype=self.sol_dtype)
        cuda.memcpy_htod(self.xs, xs)
        cuda.memcpy_htod(self.best_x, xs)
        cuda.memcpy_htod(self.tabu, np.zeros(B * self.tabu_size, np.int32))
        values = np.ascontiguousarray(current, dtype=self.ftype)
        cuda.memcpy_htod(self.current, values)
        cuda.memcpy_htod(self.best, values)
        cuda.memcpy_htod(self.active, np.ones(B, np.int32))
        if self.resident:
            cuda.memcpy_htod(self.since, np.zeros(B, np.int32))
        if self.state:
            per_start = [self.problem.solution_data(x) for x in np.asarray(xs)]
            for name, (buf, dtype, length) in self.state.items():
                cuda.memcpy_htod(buf, np.ascontiguousarray(np.concatenate(
                    [np.asarray(p[name], dtype=dtype).ravel() for p in per_start])))

    def set_tenures(self, table: np.ndarray) -> None:
        """Tenures of the next 1,024 iterations, one row per start."""
        cuda.memcpy_htod(self.tenure, np.ascontiguousarray(table, dtype=np.int32))

    def set_active(self, active: np.ndarray) -> None:
        cuda.memcpy_htod(self.active, np.ascontiguousarray(active, dtype=np.int32))

    def iterate(self, step: int, aspiration: bool) -> tuple[np.ndarray, np.ndarray]:
        """One tabu iteration of every active start: (signed delta, found) per start."""
        t0 = time.perf_counter()
        self.out["idx"] = NONE
        args = pack(self._format, *self._head, step, 4 if aspiration else 0, *self._tail)
        try:
            self.kernel._launch_kernel((self.blocks, self.starts), (self.block, 1, 1), args,
                                       self._single.shared_bytes, None)
            if self.refresh is not None:
                self.refresh._launch_kernel((self._refresh_grid, 1), (256, 1, 1), self._refresh_args, 0, None)
            cuda.Context.synchronize()
        except cuda.Error as exc:
            raise KernelLaunchError(f"evaluate_select_batch: {exc}", (self.blocks, self.starts), (self.block,)) from None
        found = self.out["idx"] != NONE
        delta = np.where(found, self.out["s"], 0)
        self.timings["kernel"] += time.perf_counter() - t0
        return delta, found

    def advance(self, step: int, count: int, aspiration: bool, stagnation: int | None, target) -> tuple:
        """Up to ``count`` iterations of every active start in one launch (device-resident):
        (iterations made, current fitness after each (starts x count), stop code: 0 none,
        1 no admissible move, 2 target reached, 3 stagnation)."""
        B = self.starts
        if self.history is None or self.history.size < B * count:     # row k at k * count
            self.history = cuda.pagelocked_empty(B * count, self.ftype, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        flags = (4 if aspiration else 0) | (8 if target is not None else 0)
        goal = 0 if target is None else (int(target) if self.integer else float(target))
        t0 = time.perf_counter()
        args = pack(self._resident_format, int(self.xs), int(self.best_x), int(self.tabu), int(self.tenure),
                    step, count, flags, int(self.current), int(self.best), int(self.active), int(self.since),
                    int(stagnation or 0), goal, self.resident_chunk,
                    int(self.made.base.get_device_pointer()), int(self.code.base.get_device_pointer()),
                    int(self.history.base.get_device_pointer()), *self._args)
        try:
            self.k_resident._launch_kernel((B, 1), (self.resident_block, 1, 1), args, self._single.shared_bytes, None)
            cuda.Context.synchronize()
        except cuda.Error as exc:
            raise KernelLaunchError(f"tabu_resident_batch: {exc}", (B,), (self.resident_block,)) from None
        self.timings["kernel"] += time.perf_counter() - t0
        return self.made.copy(), self.history[:B * count].reshape(B, count).copy(), self.code.copy()

    def best_solutions(self) -> np.ndarray:
        """Each start's best solution (starts x n), as the GPU kept it."""
        out = np.empty((self.starts, self.problem.n), self.sol_dtype)
        cuda.memcpy_dtoh(out, self.best_x)
        return out.astype(self.problem.encoding.dtype)

    def close(self) -> None:
        self._single.close()
