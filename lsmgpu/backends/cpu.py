"""The NumPy backend: the reference the GPU is tested against and the CI backend.

The neighbourhood is evaluated in chunks of ``chunk`` moves with the problem's vectorised
``delta``, so memory stays bounded (n = 20,000 swap is 2e8 moves). For static
neighbourhoods that fit in one chunk the decoded moves are cached across iterations.
"""
from __future__ import annotations

import dataclasses
import platform
import time

import numpy as np

from ..budget import DeadlineReached, check_deadline
from .base import TENURE_BLOCK, BatchChunk, BatchEvaluator, Evaluator, Query, Selection, first_class, select_in

__all__ = ["CpuBackend", "CpuEvaluator", "CpuBatchEvaluator"]


class CpuBackend:
    """Factory of CPU evaluators. ``chunk``: moves per NumPy call (default: the problem's
    ``cpu_chunk()``)."""

    name = "cpu"

    def __init__(self, chunk: int | None = None):
        if chunk is not None and chunk < 1:
            raise ValueError(f"CpuBackend: `chunk` must be >= 1, got {chunk}")
        self.chunk = chunk

    @property
    def device(self) -> str:
        return platform.processor() or platform.machine()

    def evaluator(self, problem, neighbourhood) -> "CpuEvaluator":
        return CpuEvaluator(problem, neighbourhood, self.chunk or problem.cpu_chunk())

    def batch_evaluator(self, problem, neighbourhood, starts: int) -> "CpuBatchEvaluator":
        """Evaluator of ``starts`` tabu searches stepped together (see lsmgpu.parallel.batch)."""
        return CpuBatchEvaluator(problem, neighbourhood, self.chunk or problem.cpu_chunk(), starts)


class CpuEvaluator(Evaluator):
    backend = "cpu"

    def __init__(self, problem, neighbourhood, chunk: int):
        super().__init__(problem, neighbourhood)
        self.device = CpuBackend().device
        self.chunk = chunk
        size = neighbourhood.size
        self._cached = (neighbourhood.decode(np.arange(size, dtype=np.int64))
                        if neighbourhood.static and size <= chunk else None)

    def enable_tabu(self):
        shape = self.neighbourhood.tabu_shape()
        if shape is None:
            raise TypeError(f"{self.neighbourhood!r} defines no tabu attributes")
        self.tabu = np.zeros(shape, dtype=np.int64)

    def load(self, x):
        self.x = np.array(x, dtype=self.problem.encoding.dtype)

    def _chunks(self, step):
        """Yield (first index, moves) over the whole neighbourhood."""
        if self._cached is not None:
            yield 0, self._cached
            return
        size = self.neighbourhood.size
        for start in range(0, size, self.chunk):
            index = np.arange(start, min(start + self.chunk, size), dtype=np.int64)
            yield start, self.neighbourhood.moves(self.x, index, step)

    def select(self, query: Query) -> Selection:
        t0 = time.perf_counter()
        best_index, best_key, best_delta, evaluated = -1, (2, np.inf), 0.0, 0
        for start, moves in self._chunks(query.step):
            check_deadline("the neighbourhood was scanned")
            d = self.problem.delta_of(self.x, moves)
            evaluated += len(moves)
            signed = self.sense * d
            stamps = self.tabu_stamps(self.tabu, moves) if query.tabu else None
            k = select_in(signed, stamps, query)
            if k < 0:
                continue
            if query.rule == "first":
                best_index, best_delta = start + k, d[k]
                break
            first = first_class(signed[k:k + 1], stamps[k:k + 1], query) if stamps is not None else None
            key = (0 if first is not None and first[0] else 1, signed[k])
            if key < best_key:  # strict: earlier chunks win ties
                best_index, best_key, best_delta = start + k, key, d[k]
        self._time("evaluate", time.perf_counter() - t0)
        return Selection(best_index, best_delta.item() if hasattr(best_delta, "item") else best_delta, evaluated)

    def deltas(self, step=0):
        parts = []
        for _, moves in self._chunks(step):
            check_deadline("the neighbourhood was scanned")
            parts.append(self.problem.delta_of(self.x, moves))
        return np.concatenate(parts)

    def apply(self, index, step=0, tabu_until=None, move=None):
        t0 = time.perf_counter()
        if move is None:
            move = self.move_at(index, step)
        self.forbid(self.tabu, move, tabu_until)
        self.neighbourhood.apply(self.x, move)
        self._time("apply", time.perf_counter() - t0)
        return move


class CpuBatchEvaluator(BatchEvaluator):
    """``starts`` tabu searches stepped together with NumPy: the CPU side of
    :mod:`lsmgpu.parallel.batch` and the reference the GPU's batch kernels are tested against
    (one CpuEvaluator per start, the same selection, tabu and aspiration rules as a single
    search, the same stop tests per iteration)."""

    backend = "cpu"

    def __init__(self, problem, neighbourhood, chunk: int, starts: int):
        self.problem, self.starts = problem, int(starts)
        self.evaluators = [CpuEvaluator(problem, neighbourhood, chunk) for _ in range(self.starts)]
        self.device = self.evaluators[0].device
        self.timings = {"kernel": 0.0}

    def load(self, xs, current) -> None:
        for ev, x in zip(self.evaluators, xs):
            ev.load(x)
            ev.enable_tabu()
        self.current, self.best = np.array(current), np.array(current)
        self.best_x = np.array(xs, dtype=self.problem.encoding.dtype)
        self.active = np.ones(self.starts, dtype=bool)

    def set_tenures(self, table) -> None:
        self.tenures = np.asarray(table)

    def restart(self, starts, xs, current) -> None:
        """Starts ``starts`` go on from solutions ``xs`` of signed fitness ``current``, with
        fresh tabu memory (their best stays)."""
        for k, x, value in zip(starts, xs, current):
            self.evaluators[k].load(x)
            self.evaluators[k].enable_tabu()
            self.current[k] = value

    def advance(self, step, count, rules, stagnation, target, ledger, deadline=None) -> BatchChunk:
        """``count`` iterations stepped one at a time, with the stop tests the GPU's batch
        kernels make, from the ledger's account of the starts (read, not changed). Ctrl-C
        keeps the iterations made so far (``interrupted``); so does ``deadline``."""
        B = self.starts
        current, best = ledger.current.copy(), ledger.best.copy()
        since, active = ledger.since.copy(), ledger.active.copy()
        self.active = active.copy()
        made = np.zeros(B, dtype=np.int64)
        values = np.zeros((B, count), dtype=current.dtype)
        code = np.zeros(B, dtype=np.int64)
        for i in range(count):
            try:
                delta, found = self.iterate(step + i, rules)
            except KeyboardInterrupt:
                return BatchChunk(made, values, code, interrupted=True, steps=i)
            except DeadlineReached:            # the time ran out inside an iteration: the ones before it count
                return BatchChunk(made, values, code, steps=i)
            code[active & ~found] = 1
            moved = active & found
            active &= found
            current[moved] += delta[moved]
            values[moved, i] = current[moved]
            made[moved] += 1
            improved = moved & (current < best)
            best[improved] = current[improved]
            since[improved] = 0
            since[moved & ~improved] += 1
            stopped = np.zeros(B, dtype=bool)
            if target is not None:
                hit = moved & (best <= target)
                code[hit], stopped = 2, hit
            if stagnation is not None:
                stale = moved & (since >= stagnation) & ~stopped
                code[stale] = 3
                stopped = stopped | stale
            active &= ~stopped
            self.active = active.copy()
            if not active.any():
                break
            if deadline is not None and time.perf_counter() >= deadline:
                return BatchChunk(made, values, code, steps=i + 1)
        return BatchChunk(made, values, code)

    def iterate(self, step: int, rules: Query):
        """One iteration of every active start under ``rules`` (a best-rule tabu Query):
        (signed delta, found) per start."""
        t0 = time.perf_counter()
        delta = np.zeros(self.starts, dtype=self.current.dtype)
        found = np.zeros(self.starts, dtype=bool)
        sense = self.problem.sense
        for k in np.flatnonzero(self.active):
            query = dataclasses.replace(rules, step=step, current=self.current[k], best=self.best[k])
            sel, _ = self.evaluators[k].move(query, step + 1 + int(self.tenures[k, step % TENURE_BLOCK]))
            if not sel.found:
                self.active[k] = False
                continue
            found[k], delta[k] = True, sense * sel.delta
            self.current[k] += delta[k]
            if self.current[k] < self.best[k]:
                self.best[k] = self.current[k]
                self.best_x[k] = self.evaluators[k].x
        self.timings["kernel"] += time.perf_counter() - t0
        return delta, found

    def best_solutions(self):
        return self.best_x.copy()

    def snapshot(self) -> dict:
        return {"xs": np.stack([ev.x for ev in self.evaluators]), "best_x": self.best_x.copy(),
                "tabu": np.stack([ev.tabu for ev in self.evaluators]), "tenures": self.tenures.copy(),
                "current": self.current.copy(), "best": self.best.copy(), "active": self.active.copy()}

    def restore(self, snapshot: dict) -> None:
        self.load(snapshot["xs"], snapshot["current"])
        for ev, tabu in zip(self.evaluators, snapshot["tabu"]):
            ev.tabu = np.array(tabu, dtype=np.int64)
        self.best, self.best_x = np.array(snapshot["best"]), np.array(snapshot["best_x"])
        self.tenures, self.active = np.array(snapshot["tenures"]), np.array(snapshot["active"])

    def close(self) -> None:
        pass
