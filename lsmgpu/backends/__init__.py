"""Backends: where the neighbourhood is evaluated. ``resolve`` turns a name into one."""
from __future__ import annotations

import logging

from ..errors import BackendFallback, BackendUnavailable, announce_fallback
from .cpu import CpuBackend

__all__ = ["resolve", "evaluator_for", "CpuBackend", "cuda_available", "BackendFallback"]

log = logging.getLogger("lsmgpu")


def cuda_available() -> tuple[bool, str]:
    """(True, device name) when PyCUDA imports and a GPU answers, else (False, why)."""
    try:
        from .cuda import CudaBackend
        return True, CudaBackend.probe()
    except BackendUnavailable as exc:
        return False, str(exc)


def resolve(backend, problem=None):
    """A backend object from ``"auto" | "cpu" | "cuda"`` or a backend instance.

    ``auto`` takes CUDA when PyCUDA and a GPU are there and the problem can evaluate its
    neighbourhood there (Problem.unsupported), else the CPU, with a BackendFallback warning that
    says why. ``cuda`` for a problem that cannot run there is a TypeError saying why.
    """
    if not isinstance(backend, str):
        if not hasattr(backend, "evaluator"):
            raise TypeError(f"`backend` must be 'auto', 'cpu', 'cuda' or a backend object, got {backend!r}")
        return backend
    if backend == "cpu":
        return CpuBackend()
    if backend == "cuda":
        reason = problem.unsupported(problem.neighbourhood, "cuda") if problem is not None else None
        if reason:
            raise TypeError(f"backend 'cuda': {reason}")
        from .cuda import CudaBackend
        return CudaBackend()
    if backend != "auto":
        raise ValueError(f"`backend` must be 'auto', 'cpu' or 'cuda', got {backend!r}")
    reason = problem.unsupported(problem.neighbourhood, "cuda") if problem is not None else None
    if reason:
        announce_fallback(f"backend 'auto' runs this search on the CPU: {reason}")
        return CpuBackend()
    ok, why = cuda_available()
    if ok:
        from .cuda import CudaBackend
        log.info("backend auto: using CUDA on %s", why)
        return CudaBackend()
    announce_fallback(f"backend 'auto' runs this search on the CPU: no CUDA GPU here ({why})")
    return CpuBackend()


def evaluator_for(backend, problem):
    """An evaluator of ``problem`` (its neighbourhood) on ``backend``, or on the CPU where that
    backend cannot evaluate it (a BackendFallback warning: e.g. an ILS polish neighbourhood
    without device code)."""
    reason = problem.unsupported(problem.neighbourhood, backend.name) if backend.name != "cpu" else None
    if reason:
        announce_fallback(f"{reason}; that part runs on the CPU")
        backend = CpuBackend()
    return backend.evaluator(problem, problem.neighbourhood)
