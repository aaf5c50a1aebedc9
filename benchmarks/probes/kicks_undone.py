"""How many of the ILS chains' kicks a don't-look descent undoes, with and without Or-3opt.

A kick of the chains (lsmgpu/backends/dontlook_chains.py) swaps two adjacent stretches of the
tour: exactly an Or-3opt move, whose inverse the descent finds again where the three edges it
removed are among the candidates. From a 2-opt + Or-opt local optimum of n uniform cities, each
of ``kicks`` walk kicks is followed by the descent from its six endpoints; the probe counts the
descents that end at the length before the kick (the kick undone) and keeps the better tour
(the chains' acceptance). A count, the same on every machine.

    python -m benchmarks.probes.kicks_undone 1000 100
"""
from __future__ import annotations

import sys

import numpy as np

from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules
from lsmgpu.backends.tour_steps import apply_steps
from lsmgpu.backends.dontlook_chains import KickRules, plan_kick
from problems.candidates import quadrant_candidates
from problems.tsp import TSP


def descend(whole: CpuDontLook, x: np.ndarray, cities) -> np.ndarray:
    """Tour x after the NumPy reference's don't-look descent from ``cities``."""
    whole.load(x[None, :], np.asarray(cities))
    whole.descend(np.ones(1, dtype=bool))
    return whole.solutions()[0].astype(np.int64)


def positions(x: np.ndarray) -> np.ndarray:
    pos = np.empty_like(x)
    pos[x] = np.arange(len(x))
    return pos


def undone(n: int, kicks: int, or3: bool, lk: bool = False) -> tuple[int, float]:
    """(kicks undone, final length) over ``kicks`` kicks of a descended random tour."""
    problem = TSP(np.round(np.random.default_rng(n).uniform(0, 100_000, (n, 2))), name=f"uniform{n}")
    candidates, distance = quadrant_candidates(problem.coords, 8), problem.edge_distance()
    whole = CpuDontLook(DontLookRules(candidates, 3, or3=or3, lk=lk), distance, 1)
    start = np.random.default_rng(0).permutation(n).astype(np.int64)
    x = descend(whole, start, start)
    count, rule = 0, KickRules(1, 30, kicks, 50)
    for kick in range(kicks):
        length, kicked = problem.evaluate(x), x.copy()
        _, steps, touched = plan_kick(kicked, positions(kicked), rule, kick, 0, distance.between, candidates)
        apply_steps(kicked, positions(kicked), steps)
        kicked = descend(whole, kicked, touched)
        after = problem.evaluate(kicked)
        count += after == length
        if after <= length:
            x = kicked
    return count, float(problem.evaluate(x))


def main(argv) -> None:
    n, kicks = (int(a) for a in argv[:2])
    for or3, lk in ((False, False), (False, True), (True, False), (True, True)):
        count, length = undone(n, kicks, or3, lk)
        print(f"n={n} kicks={kicks} or3={or3} lk={lk}: undone {count} of {kicks}, length after {length:.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
