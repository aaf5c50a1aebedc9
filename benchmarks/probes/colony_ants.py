"""Probe: MMAS + the batched local search at the MMAS paper's time on pr1002 and pr2392, by ants
and evaporation rate, to choose MaxMinAntSystem's defaults with local search (one run each, seed 0).

    python -m benchmarks.probes.colony_ants .data/tsplib
"""
import sys

from lsmgpu import MaxMinAntSystem
from lsmgpu.problems import TSP

if __name__ == "__main__":
    folder = sys.argv[1]
    for name, seconds in (("pr1002", 4.0), ("pr2392", 10.3)):
        problem = TSP.from_file(f"{folder}/{name}.tsp")
        MaxMinAntSystem(problem, local_search="auto", backend="cuda", seed=0).run(iterations=1)
        for ants in (16, 64, 256):
            for rho in (0.2, 0.5):
                for rule in ("best", "first"):
                    r = MaxMinAntSystem(problem, local_search="auto", backend="cuda", seed=0, ants=ants, rho=rho,
                                        rule=rule).run(seconds=seconds)
                    print(f"{name} ants={ants} rho={rho} rule={rule}: gap {100 * problem.gap(r.fitness):.3f} % "
                          f"in {r.iterations} iterations", flush=True)
