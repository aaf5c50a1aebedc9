"""Which part of LKH-3 its lead over lsmgpu's converged tours needs: its 5-opt move, its trials, or both.

For each lsmgpu tour kept by ``python -m benchmarks depth ... --depth-tours FILE.npz``, LKH-3
(elkai, POPMUSIC candidates, INITIAL_PERIOD = 100) runs from the tour (``INITIAL_TOUR_FILE``) on
one core:
- one trial (one Lin-Kernighan descent of LKH's sequential 5-opt moves; no gain: the tour is
  5-opt optimal over LKH's candidates);
- ``trials`` trials, LKH's own way: each trial's start a random walk that keeps the best tour's
  edges of α 0, its descent, then the result merged into the best (LKH's MergeWithTour);
- the same trials with 3-opt moves (``MOVE_TYPE = 3``, the depth of lsmgpu's LK chains' steps);
- the same trials started from the best tour kicked by a random double bridge (``KICK_TYPE = 4``,
  the kicks of lsmgpu's ILS chains and segments);
and ``trials`` trials from LKH's own start beside. Counts of trials, not seconds, so the answer is
the same on every machine; the wall seconds are printed beside.

    python -m benchmarks.probes.lkh_from_tour FILE.npz .data/tsplib [trials]
"""
from __future__ import annotations

import multiprocessing
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.depth import lkh_run
from problems.tsp import TSP

#: LKH-3's configuration beside lsmgpu's rows (benchmarks/depth.py's "popmusic")
POPMUSIC = "CANDIDATE_SET_TYPE = POPMUSIC\nINITIAL_PERIOD = 100\n"
#: a time limit far beyond the trials' (the trials end each run)
NO_LIMIT = 3600


#: the ways LKH-3's trials run from lsmgpu's tour: (name, LKH parameter lines)
TRIALS = (("its trials", ""), ("3-opt moves", "MOVE_TYPE = 3\n"), ("double-bridge kicks", "KICK_TYPE = 4\n"))


def lkh_trials(path: str, trials: int, start: np.ndarray | None, extra: str = "",
               candidates: str = POPMUSIC) -> tuple[np.ndarray, float]:
    """LKH-3's tour after ``trials`` trials, from ``start`` (0-based) or from its own start, with the
    parameter lines ``extra`` and ``candidates`` (POPMUSIC's; "" for LKH's α-nearest): (tour, s).
    Each run has a process of its own: elkai's LKH keeps INITIAL_TOUR_FILE from one call to the next."""
    extra = f"{candidates}MAX_TRIALS = {trials}\n{extra}"
    with tempfile.NamedTemporaryFile("w", suffix=".tour") as tour_file:
        if start is not None:
            tour_file.write(f"TYPE : TOUR\nDIMENSION : {len(start)}\nTOUR_SECTION\n"
                            + "\n".join(str(city + 1) for city in start) + "\n-1\nEOF\n")
            tour_file.flush()
            extra += f"INITIAL_TOUR_FILE = {tour_file.name}\n"
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(lkh_run, path, extra, NO_LIMIT).result()


def main(tours_file: str, data: str, trials: int = 100) -> None:
    tours = np.load(tours_file)
    print("instance | lsmgpu's tour | gap % | LKH-3, 1 trial from it | "
          + " | ".join(f"{trials} trials from it, {name} (s)" for name, _ in TRIALS)
          + f" | {trials} trials from LKH's own start (s)")
    for key in tours.keys():
        instance, strategy, seed, budget = key.split("|")
        if strategy.startswith("LKH-3"):
            continue
        path = str(Path(data) / f"{instance}.tsp")
        problem = TSP.from_file(path)
        start = tours[key].astype(np.int64)

        def gap(tour):
            return f"{100 * problem.gap(problem.evaluate(tour)):.3f}"
        one, _ = lkh_trials(path, 1, start)
        runs = [lkh_trials(path, trials, start, extra) for _, extra in TRIALS] + [lkh_trials(path, trials, None)]
        print(f"{instance} | {strategy}, seed {seed}, {budget} s | {gap(start)} | {gap(one)} | "
              + " | ".join(f"{gap(tour)} ({seconds:.1f})" for tour, seconds in runs), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:]))
