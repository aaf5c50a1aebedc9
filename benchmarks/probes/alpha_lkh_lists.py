"""How many of a reference tour's edges lsmgpu's 5 α-nearest hold, beside LKH-3's own 5 α-nearest
(its default ascent, read from the CANDIDATE_FILE it writes): whether the α-candidates' target
(99.5 %) is one LKH's own lists meet on the same tours. An edge counts where either end has the
other among its five, as in ``python -m benchmarks alpha``.

The reference tour is the LKH-3 POPMUSIC tour of a ``--depth-tours`` file where it holds one for
the instance, else LKH-3's tour after ``trials`` trials of the same run that writes its lists.
Counts, the same on every machine.

    python -m benchmarks.probes.alpha_lkh_lists .data/tsplib pr1002,pcb3038,fnl4461,rl11849 \
        docs/bench/issue43/tours60-kopt-58a104b.npz
    python -m benchmarks.probes.alpha_lkh_lists .data/tsplib rl5915 - 300
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.depth import coverage
from benchmarks.probes.lkh_from_tour import lkh_trials
from lsmgpu.problems import TSP


def lkh_lists(path: str, trials: int) -> tuple[np.ndarray, np.ndarray]:
    """LKH-3's 5 α-nearest of each city (0-based; -1 where it keeps fewer) and its tour after
    ``trials`` trials, from one run with its defaults."""
    with tempfile.TemporaryDirectory() as folder:
        written = Path(folder) / "lists.cand"
        tour, _ = lkh_trials(path, trials, None, f"CANDIDATE_FILE = {written}\n", candidates="")
        lines = written.read_text().split("\n")
    lists = np.full((int(lines[0]), 5), -1, dtype=np.int64)
    for line in lines[1:]:
        fields = line.split()
        if len(fields) < 3 or fields[0] == "-1":
            continue
        city, count = int(fields[0]) - 1, int(fields[2])
        ends = [int(fields[3 + 2 * k]) - 1 for k in range(count)][:5]
        lists[city, :len(ends)] = ends
    return lists, tour


def main(data: str, names: str, tours_file: str = "-", trials: int = 1) -> None:
    tours = np.load(tours_file) if tours_file != "-" else {}
    print("instance | reference tour gap % | lsmgpu's 5 α-nearest % | LKH-3's own 5 α-nearest %")
    for name in names.split(","):
        path = f"{data}/{name}.tsp"
        problem = TSP.from_file(path)
        theirs, lkh_tour = lkh_lists(path, trials)
        key = f"{name}|LKH-3 POPMUSIC|0|60"
        tour = tours[key] if key in tours else lkh_tour
        print(f"{name} | {100 * problem.gap(problem.evaluate(tour)):.3f} | "
              f"{100 * coverage(tour, problem.candidate_lists(5, 'alpha')):.2f} | {100 * coverage(tour, theirs):.2f}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *sys.argv[3:4], *(int(a) for a in sys.argv[4:5]))
