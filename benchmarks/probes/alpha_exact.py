"""Whether the α-lists' sparse graph is what keeps an instance's α-5 coverage below 99.5 %.

For each instance: the optimal tour's edges inside each city's k α-nearest, with α as
lsmgpu computes it (the ascent and α over the sparse graph, problems/alpha.py) and with α over
every pair of cities after an ascent over every pair (LKH's α; O(n^2) edges, so instances of a
few thousand cities at most), at the ascent's default period and at n/2 (LKH's default).
The reference tour is LKH-3's (elkai) with the instance's optimum checked. Coverage is a count,
the same on every machine.

    python -m benchmarks.probes.alpha_exact .data/tsplib pr1002 [k]
"""
from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks.depth import lkh_run
from problems import alpha
from problems.tsp import TSP


def nearest_by_alpha(n: int, u, v, length, pi, k: int) -> np.ndarray:
    """(n, k): each city's k neighbours of least α over the graph (u, v) at penalties ``pi`` (ties:
    the shorter edge), as alpha.alpha_candidates orders them."""
    weight = length + pi[u] + pi[v]
    values = alpha.alpha_values(n, u, v, weight, alpha.Graph(n, u, v).one_tree(weight))
    return alpha.first_per_city(n, u, v, values, length, k)


def coverage(tour: np.ndarray, lists: np.ndarray) -> float:
    """% of the tour's edges with one end in the other's list."""
    listed = {frozenset((c, int(o))) for c, row in enumerate(lists) for o in row}
    edges = {frozenset(e) for e in zip(tour.tolist(), np.roll(tour, -1).tolist())}
    return 100 * len(edges & listed) / len(tour)


def main(data: str, names: str, k: int = 5) -> None:
    print("instance | n | tour gap % | sparse α-k % | all-pairs α-k % (period 100) | (period n/2) | all-pairs α-(k+1) % | ascent s (n/2)")
    for name in names.split(","):
        path = f"{data}/{name}.tsp"
        tsp = TSP.from_file(path)
        n, tour = tsp.n, lkh_run(path, "", 20)[0][:tsp.n]           # LKH-3's defaults, 20 s
        sparse, _ = alpha.alpha_candidates(tsp, k)
        u, v = np.triu_indices(n, 1)
        length = tsp.dist(u, v).astype(np.float64)
        short = alpha.ascent(tsp, graph=(u, v))
        t0 = time.perf_counter()
        long = alpha.ascent(tsp, period=n // 2, graph=(u, v))
        seconds = time.perf_counter() - t0
        print(f"{name} | {n} | {100 * tsp.gap(tsp.evaluate(tour)):.3f} | {coverage(tour, sparse):.2f} | "
              f"{coverage(tour, nearest_by_alpha(n, u, v, length, short.pi, k)):.2f} | "
              f"{coverage(tour, nearest_by_alpha(n, u, v, length, long.pi, k)):.2f} | "
              f"{coverage(tour, nearest_by_alpha(n, u, v, length, long.pi, k + 1)):.2f} | {seconds:.1f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:4]))
