"""Many independent starts of one search (the algorithmic level of parallelism).

Start k is seeded from ``SeedSequence(seed).spawn(starts)[k]``, so its run equals a single
search created with that seed, whichever machine or process runs it. :class:`MultiStart` runs
tabu search starts together on one device (:mod:`lsmgpu.parallel.batch`), other searches one
after the other in this process; :mod:`lsmgpu.parallel.distributed` spreads them over
Ray actors (one per GPU). Both return one SearchResult, ``SearchResult.combined`` of the starts.

Budgets: ``iterations``, ``stagnation`` and ``target`` apply to each start; ``seconds`` is the
wall time of the whole multi-start (a start begun late gets what is left; starts that get
nothing are reported as not run); a start that reaches ``target`` ends the multi-start.
"""
from __future__ import annotations

import time
import warnings

from ..budget import Budget
from ..problem import check_problem
from ..result import SearchResult
from ..search import IteratedLocalSearch, TabuSearch
from ..search.loop import Search
from ..validation import check_count, check_flag, check_host_memory, check_options
from .batch import BatchTabuSearch
from .drivers import batch_driver
from .seeds import search_class, spawn_seeds, start_solutions, warn_one_start

__all__ = ["MultiStart", "spawn_seeds", "search_class"]

#: the batched starts' own options (islands), not their searches'
ISLAND_OPTIONS = ("exchange_every", "exchange_strength")


class MultiStart(Search):
    """``starts`` runs of ``search`` (a class or "tabu" / "hc" / "ils") on ``problem``;
    ``options`` go to every search (backend, tenure, callbacks, ...).

    Tabu search starts run together, one launch per iteration for all of them
    (:mod:`lsmgpu.parallel.batch`), and so do iterated local searches (the chains' kicks, descents
    and acceptance for all of them at once: :mod:`lsmgpu.parallel.batch_ils`), unless
    ``batch=False`` or the options are per-search (callbacks, a tenure function); other searches
    run one after the other. ``initial``: one start solution
    for every start (e.g. ``problem.read_solution(path)``, to continue a run) or one per start
    (starts x n); by default each start draws its own.
    """

    algorithm = "MultiStart"
    combines = True
    #: starts run one after the other are checkpointed between starts: the finished starts'
    #: results and the next start (a start cut short is run again on resume, from its seed)
    state_fields = ("results", "_next")

    def __init__(self, search, problem, *, starts: int, seed=None, batch: bool = True, initial=None, **options):
        check_problem("MultiStart", problem)
        self.search = search_class(search)
        self.needs_budget = self.search.needs_budget
        self._init_run(None, None, "improvements")
        check_options("MultiStart", self.search, {k: v for k, v in options.items() if k not in ISLAND_OPTIONS},
                      taken=("problem", "seed"))
        self.problem, self.options = problem, options
        self.initial = start_solutions(problem, initial, starts)
        if initial is None:
            warn_one_start("MultiStart", self.search, problem, starts)
        for name in ISLAND_OPTIONS:
            check_count("MultiStart", name, options.get(name), 1)
        self.seeds = spawn_seeds(seed, starts)
        self.driver, why = batch_driver(self.search, options, problem) if check_flag("MultiStart", "batch", batch) \
            else (None, "batch=False")
        self.batched = self.driver is not None
        self._progress = None
        if not self.batched and options.get("exchange_every") is not None:
            raise ValueError("MultiStart: `exchange_every` makes batched starts exchange solutions; "
                             f"these starts run one after the other ({why})")
        if self.driver is BatchTabuSearch:
            check_batch_memory(problem, len(self.seeds))
        elif not self.batched and self.search in (TabuSearch, IteratedLocalSearch) and batch:
            warnings.warn(f"MultiStart: the {self.search.__name__} starts run one after the other, not batched: {why}",
                          stacklevel=2)

    def make(self, k: int):
        """The search of start k (seeded with its spawned seed, from its start solution if given)."""
        initial = None if self.initial is None else self.initial[k]
        return self.search(self.problem, seed=self.seeds[k], initial=initial, **self.options)

    def run(self, iterations=None, *, seconds=None, target=None, stagnation=None, progress=None,
            on_chunk=None, checkpoint=None, checkpoint_every=None) -> SearchResult:
        """Run the starts (the one loop of lsmgpu.search.loop: a start a step, or the batch's own);
        ``progress(k, result)`` is called as each start ends, and for batched starts
        ``on_chunk(iterations, best)`` after every chunk of iterations. ``checkpoint``: starts run
        one after the other write it between starts, batched ones between their steps (a chunk of
        tabu iterations, an ILS iteration of every chain)."""
        t0 = time.perf_counter()
        if self.batched:
            Budget.checked("MultiStart", iterations, None, seconds, target, stagnation, required=True)
            result = self._driver(on_chunk).run(
                iterations, seconds=None if seconds is None else max(0.0, seconds - (time.perf_counter() - t0)),
                target=target, stagnation=stagnation, checkpoint=checkpoint, checkpoint_every=checkpoint_every)
            return self._reported(result, progress)
        self._progress = progress
        return super().run(iterations, seconds=seconds, target=target, stagnation=stagnation, checkpoint=checkpoint,
                           checkpoint_every=checkpoint_every)

    def resume(self, path, *, iterations=None, seconds=None, target=None, stagnation=None, progress=None,
               on_chunk=None, checkpoint=None, checkpoint_every=None) -> SearchResult:
        """Go on from a checkpoint of these starts (Search.resume; batched starts: their driver's)."""
        if not self.batched:
            self._progress = progress
            return super().resume(path, iterations=iterations, seconds=seconds, target=target,
                                  stagnation=stagnation, checkpoint=checkpoint, checkpoint_every=checkpoint_every)
        result = self._driver(on_chunk).resume(path, iterations=iterations, seconds=seconds, target=target,
                                               stagnation=stagnation, checkpoint=checkpoint,
                                               checkpoint_every=checkpoint_every)
        return self._reported(result, progress)

    def _driver(self, on_chunk):
        """The batched starts' driver, ``on_chunk(iterations, best)`` called after every chunk."""
        observe = [] if on_chunk is None else [lambda state: on_chunk(state.iteration, state.best) and False]
        return self.driver(self.problem, self.seeds, initial=self.initial, callbacks=observe, **self.options)

    @staticmethod
    def _reported(result, progress):
        for k, run in enumerate(result.runs if progress is not None else ()):
            progress(k, run)
        return result

    def _start(self) -> None:
        self.results, self._next = [None] * len(self.seeds), 0

    def _budget_spent(self) -> str | None:
        """Each start has the budget's iterations, target and stagnation; the seconds are the
        whole multi-start's (``step`` gives each start what is left)."""
        return None

    def step(self) -> bool:
        """The next start, run to its end; True once they all ran, one reached the target or was
        interrupted, or no time is left."""
        k, budget = self._next, self.budget
        left = None if budget.seconds is None else budget.seconds - self.elapsed
        if left is not None and left <= 0:
            self.status = "seconds"
            return True
        self.results[k] = result = self.make(k).run(budget.iterations, seconds=left, target=budget.target,
                                                   stagnation=budget.stagnation)
        if result.status != "interrupted":
            self._next = k + 1                  # an interrupted start runs again on resume
        if self._progress is not None:
            self._progress(k, result)
        if result.status in ("interrupted", "target"):
            self.status = result.status
        elif self._next == len(self.seeds):
            self.status = "done"
        return self.status is not None

    def result(self) -> SearchResult:
        return SearchResult.combined(getattr(self, "results", [None] * len(self.seeds)), self.elapsed, self.status,
                                     self.problem.sense, algorithm=self.search.algorithm, problem=self.problem.name)


def check_batch_memory(problem, starts: int) -> None:
    """Refuse, before anything is allocated, a batch whose per-start arrays (solutions, best
    solutions, tabu matrices, fitness histories) would not fit in half this machine's memory,
    saying how many starts would."""
    shape = problem.neighbourhood.tabu_shape() or (0, 0)
    per_start = 3 * problem.n * 8 + shape[0] * shape[1] * 8 + 64 * 1024
    check_host_memory("MultiStart", f"{starts:,} batched starts of {problem.name} ({per_start:,} bytes each)",
                      starts * per_start, per_start)

