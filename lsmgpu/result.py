"""SearchResult: what every search returns (in the spirit of scipy's OptimizeResult)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SearchResult", "STATUSES", "HISTORIES"]

#: what a search's ``history`` keeps: each new best (bounded), or every iteration
HISTORIES = ("improvements", "all")

#: why a search stopped
STATUSES = ("iterations", "evaluations", "seconds", "target", "stagnation",
            "local_optimum", "no_admissible_move", "callback", "interrupted",
            "stopped")   # stopped: a batched start ended because another one reached the target


@dataclass(frozen=True)
class SearchResult:
    """The best solution found and how the search got there.

    ``history``: with the search's ``history="improvements"`` (the default: memory bounded by
    the improvements, not the iterations) the start fitness and then each new best; with
    ``history="all"`` the current fitness after every iteration (index 0: the start; 8 bytes an
    iteration);
    ``improvements`` holds (iteration, seconds, best fitness) each time the best improved;
    ``timings`` holds seconds per phase (``evaluate``, ``select``, ``apply``, ``transfer``,
    ``host``) as measured by the backend; ``work`` what the search made (moves, kicks, ant
    tours, children), counted in its own unit.
    """

    solution: np.ndarray
    fitness: float
    iterations: int
    evaluations: int
    seconds: float
    history: np.ndarray
    improvements: list[tuple[int, float, float]]
    backend: str
    device: str
    status: str
    timings: dict[str, float] = field(default_factory=dict)
    algorithm: str = ""
    problem: str = ""
    #: what the search made, for throughput: (count, unit), e.g. (1200, "moves"), (640, "ant tours")
    work: tuple[int, str] = (0, "")

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"SearchResult: unknown `status` {self.status!r}")
        if self.iterations < 0 or self.evaluations < 0:
            raise ValueError("SearchResult: `iterations` and `evaluations` must be >= 0")

    @property
    def moves_per_second(self) -> float:
        """Neighbours evaluated per second of wall time."""
        return self.evaluations / self.seconds if self.seconds > 0 else float("nan")

    def summary(self) -> str:
        """A few readable lines."""
        lines = [f"{self.algorithm} on {self.problem} [{self.backend}: {self.device}]",
                 f"  best fitness  {self.fitness:g}",
                 f"  iterations    {self.iterations}   evaluations {self.evaluations:,}"
                 + (f"   work {self.work[0]:,} {self.work[1]}" if self.work[1] else ""),
                 f"  seconds       {self.seconds:.3f}   ({self.moves_per_second:,.0f} moves/s)",
                 f"  stopped by    {self.status}"]
        if self.timings:
            lines.append("  phases        " + ", ".join(f"{k} {v:.3f}s" for k, v in self.timings.items()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
