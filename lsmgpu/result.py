"""SearchResult: what every run returns, one search or many combined (in the spirit of scipy's
OptimizeResult)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SearchResult", "STATUSES", "HISTORIES"]

#: what a search's ``history`` keeps: each new best (bounded), or every iteration
HISTORIES = ("improvements", "all")

#: why a run stopped; "stopped": a batched start ended because another one reached the target;
#: "done": a combined run whose starts or islands each ran to their own stop criterion
STATUSES = ("iterations", "evaluations", "seconds", "target", "stagnation",
            "local_optimum", "no_admissible_move", "callback", "interrupted", "stopped", "done")


@dataclass(frozen=True)
class SearchResult:
    """The best solution found and how the run got there.

    ``history``: with the search's ``history="improvements"`` (the default: memory bounded by
    the improvements, not the iterations) the start fitness and then each new best; with
    ``history="all"`` the current fitness after every iteration (index 0: the start; 8 bytes an
    iteration);
    ``improvements`` holds (iteration, seconds, best fitness) each time the best improved;
    ``timings`` holds seconds per phase (``evaluate``, ``select``, ``apply``, ``transfer``,
    ``host``) as measured by the backend, and ``build``: the seconds the run waited for its GPU
    kernels' first builds, where it did; ``work`` what the search made (moves, kicks, ant
    tours, children), counted in its own unit.

    A run of many starts or islands (MultiStart, RayMultiStart, RayIslands) returns one too,
    made by :meth:`combined`: ``runs[k]`` is start k's own SearchResult (None where it did not
    run: the time ran out, Ctrl-C, or its worker died twice, then listed in ``lost``), ``device``
    of each says where it ran; the solution, fitness, history and improvements are the best
    run's, ``iterations``, ``evaluations`` and ``work`` the sum over the runs, ``seconds`` the
    wall time of them all. Where no run finished, ``solution`` is None and ``fitness`` NaN.
    """

    solution: np.ndarray | None
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
    #: the starts' or islands' own results, for a combined run (None: that one did not run)
    runs: tuple = ()
    #: the starts or islands lost with their worker (a combined run over Ray)
    lost: tuple = ()

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"SearchResult: unknown `status` {self.status!r}")
        if self.iterations < 0 or self.evaluations < 0:
            raise ValueError("SearchResult: `iterations` and `evaluations` must be >= 0")

    @property
    def moves_per_second(self) -> float:
        """Neighbours evaluated per second of wall time."""
        return self.evaluations / self.seconds if self.seconds > 0 else float("nan")

    @property
    def fitnesses(self) -> np.ndarray:
        """Each combined run's best fitness (NaN where it did not run; empty for one search)."""
        return np.array([r.fitness if r is not None else np.nan for r in self.runs], dtype=float)

    def figures(self) -> dict:
        """The run's figures as plain values that JSON writes (``lsmgpu solve --json``): the
        algorithm, problem, backend, device, fitness (None where no run finished), iterations,
        evaluations, seconds, status, timings and work; for a combined run how many of its runs
        ran, of how many, and the lost ones. Not the solution (``--out`` writes it) nor histories."""
        figures = dict(algorithm=self.algorithm, problem=self.problem, backend=self.backend, device=self.device,
                       fitness=float(self.fitness) if np.isfinite(self.fitness) else None,
                       iterations=int(self.iterations), evaluations=int(self.evaluations),
                       seconds=float(self.seconds), status=self.status,
                       timings={name: float(value) for name, value in self.timings.items()},
                       work=dict(count=int(self.work[0]), unit=self.work[1]))
        if self.runs:
            figures.update(runs=len(self.runs), ran=sum(r is not None for r in self.runs),
                           lost=[int(k) for k in self.lost])
        return figures

    def summary(self) -> str:
        """A few readable lines."""
        lines = [f"{self.algorithm} on {self.problem} [{self.backend}: {self.device}]"]
        if self.runs:
            ran = sum(r is not None for r in self.runs)
            lines.append(f"  runs          {ran} of {len(self.runs)} ran" + (f"; lost {list(self.lost)}" if self.lost
                                                                              else ""))
        lines += [f"  best fitness  {self.fitness:g}",
                  f"  iterations    {self.iterations}   evaluations {self.evaluations:,}"
                  + (f"   work {self.work[0]:,} {self.work[1]}" if self.work[1] else ""),
                  f"  seconds       {self.seconds:.3f}   ({self.moves_per_second:,.0f} moves/s)",
                  f"  stopped by    {self.status}"]
        if self.timings:
            lines.append("  phases        " + ", ".join(f"{k} {v:.3f}s" for k, v in self.timings.items()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    @classmethod
    def combined(cls, runs, seconds: float, status: str, sense: int, devices: dict | None = None, lost=(),
                 algorithm: str = "", problem: str = "") -> "SearchResult":
        """The result of many runs (None entries: runs that did not run): the best by ``sense``
        times its fitness, the counters summed; ``devices[k]`` replaces run k's device (the
        worker it ran on). Its ``timings["build"]`` is the longest any run waited for kernel builds:
        runs side by side (Ray's actors, each building for its own GPU) were held up that long; a
        multi-start that ran them one after another replaces it with their sum (its run scope's)."""
        runs = [r if r is None or k not in (devices or {}) else dataclasses.replace(r, device=devices[k])
                for k, r in enumerate(runs)]
        done = [r for r in runs if r is not None]
        if not done:
            return cls(None, float("nan"), 0, 0, seconds, np.array([]), [], "", "", status, algorithm=algorithm,
                       problem=problem, runs=tuple(runs), lost=tuple(lost))
        best = min(done, key=lambda r: sense * r.fitness)
        unit = best.work[1]
        timings = {name: value for name, value in best.timings.items() if name != "build"}
        build = max(r.timings.get("build", 0.0) for r in done)
        return dataclasses.replace(
            best, iterations=sum(r.iterations for r in done), evaluations=sum(r.evaluations for r in done),
            seconds=seconds, status=status, work=(sum(r.work[0] for r in done if r.work[1] == unit), unit),
            runs=tuple(runs), lost=tuple(lost), timings={**timings, "build": build} if build else timings)
