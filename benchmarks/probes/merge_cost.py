"""What a merge of many tours costs the host, with and without fusing the places that make no tour
alone (lsmgpu/search/partition.py, ``_Pair.fuse``).

DontLookILS merges its 32 best chains' tours at an exchange in a thread beside the GPU, and the
next exchange waits for it (runs stay reproducible): where a merge takes longer than the rounds
between exchanges, the merge sets the search's pace (pla85900 at 60 s: docs/benchmarks/tsp-depth.md,
"Fusion in the searches on the GPU"). Here the tours are the instance's greedy tour (the first row)
and ``rows - 1`` copies of it, each changed in ``changes`` random places: a double bridge or a
reversal of at most 300 cities (the chains' longest kicked segment), half of each kind. The merge
of all rows, fused and with each place alone, is timed ``repeats`` times; the median seconds and
the merged tour's gain are printed. It needs no GPU.

    python -m benchmarks.probes.merge_cost .data/tsplib pla85900 32 3000 3
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.probes.crossover_pairs import unfused
from lsmgpu.problems import TSP
from lsmgpu.search.partition import merge_tours
from problems.candidates import greedy_tour

SPAN = 300           # the longest changed stretch of a tour, DontLookILS's default kick segment


def changed_tours(tour: np.ndarray, rows: int, changes: int, rng) -> np.ndarray:
    """(rows, n): ``tour`` then rows - 1 copies, each with ``changes`` random double bridges or
    reversals of at most SPAN cities."""
    n = len(tour)
    if n <= SPAN + 3:
        raise ValueError(f"merge_cost: {n} cities; the changes need more than {SPAN + 3}")
    out = [tour]
    for _ in range(rows - 1):
        t = tour.copy()
        for _ in range(changes):
            i = int(rng.integers(0, n - SPAN))
            cut = np.sort(rng.choice(np.arange(1, SPAN), 3, replace=False))
            s = t[i:i + cut[2]].copy()
            if rng.random() < 0.5:
                s = np.concatenate([s[cut[1]:], s[cut[0]:cut[1]], s[:cut[0]]])
            else:
                s = np.concatenate([s[:cut[0]], s[cut[0]:cut[1]][::-1], s[cut[1]:]])
            t[i:i + cut[2]] = s
        out.append(t)
    return np.array(out)


def merge_seconds(tours: np.ndarray, between, repeats: int, fused: bool) -> tuple[float, float]:
    """(median seconds, gain) of ``merge_tours(tours)``, with fusion or with each place alone."""
    seconds, gain = [], 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        if fused:
            _, gain = merge_tours(tours, between)
        else:
            with unfused():
                _, gain = merge_tours(tours, between)
        seconds.append(time.perf_counter() - started)
    return float(np.median(seconds)), gain


def main(data: str, instance: str, rows: str = "32", changes: str = "3000", repeats: str = "3") -> None:
    problem = TSP.from_file(Path(data) / f"{instance}.tsp")
    between = problem.edge_distance().between
    tours = changed_tours(greedy_tour(problem.coords).astype(np.int64), int(rows), int(changes),
                          np.random.default_rng(0))
    print(f"{instance}: {rows} tours, {changes} changes each; median of {repeats}")
    for fused in (True, False):
        seconds, gain = merge_seconds(tours, between, int(repeats), fused)
        print(f"{'fused' if fused else 'each place alone'}: {seconds:.3f} s, gain {gain:.0f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
