"""Compare search variants (neighbourhood, selection, generation) on one instance, same seeds.

>>> rows = compare("tai12a", neighbourhoods=["swap"], runs=2, iterations=50, backend="cpu")
>>> rows[0].runs
2

Every variant runs with seeds ``seed, seed + 1, ...``, so differences come from the variant,
not from luck. Selection ("device" reduction or "host" copy of the fitness array) and
generation ("device" index mappings or "host" move lists) only exist on the CUDA backend;
on the CPU they collapse into one variant.
"""
from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field

from .backends import CpuBackend, resolve
from .parallel.seeds import spawn_seeds
from .plotting import best_over_time, pyplot
from .result import SearchResult
from .search import LocalSearch, search_class

__all__ = ["compare", "Row", "format_table", "plot"]

ALIASES = {"gpu": "device", "device": "device", "cpu": "host", "host": "host"}


@dataclass
class Row:
    """One variant's summary over its runs (``results`` keeps every SearchResult)."""

    variant: str
    runs: int
    fitness_mean: float
    fitness_best: float
    gap_mean_pct: float | None
    seconds_mean: float
    moves_per_second: float
    results: list[SearchResult] = field(default_factory=list, repr=False)


def _alias(value: str, what: str) -> str:
    if value not in ALIASES:
        raise ValueError(f"compare: unknown {what} {value!r}; use one of {sorted(ALIASES)}")
    return ALIASES[value]


def compare(instance, *, neighbourhoods=(None,), selections=("device",), generations=("device",),
            algorithm: str = "tabu", runs: int = 5, seed: int = 0, iterations: int | None = None,
            seconds: float | None = None, backend="auto") -> list[Row]:
    """Run every (neighbourhood, selection, generation) variant ``runs`` times; one Row each.

    ``instance``: a path or shipped name (see lsmgpu.problems.load); ``neighbourhoods``: names
    the problem accepts ("swap", "2opt" for the TSP), None for the problem's default.
    """
    from .problems import load, resolve_path

    cls = search_class(algorithm, "compare", LocalSearch)
    if runs < 1:
        raise ValueError(f"compare: `runs` must be >= 1, got {runs}")
    if iterations is None and seconds is None and algorithm != "hc":
        raise ValueError("compare: give `iterations` or `seconds`")
    path = resolve_path(instance)
    base = resolve(backend)
    on_gpu = base.name == "cuda"
    selections = [_alias(s, "selection") for s in selections]
    generations = [_alias(g, "generation") for g in generations]
    if not on_gpu:
        selections, generations = ["device"], ["device"]
    seeds = spawn_seeds(seed, runs)        # run r of every variant from the same spawned seed
    rows = []
    for nb, sel, gen in itertools.product(neighbourhoods, dict.fromkeys(selections), dict.fromkeys(generations)):
        problem = load(path, neighbourhood=nb) if nb else load(path)
        label = f"{problem.neighbourhood!r}" + (f", selection {sel}, generation {gen}" if on_gpu else ", cpu")
        results = []
        for r in range(runs):
            backend_r = _cuda(sel, gen) if on_gpu else CpuBackend()
            search = cls(problem, seed=seeds[r], backend=backend_r)
            results.append(search.run(iterations, seconds=seconds))
        fits = [res.fitness for res in results]
        gaps = [problem.gap(f) for f in fits]
        rows.append(Row(
            variant=label, runs=runs, fitness_mean=statistics.fmean(fits),
            fitness_best=min(fits) if problem.sense > 0 else max(fits),
            gap_mean_pct=None if gaps[0] is None else 100 * statistics.fmean(gaps),
            seconds_mean=statistics.fmean(res.seconds for res in results),
            moves_per_second=statistics.fmean(res.moves_per_second for res in results), results=results))
    return rows


def _cuda(selection: str, generation: str):
    from .backends.cuda import CudaBackend
    return CudaBackend(selection=selection, generation=generation)


def format_table(rows: list[Row]) -> str:
    """A Markdown table of the rows."""
    lines = ["| variant | runs | fitness mean | best | gap mean % | seconds | moves/s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = "" if r.gap_mean_pct is None else f"{r.gap_mean_pct:.3f}"
        lines.append(f"| {r.variant} | {r.runs} | {r.fitness_mean:.6g} | {r.fitness_best:.6g} | {gap} | "
                     f"{r.seconds_mean:.3f} | {r.moves_per_second:.3e} |")
    return "\n".join(lines)


def plot(rows: list[Row], path: str) -> None:
    """Save a plot of the best fitness against time, one line per run, coloured by variant."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, row in enumerate(rows):
        colour = f"C{k % 10}"
        for j, res in enumerate(row.results):
            ts, fs = best_over_time(res)
            ax.step(ts, fs, where="post", color=colour, alpha=0.7, label=row.variant if j == 0 else None)
    ax.set_xlabel("seconds")
    ax.set_ylabel("best fitness")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
