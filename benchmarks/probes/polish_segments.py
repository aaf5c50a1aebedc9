"""Does a converged FocusedACO tour gain more from TourSegments' kicks than from the colony's last seconds?

FocusedACO runs ``seconds`` on a GPU; its best tour at ``seconds - polish`` is kept. TourSegments
(segment-local kicks and LK-chain descents on every segment of the one tour at once) then runs
``polish`` seconds from that tour, with its default segment length and with shorter segments
(more of them, so more blocks on the GPU). The rows: the colony's gap at ``seconds - polish`` and at
``seconds``, each polish's gap after ``polish`` seconds, its rounds and kicks.

    python -m benchmarks.probes.polish_segments .data/tsplib rl11849,d18512 60 15 128,64
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from lsmgpu.search import FocusedACO, TourSegments
from problems.tsp import TSP


class SnapshotACO(FocusedACO):
    """FocusedACO that keeps its best tour and length the first time an iteration ends ``at``
    seconds or later into the run."""

    at: float
    snapshot = None

    def _iterate(self) -> None:
        super()._iterate()
        if self.snapshot is None and time.perf_counter() - self.t0 >= self.at:
            self.snapshot = (self.best_x.copy(), self.best)


def main(folder: str, names: str, seconds: float, polish: float, segment_cities: str) -> None:
    commit = os.environ.get("LSMGPU_COMMIT", "")
    for name in names.split(","):
        path = Path(folder) / f"{name}.tsp"
        problem = TSP.from_file(path)
        FocusedACO(problem, backend="cuda", seed=0).run(iterations=1)           # kernels built
        TourSegments(problem, backend="cuda", seed=0).run(iterations=1)
        problem = TSP.from_file(path)
        colony = SnapshotACO(problem, backend="cuda", seed=0)
        colony.at = seconds - polish
        result = colony.run(seconds=seconds, target=problem.best_known)
        tour, length = colony.snapshot
        print(f"| {name} | colony at {seconds - polish:g} s | {100 * problem.gap(length):.3f} | | "
              f"{result.device} | {commit} |")
        print(f"| {name} | colony at {seconds:g} s | {100 * problem.gap(result.fitness):.3f} | "
              f"{result.iterations} iterations | {result.device} | {commit} |")
        for cities in [None] + [int(c) for c in segment_cities.split(",") if c]:
            search = TourSegments(problem, backend="cuda", seed=0, initial=tour, segment_cities=cities)
            polished = search.run(seconds=polish, target=problem.best_known)
            print(f"| {name} | + TourSegments {polish:g} s, {search.m} cities a segment | "
                  f"{100 * problem.gap(polished.fitness):.3f} | {polished.iterations} rounds, "
                  f"{search.kicks} kicks | {polished.device} | {commit} |", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else "")
