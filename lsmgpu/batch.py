"""Many starts of a tabu search at once on one device (the algorithmic level, batched).

One neighbourhood of a small instance cannot fill a GPU (QAP tai100a: 4,950 swaps for about
270,000 resident threads), so :class:`~lsmgpu.multistart.MultiStart` runs the starts of a
tabu search together: every iteration one launch evaluates the neighbourhoods of all current
solutions, each start selects its own best admissible move (segmented on-GPU reduction) and
applies it with its own tabu memory, current, best fitness and best solution, all kept on the
GPU (lsmgpu/backends/cuda_batch.py). The CPU backend steps the same batch with NumPy.

Start k is a TabuSearch seeded with ``SeedSequence(seed).spawn(starts)[k]``: it draws its start
solution and its tenures (1,024 at a time) from that seed exactly as a single search does, so
its trajectory equals that single search's, on either backend. Budgets: ``iterations`` and
``stagnation`` apply to each start, ``seconds`` to the batch (all starts stop together), and
a start that reaches ``target`` stops the batch (the others report status "stopped").
"""
from __future__ import annotations

import logging
import time

import numpy as np

from .backends import resolve
from .result import SearchResult

__all__ = ["BatchTabuSearch", "batch_unsupported"]

log = logging.getLogger("lsmgpu")

#: TabuSearch options the batch honours
OPTIONS = {"backend", "tenure", "aspiration", "neighbourhood"}
#: iterations per chunk: one launch of the device-resident kernel; the time limit, Ctrl-C and a
#: driver's stop request are looked at between chunks
CHUNK = 64
#: stop codes of a chunk (host_advance and the resident kernel)
CODES = {1: "no_admissible_move", 2: "target", 3: "stagnation"}


def batch_unsupported(search, options: dict, problem=None) -> str | None:
    """Why ``search`` with ``options`` on ``problem`` cannot run batched (None when it can)."""
    from .search import TabuSearch
    if search is not TabuSearch:
        return f"{search.__name__} runs its starts one after the other (batching is for TabuSearch)"
    extra = set(options) - OPTIONS
    if extra:
        return f"options {sorted(extra)} are per-search"
    tenure = options.get("tenure")
    if tenure is None and problem is not None:
        tenure = problem.tabu_tenure()          # e.g. TabuCol's reactive tenure for colouring
    if callable(tenure):
        return "a tenure function of the current fitness is drawn per start on the host"
    return None


class BatchTabuSearch:
    """``len(seeds)`` tabu searches of ``problem`` stepped together on one backend."""

    def __init__(self, problem, seeds, *, backend="auto", tenure=None, aspiration=True, neighbourhood=None):
        from .search import TabuSearch
        template = TabuSearch(problem, backend=backend, tenure=tenure, aspiration=aspiration,
                              neighbourhood=neighbourhood)   # checks the options once
        self.problem, self.neighbourhood = template.problem, template.neighbourhood
        if callable(template.tenure):
            raise ValueError("BatchTabuSearch: a tenure function is not batched; use a (low, high) range")
        self.tenure, self.aspiration = template.tenure, template.aspiration
        self.backend = resolve(backend, self.problem)
        self.seeds = list(seeds)

    def _tenures(self, rngs) -> np.ndarray:
        """The next 1,024 tenures of every start, drawn as TabuSearch draws them."""
        low, high = self.tenure
        if low == high:
            return np.full((len(rngs), 1024), low, dtype=np.int32)
        return np.stack([r.integers(low, high + 1, 1024) for r in rngs]).astype(np.int32)

    def run(self, iterations=None, *, seconds=None, target=None, stagnation=None, progress=None,
            should_stop=None):
        """Run every start; returns a MultiStartResult (``progress(k, result)`` per start at the
        end). ``should_stop()``, asked between chunks of iterations, ends the batch like Ctrl-C
        (a driver stopping its workers)."""
        from .multistart import MultiStartResult
        problem, sense, B = self.problem, self.problem.sense, len(self.seeds)
        evaluator = self.backend.batch_evaluator(problem, self.neighbourhood, B)
        t0 = time.perf_counter()      # as a single search's clock: from the start solutions on
        rngs = [np.random.default_rng(s) for s in self.seeds]
        xs = np.stack([problem.encoding.validate(problem.initial_solution(r)) for r in rngs])
        dtype = np.int64 if problem.integer else np.float64
        current = np.array([sense * problem.fitness(x) for x in xs], dtype=dtype)
        evaluator.load(xs, current)
        best = current.copy()
        since = np.zeros(B, dtype=np.int64)
        done = np.zeros(B, dtype=np.int64)            # iterations each start has made
        evaluations = np.zeros(B, dtype=np.int64)
        active = np.ones(B, dtype=bool)
        status = [None] * B
        history = [[current[k:k + 1].copy()] for k in range(B)]
        improvements = [[] for _ in range(B)]
        goal = None if target is None else sense * target
        overall, step, size = "done", 0, self.neighbourhood.size
        resident = getattr(evaluator, "resident", False)
        try:
            while active.any() and not (iterations is not None and step >= iterations):
                if should_stop is not None and should_stop():
                    raise KeyboardInterrupt
                if step % 1024 == 0:
                    evaluator.set_tenures(self._tenures(rngs))
                count = min(CHUNK, 1024 - step % 1024, (iterations - step) if iterations is not None else CHUNK)
                if resident:
                    made, values, code = evaluator.advance(step, count, self.aspiration, stagnation, goal)
                    interrupted = False
                else:
                    made, values, code, interrupted = host_advance(evaluator, step, count, self.aspiration,
                                                                   stagnation, goal, current, best, since, active)
                step += count
                elapsed = time.perf_counter() - t0
                for k in np.flatnonzero(active):
                    m = int(made[k])
                    evaluations[k] += size * (m + (code[k] == 1))
                    if m:
                        v = values[k, :m]
                        history[k].append(v.copy())
                        before = np.minimum.accumulate(np.concatenate([[best[k]], v[:-1]]))
                        for i in np.flatnonzero(v < before):
                            improvements[k].append((int(done[k]) + int(i) + 1, elapsed, v[i].item() * sense))
                            best[k], since[k] = v[i], m - 1 - i
                        if not (v < before).any():
                            since[k] += m
                        current[k] = v[-1]
                        done[k] += m
                    if code[k]:
                        status[k] = CODES[code[k]]
                        if status[k] == "stagnation" and iterations is not None and done[k] >= iterations:
                            status[k] = "iterations"     # a single search tests the budget first
                        active[k] = False
                if interrupted:
                    raise KeyboardInterrupt
                if any(s == "target" for s in status):
                    self._stop(status, active, "stopped")
                    overall = "target"
                    break
                if seconds is not None and elapsed >= seconds and not (iterations is not None and step >= iterations):
                    self._stop(status, active, "seconds")
                    overall = "seconds"
                    break
        except KeyboardInterrupt:
            overall = "interrupted"
            log.warning("batched tabu search interrupted near iteration %d; returning the best so far", step)
        for k in np.flatnonzero(active):
            status[k] = status[k] or ("iterations" if iterations is not None and step >= iterations else "interrupted")
        elapsed = time.perf_counter() - t0
        best_x = evaluator.best_solutions()
        results = []
        for k in range(B):
            results.append(SearchResult(
                solution=best_x[k].copy(), fitness=problem.fitness(best_x[k]), iterations=int(done[k]),
                evaluations=int(evaluations[k]), seconds=elapsed, history=np.concatenate(history[k]) * sense,
                improvements=improvements[k], backend=self.backend.name, device=evaluator.device,
                status=status[k], timings=dict(evaluator.timings), algorithm="TabuSearch", problem=problem.name))
            if progress is not None:
                progress(k, results[k])
        evaluator.close()
        return MultiStartResult.gather(results, elapsed, overall, sense, {k: evaluator.device for k in range(B)})

    @staticmethod
    def _stop(status, mask, why):
        for k in np.flatnonzero(mask):
            status[k] = status[k] or why


def host_advance(evaluator, step, count, aspiration, stagnation, goal, current, best, since, active):
    """``count`` iterations stepped one launch at a time (the CPU, and large neighbourhoods on
    the GPU), with the stop tests the resident kernel makes: (made, current after each
    iteration (starts x count), code, whether Ctrl-C cut the chunk short). The arrays passed
    in are not changed."""
    B = len(active)
    current, best, since, active = current.copy(), best.copy(), since.copy(), active.copy()
    made = np.zeros(B, dtype=np.int64)
    values = np.zeros((B, count), dtype=current.dtype)
    code = np.zeros(B, dtype=np.int64)
    interrupted = False
    for i in range(count):
        try:
            delta, found = evaluator.iterate(step + i, aspiration)
        except KeyboardInterrupt:      # keep the iterations made so far
            interrupted = True
            break
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
        if goal is not None:
            hit = moved & (best <= goal)
            code[hit], stopped = 2, hit
        if stagnation is not None:
            stale = moved & (since >= stagnation) & ~stopped
            code[stale] = 3
            stopped = stopped | stale
        if stopped.any():
            active &= ~stopped
            evaluator.set_active(active)
        if not active.any():
            break
    return made, values, code, interrupted
