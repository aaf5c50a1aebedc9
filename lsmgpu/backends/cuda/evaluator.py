"""The single CUDA evaluator: one solution's neighbourhood generated, evaluated and reduced on the GPU.

Per search, once: the problem's kernels compiled and its arrays uploaded (program.py), every
buffer allocated, and (threads, block) tuned with the wave tuner on the first selection.

Per iteration, with ``selection="device"`` (default): ONE launch of ``evaluate_select``,
which evaluates every move, reduces to the best admissible one (tabu and aspiration tested on
the GPU, tabu state on the GPU), applies it to the device solution and writes a 16-byte
record to mapped host memory; the host waits once and mirrors the move on its copy.
With ``selection="host"`` (the paper's Algorithm 2): ``evaluate_all`` writes every delta,
the array is copied back, the host selects (tabu state on the host) and ``apply_index``
applies the choice. ``generation="host"`` makes the host decode the move list and upload it
each iteration, to measure what generation on the GPU saves.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ...errors import KernelLaunchError
from ..base import DEVICE_STEP_LIMIT, Evaluator, Query, Selection, select_in
from ..tuning import default_configuration, tuning_key
from .driver import cuda, download, launch, pack, synchronize
from .program import DeviceArrays, Program, Refresh

__all__ = ["CudaEvaluator", "FIRST", "TABU", "ASPIRATION", "APPLY_ANY", "APPLY_IMPROVING"]

#: evaluate_select's flags
FIRST, TABU, ASPIRATION, APPLY_ANY, APPLY_IMPROVING = 1, 2, 4, 8, 16


class CudaEvaluator(Evaluator):
    backend = "cuda"
    max_steps = DEVICE_STEP_LIMIT
    #: value of the record's index while evaluate_select has not written it
    PENDING = -2

    def __init__(self, problem, neighbourhood, options):
        super().__init__(problem, neighbourhood)
        self.options = options
        self.device = options.device
        program = self.program = Program(problem, options)
        self.arrays = DeviceArrays(program)
        self.size, self.chunk, self.lanes = program.size, program.chunk, program.lanes
        self.integer = problem.integer
        self.sol_dtype = program.sol_dtype
        n = problem.n
        self.x_gpu = cuda.mem_alloc(n * self.sol_dtype.itemsize)
        self.max_blocks = 16 * program.resident_threads // 32 + 1
        self.partial = cuda.mem_alloc(self.max_blocks * program.candidate.itemsize)
        self.ticket = cuda.to_device(np.zeros(1, np.uint32))
        self.first_found = cuda.to_device(np.full(1, np.iinfo(np.uint64).max, np.uint64))
        mapped = cuda.host_alloc_flags.DEVICEMAP
        self.out = cuda.pagelocked_empty(1, program.candidate, mem_flags=mapped)
        # the chosen move as the kernel decoded it, where the host would decode it slowly
        self.chosen_move, chosen_ptr = None, 0
        if neighbourhood.device_decoded:
            self.chosen_move = cuda.pagelocked_empty(4, np.int32, mem_flags=mapped)
            chosen_ptr = self.chosen_move.base.get_device_pointer()
        self.tabu_gpu = None
        self.moves_gpu = None
        if options.generation == "host":
            self.moves_gpu = cuda.mem_alloc(max(1, self.size * max(1, neighbourhood.arity)) * 4)
        self.fitness_gpu = None
        self.fitness_host = None
        self._all_moves = None
        if options.selection == "host":
            self.fitness_gpu = cuda.mem_alloc(max(1, self.size) * 8)
            self.fitness_host = cuda.pagelocked_empty(self.size, program.fitness_dtype)
        chars = self.arrays.chars
        self.k_select = program.function("evaluate_select")
        self._select_format = "PPPi" + program.fitness_char * 2 + "iiiqPPPPP" + chars
        self._fitness_max = 2**63 - 1 if self.integer else math.inf
        self.k_all = program.function("evaluate_all")
        self.k_all.prepare("PPiqP" + chars)
        self.k_apply = program.function("apply_index")
        self.k_apply.prepare("PPqii" + chars)
        self.k_given = program.function("apply_given")
        self.k_given.prepare("PPP" + chars)
        self._given = None          # mapped host buffers of apply_moves: (moves, their deltas)
        self.refresh = Refresh.of(program, self.arrays, self.x_gpu, 1)
        out_ptr = self.out.base.get_device_pointer()
        self._tail = (int(self.partial), int(self.ticket), int(out_ptr), int(self.first_found), int(chosen_ptr),
                      *(int(a) for a in self.arrays.args))
        self._out_idx, self._out_s = self.out["idx"], self.out["s"]
        self._set_head()
        self.config = None
        self.tuning_key = tuning_key(program.digest, self.device, problem.n * self.lanes, program.units)
        #: a kernel queued after the last result the host read (its fault would surface later)
        self._unchecked = None

    # --- set-up --------------------------------------------------------------------------
    def enable_tabu(self):
        shape = self.neighbourhood.tabu_shape()
        if shape is None:
            raise TypeError(f"{self.neighbourhood!r} defines no tabu attributes")
        if self.options.selection == "host":
            self.tabu = np.zeros(shape, dtype=np.int64)
        else:      # zeroed on the device: a 11,849-city 2-opt matrix is 560 MB, no host copy of it
            entries = int(shape[0]) * int(shape[1])
            if self.tabu_gpu is None:
                self.tabu_gpu = cuda.mem_alloc(entries * 4)
            cuda.memset_d32(self.tabu_gpu, 0, entries)
            self._set_head()

    def tabu_memory(self):
        """The tabu matrix, read back from the GPU where the device keeps it (int32 stamps there)."""
        if self.tabu_gpu is None:
            return super().tabu_memory()
        stamps = download(self.tabu_gpu, self.neighbourhood.tabu_shape(), np.int32)
        return stamps.astype(np.int64)

    def set_tabu_memory(self, stamps):
        if self.tabu_gpu is None:
            super().set_tabu_memory(stamps)
        else:
            cuda.memcpy_htod(self.tabu_gpu, np.ascontiguousarray(stamps, dtype=np.int32))

    def load(self, x):
        self.x = np.array(x, dtype=self.problem.encoding.dtype)
        cuda.memcpy_htod(self.x_gpu, np.ascontiguousarray(self.x, dtype=self.sol_dtype))
        if self.arrays.state:
            self.arrays.upload_state([self.x])
            if self.refresh:
                self.refresh()      # state the problem leaves to the GPU to complete (QAP's table)

    def load_from(self, other):
        """Copy ``other``'s solution and solution-derived arrays on the GPU when it is a CUDA
        evaluator with the same arrays (a polish switching neighbourhoods: no host recomputation,
        no upload); otherwise load its host copy."""
        same = (isinstance(other, CudaEvaluator) and other.problem.n == self.problem.n
                and other.sol_dtype == self.sol_dtype and self.arrays.same_layout(other.arrays))
        if not same:
            self.load(other.x)
            return
        self.x = other.x.copy()
        cuda.memcpy_dtod(self.x_gpu, other.x_gpu, self.x.size * self.sol_dtype.itemsize)
        self.arrays.copy_state_from(other.arrays)

    def close(self):
        self.arrays.close()

    # --- launches ------------------------------------------------------------------------
    def _upload_moves(self, step):
        """Generation on the CPU: decode the whole move list and upload it."""
        t0 = time.perf_counter()
        moves = self.neighbourhood.moves(self.x, np.arange(self.size, dtype=np.int64), step)
        cuda.memcpy_htod(self.moves_gpu, np.ascontiguousarray(moves, dtype=np.int32))
        self._time("generate", time.perf_counter() - t0)

    def _launch_select(self, threads, block, flags, query: Query, until: int):
        """One evaluate_select launch (driver.launch: a packed buffer, no prepared_call bookkeeping).
        A fault of the refresh queued after the previous one surfaces here too: the error names it."""
        grid = threads // block
        current = query.current if math.isfinite(query.current) else 0
        best = query.best if math.isfinite(query.best) else self._fitness_max
        if self.integer:
            current, best = int(current), int(best)
        args = pack(self._select_format, *self._head, query.step, current, best, flags, until, query.forced_after,
                    self.chunk, *self._tail)
        try:
            launch(self.k_select, "evaluate_select", (grid, 1), block, args, self.program.shared_bytes)
        except KernelLaunchError as exc:
            if not self._unchecked:
                raise
            raise KernelLaunchError(f"{exc.message} (or the {self._unchecked} queued before it)", exc.grid,
                                    exc.block) from None

    def finish(self) -> None:
        """Wait for every kernel queued, so a fault that no result has read yet is raised (the
        end of a run)."""
        synchronize(f"the run's last kernels (evaluate_select{', ' + self._unchecked if self._unchecked else ''})")
        self._unchecked = None

    def _set_head(self) -> None:
        """Constant leading arguments of evaluate_select: x, moves, tabu."""
        tabu = np.intp(int(self.tabu_gpu)) if self.tabu_gpu is not None else np.intp(0)
        moves = np.intp(int(self.moves_gpu)) if self.moves_gpu is not None else np.intp(0)
        self._head = (int(self.x_gpu), int(moves), int(tabu))

    def _wait(self, threads, block) -> None:
        """Wait for evaluate_select's record: spin on the mapped record for a short while
        (cheaper than a context synchronisation for small kernels), then synchronise."""
        deadline = time.perf_counter() + 2e-3
        while self._out_idx[0] == self.PENDING:
            if time.perf_counter() > deadline:
                synchronize("evaluate_select failed while running", (threads // block,), (block,))
                break

    def _configuration(self, query: Query) -> tuple[int, int]:
        """(threads, block): fixed by the user, tuned once, or the default."""
        if self.config is not None:
            return self.config
        o = self.options
        if o.threads is not None or o.block is not None:
            block = o.block or 256
            threads = o.threads or default_configuration(self.program.units, self.program.resident_threads, block)[0]
            threads = max(block, min(threads, self.max_blocks * 32) // block * block)
            self.config = (threads, block)
        elif o.tune:
            def timed(threads, block):
                start, end = cuda.Event(), cuda.Event()
                start.record()
                self._launch_select(threads, block, query_flags, query, 0)
                end.record()
                end.synchronize()
                return end.time_since(start) * 1e-3
            query_flags = (FIRST if query.rule == "first" else 0)
            o.tuner.max_threads = o.tuner.max_threads or self.max_blocks * 32
            self.config = o.tuner.tune(self.tuning_key, self.problem.n * self.lanes, self.program.units,
                                       self.program.resident_threads, timed)
        else:
            self.config = default_configuration(self.program.units, self.program.resident_threads)
        return self.config

    def move(self, query: Query, tabu_until=None, improving_only=False):
        if self.options.selection == "host":
            return super().move(query, tabu_until, improving_only)
        flags = self._flags(query) | (APPLY_IMPROVING if improving_only else APPLY_ANY)
        return self._fused(query, flags, tabu_until or 0)

    def select(self, query: Query) -> Selection:
        if self.options.selection == "host":
            return self._select_on_host(query)
        return self._fused(query, self._flags(query), 0)[0]

    @staticmethod
    def _flags(query: Query) -> int:
        """evaluate_select's selection flags for a query (the apply bits are the caller's)."""
        return (FIRST if query.rule == "first" else 0) | (TABU if query.tabu else 0) | \
            (ASPIRATION if query.aspiration else 0)

    def _fused(self, query: Query, flags: int, until: int):
        if self.moves_gpu is not None:
            self._upload_moves(query.step)
        threads, block = self._configuration(query)
        t0 = time.perf_counter()
        self._out_idx[0] = self.PENDING
        if self.options.profile:
            start, end = cuda.Event(), cuda.Event()
            start.record()
        self._launch_select(threads, block, flags, query, until)
        self._unchecked = None
        if flags & (APPLY_ANY | APPLY_IMPROVING) and self.refresh:
            self.refresh()
            self._unchecked = "refresh"     # runs after the record: checked by the next launch or finish()
        if self.options.profile:
            end.record()
            end.synchronize()
            self._time("kernel (events)", end.time_since(start) * 1e-3)
        self._wait(threads, block)
        t1 = time.perf_counter()
        self._time("kernel", t1 - t0)
        idx = int(self._out_idx[0])
        if idx == np.iinfo(np.int64).max:
            return Selection(-1, 0, self._evaluated(query, -1, threads)), None
        s = self._out_s[0]
        delta = self.sense * (int(s) if self.integer else float(s))
        sel = Selection(idx, delta, self._evaluated(query, idx, threads))
        applied = flags & APPLY_ANY or (flags & APPLY_IMPROVING and self.sense * delta < 0)
        move = None
        if applied:
            if self.chosen_move is not None:
                move = self.chosen_move[:self.neighbourhood.arity].astype(np.int64)
            else:
                move = self.move_at(idx, query.step)
            self.neighbourhood.apply(self.x, move)  # host mirror of the device's move
            self._time("host", time.perf_counter() - t1)
        return sel, move

    def _evaluated(self, query, idx, threads) -> int:
        """Moves evaluated: all of them, or for first improvement up to the wave that found one."""
        if query.rule != "first" or idx < 0:
            return self.size
        wave = threads // self.lanes * self.chunk
        return min(self.size, (idx // wave + 1) * wave)

    # --- the paper's host-side selection ---------------------------------------------------
    def deltas(self, step=0):
        if self.moves_gpu is not None:
            self._upload_moves(step)
        threads, block = self.config or default_configuration(self.program.units, self.program.resident_threads)
        t0 = time.perf_counter()
        moves = np.intp(int(self.moves_gpu)) if self.moves_gpu is not None else np.intp(0)
        if self.fitness_gpu is None:
            self.fitness_gpu = cuda.mem_alloc(max(1, self.size) * 8)
        out = self.fitness_gpu
        try:
            self.k_all.prepared_call((threads // block, 1), (block, 1, 1), np.intp(int(self.x_gpu)), moves,
                                     np.int32(step), np.int64(self.chunk), np.intp(int(out)), *self.arrays.args,
                                     shared_size=self.program.shared_bytes)
        except cuda.Error as exc:
            raise KernelLaunchError(f"evaluate_all: {exc}", (threads // block,), (block,)) from None
        synchronize("evaluate_all", (threads // block,), (block,))
        t1 = time.perf_counter()
        host = self.fitness_host if self.fitness_host is not None else np.empty(self.size, self.program.fitness_dtype)
        cuda.memcpy_dtoh(host, out)
        self._time("kernel", t1 - t0)
        self._time("transfer", time.perf_counter() - t1)
        return host

    def _select_on_host(self, query: Query) -> Selection:
        d = self.deltas(query.step)
        t0 = time.perf_counter()
        stamps = None
        if query.tabu:
            every = np.arange(self.size, dtype=np.int64)
            if not self.neighbourhood.static:     # crowns: this step's points around the solution
                moves = self.neighbourhood.moves(self.x, every, query.step)
            else:
                if self._all_moves is None:       # decoded once
                    self._all_moves = self.neighbourhood.decode(every)
                moves = self._all_moves
            stamps = self.tabu_stamps(self.tabu, moves)
        k = select_in(self.sense * d, stamps, query)
        self._time("select", time.perf_counter() - t0)
        delta = (int(d[k]) if self.integer else float(d[k])) if k >= 0 else 0
        evaluated = self.size
        return Selection(k, delta, evaluated)

    def apply(self, index, step=0, tabu_until=None, move=None):
        t0 = time.perf_counter()
        if move is None:
            move = self.move_at(index, step)
        self.forbid(self.tabu, move, tabu_until)
        tabu = np.intp(int(self.tabu_gpu)) if self.tabu_gpu is not None else np.intp(0)
        try:
            self.k_apply.prepared_call((1, 1), (256, 1, 1), np.intp(int(self.x_gpu)), tabu,
                                       np.int64(index), np.int32(step), np.int32(tabu_until or 0),
                                       *self.arrays.args)
        except cuda.Error as exc:
            raise KernelLaunchError(f"apply_index: {exc}", (1,), (256,)) from None
        if self.refresh:
            self.refresh()
        self.neighbourhood.apply(self.x, move)
        self._time("apply", time.perf_counter() - t0)
        return move

    def apply_moves(self, moves):
        """Apply explicit moves on the GPU, one launch each (apply_given: the move's delta,
        then the move, on the tour and its derived arrays), read from mapped host memory;
        the deltas come back the same way. No upload of the solution, no host recomputation."""
        moves = self.neighbourhood.check_moves(moves)
        count, arity = moves.shape
        if self._given is None or self._given[1].size < count:
            flags = cuda.host_alloc_flags.DEVICEMAP
            self._given = (cuda.pagelocked_empty(max(4, count) * arity, np.int32, mem_flags=flags),
                           cuda.pagelocked_empty(max(4, count), self.program.fitness_dtype, mem_flags=flags))
        given, changes = self._given
        given[:count * arity] = moves.ravel()
        given_ptr, change_ptr = given.base.get_device_pointer(), changes.base.get_device_pointer()
        t0 = time.perf_counter()
        for q in range(count):
            try:
                self.k_given.prepared_call((1, 1), (256, 1, 1), np.intp(int(self.x_gpu)),
                                           np.intp(given_ptr + 4 * arity * q), np.intp(change_ptr + 8 * q),
                                           *self.arrays.args)
            except cuda.Error as exc:
                raise KernelLaunchError(f"apply_given: {exc}", (1,), (256,)) from None
            if self.refresh:
                self.refresh()
        synchronize("apply_given failed while running", (1,), (256,))
        for move in moves:
            self.neighbourhood.apply(self.x, move)
        self._time("apply", time.perf_counter() - t0)
        return changes[:count].sum().item()

    def device_solution(self) -> np.ndarray:
        """The solution as the GPU holds it (to check the host mirror)."""
        return download(self.x_gpu, self.problem.n, self.sol_dtype)
