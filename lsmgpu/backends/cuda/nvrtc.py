"""Kernels built in process by NVRTC (NVIDIA's runtime compiler, through cuda-bindings) instead of
an nvcc process: 0.03-0.1 s a kernel instead of 1.3-1.6 s on the H100 machine (docs/benchmarks.md,
"Kernels built once per kind"). Optional: without cuda-bindings, or where NVRTC refuses a
source, the driver builds with nvcc as before (and says so in the log)."""
from __future__ import annotations

__all__ = ["available", "fast_compile", "compile_cubin", "NvrtcError"]

#: the first NVRTC with the compiler's fast compile (``--Ofast-compile``)
FAST_COMPILE_VERSION = (12, 8)

try:
    from cuda.bindings import nvrtc
except ImportError:          # the optional extra is not installed
    nvrtc = None


class NvrtcError(RuntimeError):
    """NVRTC could not build a source (its log in the message)."""


def available() -> bool:
    """Whether cuda-bindings' NVRTC is importable."""
    return nvrtc is not None


def fast_compile() -> bool:
    """Whether NVRTC is importable and builds with ``--Ofast-compile`` (driver.QUICK_BUILD_OPTIONS)."""
    if nvrtc is None:
        return False
    result, major, minor = nvrtc.nvrtcVersion()
    return result == nvrtc.nvrtcResult.NVRTC_SUCCESS and (major, minor) >= FAST_COMPILE_VERSION


def _check(result, what: str) -> None:
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise NvrtcError(f"NVRTC {what}: {result}")


def compile_cubin(source: str, arch: str, options: tuple[str, ...] = ()) -> bytes:
    """The cubin of ``source`` for ``arch`` (e.g. "sm_90"); NvrtcError with NVRTC's log."""
    result, program = nvrtc.nvrtcCreateProgram(source.encode(), b"lsmgpu_kernel.cu", 0, [], [])
    _check(result, "could not create a program")
    try:
        flags = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in options)]
        (result,) = nvrtc.nvrtcCompileProgram(program, len(flags), flags)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(program)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            raise NvrtcError(log.decode(errors="replace").strip())
        result, size = nvrtc.nvrtcGetCUBINSize(program)
        _check(result, "gave no cubin size")
        cubin = b" " * size
        (result,) = nvrtc.nvrtcGetCUBIN(program, cubin)
        _check(result, "gave no cubin")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(program)
