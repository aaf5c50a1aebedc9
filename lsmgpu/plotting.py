"""Pictures of results (matplotlib, the optional extra ``lsmgpu[plot]``): the best fitness against
time, and for a TSP with coordinates the tour over its cities."""
from __future__ import annotations

import numpy as np

__all__ = ["pyplot", "best_over_time", "plot_result"]


def pyplot():
    """matplotlib.pyplot on a file backend, or ImportError saying how to get it."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib (pip install 'lsmgpu[plot]')") from None
    return plt


def best_over_time(result) -> tuple[list[float], list[float]]:
    """(seconds, best fitness) steps of a SearchResult: the start, each improvement, the end."""
    points = [(0.0, result.history[0])] + [(t, f) for _, t, f in result.improvements] + \
        [(result.seconds, result.fitness)]
    seconds, best = zip(*points)
    return list(seconds), list(best)


def plot_result(problem, result, path) -> None:
    """Save ``result`` as an image: the tour over the cities (a TSP with coordinates) beside the
    best fitness against time, else the curve alone."""
    plt = pyplot()
    coords = getattr(problem, "coords", None)
    panels = 2 if coords is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.5), squeeze=False)
    if coords is not None:
        ax = axes[0][0]
        tour = np.asarray(result.solution)
        closed = coords[np.append(tour, tour[0])]
        ax.plot(closed[:, 0], closed[:, 1], "-", lw=0.6, color="C0")
        ax.plot(coords[:, 0], coords[:, 1], ".", ms=2 if len(tour) > 2000 else 4, color="C3")
        gap = problem.gap(result.fitness)
        ax.set_title(f"{problem.name}: length {result.fitness:,.0f}" + ("" if gap is None else f" ({100 * gap:.2f} %)"),
                     fontsize=9)
        ax.set_aspect("equal")
        ax.axis("off")
    ax = axes[0][-1]
    seconds, best = best_over_time(result)
    ax.step(seconds, best, where="post", color="C0")
    if problem.best_known is not None:
        ax.axhline(problem.best_known, color="C2", ls="--", lw=0.8, label=f"best known {problem.best_known:,g}")
        ax.legend(fontsize=8)
    ax.set_xlabel("seconds")
    ax.set_ylabel("best fitness")
    ax.set_title(f"{result.algorithm} on {result.backend} ({result.status})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
