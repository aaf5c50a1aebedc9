"""Can a region of a tour, solved again as a small instance of its own, leave a trap that no move of
the whole tour's search leaves? LKH-3's subproblems (SUBPROBLEM_SIZE) on the GPU: TSP.region_subproblem
(problems/regions.py), the tour outside the region fixed, searched from the region's own start.

``trap``: the region is the bounding box of the largest place where the run's tour differs from the
file's shortest tour of the instance (an oracle: where the trap lies); ``cities=N``: TSP.regions(N),
the boxes of a grid of about N cities each (rl5915, N 1000: 3 x 2 boxes), each solved in turn, the
tour kept where shorter. The subproblem's search: FocusedACO with the command's 5-opt chains over
the subproblem's candidates, for SECONDS a region, each of the seeds; START "greedy": from the
subproblem's greedy tour (the bridges first), "tour": from the tour's own order there (restarted
colonies from the greedy tour).

    python -m benchmarks.probes.region_subproblem FILE.npz .data/tsplib rl5915 4 trap 10 0,1,2 [START [cpu]]
    python -m benchmarks.probes.region_subproblem FILE.npz .data/tsplib rl5915 4 cities=1000 5 0
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.probes.tour_difference import differences
from lsmgpu.problems import TSP
from lsmgpu.search import FocusedACO


def regions(mode: str, tsp: TSP, tour: np.ndarray, best: np.ndarray) -> list[np.ndarray]:
    """The regions to solve in turn (see the module docstring)."""
    if mode != "trap":
        return tsp.regions(int(mode[len("cities="):]))
    xy = tsp.coords
    place = max(differences(tour, best, tsp.dist), key=lambda row: row["cities"])
    cities = np.unique(np.concatenate([place["removed"].ravel(), place["added"].ravel()]))
    low, high = xy[cities].min(axis=0), xy[cities].max(axis=0)
    return [np.flatnonzero(np.all((xy >= low) & (xy <= high), axis=1))]


def main(path, data, instance, seed, mode, seconds, seeds, start="greedy", backend="cuda") -> None:
    seed, seconds = int(seed), float(seconds)
    tsp = TSP.from_file(Path(data) / f"{instance}.tsp")
    saved = np.load(path)
    keys = [key for key in saved.files if key.startswith(f"{instance}|")]
    tour = next(saved[key] for key in keys if key.split("|")[2] == str(seed)).astype(np.int64)
    best = min((saved[key] for key in keys), key=tsp.evaluate).astype(np.int64)
    gap = lambda t: round(100 * tsp.gap(tsp.evaluate(t)), 4)
    print(dict(probe="region_subproblem", instance=instance, seed=seed, mode=mode, start_gap_pct=gap(tour),
               best_gap_pct=gap(best)), flush=True)
    for sub_seed in (int(s) for s in seeds.split(",")):
        current = tour
        for region in regions(mode, tsp, tour, best):
            sub = tsp.region_subproblem(current, region)
            began = time.perf_counter()
            result = FocusedACO(sub.problem, candidates=sub.candidates, lk_depth=100, lk_move=5, chain_alone=True,
                                restart_after=30, backend=backend, seed=sub_seed,
                                initial=np.arange(len(sub.cities)) if start == "tour" else None).run(seconds=seconds)
            found = sub.whole(result.solution)
            kept = tsp.evaluate(found) < tsp.evaluate(current)
            current = found if kept else current
            print(dict(sub_seed=sub_seed, region=len(sub.cities), bridges=sub.bridges, iterations=result.iterations,
                       seconds=round(time.perf_counter() - began, 2), found_gap_pct=gap(found), kept=bool(kept),
                       gap_pct=gap(current)), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
