"""Whether the Held-Karp ascent's spanning trees on the GPU come out the same call after call.

problems/alpha.py's ascent asks lsmgpu/backends/cuda/spanning.py for a tree an iteration; the
α-lists, and so every search over them, follow. The probe records the weights of an instance's
ascent, then makes the GPU's tree (with its degrees and cheapest outside edges) three times
under every fourth of them, before and after a FocusedACO run in the same process (whose GPU
memory the next trees reuse), and counts the weights whose three answers differ, the trees
heavier than scipy's Kruskal (none may be) and the trees of equal weight that differ from scipy's
(ties: not an error). The measurement behind Borůvka's `root` (templates/skeleton/boruvka.cu.j2):
before it, 1 and 14 of 63 weights on rl11849 gave differing answers, and a seed's runs differed.

    python -m benchmarks.probes.tree_repeat .data/tsplib rl11849
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lsmgpu.cli_population import FIVE_OPT_DEPTH
from lsmgpu.search import FocusedACO
from problems import alpha
from problems.tsp import TSP

#: GPU trees made under each probed weight
REPEATS = 3


def ascent_weights(problem) -> tuple[list, np.ndarray, np.ndarray]:
    """The weights each tree of ``problem``'s ascent was asked for, and the graph's edges (u, v)."""
    weights, own = [], alpha.Graph.tree_ends

    def kept(graph, weight):
        weights.append(np.array(weight))
        return own(graph, weight)
    alpha.Graph.tree_ends = kept
    try:
        run = alpha.ascent(problem)
    finally:
        alpha.Graph.tree_ends = own
    return weights, run.u, run.v


def check(n: int, u, v, weights, when: str) -> dict:
    """One row: the probed weights' GPU trees against each other and against scipy's."""
    gpu, host = alpha.Graph(n, u, v, on_gpu=True), alpha.Graph(n, u, v)
    unrepeated = heavier = other_tree = 0
    try:
        for weight in weights:
            made = [gpu.tree_ends(weight) for _ in range(REPEATS)]
            reference = host.tree_ends(weight)
            unrepeated += any(not all(np.array_equal(a, b) for a, b in zip(m, made[0])) for m in made[1:])
            heavier += weight[made[0][0]].sum() > weight[reference[0]].sum() * (1 + 1e-12)
            other_tree += not np.array_equal(made[0][0], reference[0])
    finally:
        gpu.close()
    return {"when": when, "weights": len(weights), "unrepeated": int(unrepeated), "heavier_than_scipy": int(heavier),
            "other_tree_of_equal_weight": int(other_tree)}


def main(folder: str, name: str) -> None:
    path = Path(folder) / f"{name}.tsp"
    problem = TSP.from_file(path)
    weights, u, v = ascent_weights(problem)
    print({"instance": name, **check(problem.n, u, v, weights[::4], "fresh")}, flush=True)
    FocusedACO(TSP.from_file(path), candidates="alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5, chain_alone=True,
               restart_after=None, backend="cuda", seed=0).run(iterations=2)
    print({"instance": name, **check(problem.n, u, v, weights[::4], "after a run")}, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
