"""Compiled kernels on disk, and the compile check that needs no GPU.

``cache_dir()`` is lsmgpu's cache folder (``$LSMGPU_CACHE`` or ~/.cache/lsmgpu): the cubins of
the builds that run (lsmgpu/backends/cuda/driver.py) and of the compile checks live in its
``cubin`` folder under :func:`cubin_path`, written whole by :func:`keep_cubin` (another process
may read a cubin the moment it appears). ``nvcc_compile`` builds a rendered source for a given
architecture without a GPU, warnings as errors: how CI catches template errors.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import KernelCompileError

__all__ = ["cache_dir", "cubin_path", "keep_cubin", "save_source", "nvcc_compile", "CHECK_OPTIONS"]

#: the compile checks' nvcc options: every warning an error (rendered kernels have none), the device
#: code's optimisation cut (NVVM -O1, ptxas -O0), its errors and resource checks kept: the 5-opt
#: chain's kernel in 3.1 s, not 24.2 (nvcc 13.0, two cores); the builds that run optimise fully
CHECK_OPTIONS = ("-Werror", "all-warnings", "-Xcicc", "-O1", "-Xptxas", "-O0")


def cache_dir() -> str:
    """lsmgpu's cache folder (``$LSMGPU_CACHE`` or ~/.cache/lsmgpu), made where missing."""
    path = os.environ.get("LSMGPU_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "lsmgpu")
    os.makedirs(path, exist_ok=True)
    return path


def cubin_path(source: str, arch: str, options: tuple[str, ...], suffix: str = "cubin") -> str:
    """Where the disk cache keeps the cubin (or, with ``suffix`` "ptx", the PTX) of (source, arch, options)."""
    key = hashlib.sha256("\0".join([source, arch, *options]).encode()).hexdigest()[:32]
    return os.path.join(cache_dir(), "cubin", f"{key}-{arch}.{suffix}")


def _write_whole(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a private file renamed onto it: another process reading
    ``path`` (nvcc, a test worker) sees the old file or the new one, never a part."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def keep_cubin(path: str, cubin: bytes) -> None:
    """Write ``cubin`` to ``path`` whole; a cache folder that cannot be written is passed over: the
    kernel is built again next time."""
    try:
        _write_whole(path, cubin)
    except OSError:
        pass


def save_source(source: str) -> str:
    """Write a rendered source, whole, to a file named by its hash; return the path (nvcc's input
    and error reports). Processes that render the same kernel at once share the file: written in
    place, one could hand nvcc another's half-written file, and nvcc builds an empty or cut source
    into a module without the kernel, which the check would then cache as the kernel's."""
    path = os.path.join(tempfile.gettempdir(), "lsmgpu-kernels", hashlib.sha1(source.encode()).hexdigest()[:16] + ".cu")
    _write_whole(path, source.encode())
    return path


def nvcc_compile(source: str, arch: str = "sm_90", options: tuple[str, ...] = CHECK_OPTIONS,
                 ptx: bool = False) -> bytes:
    """Compile ``source`` to a cubin with nvcc (no GPU needed; CHECK_OPTIONS by default);
    KernelCompileError on failure. ``ptx``: the PTX instead, nvcc stopping before ptxas (the C++
    front end's errors and warnings alone, in about half the time: for the variants of a kernel
    whose cubin is checked). A cubin the same nvcc (its ``--version``) built before from the same source and
    options is read from the disk cache (cubin_path): tests check kernels alike."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise FileNotFoundError("nvcc is not on PATH")
    stage = "-ptx" if ptx else "-cubin"
    cached = cubin_path(source, arch, (stage, *options, _nvcc_version(nvcc)), stage[1:])
    if os.path.isfile(cached):
        return Path(cached).read_bytes()
    src = save_source(source)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "kernel." + stage[1:])
        run = subprocess.run([nvcc, stage, f"-arch={arch}", *options, "-o", out, src],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise KernelCompileError(f"nvcc failed on {src}:\n{run.stderr}", src)
        built = Path(out).read_bytes()
    keep_cubin(cached, built)
    return built


@functools.lru_cache(maxsize=None)
def _nvcc_version(nvcc: str) -> str:
    """``nvcc --version``'s text: a compile check's cache key holds the compiler that built it."""
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
