"""The result of many starts: the best one and every start's own SearchResult."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..result import SearchResult

__all__ = ["MultiStartResult", "MULTISTART_STATUSES"]

#: why a multi-start ended: every start ran to its own stop criterion ("done"), one reached the
#: target, the time ran out, or Ctrl-C / SIGTERM
MULTISTART_STATUSES = ("done", "target", "seconds", "interrupted")


@dataclass(frozen=True)
class MultiStartResult:
    """The best start and every start's result.

    ``results[k]`` is start k's SearchResult, or None when it did not run (time out,
    interruption) or was lost (its worker died twice; listed in ``lost``). ``workers[k]``
    names where start k ran (e.g. the GPU). ``status``: one of MULTISTART_STATUSES ("done":
    every start ran to its own stop criterion, each start's own status in its result).
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
        if status not in MULTISTART_STATUSES:
            raise ValueError(f"MultiStartResult: unknown `status` {status!r}")
        done = [r for r in results if r is not None]
        best = min(done, key=lambda r: sense * r.fitness) if done else None
        return cls(best, list(results), seconds, status, sense, dict(workers or {}), tuple(lost))
