"""PyCUDA at one place: the context, compiling with the module cache, launching with error checks.

Context: if the calling thread already has a current CUDA context (e.g. pycuda.autoinit),
it is used; otherwise the device's primary context is retained and made current.

Launching: the engine's hot loop launches one kernel per iteration, where PyCUDA's
``prepared_call`` adds about 10 us of bookkeeping to the ~25 us a launch costs from Python
(docs/benchmarks.md, overhead table). :func:`launch` therefore hands an argument buffer packed
with :func:`pack` (the standard library's ``struct``, native alignment: the layout of a CUDA
kernel's parameters) to PyCUDA's ``Function._launch_kernel``, the one private PyCUDA call of
lsmgpu, kept here; every launch and every wait turns a CUDA error into KernelLaunchError
naming the kernel.
"""
from __future__ import annotations

import atexit
import concurrent.futures
import logging
import os
import struct
import threading
import time
from pathlib import Path

import numpy as np

from ...budget import DeadlineReached, count_build_wait, time_left
from ...errors import BackendUnavailable, KernelCompileError, KernelLaunchError
from ...cubins import cache_dir, cubin_path, keep_cubin, save_source
from . import nvrtc

log = logging.getLogger("lsmgpu")

__all__ = ["cuda", "context", "device_name", "warm_up", "compile_module", "load_module", "load_first_module", "built",
           "prebuild", "prebuild_first", "quick_builds", "launch", "synchronize", "pack", "download", "resident_threads",
           "build_note", "builds_under_way", "finish_builds"]

try:
    import pycuda.driver as cuda
    from pycuda.compiler import compile as nvcc_to_cubin
    _IMPORT_ERROR = None
except ImportError as exc:  # PyCUDA missing or libcuda absent
    cuda, nvcc_to_cubin, _IMPORT_ERROR = None, None, exc

#: nvcc's options for the kernels lsmgpu runs (line info for profilers)
BUILD_OPTIONS = ("-lineinfo",)
#: a quick build's (:func:`load_first_module`): the compiler's fast compile, fewer optimisations. The
#: 5-opt kernels' first builds take about 1 s instead of 6-11 s on the H200 and run about half as fast
#: (docs/benchmarks/tsp-depth.md, "Quick builds first")
QUICK_BUILD_OPTIONS = BUILD_OPTIONS + ("--Ofast-compile=min",)

_contexts: dict[int, object] = {}
_context_lock = threading.Lock()
_cubins: dict[tuple, bytes] = {}
_modules: dict[tuple, object] = {}
#: builds started ahead (prebuild) that no compile_module has taken yet: (source, arch, options) -> Future
_building: dict[tuple, concurrent.futures.Future] = {}
_BUILDER: concurrent.futures.ThreadPoolExecutor | None = None
#: the command says where the builds took this long or longer (build_note)
BUILD_NOTE_SECONDS = 1.0


def pack(format: str, *args) -> bytes:
    """A kernel's argument buffer (``struct`` format characters, native alignment)."""
    return struct.pack(format, *args)


def context(ordinal: int):
    """The current context, or the device's primary context made current (kept for the process).

    A context is current per thread: a thread that finds none (e.g. a Ray actor's second
    concurrent call) gets the primary context pushed for it. A thread whose current context is
    another GPU's gets BackendUnavailable, not that GPU: one thread drives one GPU (a thread or a
    Ray actor per GPU drives several)."""
    _require_pycuda()
    try:
        current = _current_on(ordinal)
        if current is not None:
            return current
        _primary(ordinal).push()     # current in this thread from now on
        return _contexts[ordinal]
    except cuda.Error as exc:
        raise BackendUnavailable(f"CUDA is not usable: {exc}") from None


def device_name(ordinal: int) -> str:
    """The name of GPU ``ordinal``, found without creating a context (the CUDA driver's start
    only), with the same refusals as :func:`context`."""
    _require_pycuda()
    try:
        _current_on(ordinal)
        return cuda.Device(ordinal).name()
    except cuda.Error as exc:
        raise BackendUnavailable(f"CUDA is not usable: {exc}") from None


def _require_pycuda() -> None:
    if cuda is None:
        raise BackendUnavailable(f"PyCUDA is not importable: {_IMPORT_ERROR}")


def _current_on(ordinal: int):
    """The CUDA driver started and this thread's current context (None: none), after the checks
    :func:`context` and :func:`device_name` share: BackendUnavailable without GPU ``ordinal``, or
    where this thread already drives another GPU."""
    cuda.init()
    bus = _bus_id(ordinal)
    current = cuda.Context.get_current()
    if current is not None and current.get_device().pci_bus_id() != bus:
        raise BackendUnavailable(f"CUDA device {ordinal} asked for, but this thread already drives "
                                 f"{current.get_device().name()} (another device); use one thread or Ray actor "
                                 "per GPU")
    return current


def _primary(ordinal: int):
    """The device's primary context, retained once per process (by whichever thread asks first)."""
    with _context_lock:
        if ordinal not in _contexts:
            if ordinal >= cuda.Device.count():
                raise BackendUnavailable(f"no CUDA device {ordinal} ({cuda.Device.count()} found)")
            _contexts[ordinal] = cuda.Device(ordinal).retain_primary_context()
            atexit.register(_release, ordinal)
        return _contexts[ordinal]


def warm_up(ordinal: int = 0) -> threading.Thread | None:
    """Start the CUDA driver and the device's primary context in a background thread (about
    0.3 s), so that it overlaps reading an instance: ``lsmgpu solve`` calls it first. Returns
    the thread, or None where PyCUDA is missing; errors surface later, at the backend's set-up."""
    if cuda is None:
        return None

    def start():
        try:
            cuda.init()
            _primary(ordinal)
        except (cuda.Error, BackendUnavailable):
            pass

    thread = threading.Thread(target=start, name="lsmgpu-cuda-warm-up", daemon=True)
    thread.start()
    return thread


def _bus_id(ordinal: int) -> str:
    """The PCI address of device ``ordinal`` (how two device handles are compared)."""
    if not 0 <= ordinal < cuda.Device.count():
        raise BackendUnavailable(f"no CUDA device {ordinal} ({cuda.Device.count()} found)")
    return cuda.Device(ordinal).pci_bus_id()


def _release(ordinal: int) -> None:
    """Pop the primary context we pushed, before PyCUDA's own clean-up checks the stack."""
    _modules.clear()
    ctx = _contexts.pop(ordinal, None)
    if ctx is not None:
        try:
            ctx.pop()
        except cuda.Error:
            pass


def resident_threads(device) -> int:
    """Threads the GPU holds at once: multiprocessors x threads per multiprocessor."""
    attribute = cuda.device_attribute
    return device.get_attribute(attribute.MULTIPROCESSOR_COUNT) * \
        device.get_attribute(attribute.MAX_THREADS_PER_MULTIPROCESSOR)


def prebuild(source: str, arch: str, options: tuple[str, ...] = BUILD_OPTIONS) -> None:
    """Starts building ``source`` in the builder's threads where no build of it is held (in memory,
    on disk or under way); compile_module then waits for that build rather than starting its own.
    NVRTC builds side by side (cuda-bindings releases the GIL): a search builds its next kernels
    while its first ones build and run."""
    key = (source, arch, options)
    path = cubin_path(source, arch, options)
    if key not in _cubins and key not in _building and not os.path.isfile(path):
        _building[key] = _builder().submit(_build, source, arch, path, options)


def built(source: str, arch: str) -> bool:
    """Whether ``source``'s full build (BUILD_OPTIONS) is held: in memory, made by a build started
    ahead, or on disk."""
    key = (source, arch, BUILD_OPTIONS)
    if key in _building:
        return _building[key].done()
    return key in _cubins or os.path.isfile(cubin_path(source, arch, BUILD_OPTIONS))


def compile_module(source: str, arch: str, options: tuple[str, ...] = BUILD_OPTIONS) -> bytes:
    """The cubin of ``source``: cached in memory and as a file in lsmgpu's cache folder (a new
    process, or a new instance of a kind already built, runs no compiler, not even
    ``nvcc --version``), else built by NVRTC or nvcc (:func:`_build`).

    The build runs in a worker thread while this one waits no longer than the running search's time
    budget (lsmgpu.budget.time_left): past it, DeadlineReached stops the search with its best so
    far, and the build goes on in the background into the disk cache, for the next run."""
    key = (source, arch, options)
    if key not in _cubins:
        path, ahead = cubin_path(source, arch, options), _building.pop(key, None)
        if ahead is None and os.path.isfile(path):
            _cubins[key] = Path(path).read_bytes()
            return _cubins[key]
        future = ahead or _builder().submit(_build, source, arch, path, options)
        left, started = time_left(), time.perf_counter()
        try:
            _cubins[key] = future.result(timeout=None if left is None else max(0.0, left))
        except concurrent.futures.TimeoutError:
            raise DeadlineReached("the time budget ran out while nvcc built a kernel; the build finishes in "
                                  "the background, cached for the next run (the process ends after it)") from None
        except cuda.CompileError as exc:
            path = save_source(source)
            raise KernelCompileError(f"nvcc failed on {path}:\n{exc.stderr or exc}", path) from None
        finally:
            count_build_wait(time.perf_counter() - started)
            if key not in _cubins and not future.done():
                _building[key] = future        # cut by the deadline or Ctrl-C: a later call waits for this build
    return _cubins[key]


def builds_under_way() -> int:
    """Kernel builds still running that no run waits for (started ahead, or left by a run that
    the deadline or Ctrl-C stopped): the process ends only after them (the command says so)."""
    return sum(not future.done() for future in _building.values())


def finish_builds(limit: float | None = None) -> int:
    """Waits for the kernel builds under way (at most ``limit`` seconds; None: until they end), so
    that a process about to end keeps them in the cache: the builds still running after."""
    concurrent.futures.wait(list(_building.values()), timeout=limit)
    return builds_under_way()


def build_note(result) -> str | None:
    """What the command says after a run whose result counts BUILD_NOTE_SECONDS or more of waiting
    for kernel builds (``timings["build"]``; None otherwise): a first run of a configuration on a
    machine builds its kernels inside its budget (focused ACO's 5-opt chains: seconds on the H200
    machine, docs/benchmarks/tsp-depth.md, "The command's first minute"), a later one reads them
    from the cache."""
    waited = result.timings.get("build", 0.0)
    if waited < BUILD_NOTE_SECONDS:
        return None
    return (f"{waited:.1f} s of the run's {result.seconds:.1f} s went to building its GPU kernels, kept in "
            f"{os.path.join(cache_dir(), 'cubin')} for the next run of this configuration")


def _build(source: str, arch: str, path: str, options: tuple[str, ...]) -> bytes:
    """NVRTC in process where cuda-bindings is installed, else (or where NVRTC refuses the
    source: nvcc's message is the clearer one) nvcc through PyCUDA, with ``options``; the cubin
    then written to ``path`` (:func:`keep_cubin`)."""
    cubin = None
    if nvrtc.available():
        try:
            cubin = nvrtc.compile_cubin(source, arch, options)
        except nvrtc.NvrtcError as exc:
            log.info("NVRTC could not build %s (%s); building with nvcc", save_source(source), str(exc)[:200])
    if cubin is None:
        cubin = nvcc_to_cubin(source, arch=arch, no_extern_c=True, cache_dir=False, options=list(options))
    keep_cubin(path, cubin)
    return cubin


def load_module(source: str, arch: str, constants=(), options: tuple[str, ...] = BUILD_OPTIONS):
    """``source``'s module (built with ``options``) in the current context with its ``__constant__``
    variables set to ``constants`` (DeviceConstant: name, typed value): one module per (source,
    options, constants, context), so instances of one kind share the build and each reads its own
    sizes."""
    constants = [c for c in constants if not c.baked]     # the baked ones are literals of the source
    key = (source, arch, options, tuple((c.name, c.value.dtype.str, c.value.item()) for c in constants),
           id(cuda.Context.get_current()))
    if key not in _modules:
        module = cuda.module_from_buffer(compile_module(source, arch, options))
        for constant in constants:
            address, size = module.get_global(constant.name)
            if size != constant.value.itemsize:
                raise KernelCompileError(f"device constant {constant.name} holds {size} bytes, "
                                         f"its value {constant.value.itemsize}")
            cuda.memcpy_htod(address, constant.value.tobytes())
        _modules[key] = module
    return _modules[key]


def load_first_module(source: str, arch: str) -> tuple[object, bool]:
    """``source``'s module, the first one to have, and whether it is a quick build: the full build's
    where it is held (:func:`built`), else, where NVRTC has the fast compile, a quick build's
    (QUICK_BUILD_OPTIONS) with the full build started beside it (:func:`prebuild`). The caller
    loads the full module once ``built`` says it is made: a first run on a machine runs its
    kernels from about a second on (the quick build of the 5-opt kernels, against 6-11 s for the
    full one on the H200), at full speed from the full build's end."""
    if built(source, arch) or not quick_builds():
        return load_module(source, arch), False
    prebuild(source, arch)
    return load_module(source, arch, options=QUICK_BUILD_OPTIONS), True


def prebuild_first(source: str, arch: str) -> None:
    """Starts the builds :func:`load_first_module` takes (:func:`prebuild`): the full one, and the
    quick one where it would run it first."""
    prebuild(source, arch)
    if not built(source, arch) and quick_builds():
        prebuild(source, arch, QUICK_BUILD_OPTIONS)


def quick_builds() -> bool:
    """Whether :func:`load_first_module` starts with quick builds: NVRTC has the fast compile and
    the environment does not set ``LSMGPU_QUICK_BUILDS=0`` (for timings of the fully built kernels
    from a run's start, a profiler's, or the benchmark harness's rows after its warm-up runs); another
    value than 0 or 1 is refused by name."""
    value = os.environ.get("LSMGPU_QUICK_BUILDS", "1")
    if value not in ("0", "1"):
        raise ValueError(f"LSMGPU_QUICK_BUILDS must be 0 (full builds from the start) or 1, got {value!r}")
    return value == "1" and nvrtc.fast_compile()


def _builder() -> concurrent.futures.ThreadPoolExecutor:
    """The threads that run nvcc (kernel builds of one process, a few at a time)."""
    global _BUILDER
    if _BUILDER is None:
        _BUILDER = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="lsmgpu-nvcc")
    return _BUILDER


def launch(function, name: str, grid: tuple, block: int, args: bytes, shared_bytes: int = 0) -> None:
    """Queue ``function`` on ``grid`` x ``block`` threads with a packed argument buffer."""
    try:
        function._launch_kernel(grid, (block, 1, 1), args, shared_bytes, None)
    except cuda.Error as exc:
        raise KernelLaunchError(f"{name}: {exc}", grid, (block,)) from None


def synchronize(what: str, grid=(), block=()) -> None:
    """Wait for the GPU; a fault of the queued work raises KernelLaunchError naming ``what``."""
    try:
        cuda.Context.synchronize()
    except cuda.Error as exc:
        raise KernelLaunchError(f"{what}: {exc}", tuple(grid), tuple(block)) from None


def download(buffer, shape, dtype) -> np.ndarray:
    """A new host array of ``shape`` and ``dtype`` read from the device address ``buffer``."""
    out = np.empty(shape, dtype)
    cuda.memcpy_dtoh(out, buffer)
    return out


class DeviceBuffers:
    """The GPU buffers one host object owns (a colony, a GA population, don't-look rows), made
    through it and freed together by ``close()``."""

    def __init__(self):
        self._owned = []

    def alloc(self, nbytes: int):
        """An uninitialised buffer of ``nbytes`` (at least 8)."""
        buffer = cuda.mem_alloc(max(8, int(nbytes)))
        self._owned.append(buffer)
        return buffer

    def upload(self, array):
        """A buffer holding ``array`` (C order), or 0 (a null pointer) for None."""
        if array is None:
            return 0
        array = np.ascontiguousarray(array)
        buffer = self.alloc(array.nbytes)
        cuda.memcpy_htod(buffer, array)
        return buffer

    def close(self) -> None:
        for buffer in self._owned:
            buffer.free()
        self._owned = []
