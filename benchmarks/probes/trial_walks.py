"""LKH's trial starts around a kept tour: how far its walks' jumps put them, and what one trial makes.

TSP.trial_tour walks from a random city along the best tour's edges of α 0, else the 5 α-nearest;
where a city has neither left, LKH jumps to a random city left, lsmgpu's walk_tour to the nearest
one (problems/candidates.py). For a tour kept by ``python -m benchmarks depth ... --depth-tours
FILE.npz`` (instance, strategy and seed as its key names them), each walk is descended by the CPU's
don't-look 2-opt + Or-opt descent over the 5 α-nearest and merged with the kept tour by partition
crossover, as one of LKH's trials is: the walk's gap, the descent's and the child's (in %), with
random jumps and with the nearest. It needs no GPU.

    python -m benchmarks.probes.trial_walks .data/tsplib docs/bench/issue43/rl5915-tours-b9845bc.npz rl5915 4 2
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lsmgpu.parallel import improve
from lsmgpu.problems import TSP
from lsmgpu.problems.alpha import alpha_zero_neighbours
from lsmgpu.problems.candidates import walk_tour
from lsmgpu.search import DontLookDescent
from lsmgpu.search.partition import partition_crossover


def kept_tour(path: str, instance: str, seed: str) -> tuple[str, np.ndarray]:
    """The first tour of ``instance`` and ``seed`` in a --depth-tours file, and its key."""
    stored = np.load(path)
    for key in stored.keys():
        name, _, kept_seed, _ = key.split("|")
        if name == instance and kept_seed == seed:
            return key, stored[key].astype(np.int64)
    raise ValueError(f"trial_walks: {path} holds no tour of {instance} with seed {seed}")


def main(data: str, path: str, instance: str, seed: str = "0", walks: str = "2") -> None:
    problem = TSP.from_file(Path(data) / f"{instance}.tsp")
    key, best = kept_tour(path, instance, seed)
    gap = lambda tour: 100 * problem.gap(problem.evaluate(tour))      # noqa: E731
    preferred = alpha_zero_neighbours(problem, problem._held_karp_ascent(), best)
    lists = problem.candidate_lists(5, "alpha")
    descent = DontLookDescent("alpha", lk_depth=0)
    print(f"{key}: {gap(best):.4f} %, {(preferred[:, 1] >= 0).mean():.3f} of its edges of α 0")
    print("jumps | walk | walk gap % | descended gap % | child gap %")
    for jumps, coords in (("random", None), ("nearest", problem.coords)):
        for walk in range(int(walks)):
            start = walk_tour(preferred, lists, np.random.default_rng(walk), coords)
            descended = improve(problem, start[None], descent, backend="cpu").solutions[0]
            child, _ = partition_crossover(best, descended, problem.edge_distance().between)
            print(f"{jumps} | {walk} | {gap(start):.1f} | {gap(descended):.3f} | {gap(child):.4f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
