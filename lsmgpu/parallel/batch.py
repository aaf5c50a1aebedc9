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
from ..budget import check_deadline
from ..callbacks import State
from ..result import SearchResult
from ..search import TabuSearch
from ..search.loop import Search
from ..validation import check_count
from ..backends.ledger import Ledger, batch_ended
from .batch_state import batch_state, restore_batch
from .seeds import start_solutions

__all__ = ["BatchTabuSearch", "batch_unsupported"]

log = logging.getLogger("lsmgpu")

#: TabuSearch options the batch honours
OPTIONS = {"backend", "tenure", "aspiration", "forced_after", "neighbourhood", "exchange_every", "exchange_strength",
           "history"}
#: iterations per chunk: what the GPU runs without the host (one launch of the device-resident
#: kernel, or 64 queued launches); the time limit, Ctrl-C and a driver's stop request are looked
#: at between chunks
CHUNK = 64


def batch_unsupported(search, options: dict, problem=None) -> str | None:
    """Why ``search`` with ``options`` on ``problem`` cannot run batched (None when it can)."""
    if search is not TabuSearch:
        return f"{search.__name__} is not a tabu search"
    extra = set(options) - OPTIONS
    if extra:
        return f"options {sorted(extra)} are per-search"
    tenure = options.get("tenure")
    if tenure is None and problem is not None:
        tenure = problem.tabu_tenure()          # e.g. TabuCol's reactive tenure for colouring
    if callable(tenure):
        return "a tenure function of the current fitness is drawn per start on the host"
    return None


class BatchTabuSearch(Search):
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

    algorithm = "MultiStart"
    needs_budget = True
    combines = True

    def __init__(self, problem, seeds, *, backend="auto", tenure=None, aspiration=True, forced_after=None,
                 neighbourhood=None, exchange_every: int | None = None, exchange_strength: int | None = None,
                 history: str = "improvements", initial=None, callbacks=None):
        template = TabuSearch(problem, backend=backend, tenure=tenure, aspiration=aspiration,
                              forced_after=forced_after, neighbourhood=neighbourhood,
                              history=history)  # checks them once
        self.every_iteration = template.keep_every_iteration
        self.problem, self.neighbourhood = template.problem, template.neighbourhood
        if callable(template.tenure):
            raise ValueError("BatchTabuSearch: a tenure function is not batched; use a (low, high) range")
        self.tenure = template.tenure
        #: the selection rules of every start (step, current and best are per start)
        self.rules = Query(rule="best", tabu=True, aspiration=template.aspiration, forced_after=template.forced_after)
        self.backend = resolve(backend, self.problem)
        self.seeds = list(seeds)
        #: start solutions, one per start (None: each start draws its own, as a single search does)
        self.initial = start_solutions(template.problem, initial, len(self.seeds))
        self.exchange_every = check_count("BatchTabuSearch", "exchange_every", exchange_every, 1)
        self.exchange_strength = (check_count("BatchTabuSearch", "exchange_strength", exchange_strength, 1)
                                  or max(1, self.problem.n // 4))
        self._init_run(None, callbacks, history)

    def _exchange(self, evaluator, ledger, rng) -> None:
        """Islands (see the class and Ledger.exchange): the restarted starts loaded on the evaluator."""
        exchanged = ledger.exchange(self.problem, evaluator.best_solutions, rng, self.exchange_strength)
        if exchanged is not None:
            evaluator.restart(*exchanged)

    def _tenures(self, rngs) -> np.ndarray:
        """The next TENURE_BLOCK tenures of every start, drawn as TabuSearch draws them."""
        low, high = self.tenure
        if low == high:
            return np.full((len(rngs), TENURE_BLOCK), low, dtype=np.int32)
        return np.stack([r.integers(low, high + 1, TENURE_BLOCK) for r in rngs]).astype(np.int32)

    # --- the run: lsmgpu.search.loop.Search's loop, a chunk of iterations a step -----------------
    def _start(self) -> None:
        """The start solutions (each start's own draw, as a single search's), the ledger and the
        batch evaluator, loaded; each kept as it exists (Ctrl-C or the deadline in a later phase
        still finds the earlier ones)."""
        problem, sense, B = self.problem, self.problem.sense, len(self.seeds)
        self.ledger = self.evaluator = None
        self._loaded, self._per_iteration = False, None
        self._rngs = [np.random.default_rng(s) for s in self.seeds]
        self._xs = (np.array(self.initial, dtype=problem.encoding.dtype) if self.initial is not None else
                    np.stack([problem.start_solution(r) for r in self._rngs]))
        self.ledger = Ledger(np.array([sense * problem.fitness(x) for x in self._xs], dtype=problem.fitness_dtype),
                             self.neighbourhood.size, self.every_iteration)
        self.best_x, self.best = self._xs[int(np.argmin(self.ledger.best))], float(self.ledger.best.min())
        check_deadline("the batch evaluator's set-up")
        self.evaluator = self.backend.batch_evaluator(problem, self.neighbourhood, B)
        self.evaluator.load(self._xs, self.ledger.current)
        self._loaded = True
        self._exchange_rng = np.random.default_rng(np.random.SeedSequence(self.seeds[0].entropy, spawn_key=(0xE8C4,)))

    def _budget_spent(self) -> str | None:
        """The batch's own stop tests live in ``step`` (per start: the ledger)."""
        return None

    # --- checkpoints: the run's fields, the batch's (batch_state) and the evaluator's snapshot ----
    def state(self) -> dict:
        state = super().state()
        state["batch"] = batch_state(self, {"evaluator": self.evaluator.snapshot()})
        return state

    def _restore(self, state: dict) -> None:
        """The batch as checkpointed: a fresh evaluator given the snapshot (between chunks)."""
        batch = restore_batch(self, state)
        super()._restore(state)
        self._per_iteration = None
        self.evaluator = self.backend.batch_evaluator(self.problem, self.neighbourhood, len(self.seeds))
        self.evaluator.restore(batch["evaluator"])
        self._loaded = True

    def step(self) -> bool:
        """One chunk of iterations of every active start (sized so that the batch ends within about
        one iteration of the time budget); True once the batch has ended."""
        if self.status is not None:
            return True
        evaluator, ledger, budget, step = self.evaluator, self.ledger, self.budget, self.iteration
        sense, iterations, seconds = self.problem.sense, budget.iterations, budget.seconds
        deadline = None if seconds is None else self.t0 + seconds
        self.status = batch_ended(ledger, budget, step, deadline)
        if self.status is not None:
            return True
        if evaluator.max_steps is not None and step >= evaluator.max_steps:
            log.warning("batched tabu search: %d iterations is the most the device counts in one run; "
                        "stopping with the best so far", evaluator.max_steps)
            ledger.stop(ledger.active, "iterations")
            self.status = "done"
            return True
        if step % TENURE_BLOCK == 0:
            evaluator.set_tenures(self._tenures(self._rngs))
        count = min(CHUNK, TENURE_BLOCK - step % TENURE_BLOCK, (evaluator.max_steps or step + CHUNK) - step,
                    (iterations - step) if iterations is not None else CHUNK,
                    (self.exchange_every - step % self.exchange_every) if self.exchange_every else CHUNK,
                    chunk_for(deadline, self._per_iteration))
        goal = None if budget.target is None else sense * budget.target
        began = time.perf_counter()
        chunk = evaluator.advance(step, count, self.rules, budget.stagnation, goal, ledger, deadline=deadline)
        steps = count if chunk.steps is None else chunk.steps
        if steps:
            self._per_iteration = (time.perf_counter() - began) / steps
        self.iteration = step = step + steps
        ledger.record(chunk.made, chunk.values, chunk.code, self.elapsed, sense, iterations)
        self.best, self.evaluations = float(ledger.best.min()), int(ledger.evaluations.sum())
        if self.callbacks.callbacks and self.callbacks.on_iteration(self._state()):
            self.status = "callback"
        if chunk.interrupted:
            raise KeyboardInterrupt
        if "target" in ledger.status:
            ledger.stop(ledger.active, "stopped")
            self.status = "target"
        elif self.exchange_every and step % self.exchange_every == 0:
            self._exchange(evaluator, ledger, self._exchange_rng)
        return self.status is not None

    def _state(self) -> State:
        best = self.problem.sense * self.best
        return State(self.iteration, best, best, None, self.elapsed, self.evaluations)

    def result(self) -> SearchResult:
        """Every start's SearchResult (its best solution, re-evaluated exactly), combined."""
        problem, sense, B = self.problem, self.problem.sense, len(self.seeds)
        ledger, evaluator, overall = getattr(self, "ledger", None), getattr(self, "evaluator", None), self.status
        if ledger is None:          # interrupted before the start solutions existed
            return SearchResult.combined([None] * B, self.elapsed, overall, sense, algorithm="TabuSearch",
                                         problem=problem.name)
        done = self.budget.iterations is not None and self.iteration >= self.budget.iterations
        ledger.stop(ledger.active, "iterations" if done else ("seconds" if overall == "seconds" else "interrupted"))
        best_x = evaluator.best_solutions() if self._loaded else self._xs
        device = evaluator.device if evaluator is not None else getattr(self.backend, "device", "")
        timings = dict(evaluator.timings) if evaluator is not None else {}
        results = [SearchResult(
            solution=best_x[k].copy(), fitness=problem.fitness(best_x[k]), iterations=int(ledger.done[k]),
            evaluations=int(ledger.evaluations[k]), seconds=self.elapsed, history=ledger.history(k, sense),
            improvements=ledger.improvements[k], backend=self.backend.name, device=device,
            status=ledger.status[k] or overall, timings=timings, algorithm="TabuSearch", problem=problem.name,
            work=(int(ledger.done[k]), "moves")) for k in range(B)]
        return SearchResult.combined(results, self.elapsed, overall, sense)

    def _release(self) -> None:
        if getattr(self, "evaluator", None) is not None:
            self.evaluator.close()


def chunk_for(deadline: float | None, per_iteration: float | None) -> int:
    """Iterations in the next chunk under a deadline: one to measure an iteration's time, then what
    leaves a quarter of the remaining time (so the last chunk ends about one iteration late at most)."""
    if deadline is None:
        return CHUNK
    if per_iteration is None:
        return 1
    left = deadline - time.perf_counter()
    return int(max(1, min(CHUNK, 0.25 * left / max(per_iteration, 1e-9))))
