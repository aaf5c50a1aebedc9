"""Checks for users who add a problem: its delta against full re-evaluation, and its CUDA kernel
against its NumPy code, with messages that say which move disagreed.

    from lsmgpu.testing import check_delta, check_device
    check_delta(MyProblem(...))            # AssertionError naming the first wrong move, else None
    check_device(MyProblem(...))           # the same for the GPU's deltas; False where no GPU
"""
from __future__ import annotations

import numpy as np

from .backends import cuda_available
from .backends.cpu import CpuBackend

__all__ = ["check_delta", "check_delta_at", "check_device"]


def _sample(size: int, rng, count: int) -> np.ndarray:
    """Up to ``count`` move indices out of ``size``: all of them when there are that few, else a
    uniform sample."""
    return np.arange(size, dtype=np.int64) if size <= count else np.sort(rng.choice(size, count, replace=False))


def _agree(problem, got, want, rtol: float) -> bool:
    return got == want if problem.integer else bool(np.isclose(got, want, rtol=rtol, atol=rtol * (1 + abs(want))))


def check_delta(problem, neighbourhood=None, *, solutions: int = 5, moves: int = 2000, seed: int = 0,
                rtol: float = 1e-9) -> None:
    """Assert that ``problem.delta`` equals ``evaluate(after) - evaluate(before)`` for up to
    ``moves`` moves around each of ``solutions`` random solutions (exactly for integer problems,
    to ``rtol`` otherwise); the AssertionError names the solution, the move and both values."""
    if neighbourhood is not None:
        problem = problem.with_neighbourhood(neighbourhood)
    rng = np.random.default_rng(seed)
    for s in range(solutions):
        x = problem.encoding.validate(problem.encoding.random(rng))
        index = _sample(problem.neighbourhood.size, rng, moves)
        check_delta_at(problem, x, index, rtol=rtol, where=f"random solution {s} (seed {seed})")


def check_delta_at(problem, x, index=None, *, rtol: float = 1e-9, where: str = "the given solution") -> None:
    """The check of :func:`check_delta` around one solution ``x``, over the moves ``index``
    (default: the whole neighbourhood)."""
    nb = problem.neighbourhood
    if index is None:
        index = np.arange(nb.size, dtype=np.int64)
    chosen = nb.moves(x, index, 0)
    deltas = problem.delta_of(x, chosen)
    before = problem.evaluate(x)
    for q, move, delta in zip(index, chosen, deltas):
        y = x.copy()
        nb.apply(y, move)
        change = problem.evaluate(y) - before
        if not _agree(problem, delta.item(), change, rtol):
            raise AssertionError(f"{problem.name}: delta of move {q} {move.tolist()} ({nb!r}) on {where} is "
                                 f"{delta.item()!r}, full re-evaluation gives {change!r}")


def check_device(problem, neighbourhood=None, *, solutions: int = 3, seed: int = 0, rtol: float = 1e-6,
                 backend=None) -> bool:
    """Assert that the CUDA kernel's delta of every move equals the CPU's (exactly for integer
    problems, to ``rtol`` otherwise) around ``solutions`` random solutions; True when checked,
    False when no GPU is present (nothing to check). The AssertionError names the first move
    that disagreed. ``backend``: a CudaBackend to use (its options: memory policies, ...)."""
    if backend is None:
        available, _ = cuda_available()
        if not available:
            return False
        from .backends.cuda import CudaBackend
        backend = CudaBackend()
    if neighbourhood is not None:
        problem = problem.with_neighbourhood(neighbourhood)
    nb, rng = problem.neighbourhood, np.random.default_rng(seed)
    gpu, cpu = backend.evaluator(problem, nb), CpuBackend().evaluator(problem, nb)
    try:
        for s in range(solutions):
            x = problem.encoding.validate(problem.encoding.random(rng))
            gpu.load(x)
            cpu.load(x)
            got, want = gpu.deltas(), cpu.deltas()
            wrong = np.flatnonzero(got != want if problem.integer else
                                   ~np.isclose(got, want, rtol=rtol, atol=rtol * (1 + np.abs(want))))
            if wrong.size:
                q = int(wrong[0])
                move = nb.moves(x, np.array([q]), 0)[0].tolist()
                raise AssertionError(f"{problem.name}: the GPU's delta of move {q} {move} ({nb!r}) on random solution "
                                     f"{s} (seed {seed}) is {got[q]!r}, the CPU's {want[q]!r} "
                                     f"({wrong.size} of {len(want)} moves disagree)")
    finally:
        gpu.close()
    return True
