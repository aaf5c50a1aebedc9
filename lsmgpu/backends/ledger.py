"""The host's account of a batch of searches (lsmgpu.parallel.batch), per start."""
from __future__ import annotations

import time

import numpy as np

from ..backends.base import STOP_CODES

__all__ = ["Ledger", "batch_ended"]


class Ledger:
    """The host's account of a batch, per start: current and best (signed) fitness, iterations
    since the best, iterations made, evaluations, history, improvements, and why it stopped.
    A chunk is taken in with array operations over the starts (a batch of 256 starts records
    a chunk every few milliseconds); with ``every_iteration`` histories are gathered per start
    every HISTORY_FLUSH chunks, else a start's history is its start and each new best."""

    HISTORY_FLUSH = 16

    def __init__(self, current: np.ndarray, size: int, every_iteration: bool = False):
        B = len(current)
        self.every_iteration = every_iteration
        self.current, self.best, self.size = current.copy(), current.copy(), size
        self.since = np.zeros(B, dtype=np.int64)
        self.done = np.zeros(B, dtype=np.int64)
        self.evaluations = np.zeros(B, dtype=np.int64)
        self.active = np.ones(B, dtype=bool)
        self.status = [None] * B
        self._history = [[current[k:k + 1].copy()] for k in range(B)]
        self._pending = []            # chunks not yet split per start: (starts, made, values)
        self.improvements = [[] for _ in range(B)]

    def record(self, made, values, code, elapsed: float, sense: int, iterations) -> None:
        """Take in a chunk: ``made[k]`` iterations of start k, its fitness after each in
        ``values[k]``, and its stop code (STOP_CODES)."""
        rows = np.flatnonzero(self.active)
        m, v, c = np.asarray(made)[rows], np.asarray(values)[rows], np.asarray(code)[rows]
        self.evaluations[rows] += self.size * (m + (c == 1))      # a failed selection scanned too
        made_any = m > 0
        if made_any.any():
            valid = np.arange(v.shape[1]) < m[:, None]
            ceiling = np.iinfo(v.dtype).max if v.dtype.kind == "i" else np.inf
            seen = np.where(valid, v, ceiling)
            before = np.minimum.accumulate(np.concatenate([self.best[rows, None], seen[:, :-1]], axis=1), axis=1)
            better = valid & (v < before)
            for r, i in zip(*np.nonzero(better)):
                k = rows[r]
                self.improvements[k].append((int(self.done[k]) + int(i) + 1, elapsed, v[r, i].item() * sense))
            improved = better.any(axis=1)
            last = v.shape[1] - 1 - np.argmax(better[:, ::-1], axis=1)
            ends = np.arange(len(rows))
            self.best[rows[improved]] = v[ends, last][improved]
            self.since[rows] = np.where(improved, m - 1 - last, self.since[rows] + m)
            self.current[rows[made_any]] = v[ends, np.maximum(m - 1, 0)][made_any]
            self.done[rows] += m
            if self.every_iteration:
                self._pending.append((rows, m, v.copy()))
                if len(self._pending) >= self.HISTORY_FLUSH:
                    self._flush()
        for r in np.flatnonzero(c):
            k = rows[r]
            self.status[k] = STOP_CODES[c[r]]
            if self.status[k] == "stagnation" and iterations is not None and self.done[k] >= iterations:
                self.status[k] = "iterations"     # a single search tests the budget first
            self.active[k] = False

    def _flush(self) -> None:
        """Split the pending chunks into the starts' histories (one piece per start)."""
        B = len(self._history)
        width = sum(v.shape[1] for _, _, v in self._pending)
        values = np.zeros((B, width), dtype=self.current.dtype)
        valid = np.zeros((B, width), dtype=bool)
        col = 0
        for rows, m, v in self._pending:
            values[rows, col:col + v.shape[1]] = v
            valid[rows, col:col + v.shape[1]] = np.arange(v.shape[1]) < m[:, None]
            col += v.shape[1]
        for k in np.flatnonzero(valid.any(axis=1)):
            self._history[k].append(values[k][valid[k]])
        self._pending = []

    def history(self, k: int, sense: int) -> np.ndarray:
        """Start k's fitness: at the start, then after each iteration (``every_iteration``) or at
        each new best."""
        if not self.every_iteration:
            return np.array([self._history[k][0][0] * sense] + [f for _, _, f in self.improvements[k]])
        if self._pending:
            self._flush()
        return np.concatenate(self._history[k]) * sense

    def exchange(self, problem, best_solutions, rng, strength: int):
        """Islands: the worse half of the active starts restart from kicked copies (``strength``
        kicks, ``problem.perturb``) of the better half's best solutions, read through
        ``best_solutions()``. Returns (takers, solutions, signed values) for the batch to load
        (restarted here), or None where fewer than two starts are active."""
        active = np.flatnonzero(self.active)
        order = active[np.argsort(self.best[active], kind="stable")]
        half = len(order) // 2
        if half == 0:
            return None
        donors, takers = order[:half], order[::-1][:half]
        best_x = best_solutions()
        xs = np.stack([problem.perturb(best_x[d].copy(), rng, strength) for d in donors])
        values = np.array([problem.sense * problem.fitness(x) for x in xs], dtype=self.current.dtype)
        self.restart(takers, values)
        return takers, xs, values

    def restart(self, starts, current) -> None:
        """Starts ``starts`` go on from new solutions of fitness ``current`` (islands)."""
        self.current[starts] = current
        self.since[starts] = 0

    def stop(self, mask, why: str) -> None:
        """Mark the starts in ``mask`` stopped for ``why`` (unless they already are)."""
        for k in np.flatnonzero(mask):
            self.status[k] = self.status[k] or why


def batch_ended(ledger: Ledger, budget, step: int, deadline: float | None) -> str | None:
    """Why a batch of starts ends before its next step: "done" (no start active, or the
    iterations made), "seconds" (the deadline, a time.perf_counter() value, passed: every active
    start stopped by it); None while it goes on."""
    if not ledger.active.any() or (budget.iterations is not None and step >= budget.iterations):
        return "done"
    if deadline is not None and time.perf_counter() >= deadline:
        ledger.stop(ledger.active, "seconds")
        return "seconds"
    return None
