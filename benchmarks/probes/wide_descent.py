"""How wide a lone tour's descent checks (WIDE of lsmgpu/backends/dontlook.py): its seconds and
the local optimum's gap for each width, from several start tours.

    python -m benchmarks.probes.wide_descent .data/tsplib d18512,pla85900 1,64,512,2048 5 [lk9|five]

For each instance and start s (0: the greedy tour; s > 0: the greedy tour of the coordinates moved
by up to half a unit, seeded by s: another start of the same quality), one descent of the start
for each width W (WIDE = W; 1: one city after another) with DESCENTS[descent]: "lk9" 2-opt, Or-opt,
Or-3opt, LK3 and the LK chain of 9 over the 10 quadrant candidates, "five" the 5-opt chains alone
(FIVE_OPT_DEPTH levels over the 5 α-nearest, the command's) (lsmgpu.parallel.improve: again from
every city until a descent makes no move; after a warm-up),
its wall seconds, moves and gap; then each width's mean gap and median seconds over the starts.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks.__main__ import commit
from benchmarks.depth import checked_wide
from lsmgpu.backends import cuda_available
from lsmgpu.cli_population import FIVE_OPT_DEPTH
from lsmgpu.parallel import improve
from lsmgpu.problems import TSP
from lsmgpu.problems.candidates import greedy_tour
from lsmgpu.search import DontLookDescent


DESCENTS = {"lk9": DontLookDescent(None, or3=True, lk=True, lk_depth=9),
            "five": DontLookDescent("alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5, chain_alone=True)}


def start_tour(problem: TSP, s: int) -> np.ndarray:
    """Start s: the greedy tour (s = 0) or that of the coordinates moved by up to 0.5, seeded by s."""
    moved = 0 if s == 0 else np.random.default_rng(s).uniform(-0.5, 0.5, problem.coords.shape)
    return greedy_tour(problem.coords + moved)


def main(data: str, names: str, widths: str, starts: int, descent: str = "lk9") -> None:
    print(f"# device: {cuda_available()[1]} · commit: {commit()}", flush=True)
    widths = [int(w) for w in widths.split(",")]
    descent = DESCENTS[descent]
    for name in names.split(","):
        problem = TSP.from_file(f"{data}/{name}.tsp")
        results = {w: [] for w in widths}
        print(f"{name} | start | width | seconds | moves | gap %")
        for s in range(starts):
            start = start_tour(problem, s)
            for w in widths:
                with checked_wide(w):
                    improve(problem, start[None], descent, backend="cuda")
                    t0 = time.perf_counter()
                    done = improve(problem, start[None], descent, backend="cuda")
                    seconds = time.perf_counter() - t0
                gap = 100 * problem.gap(done.fitness[0])
                results[w].append((seconds, gap))
                print(f"{name} | {s} | {w} | {seconds:.3f} | {done.moves[0]} | {gap:.3f}", flush=True)
        for w, rows in results.items():
            seconds, gaps = np.array(rows).T
            print(f"{name} | width {w}: mean gap {gaps.mean():.3f} % (min {gaps.min():.3f}, max {gaps.max():.3f}), "
                  f"median {np.median(seconds):.3f} s over {len(rows)} starts")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), *sys.argv[5:6])
