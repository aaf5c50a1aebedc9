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
from collections import deque

import numpy as np

from lsmgpu.backends.dontlook import DontLookRules, apply_steps, improve_city
from lsmgpu.backends.dontlook_chains import KickRules, plan_kick
from problems.candidates import quadrant_candidates
from problems.tsp import TSP


def descend(x, pos, rules, between, cities) -> None:
    """A don't-look descent of tour x (positions pos) from ``cities``, in place."""
    queue, queued = deque(cities), np.zeros(len(x), dtype=bool)
    queued[list(cities)] = True
    while queue:
        city = queue.popleft()
        queued[city] = False
        improve_city(city, x, pos, rules, between, queue, queued)


def undone(n: int, kicks: int, or3: bool, lk: bool = False) -> tuple[int, float]:
    """(kicks undone, final length) over ``kicks`` kicks of a descended random tour."""
    problem = TSP(np.round(np.random.default_rng(n).uniform(0, 100_000, (n, 2))), name=f"uniform{n}")
    candidates, between = quadrant_candidates(problem.coords, 8), problem.edge_distance().between
    rules = DontLookRules(candidates, 3, or3=or3, lk=lk)
    x = np.random.default_rng(0).permutation(n).astype(np.int64)
    pos = np.empty_like(x)
    pos[x] = np.arange(n)
    descend(x, pos, rules, between, x.tolist())
    count, rule = 0, KickRules(1, 30, kicks, 50)
    for kick in range(kicks):
        before, length = x.copy(), problem.evaluate(x)
        _, steps, touched = plan_kick(x, pos, rule, kick, 0, between, candidates)
        apply_steps(x, pos, steps)
        descend(x, pos, rules, between, touched)
        after = problem.evaluate(x)
        count += after == length
        if after > length:
            x[:] = before
            pos[x] = np.arange(n)
    return count, float(problem.evaluate(x))


def main(argv) -> None:
    n, kicks = (int(a) for a in argv[:2])
    for or3, lk in ((False, False), (False, True), (True, False), (True, True)):
        count, length = undone(n, kicks, or3, lk)
        print(f"n={n} kicks={kicks} or3={or3} lk={lk}: undone {count} of {kicks}, length after {length:.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
