"""Many independent starts of one search (the algorithmic level of parallelism).

Start k is seeded from ``SeedSequence(seed).spawn(starts)[k]``, so its run equals a single
search created with that seed, whichever machine or process runs it. :class:`MultiStart` runs
tabu search starts together on one device (:mod:`lsmgpu.batch`), other searches one after
the other in this process; :mod:`lsmgpu.distributed` spreads them over
Ray actors (one per GPU). Both return a :class:`MultiStartResult`.

Budgets: ``iterations``, ``stagnation`` and ``target`` apply to each start; ``seconds`` is the
wall time of the whole multi-start (a start begun late gets what is left; starts that get
nothing are reported as not run); a start that reaches ``target`` ends the multi-start.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .result import SearchResult

__all__ = ["MultiStart", "MultiStartResult", "spawn_seeds", "search_class"]


def spawn_seeds(seed, starts: int) -> list[np.random.SeedSequence]:
    """The independent seed of each start."""
    if not isinstance(starts, (int, np.integer)) or starts < 1:
        raise ValueError(f"MultiStart: `starts` must be an integer >= 1, got {starts!r}")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(int(starts))


def search_class(search):
    """A search class from a class or its command-line name ("tabu", "hc", "ils")."""
    from .search import ALGORITHMS, LocalSearch
    if isinstance(search, str):
        if search not in ALGORITHMS:
            raise ValueError(f"MultiStart: unknown search {search!r}; one of {sorted(ALGORITHMS)}")
        return ALGORITHMS[search]
    if isinstance(search, type) and issubclass(search, LocalSearch):
        return search
    raise TypeError(f"MultiStart: `search` must be a LocalSearch subclass or one of the names, got {search!r}")


@dataclass(frozen=True)
class MultiStartResult:
    """The best start and every start's result.

    ``results[k]`` is start k's SearchResult, or None when it did not run (time out,
    interruption) or was lost (its worker died twice; listed in ``lost``). ``workers[k]``
    names where start k ran (e.g. the GPU). ``status``: "done", "target", "seconds" or
    "interrupted".
    """

    best: SearchResult | None
    results: list
    seconds: float
    status: str
    sense: int = 1
    workers: dict = field(default_factory=dict)
    lost: tuple = ()

    @property
    def fitness(self) -> float:
        return self.best.fitness if self.best is not None else float("nan")

    @property
    def solution(self):
        return None if self.best is None else self.best.solution

    @property
    def fitnesses(self) -> np.ndarray:
        """Each start's best fitness (NaN where it did not run)."""
        return np.array([r.fitness if r is not None else np.nan for r in self.results], dtype=float)

    @property
    def evaluations(self) -> int:
        return sum(r.evaluations for r in self.results if r is not None)

    def summary(self) -> str:
        ran = sum(r is not None for r in self.results)
        lines = [f"{ran} of {len(self.results)} starts ran in {self.seconds:.3f} s ({self.status}); "
                 f"{self.evaluations / max(self.seconds, 1e-12):,.0f} evaluations/s"]
        if self.best is not None:
            lines.append(f"  best fitness  {self.best.fitness:g}")
        if self.lost:
            lines.append(f"  lost starts   {list(self.lost)}")
        return "\n".join(lines)

    @classmethod
    def gather(cls, results, seconds, status, sense, workers=None, lost=()):
        """Pick the best of ``results`` (None entries skipped)."""
        done = [r for r in results if r is not None]
        best = min(done, key=lambda r: sense * r.fitness) if done else None
        return cls(best, list(results), seconds, status, sense, dict(workers or {}), tuple(lost))


class MultiStart:
    """``starts`` runs of ``search`` (a class or "tabu" / "hc" / "ils") on ``problem``;
    ``options`` go to every search (backend, tenure, callbacks, ...).

    Tabu search starts run together, one launch per iteration for all of them
    (:mod:`lsmgpu.batch`), unless ``batch=False`` or the options are per-search (callbacks,
    a tenure function); other searches run one after the other.
    """

    def __init__(self, search, problem, *, starts: int, seed=None, batch: bool = True, **options):
        from .batch import batch_unsupported
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
            from .batch import BatchTabuSearch
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
