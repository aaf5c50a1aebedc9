"""The Held-Karp ascent's spanning trees on the GPU against scipy's Kruskal (the constant
GPU_TREES_FROM of problems/alpha.py, and the depth issue's "the ascent's bound within 1 % in at
most 2 s at 20,000 cities").

    python -m benchmarks.probes.ascent_trees .data/tsplib pr1002,pcb3038,fnl4461,rl5915,d18512,pla85900
    python -m benchmarks.probes.ascent_trees .data/tsplib d18512,pla85900 bound

For each instance: the ascent's sparse graph (its seconds), then the ascent with its trees on the
GPU and on the host (after a short ascent that builds the kernels): its seconds and iterations,
its bound's gap below the optimum, the α-lists' pool; one spanning tree under the ascent's last
penalties (median of 20 after one) and one 1-tree (mean of 10), each way. The trees' lengths
printed side by side are equal where no ties part them.

With ``bound``: ``TSP.lower_bound()``'s seconds (its ascent over the denser graph, then the exact
1-tree over every pair, Prim's steps on the GPU) and the exact tree's seconds on the GPU and on
the host (the host up to 20,000 cities), at the same penalties, their bounds side by side.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from benchmarks.__main__ import commit
from lsmgpu.backends import cuda_available
from lsmgpu.problems import TSP, alpha, held_karp


def measure(tsp: TSP, graph, where: str) -> str:
    """One row: the ascent and its trees on ``where`` ("gpu" or "host")."""
    given, alpha.GPU_TREES_FROM = alpha.GPU_TREES_FROM, 0 if where == "gpu" else 2**62
    if where == "gpu":
        alpha.ascent(tsp, graph=graph, period=2)                # the kernels built
    run = alpha.ascent(tsp, graph=graph)
    t0 = time.perf_counter()
    alpha.pool_alpha(tsp, run)
    pool_s = time.perf_counter() - t0
    sparse = alpha.Graph(tsp.n, *graph, on_gpu=where == "gpu")
    weight = run.length + run.pi[graph[0]] + run.pi[graph[1]]
    times, tree = [], None
    for _ in range(21):
        t0 = time.perf_counter()
        tree = sparse.spanning_tree(weight)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(10):
        sparse.one_tree(weight)
    one_tree_ms = 100 * (time.perf_counter() - t0)
    on_gpu = sparse.gpu is not None
    sparse.close()
    alpha.GPU_TREES_FROM = given
    return (f"trees_on_gpu={on_gpu} ascent_s={run.seconds:.3f} iterations={run.iterations} bound={run.bound:.1f} pool_s={pool_s:.3f} "
            f"tree_ms={1e3 * np.median(times[1:]):.3f} one_tree_ms={one_tree_ms:.2f} tree_length={weight[tree].sum():.1f}")


def bound_row(tsp: TSP) -> str:
    """One row: TSP.lower_bound()'s seconds, and its exact tree's on the GPU and on the host."""
    tsp.lower_bound()                                            # the kernels built
    t0 = time.perf_counter()
    value = tsp.lower_bound()
    row = f"{tsp.name} n={tsp.n} lower_bound_s={time.perf_counter() - t0:.3f} lower_bound={value} " \
          f"gap_pct={100 * (tsp.best_known - value) / tsp.best_known:.3f}"
    run = alpha.ascent(tsp, graph=alpha.sparse_graph(tsp, alpha.GRAPH_NEIGHBOURS))
    given = held_karp.GPU_TREES_FROM
    for where, start in (("gpu", 0), ("host", 2**62)):
        if where == "host" and tsp.n > 20_000:
            continue
        held_karp.GPU_TREES_FROM = start
        t0 = time.perf_counter()
        exact = held_karp.exact_bound(tsp, run.pi, run.special)
        row += f" exact_{where}_s={time.perf_counter() - t0:.3f} exact_{where}={exact:.4f}"
    held_karp.GPU_TREES_FROM = given
    return row


def main(folder: str, names: str, what: str = "ascent") -> None:
    print(f"# device: {cuda_available()[1]} · commit: {commit()}", flush=True)
    for name in names.split(","):
        tsp = TSP.from_file(os.path.join(folder, f"{name}.tsp"))
        if what == "bound":
            print(bound_row(tsp), flush=True)
            continue
        t0 = time.perf_counter()
        graph = alpha.sparse_graph(tsp, alpha.ASCENT_NEIGHBOURS)
        graph_s = time.perf_counter() - t0
        for where in ("gpu", "host"):
            row = measure(tsp, graph, where)
            bound = float(row.split("bound=")[1].split()[0])
            print(f"{name} n={tsp.n} edges={len(graph[0])} {where} graph_s={graph_s:.3f} {row} "
                  f"bound_gap_pct={100 * (tsp.best_known - bound) / tsp.best_known:.3f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
