"""Partition crossover of real tour pairs, with and without fusing the places that make no tour
alone (lsmgpu/search/partition.py, ``_Pair.fuse``).

For each ordered pair of different tours of one instance in ``--depth-tours`` files
(``python -m benchmarks depth ... --depth-tours FILE.npz``: lsmgpu's runs and LKH-3's), the child
of A and B (A's tour with B's better places) and its gap above the optimum, GPX as it was (each
place alone) and with fusion; the last row per file counts the pairs whose child beat both parents
and sums the fused crossovers' seconds.
rl5915's tours at 0.08 % hold one place of about seventy edges that makes no tour alone
(tsp-depth.md, "rl5915's 0.08 % is one trap"): only fused does a crossover take it. It needs no GPU.

    python -m benchmarks.probes.crossover_pairs .data/tsplib FILE.npz [FILE.npz ...]
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from itertools import permutations
from pathlib import Path

import numpy as np

from lsmgpu.problems import TSP
from lsmgpu.search import partition


@contextmanager
def unfused():
    """Partition crossover without fusion, as it was before it: each place taken alone or not."""
    fuse = partition._Pair.fuse
    partition._Pair.fuse = lambda pair, gain, alone: np.arange(len(pair.a))
    try:
        yield
    finally:
        partition._Pair.fuse = fuse


def children(problem, tours: dict) -> list[dict]:
    """Every ordered pair of ``tours`` (name -> tour): A's and B's gaps and the child's without
    fusion and with it (in %), and the seconds of the crossover with fusion."""
    between = problem.edge_distance().between
    rows = []
    for a_name, b_name in permutations(tours, 2):
        a, b = tours[a_name], tours[b_name]
        with unfused():
            plain, _ = partition.partition_crossover(a, b, between)
        started = time.perf_counter()
        fused, _ = partition.partition_crossover(a, b, between)
        seconds = time.perf_counter() - started
        gap = lambda tour: 100 * problem.gap(problem.evaluate(tour))   # noqa: E731
        rows.append(dict(a=a_name, b=b_name, a_gap=gap(a), b_gap=gap(b), plain_gap=gap(plain), fused_gap=gap(fused),
                         seconds=seconds))
    return rows


def main(data: str, *files: str) -> None:
    print("instance | A | A gap % | B | B gap % | child gap %, each place alone | child gap %, fused | "
          "seconds, fused")
    for name in files:
        stored = np.load(name)
        by_instance: dict[str, dict] = {}
        for key in stored.keys():
            instance, strategy, seed, _ = key.split("|")
            by_instance.setdefault(instance, {})[f"{strategy}, seed {seed}"] = stored[key].astype(np.int64)
        better = {"alone": 0, "fused": 0}
        pairs, seconds = 0, 0.0
        for instance, tours in by_instance.items():
            problem = TSP.from_file(Path(data) / f"{instance}.tsp")
            for row in children(problem, tours):
                pairs, seconds = pairs + 1, seconds + row["seconds"]
                best = min(row["a_gap"], row["b_gap"])
                better["alone"] += row["plain_gap"] < best - 1e-9
                better["fused"] += row["fused_gap"] < best - 1e-9
                print(f"{instance} | {row['a']} | {row['a_gap']:.4f} | {row['b']} | {row['b_gap']:.4f} | "
                      f"{row['plain_gap']:.4f} | {row['fused_gap']:.4f} | {row['seconds']:.3f}", flush=True)
        print(f"{name}: {pairs} ordered pairs; a child shorter than both parents: {better['alone']} each place "
              f"alone, {better['fused']} fused; the fused crossovers {seconds:.3f} s in all")


if __name__ == "__main__":
    main(sys.argv[1], *sys.argv[2:])
