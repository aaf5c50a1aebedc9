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
        end). ``should_stop()``, asked every iteration, ends the batch like Ctrl-C (a driver
        stopping its workers)."""
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
        history = [current.copy()]
        improvements = [[] for _ in range(B)]
        goal = None if target is None else sense * target
        overall, step, size = "done", 0, self.neighbourhood.size
        try:
            while active.any():
                if iterations is not None and step >= iterations:
                    break
                if should_stop is not None and should_stop():
                    raise KeyboardInterrupt
                if step % 1024 == 0:
                    evaluator.set_tenures(self._tenures(rngs))
                delta, found = evaluator.iterate(step, self.aspiration)
                evaluations[active] += size
                stuck = active & ~found
                for k in np.flatnonzero(stuck):
                    status[k] = "no_admissible_move"
                moved = active & found
                active &= found
                current[moved] += delta[moved]
                done[moved] += 1
                improved = moved & (current < best)
                best[improved] = current[improved]
                since[improved] = 0
                since[moved & ~improved] += 1
                history.append(current.copy())
                step += 1
                elapsed = time.perf_counter() - t0
                for k in np.flatnonzero(improved):
                    improvements[k].append((int(done[k]), elapsed, best[k].item() * sense))
                if goal is not None and (hit := moved & (best <= goal)).any():
                    self._stop(status, hit, "target", active & ~hit, "stopped")
                    overall = "target"
                    break
                if iterations is not None and step >= iterations:
                    break
                if seconds is not None and elapsed >= seconds:
                    self._stop(status, active, "seconds")
                    overall = "seconds"
                    break
                if stagnation is not None and (stale := moved & (since >= stagnation)).any():
                    self._stop(status, stale, "stagnation")
                    active &= ~stale
                    evaluator.set_active(active)
        except KeyboardInterrupt:
            overall = "interrupted"
            log.warning("batched tabu search interrupted at iteration %d; returning the best so far", step)
        for k in np.flatnonzero(active):
            status[k] = status[k] or ("iterations" if iterations is not None and step >= iterations else "interrupted")
        elapsed = time.perf_counter() - t0
        best_x = evaluator.best_solutions()
        rows = np.stack(history)
        results = []
        for k in range(B):
            results.append(SearchResult(
                solution=best_x[k].copy(), fitness=problem.fitness(best_x[k]), iterations=int(done[k]),
                evaluations=int(evaluations[k]), seconds=elapsed, history=rows[:done[k] + 1, k] * sense,
                improvements=improvements[k], backend=self.backend.name, device=evaluator.device,
                status=status[k], timings=dict(evaluator.timings), algorithm="TabuSearch", problem=problem.name))
            if progress is not None:
                progress(k, results[k])
        evaluator.close()
        return MultiStartResult.gather(results, elapsed, overall, sense, {k: evaluator.device for k in range(B)})

    @staticmethod
    def _stop(status, mask, why, others=None, others_why=None):
        for k in np.flatnonzero(mask):
            status[k] = why
        if others is not None:
            for k in np.flatnonzero(others):
                status[k] = others_why
