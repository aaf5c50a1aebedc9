"""Can a region of a tour, solved again as a small instance of its own, leave a trap that no move of
the whole tour's search leaves? LKH-3's subproblems (SUBPROBLEM_SIZE), tried on the GPU.

A region's cities, in the tour's order, make the subproblem: where two of them follow each other
in the tour they are joined by that edge; where the tour leaves the region between them, the path
outside becomes a fixed edge (a bridge) between them. The subproblem is an explicit-matrix TSP in
which every bridge costs 0 and every other edge its length plus ``FIXED``, larger than any gain a
move or a chain's prefix can make, so that a descent never gives a bridge up (the LK gain criterion
stops at a negative partial gain); its tour, the bridges put back as the paths they stand for,
is a tour of the whole instance that differs from the old one inside the region only.

``trap``: the region is the bounding box of the largest place where the run's tour differs from the
file's shortest tour of the instance (an oracle: where the trap lies); ``gridCxR`` (``grid3x2``):
the instance's bounding box cut into C x R boxes, each solved in turn, the tour kept where shorter.
The subproblem's search: FocusedACO with the command's 5-opt chains over each city's bridge and 9
nearest, for SECONDS a region, each of the seeds; START "greedy": from the subproblem's greedy tour (the
bridges first), "tour": from the tour's own order there (restarted colonies from the greedy tour).

    python -m benchmarks.probes.region_subproblem FILE.npz .data/tsplib rl5915 4 trap 10 0,1,2 [START [cpu]]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.probes.tour_difference import differences
from lsmgpu.problems import TSP
from lsmgpu.search import FocusedACO

#: what a subproblem's edge that is no bridge costs above its length
FIXED = 100_000
#: the subproblem's candidates: each city's bridge partners, then its nearest, this many in all
CANDIDATES = 10


def subproblem(tour: np.ndarray, region: np.ndarray, tsp: TSP):
    """The region's cities in the tour's order (``cities``), the explicit TSP over them with its
    bridges (the edges after positions ``bridge``) fixed, its candidate table, and a function that
    makes a subproblem tour (positions into ``cities``) a tour of the whole instance."""
    n = tsp.n
    inside = np.zeros(n, dtype=bool)
    inside[region] = True
    position = np.empty(n, dtype=np.int64)
    position[tour] = np.arange(n)
    cities = tour[inside[tour]]
    m = len(cities)
    after = np.roll(np.arange(m), -1)
    bridge = (position[cities[after]] - position[cities]) % n != 1
    length = tsp.dist(cities[:, None], cities[None, :]).astype(np.int64)
    matrix = length + FIXED
    np.fill_diagonal(matrix, 0)
    ends = np.flatnonzero(bridge)
    matrix[ends, after[ends]] = matrix[after[ends], ends] = 0
    order = np.argsort(matrix + np.eye(m, dtype=np.int64) * (1 << 40), axis=1, kind="stable")
    paths = {}
    for i in ends:
        start, stop = position[cities[i]], position[cities[after[i]]]
        paths[i, after[i]] = tour[np.arange(start + 1, start + (stop - start) % n) % n]

    def whole(sub_tour: np.ndarray) -> np.ndarray:
        out = []
        for a, b in zip(sub_tour, np.roll(sub_tour, -1)):
            out.append(cities[a])
            if (a, b) in paths:
                out.extend(paths[a, b].tolist())
            elif (b, a) in paths:
                out.extend(paths[b, a][::-1].tolist())
        out = np.asarray(out, dtype=np.int64)
        if len(out) != n or len(np.unique(out)) != n:
            raise RuntimeError("region_subproblem: the subproblem's tour gave a bridge up")
        return out

    sub = TSP(matrix=matrix, name=f"{tsp.name}-region{m}")
    return cities, int(bridge.sum()), sub, order[:, :CANDIDATES].astype(np.int32), whole


def regions(mode: str, tsp: TSP, tour: np.ndarray, best: np.ndarray) -> list[np.ndarray]:
    """The regions to solve in turn (see the module docstring)."""
    xy = tsp.coords
    if mode == "trap":
        place = max(differences(tour, best, tsp.dist), key=lambda row: row["cities"])
        cities = np.unique(np.concatenate([place["removed"].ravel(), place["added"].ravel()]))
        low, high = xy[cities].min(axis=0), xy[cities].max(axis=0)
        return [np.flatnonzero(np.all((xy >= low) & (xy <= high), axis=1))]
    columns, rows = (int(t) for t in mode[len("grid"):].split("x"))
    low, high = xy.min(axis=0), xy.max(axis=0) + 1e-9
    cell = np.floor((xy - low) / (high - low) * (columns, rows)).astype(np.int64)
    label = cell[:, 0] * rows + cell[:, 1]
    return [np.flatnonzero(label == k) for k in range(columns * rows) if np.any(label == k)]


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
            cities, bridges, sub, table, whole = subproblem(current, region, tsp)
            began = time.perf_counter()
            result = FocusedACO(sub, candidates=table, lk_depth=100, lk_move=5, chain_alone=True, restart_after=30,
                                backend=backend, seed=sub_seed,
                                initial=np.arange(len(cities)) if start == "tour" else None).run(seconds=seconds)
            found = whole(result.solution)
            kept = tsp.evaluate(found) < tsp.evaluate(current)
            current = found if kept else current
            print(dict(sub_seed=sub_seed, region=len(cities), bridges=bridges, iterations=result.iterations,
                       seconds=round(time.perf_counter() - began, 2), found_gap_pct=gap(found), kept=bool(kept),
                       gap_pct=gap(current)), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
