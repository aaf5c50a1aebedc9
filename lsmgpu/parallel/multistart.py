"""Many independent starts of one search (the algorithmic level of parallelism).

Start k is seeded from ``SeedSequence(seed).spawn(starts)[k]``, so its run equals a single
search created with that seed, whichever machine or process runs it. :class:`MultiStart` runs
tabu search starts together on one device (:mod:`lsmgpu.parallel.batch`), other searches one
after the other in this process; :mod:`lsmgpu.parallel.distributed` spreads them over
Ray actors (one per GPU). Both return a :class:`MultiStartResult`.

Budgets: ``iterations``, ``stagnation`` and ``target`` apply to each start; ``seconds`` is the
wall time of the whole multi-start (a start begun late gets what is left; starts that get
nothing are reported as not run); a start that reaches ``target`` ends the multi-start.
"""
from __future__ import annotations

import time

from .batch import BatchTabuSearch, batch_unsupported
from .result import MultiStartResult
from .seeds import search_class, spawn_seeds

__all__ = ["MultiStart", "MultiStartResult", "spawn_seeds", "search_class"]


class MultiStart:
    """``starts`` runs of ``search`` (a class or "tabu" / "hc" / "ils") on ``problem``;
    ``options`` go to every search (backend, tenure, callbacks, ...).

    Tabu search starts run together, one launch per iteration for all of them
    (:mod:`lsmgpu.parallel.batch`), unless ``batch=False`` or the options are per-search (callbacks,
    a tenure function); other searches run one after the other.
    """

    def __init__(self, search, problem, *, starts: int, seed=None, batch: bool = True, **options):
        self.search = search_class(search)
        self.problem, self.options = problem, options
        self.seeds = spawn_seeds(seed, starts)
        self.batched = bool(batch) and batch_unsupported(self.search, options, problem) is None
        if not self.batched and options.get("exchange_every") is not None:
            raise ValueError("MultiStart: `exchange_every` makes batched tabu starts exchange solutions; "
                             f"these starts run one after the other ({batch_unsupported(self.search, options, problem) or 'batch=False'})")

    def make(self, k: int):
        """The search of start k (seeded with its spawned seed)."""
        return self.search(self.problem, seed=self.seeds[k], **self.options)

    def run(self, iterations=None, *, seconds=None, target=None, stagnation=None, progress=None,
            on_chunk=None) -> MultiStartResult:
        """Run the starts; ``progress(k, result)`` is called as each start ends, and for batched
        starts ``on_chunk(iterations, best)`` after every chunk of iterations."""
        if self.batched:
            return BatchTabuSearch(self.problem, self.seeds, **self.options).run(
                iterations, seconds=seconds, target=target, stagnation=stagnation, progress=progress,
                on_chunk=on_chunk)
        t0 = time.perf_counter()
        results = [None] * len(self.seeds)
        status = "done"
        try:
            for k in range(len(self.seeds)):
                left = None if seconds is None else seconds - (time.perf_counter() - t0)
                if left is not None and left <= 0:
                    status = "seconds"
                    break
                results[k] = self.make(k).run(iterations, seconds=left, target=target, stagnation=stagnation)
                if progress is not None:
                    progress(k, results[k])
                if results[k].status in ("interrupted", "target"):
                    status = results[k].status
                    break
        except KeyboardInterrupt:
            status = "interrupted"
        return MultiStartResult.gather(results, time.perf_counter() - t0, status, self.problem.sense,
                                       {k: r.device for k, r in enumerate(results) if r is not None})
