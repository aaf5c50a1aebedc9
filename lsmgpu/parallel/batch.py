"""Many starts of a tabu search at once on one device (the algorithmic level, batched).

One neighbourhood of a small instance cannot fill a GPU (QAP tai100a: 4,950 swaps for about
270,000 resident threads), so :class:`~lsmgpu.parallel.MultiStart` runs the starts of a
tabu search together: every iteration one launch evaluates the neighbourhoods of all current
solutions, each start selects its own best admissible move (segmented on-GPU reduction) and
applies it with its own tabu memory, current, best fitness and best solution, all kept on the
GPU (lsmgpu/backends/cuda/batch.py). The CPU backend steps the same batch with NumPy. Both
are batch evaluators (lsmgpu.backends.base.BatchEvaluator): this driver asks for chunks of
iterations and keeps the account (ledger.py).

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

from ..backends import resolve
from ..backends.base import TENURE_BLOCK, Query
from ..result import SearchResult
from ..search import TabuSearch
from .ledger import Ledger
from .result import MultiStartResult

__all__ = ["BatchTabuSearch", "batch_unsupported"]

log = logging.getLogger("lsmgpu")

#: TabuSearch options the batch honours
OPTIONS = {"backend", "tenure", "aspiration", "forced_after", "neighbourhood", "exchange_every", "exchange_strength"}
#: iterations per chunk: what the GPU runs without the host (one launch of the device-resident
#: kernel, or 64 queued launches); the time limit, Ctrl-C and a driver's stop request are looked
#: at between chunks
CHUNK = 64


def batch_unsupported(search, options: dict, problem=None) -> str | None:
    """Why ``search`` with ``options`` on ``problem`` cannot run batched (None when it can)."""
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
    """``len(seeds)`` tabu searches of ``problem`` stepped together on one backend.

    Independent by default. ``exchange_every = K`` makes them islands: every K iterations the
    active starts are ranked by their best fitness and each of the worse half restarts from
    the best solution of its counterpart in the better half (the best gives to the worst),
    kicked by ``problem.perturb`` with ``exchange_strength`` random moves (default n / 4:
    tai100a, 256 starts, 10 s, every 1,000 iterations: 0.49 % gap with 25 swaps, 0.70 % with
    10, 0.77 % with 5; docs/benchmarks.md) and
    with fresh tabu memory; a start keeps its own best. A restart is not an iteration: the
    start's history goes on from its new solution. Exchanges draw from a stream of their own,
    so a seeded batch is reproducible.
    """

    def __init__(self, problem, seeds, *, backend="auto", tenure=None, aspiration=True, forced_after=None,
                 neighbourhood=None, exchange_every: int | None = None, exchange_strength: int | None = None):
        template = TabuSearch(problem, backend=backend, tenure=tenure, aspiration=aspiration,
                              forced_after=forced_after, neighbourhood=neighbourhood)   # checks the options once
        self.problem, self.neighbourhood = template.problem, template.neighbourhood
        if callable(template.tenure):
            raise ValueError("BatchTabuSearch: a tenure function is not batched; use a (low, high) range")
        self.tenure = template.tenure
        #: the selection rules of every start (step, current and best are per start)
        self.rules = Query(rule="best", tabu=True, aspiration=template.aspiration, forced_after=template.forced_after)
        self.backend = resolve(backend, self.problem)
        self.seeds = list(seeds)
        for label, value in (("exchange_every", exchange_every), ("exchange_strength", exchange_strength)):
            if value is not None and (not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1):
                raise ValueError(f"BatchTabuSearch: `{label}` must be an int >= 1 (or None), got {value!r}")
        self.exchange_every = exchange_every
        self.exchange_strength = exchange_strength or max(1, self.problem.n // 4)

    def _exchange(self, evaluator, ledger, rng) -> None:
        """Islands: the worse half of the active starts restart from kicked copies of the
        better half's best solutions (see the class)."""
        active = np.flatnonzero(ledger.active)
        order = active[np.argsort(ledger.best[active], kind="stable")]
        half = len(order) // 2
        if half == 0:
            return
        donors, takers = order[:half], order[::-1][:half]
        best_x = evaluator.best_solutions()
        xs = np.stack([self.problem.perturb(best_x[d].copy(), rng, self.exchange_strength) for d in donors])
        values = np.array([self.problem.sense * self.problem.fitness(x) for x in xs], dtype=ledger.current.dtype)
        evaluator.restart(takers, xs, values)
        ledger.restart(takers, values)

    def _tenures(self, rngs) -> np.ndarray:
        """The next TENURE_BLOCK tenures of every start, drawn as TabuSearch draws them."""
        low, high = self.tenure
        if low == high:
            return np.full((len(rngs), TENURE_BLOCK), low, dtype=np.int32)
        return np.stack([r.integers(low, high + 1, TENURE_BLOCK) for r in rngs]).astype(np.int32)

    def run(self, iterations=None, *, seconds=None, target=None, stagnation=None, progress=None,
            should_stop=None, on_chunk=None):
        """Run every start; returns a MultiStartResult (``progress(k, result)`` per start at the
        end). ``should_stop()``, asked between chunks of iterations, ends the batch like Ctrl-C
        (a driver stopping its workers); ``on_chunk(iterations, best)`` reports the iterations
        made so far and the best fitness of all starts after each chunk (a progress bar)."""
        problem, sense, B = self.problem, self.problem.sense, len(self.seeds)
        evaluator = self.backend.batch_evaluator(problem, self.neighbourhood, B)
        t0 = time.perf_counter()      # as a single search's clock: from the start solutions on
        rngs = [np.random.default_rng(s) for s in self.seeds]
        xs = np.stack([problem.encoding.validate(problem.initial_solution(r)) for r in rngs])
        ledger = Ledger(np.array([sense * problem.fitness(x) for x in xs], dtype=problem.fitness_dtype),
                        self.neighbourhood.size)
        evaluator.load(xs, ledger.current)
        goal = None if target is None else sense * target
        overall, step = "done", 0
        exchange_rng = np.random.default_rng(np.random.SeedSequence(self.seeds[0].entropy, spawn_key=(0xE8C4,)))
        try:
            while ledger.active.any() and not (iterations is not None and step >= iterations):
                if should_stop is not None and should_stop():
                    raise KeyboardInterrupt
                if step % TENURE_BLOCK == 0:
                    evaluator.set_tenures(self._tenures(rngs))
                count = min(CHUNK, TENURE_BLOCK - step % TENURE_BLOCK, (iterations - step) if iterations is not None else CHUNK,
                            (self.exchange_every - step % self.exchange_every) if self.exchange_every else CHUNK)
                chunk = evaluator.advance(step, count, self.rules, stagnation, goal, ledger)
                step += count
                elapsed = time.perf_counter() - t0
                ledger.record(chunk.made, chunk.values, chunk.code, elapsed, sense, iterations)
                if on_chunk is not None:
                    on_chunk(step, ledger.best.min().item() * sense)
                if chunk.interrupted:
                    raise KeyboardInterrupt
                if "target" in ledger.status:
                    ledger.stop(ledger.active, "stopped")
                    overall = "target"
                    break
                if seconds is not None and elapsed >= seconds and not (iterations is not None and step >= iterations):
                    ledger.stop(ledger.active, "seconds")
                    overall = "seconds"
                    break
                if self.exchange_every and step % self.exchange_every == 0:
                    self._exchange(evaluator, ledger, exchange_rng)
        except KeyboardInterrupt:
            overall = "interrupted"
            log.warning("batched tabu search interrupted near iteration %d; returning the best so far", step)
        ledger.stop(ledger.active, "iterations" if iterations is not None and step >= iterations else "interrupted")
        elapsed = time.perf_counter() - t0
        best_x = evaluator.best_solutions()
        results = []
        for k in range(B):
            results.append(SearchResult(
                solution=best_x[k].copy(), fitness=problem.fitness(best_x[k]), iterations=int(ledger.done[k]),
                evaluations=int(ledger.evaluations[k]), seconds=elapsed,
                history=ledger.history(k) * sense, improvements=ledger.improvements[k],
                backend=self.backend.name, device=evaluator.device, status=ledger.status[k],
                timings=dict(evaluator.timings), algorithm="TabuSearch", problem=problem.name))
            if progress is not None:
                progress(k, results[k])
        evaluator.close()
        return MultiStartResult.gather(results, elapsed, overall, sense, {k: evaluator.device for k in range(B)})
