"""The PyCUDA backend: the neighbourhood generated, evaluated and reduced on the GPU.

Per search, once: render the problem's template (lsmgpu.kernels), compile it (memory and
disk cache), upload the problem's arrays with their memory policies, allocate every buffer,
prepare the launches, and tune (threads, block) with the wave tuner on the first selection.

Per iteration, with ``selection="device"`` (default): ONE launch of ``evaluate_select``,
which evaluates every move, reduces to the best admissible one (tabu and aspiration tested on
the GPU, tabu state on the GPU), applies it to the device solution and writes a 16-byte
record to mapped host memory; the host waits once and mirrors the move on its copy.
With ``selection="host"`` (the paper's Algorithm 2): ``evaluate_all`` writes every delta,
the array is copied back, the host selects (tabu state on the host) and ``apply_index``
applies the choice. ``generation="host"`` makes the host decode the move list and upload it
each iteration, to measure what generation on the GPU saves.

Context: if the calling thread already has a current CUDA context (e.g. pycuda.autoinit),
it is used; otherwise the device's primary context is retained and made current.
"""
from __future__ import annotations

import atexit
import hashlib
import logging
import math
import time

import numpy as np

from ..errors import BackendUnavailable, KernelCompileError, KernelLaunchError
from .base import Evaluator, Query, Selection, select_in
from .tuning import WaveTuner, default_configuration

__all__ = ["CudaBackend", "CudaEvaluator"]

log = logging.getLogger("lsmgpu")

FIRST, TABU, ASPIRATION, APPLY_ANY, APPLY_IMPROVING = 1, 2, 4, 8, 16

try:
    import pycuda.driver as cuda
    from pycuda._pvt_struct import pack
    from pycuda.compiler import SourceModule
    _IMPORT_ERROR = None
except ImportError as exc:  # PyCUDA missing or libcuda absent
    cuda, SourceModule, pack, _IMPORT_ERROR = None, None, None, exc

_contexts: dict[int, object] = {}
_modules: dict[tuple, object] = {}


def _context(ordinal: int):
    """The current context, or the device's primary context made current (kept for the process).

    A context is current per thread: a thread that finds none (e.g. a Ray actor's second
    concurrent call) gets the primary context pushed for it."""
    if cuda is None:
        raise BackendUnavailable(f"PyCUDA is not importable: {_IMPORT_ERROR}")
    try:
        cuda.init()
        current = cuda.Context.get_current()
        if current is not None:
            return current
        if ordinal not in _contexts:
            if ordinal >= cuda.Device.count():
                raise BackendUnavailable(f"no CUDA device {ordinal} ({cuda.Device.count()} found)")
            _contexts[ordinal] = cuda.Device(ordinal).retain_primary_context()
            atexit.register(_release, ordinal)
        _contexts[ordinal].push()     # current in this thread from now on
        return _contexts[ordinal]
    except cuda.Error as exc:
        raise BackendUnavailable(f"CUDA is not usable: {exc}") from None


def _release(ordinal: int) -> None:
    """Pop the primary context we pushed, before PyCUDA's own clean-up checks the stack."""
    _modules.clear()
    ctx = _contexts.pop(ordinal, None)
    if ctx is not None:
        try:
            ctx.pop()
        except cuda.Error:
            pass


def _compile(source: str, arch: str):
    key = (source, arch, id(cuda.Context.get_current()))
    if key not in _modules:
        from ..kernels import cache_dir, save_source
        try:
            _modules[key] = SourceModule(source, arch=arch, no_extern_c=True, cache_dir=cache_dir(),
                                         options=["-lineinfo"])
        except cuda.CompileError as exc:
            path = save_source(source)
            raise KernelCompileError(f"nvcc failed on {path}:\n{exc.stderr or exc}", path) from None
    return _modules[key]


class CudaBackend:
    """Factory of CUDA evaluators, holding the options a user may set.

    ``selection``: "device" (on-GPU reduction, default) or "host" (copy all deltas back);
    ``generation``: "device" (index mappings, default) or "host" (upload the move list);
    ``memory``: {array name: "global" | "readonly" | "texture" | "shared"} overriding the
    problem's defaults; ``tune``: run the wave tuner (else ``threads``/``block`` or a default);
    ``tuner``: a WaveTuner to use; ``profile``: time the kernels with CUDA events;
    ``device``: ordinal of the GPU when no context is current.
    """

    name = "cuda"

    def __init__(self, *, selection: str = "device", generation: str = "device", memory: dict | None = None,
                 tune: bool = True, threads: int | None = None, block: int | None = None,
                 tuner: WaveTuner | None = None, profile: bool = False, device: int = 0):
        if selection not in ("device", "host"):
            raise ValueError(f"CudaBackend: `selection` must be 'device' or 'host', got {selection!r}")
        if generation not in ("device", "host"):
            raise ValueError(f"CudaBackend: `generation` must be 'device' or 'host', got {generation!r}")
        if block is not None and (block % 32 or not 32 <= block <= 1024):
            raise ValueError(f"CudaBackend: `block` must be a multiple of 32 in [32, 1024], got {block}")
        if threads is not None and threads < 1:
            raise ValueError(f"CudaBackend: `threads` must be >= 1, got {threads}")
        self.selection, self.generation, self.memory = selection, generation, dict(memory or {})
        self.tune, self.threads, self.block, self.profile = tune, threads, block, profile
        self.tuner = tuner
        self.context = _context(device)
        self.device_name = self.context.get_device().name()

    @staticmethod
    def probe(device: int = 0) -> str:
        """Name of the GPU the backend would use; BackendUnavailable when there is none."""
        return _context(device).get_device().name()

    @property
    def device(self) -> str:
        return self.device_name

    def evaluator(self, problem, neighbourhood) -> "CudaEvaluator":
        if self.tune and self.tuner is None:
            self.tuner = WaveTuner()
        return CudaEvaluator(problem, neighbourhood, self)

    def batch_evaluator(self, problem, neighbourhood, starts: int):
        """Evaluator of ``starts`` tabu searches at once (see lsmgpu.batch)."""
        from .cuda_batch import CudaBatchEvaluator
        return CudaBatchEvaluator(problem, neighbourhood, self, starts)


class CudaEvaluator(Evaluator):
    backend = "cuda"
    #: value of the record's index while evaluate_select has not written it
    PENDING = -2

    def __init__(self, problem, neighbourhood, options: CudaBackend, lanes: int | None = None):
        from ..kernels import KernelSpec, render
        super().__init__(problem, neighbourhood)
        self.options = options
        self.device = options.device
        dev = options.context.get_device()
        self.resident_threads = dev.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT) * \
            dev.get_attribute(cuda.device_attribute.MAX_THREADS_PER_MULTIPROCESSOR)
        major, minor = dev.compute_capability()
        self.source = render(problem, memory=options.memory, generation=options.generation, lanes=lanes)
        spec = KernelSpec(problem, tuple(sorted(options.memory.items())), options.generation, lanes)
        self.shared_bytes = spec.shared_bytes()
        self.lanes = spec.lanes()
        module = self.module = _compile(self.source, f"sm_{major}{minor}")
        self.size = neighbourhood.size
        # moves per chunk: step through consecutive moves once there are more than two per
        # resident thread group (decoding an index costs more than stepping to the next)
        groups = self.resident_threads // self.lanes
        self.chunk = int(min(32, max(1, self.size // (2 * groups))))
        #: threads the neighbourhood can keep busy: one group of lanes per chunk
        self.units = -(-self.size // self.chunk) * self.lanes
        self.integer = problem.integer
        self.fit_char = "q" if self.integer else "d"
        self.cand = np.dtype([("s", np.int64 if self.integer else np.float64), ("idx", np.int64)])
        self.sol_dtype = np.dtype(np.float64 if np.dtype(problem.encoding.dtype).kind == "f" else np.int32)

        # the problem's arrays, each as its policy asks
        self._keep, self._textures, self.array_args = [], [], []
        arg_chars = ""
        data = problem.device_data()
        sample = problem.solution_data(problem.encoding.random(np.random.default_rng(0)))
        self.state_buffers = {}
        self.array_specs = spec.arrays()
        for a in self.array_specs:
            host = np.asarray(sample[a.name]) if a.state else data[a.name].array
            buf = cuda.to_device(np.ascontiguousarray(host))
            self._keep.append(buf)
            if a.state:
                self.state_buffers[a.name] = (buf, host.dtype, host.shape)
            if a.policy == "texture":
                from .texture import TextureObject
                tex = TextureObject(int(buf), host.dtype, host.size)
                self._textures.append(tex)
                self.array_args.append(np.uint64(tex.handle))
                arg_chars += "Q"
            else:
                self.array_args.append(np.intp(int(buf)))
                arg_chars += "P"

        n = problem.n
        self.x_gpu = cuda.mem_alloc(n * self.sol_dtype.itemsize)
        self.max_blocks = 16 * self.resident_threads // 32 + 1
        self.partial = cuda.mem_alloc(self.max_blocks * self.cand.itemsize)
        self.ticket = cuda.to_device(np.zeros(1, np.uint32))
        self.first_found = cuda.to_device(np.full(1, np.iinfo(np.uint64).max, np.uint64))
        self.out = cuda.pagelocked_empty(1, self.cand, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        self.out_ptr = np.intp(self.out.base.get_device_pointer())
        # the chosen move as the kernel decoded it, where the host would decode it slowly
        self.chosen_move, chosen_ptr = None, 0
        if neighbourhood.device_decoded:
            self.chosen_move = cuda.pagelocked_empty(4, np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
            chosen_ptr = self.chosen_move.base.get_device_pointer()
        self.tabu_gpu, self.tabu_host = None, None
        self.moves_gpu = None
        if options.generation == "host":
            self.moves_gpu = cuda.mem_alloc(max(1, self.size * max(1, neighbourhood.arity)) * 4)
        self.fitness_gpu = None
        self.fitness_host = None
        self._all_moves = None
        if options.selection == "host":
            ftype = np.int64 if self.integer else np.float64
            self.fitness_gpu = cuda.mem_alloc(max(1, self.size) * 8)
            self.fitness_host = cuda.pagelocked_empty(self.size, ftype)

        self.k_select = module.get_function("evaluate_select")
        self._select_format = "PPPi" + self.fit_char * 2 + "iiiqPPPPP" + arg_chars
        self.k_select.prepare(self._select_format)
        self._fitness_max = 2**63 - 1 if self.integer else math.inf
        self.k_all = module.get_function("evaluate_all")
        self.k_all.prepare("PPiqP" + arg_chars)
        self.k_apply = module.get_function("apply_index")
        self.k_apply.prepare("PPqii" + arg_chars)
        self.k_given = module.get_function("apply_given")
        self.k_given.prepare("PPP" + arg_chars)
        self._given = None          # mapped host buffers of apply_moves: (moves, their deltas)
        self.arg_chars = arg_chars
        self.refresh = Refresh.of(self, self.x_gpu, 1)
        self._tail = (int(self.partial), int(self.ticket), int(self.out_ptr), int(self.first_found), int(chosen_ptr),
                      *(int(a) for a in self.array_args))
        self._out_idx, self._out_s = self.out["idx"], self.out["s"]
        self._set_head()
        self.config = None
        digest = hashlib.sha1(self.source.encode()).hexdigest()[:16]
        self.tuning_key = f"{digest}|{self.device}|{self.size}"

    # --- set-up --------------------------------------------------------------------------
    def enable_tabu(self):
        shape = self.neighbourhood.tabu_shape()
        if shape is None:
            raise TypeError(f"{self.neighbourhood!r} defines no tabu attributes")
        if self.options.selection == "host":
            self.tabu_host = np.zeros(shape, dtype=np.int64)
        else:
            self.tabu_gpu = cuda.to_device(np.zeros(shape, dtype=np.int32))
            self._set_head()

    def load(self, x):
        self.x = np.array(x, dtype=self.problem.encoding.dtype)
        cuda.memcpy_htod(self.x_gpu, np.ascontiguousarray(self.x, dtype=self.sol_dtype))
        if self.state_buffers:
            for name, array in self.problem.solution_data(self.x).items():
                buf, dtype, shape = self.state_buffers[name]
                array = np.ascontiguousarray(array, dtype=dtype)
                if array.shape != shape:
                    raise ValueError(f"{self.problem.name}.solution_data: {name!r} changed shape "
                                     f"{shape} -> {array.shape}")
                cuda.memcpy_htod(buf, array)
            if self.refresh:
                self.refresh()      # state the problem leaves to the GPU to complete (QAP's table)

    def load_from(self, other):
        """Copy ``other``'s solution and solution-derived arrays on the GPU when it is a CUDA
        evaluator with the same arrays (a polish switching neighbourhoods: no host recomputation,
        no upload); otherwise load its host copy."""
        same = (isinstance(other, CudaEvaluator) and other.problem.n == self.problem.n
                and other.sol_dtype == self.sol_dtype
                and {k: v[1:] for k, v in other.state_buffers.items()} == {k: v[1:] for k, v in self.state_buffers.items()})
        if not same:
            self.load(other.x)
            return
        self.x = other.x.copy()
        cuda.memcpy_dtod(self.x_gpu, other.x_gpu, self.x.size * np.dtype(self.sol_dtype).itemsize)
        for name, (buf, dtype, shape) in self.state_buffers.items():
            cuda.memcpy_dtod(buf, other.state_buffers[name][0], int(np.prod(shape)) * np.dtype(dtype).itemsize)

    def close(self):
        for tex in self._textures:
            tex.close()
        self._textures = []

    # --- launches ------------------------------------------------------------------------
    def _upload_moves(self, step):
        """Generation on the CPU: decode the whole move list and upload it."""
        t0 = time.perf_counter()
        moves = self.neighbourhood.moves(self.x, np.arange(self.size, dtype=np.int64), step)
        cuda.memcpy_htod(self.moves_gpu, np.ascontiguousarray(moves, dtype=np.int32))
        self._time("generate", time.perf_counter() - t0)

    def _launch_select(self, threads, block, flags, query: Query, until: int):
        """One evaluate_select launch. The argument buffer is packed here directly (PyCUDA's
        prepared_call does the same plus bookkeeping that costs ~10 us per call)."""
        grid = threads // block
        current = query.current if math.isfinite(query.current) else 0
        best = query.best if math.isfinite(query.best) else self._fitness_max
        if self.integer:
            current, best = int(current), int(best)
        args = pack(self._select_format, *self._head, query.step, current, best, flags, until, query.forced_after,
                    self.chunk, *self._tail)
        try:
            self.k_select._launch_kernel((grid, 1), (block, 1, 1), args, self.shared_bytes, None)
        except cuda.Error as exc:
            raise KernelLaunchError(f"evaluate_select: {exc}", (grid,), (block,)) from None

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
                try:
                    cuda.Context.synchronize()
                except cuda.Error as exc:
                    raise KernelLaunchError(f"evaluate_select failed while running: {exc}",
                                            (threads // block,), (block,)) from None
                break

    def _configuration(self, query: Query) -> tuple[int, int]:
        """(threads, block): fixed by the user, tuned once, or the default."""
        if self.config is not None:
            return self.config
        o = self.options
        if o.threads is not None or o.block is not None:
            block = o.block or 256
            threads = o.threads or default_configuration(self.units, self.resident_threads, block)[0]
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
            self.config = o.tuner.tune(self.tuning_key, self.problem.n * self.lanes, self.units,
                                       self.resident_threads, timed)
        else:
            self.config = default_configuration(self.units, self.resident_threads)
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
        if flags & (APPLY_ANY | APPLY_IMPROVING) and self.refresh:
            self.refresh()
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
        threads, block = self.config or default_configuration(self.units, self.resident_threads)
        t0 = time.perf_counter()
        moves = np.intp(int(self.moves_gpu)) if self.moves_gpu is not None else np.intp(0)
        if self.fitness_gpu is None:
            self.fitness_gpu = cuda.mem_alloc(max(1, self.size) * 8)
        out = self.fitness_gpu
        try:
            self.k_all.prepared_call((threads // block, 1), (block, 1, 1), np.intp(int(self.x_gpu)), moves,
                                     np.int32(step), np.int64(self.chunk), np.intp(int(out)), *self.array_args,
                                     shared_size=self.shared_bytes)
            cuda.Context.synchronize()
        except cuda.Error as exc:
            raise KernelLaunchError(f"evaluate_all: {exc}", (threads // block,), (block,)) from None
        t1 = time.perf_counter()
        host = self.fitness_host if self.fitness_host is not None else \
            np.empty(self.size, np.int64 if self.integer else np.float64)
        cuda.memcpy_dtoh(host, out)
        self._time("kernel", t1 - t0)
        self._time("transfer", time.perf_counter() - t1)
        return host

    def _select_on_host(self, query: Query) -> Selection:
        d = self.deltas(query.step)
        t0 = time.perf_counter()
        stamps = None
        if query.tabu:
            if self._all_moves is None:  # decoded once: the neighbourhood is static
                self._all_moves = self.neighbourhood.decode(np.arange(self.size, dtype=np.int64))
            stamps = self.tabu_stamps(self.tabu_host, self._all_moves)
        k = select_in(self.sense * d, stamps, query)
        self._time("select", time.perf_counter() - t0)
        delta = (int(d[k]) if self.integer else float(d[k])) if k >= 0 else 0
        evaluated = self.size
        return Selection(k, delta, evaluated)

    def apply(self, index, step=0, tabu_until=None, move=None):
        t0 = time.perf_counter()
        if move is None:
            move = self.move_at(index, step)
        self.forbid(self.tabu_host, move, tabu_until)
        tabu = np.intp(int(self.tabu_gpu)) if self.tabu_gpu is not None else np.intp(0)
        try:
            self.k_apply.prepared_call((1, 1), (256, 1, 1), np.intp(int(self.x_gpu)), tabu,
                                       np.int64(index), np.int32(step), np.int32(tabu_until or 0),
                                       *self.array_args)
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
                           cuda.pagelocked_empty(max(4, count), np.int64 if self.integer else np.float64, mem_flags=flags))
        given, changes = self._given
        given[:count * arity] = moves.ravel()
        given_ptr, change_ptr = given.base.get_device_pointer(), changes.base.get_device_pointer()
        t0 = time.perf_counter()
        for q in range(count):
            try:
                self.k_given.prepared_call((1, 1), (256, 1, 1), np.intp(int(self.x_gpu)),
                                           np.intp(given_ptr + 4 * arity * q), np.intp(change_ptr + 8 * q),
                                           *self.array_args)
            except cuda.Error as exc:
                raise KernelLaunchError(f"apply_given: {exc}", (1,), (256,)) from None
            if self.refresh:
                self.refresh()
        try:
            cuda.Context.synchronize()
        except cuda.Error as exc:
            raise KernelLaunchError(f"apply_given failed while running: {exc}", (1,), (256,)) from None
        for move in moves:
            self.neighbourhood.apply(self.x, move)
        self._time("apply", time.perf_counter() - t0)
        return changes[:count].sum().item()

    def device_solution(self) -> np.ndarray:
        """The solution as the GPU holds it (to check the host mirror)."""
        x = np.empty(self.problem.n, self.sol_dtype)
        cuda.memcpy_dtoh(x, self.x_gpu)
        return x


class Refresh:
    """Launcher of the problem's grid-wide ``refresh`` kernel (Problem.refresh_items) over
    ``starts`` solutions laid end to end from ``xs``, with a CudaEvaluator's arrays."""

    def __init__(self, evaluator: CudaEvaluator, xs, starts: int, args=None):
        items = evaluator.problem.refresh_items()
        self.function = evaluator.module.get_function("refresh")
        args = evaluator.array_args if args is None else args
        self.args = pack("Pi" + evaluator.arg_chars, int(xs), int(starts), *(int(a) for a in args))
        self.grid = int(min(-(-starts * items // 256), 4 * evaluator.resident_threads // 256))

    @classmethod
    def of(cls, evaluator: CudaEvaluator, xs, starts: int, args=None) -> "Refresh | None":
        """The launcher, or None when the problem has nothing to refresh."""
        return cls(evaluator, xs, starts, args) if evaluator.problem.refresh_items() else None

    def __call__(self) -> None:
        """Queue one refresh behind the launches before it."""
        try:
            self.function._launch_kernel((self.grid, 1), (256, 1, 1), self.args, 0, None)
        except cuda.Error as exc:
            raise KernelLaunchError(f"refresh: {exc}", (self.grid,), (256,)) from None
