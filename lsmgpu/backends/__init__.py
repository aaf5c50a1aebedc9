"""Backends: where the neighbourhood is evaluated. ``resolve`` turns a name into one."""
from __future__ import annotations

import logging

from ..errors import BackendUnavailable
from .cpu import CpuBackend

__all__ = ["resolve", "CpuBackend", "cuda_available"]

log = logging.getLogger("lsmgpu")


def cuda_available() -> tuple[bool, str]:
    """(True, device name) when PyCUDA imports and a GPU answers, else (False, why)."""
    try:
        from .cuda import CudaBackend
        return True, CudaBackend.probe()
    except BackendUnavailable as exc:
        return False, str(exc)


def has_move_code(neighbourhood) -> bool:
    """Whether the CUDA skeleton can generate ``neighbourhood``'s moves."""
    from ..kernels import neighbourhood_kind
    try:
        neighbourhood_kind(neighbourhood)
    except TypeError:
        return False
    return True


def resolve(backend, problem=None):
    """A backend object from ``"auto" | "cpu" | "cuda"`` or a backend instance.

    ``auto`` takes CUDA when PyCUDA and a GPU are there and the problem has a kernel
    template, else the CPU, and logs which and why.
    """
    if not isinstance(backend, str):
        if not hasattr(backend, "evaluator"):
            raise TypeError(f"`backend` must be 'auto', 'cpu', 'cuda' or a backend object, got {backend!r}")
        return backend
    if backend == "cpu":
        return CpuBackend()
    if backend == "cuda":
        from .cuda import CudaBackend
        return CudaBackend()
    if backend != "auto":
        raise ValueError(f"`backend` must be 'auto', 'cpu' or 'cuda', got {backend!r}")
    if problem is not None and problem.template is None:
        log.info("backend auto: %s has no CUDA template, using the CPU", problem.name)
        return CpuBackend()
    if problem is not None and not has_move_code(problem.neighbourhood):
        log.info("backend auto: %r has no CUDA move code, using the CPU", problem.neighbourhood)
        return CpuBackend()
    ok, why = cuda_available()
    if ok:
        from .cuda import CudaBackend
        log.info("backend auto: using CUDA on %s", why)
        return CudaBackend()
    log.info("backend auto: CUDA unavailable (%s), using the CPU", why)
    return CpuBackend()
