"""Checks for users who add a problem: its delta against full re-evaluation, and its CUDA kernel
against its NumPy code, with messages that say which move disagreed.

    from lsmgpu.testing import check_compiles, check_delta, check_device
    check_delta(MyProblem(...))            # AssertionError naming the first wrong move, else None
    check_compiles(MyProblem(...))         # every kernel built with nvcc, no GPU needed
    check_device(MyProblem(...))           # the same for the GPU's deltas; False where no GPU
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .backends import cuda_available
from .backends.cpu import CpuBackend

__all__ = ["check_compiles", "check_delta", "check_delta_at", "check_device"]


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


def check_compiles(problem, neighbourhoods=(), *, arch: str = "sm_90") -> dict:
    """Render the kernel of ``problem`` for its default neighbourhood and each of
    ``neighbourhoods`` that its template evaluates, and compile each with nvcc (no GPU needed):
    {neighbourhood's repr: cubin bytes}. A compile error is a KernelCompileError whose message
    starts with the template lines nvcc's errors point at ("template.cu.j2 line 12: ...")."""
    from .errors import KernelCompileError
    from .cubins import nvcc_compile
    from .kernels import render
    built = {}
    for nb in (problem.neighbourhood, *neighbourhoods):
        bound = problem.with_neighbourhood(nb)
        if nb is not problem.neighbourhood and problem.unsupported(bound.neighbourhood, "cuda"):
            continue
        source = render(bound)
        try:
            built[repr(bound.neighbourhood)] = len(nvcc_compile(source, arch))
        except KernelCompileError as error:
            where = _template_lines(problem, source, str(error))
            raise KernelCompileError(f"{problem.name} ({bound.neighbourhood!r}): {where}\n{error}",
                                     error.source_path) from None
    return built


def _template_lines(problem, source: str, stderr: str) -> str:
    """The template file and line of each rendered line nvcc's errors name ("x.cu(12): error"),
    found by the line's text among the problem's and the engine's templates."""
    from .kernels import TEMPLATE_DIR
    rendered = source.splitlines()
    files = [f for d in (*problem.template_dirs(), TEMPLATE_DIR) for f in sorted(Path(d).rglob("*.j2"))]
    found = []
    for number, message in re.findall(r"\.cu\((\d+)\): (error[^\n]*)", stderr):
        text = rendered[int(number) - 1].strip() if 0 < int(number) <= len(rendered) else ""
        place = next((f"{f.name} line {k}" for f in files for k, line in enumerate(f.read_text().splitlines(), 1)
                      if text and line.strip() == text), f"rendered line {number}")
        found.append(f"{place}: {message}")
    return "; ".join(found) or "nvcc failed"
