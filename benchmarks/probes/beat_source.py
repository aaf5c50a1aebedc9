"""How many of focused ACO's ants beat their iteration's source, and what merging them would add.

FocusedACO (lsmgpu/search/focused.py) keeps an iteration's best ant only. Its other ants that
beat the source changed it elsewhere, often in separate places: partition crossover
(lsmgpu/search/partition.py) could add their gains to the best ant's. The probe runs the default
colony for ``seconds`` on a GPU and counts, each iteration, the ants shorter than their source
and their gains; every 100 iterations (at 50, 150, ...) it also merges the best ant with the 31
next shortest that beat the source (``merge_tours``) and prints the gain beyond the best ant's
and the merge's time. The measurement behind FocusedACO keeping no merge: the gains come in the
colony's first few hundred iterations, where a merge is worth up to 7 best ants, and vanish
(under one ant an iteration) where the run's last tenths of a percent are decided; merges in a
thread every 8 iterations ended the runs no lower (docs/benchmarks/tsp-depth.md, "Merging the
ants that beat their source").

    python -m benchmarks.probes.beat_source .data/tsplib d18512 15
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from lsmgpu.search import FocusedACO
from lsmgpu.search.partition import merge_tours
from problems.tsp import TSP

from .watched_colony import WatchedACO

#: ants merged with the iteration's best at a probed iteration
PROBED_ANTS = 32


class CountingACO(WatchedACO):
    """FocusedACO that writes, each iteration, [iteration, ants shorter than the source, the best
    ant's gain, the sum of their gains] (and, at iterations 50, 150, ..., the merge's gain beyond
    the best ant's and its seconds) to ``rows``."""

    rows: list

    def _watch(self, build) -> np.ndarray:
        source_length = self.colony.lengths[0]
        lengths = build(self.iteration)
        better = np.flatnonzero(lengths < source_length)
        row = [self.iteration, len(better), float(source_length - lengths.min()),
               float((source_length - lengths[better]).sum())]
        if self.iteration % 100 == 50 and len(better) > 1:
            order = better[np.argsort(lengths[better])][:PROBED_ANTS]
            started = time.perf_counter()
            tours = np.stack([self.colony.tour(int(k)) for k in order]).astype(np.int64)
            _, gain = merge_tours(tours, self.problem.edge_distance().between)
            row += [gain, time.perf_counter() - started]
        self.rows.append(row)
        return lengths


def main(folder: str, name: str, seconds: float) -> None:
    path = Path(folder) / f"{name}.tsp"
    FocusedACO(TSP.from_file(path), backend="cuda", seed=0).run(iterations=1)           # kernels built
    problem = TSP.from_file(path)
    search = CountingACO(problem, backend="cuda", seed=0)
    search.rows = []
    result = search.run(seconds=seconds, target=problem.best_known)
    print(name, "iterations", result.iterations, "gap %", round(100 * problem.gap(result.fitness), 3),
          "ants", search.ants, "device", search.device)
    counts = np.array([row[:4] for row in search.rows])
    for low, high in ((0, 100), (100, 500), (500, 1000), (1000, 2000), (2000, 10**9)):
        part = counts[(counts[:, 0] >= low) & (counts[:, 0] < high)]
        if len(part):
            print(f"  iterations {low}-{high}: ants shorter than the source, mean {part[:, 1].mean():.1f}; "
                  f"the best ant's gain, mean {part[:, 2].clip(0).mean():.1f}; their gains' sum, mean {part[:, 3].mean():.1f}")
    for row in search.rows:
        if len(row) > 4:
            print(f"  iteration {row[0]}: {row[1]} shorter, the best gains {row[2]:.0f}, the merge "
                  f"{row[4]:.0f} more (of {row[3]:.0f}), in {1000 * row[5]:.0f} ms")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
