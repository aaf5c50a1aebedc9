"""How deep the 5-opt chains go: one descent of the greedy tour by the chain alone (the NumPy
reference, lsmgpu/backends/kopt.py, over the 5 α-nearest and the ascent's penalties), chains of up
to ``depth`` levels, counting each chain's stages (4 levels each) and whether it improved. The
GPU kernel evaluates a stage's 10,000 sequences at once, so the stages a check runs are its cost,
and the improving chains' stages say how much of ``lk_depth`` they use. CPU, counts (no timing).

    python -m benchmarks.probes.kopt_stages .data/tsplib pr1002 400
"""
from __future__ import annotations

import sys

import numpy as np

from benchmarks.probes.kopt_descent import chain_alone
from lsmgpu.backends import kopt
from lsmgpu.backends.dontlook import DontLookRules
from lsmgpu.problems import TSP
from lsmgpu.search.dontlook import DontLookDescent
from problems.candidates import greedy_tour


def counted_chains(tsp: TSP, depth: int) -> tuple[float, list[tuple[int, bool]]]:
    """The greedy tour's descent by chains of up to ``depth`` levels: its gap (%) and each chain's
    (stages, improved)."""
    alpha = DontLookDescent("alpha", lk_depth=12, lk_move=5).bound(tsp)
    rules = DontLookRules(alpha.candidates, alpha.segment, lk_depth=depth, lk_move=5, penalties=alpha.penalties)
    chains, stage, chain = [], kopt._stage, kopt._chain
    stages = [0]

    def counting_stage(*args):
        stages[0] += 1
        return stage(*args)

    def counting_chain(*args):
        stages[0] = 0
        found = chain(*args)
        chains.append((stages[0], found is not None))
        return found
    kopt._stage, kopt._chain = counting_stage, counting_chain
    try:
        tour = chain_alone(tsp, rules, greedy_tour(tsp.coords))
    finally:
        kopt._stage, kopt._chain = stage, chain
    return 100 * tsp.gap(tsp.evaluate(tour)), chains


def main(data: str, name: str, depth: str) -> None:
    tsp = TSP.from_file(f"{data}/{name}.tsp")
    gap, chains = counted_chains(tsp, int(depth))
    stages = np.array([s for s, _ in chains])
    improved = np.array([i for _, i in chains])
    print(f"# {name}, chains of up to {depth} levels ({-(-int(depth) // kopt.STAGE_LEVELS)} stages), from the greedy tour")
    print(f"gap {gap:.3f} %, {len(chains):,} chains, {improved.sum():,} improving, {stages.sum():,} stages in all "
          f"({stages.mean():.2f} a chain)")
    for label, rows in (("improving", stages[improved]), ("failing", stages[~improved])):
        if len(rows):
            q = np.percentile(rows, [50, 90, 99, 100])
            print(f"{label} chains' stages: mean {rows.mean():.2f}, median {q[0]:.0f}, 90 % {q[1]:.0f}, "
                  f"99 % {q[2]:.0f}, most {q[3]:.0f}; share of all stages {rows.sum() / stages.sum():.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
