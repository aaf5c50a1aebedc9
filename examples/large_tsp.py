"""Solving a TSPLIB instance fast: iterated local search over candidate lists, on the GPU.

Candidate 2-opt (10 quadrant neighbours per city, no n x n matrix) with descents polished by
Or-opt then candidate 3-opt, and double-bridge kicks applied where the tour lives. Ctrl-C stops
the search and keeps the best tour so far.

Run:  python examples/large_tsp.py [INSTANCE.tsp] [SECONDS]    (default: kroA100, 5 s)
      python examples/large_tsp.py pla85900.tsp 60             (a path to any TSPLIB file)
"""
import sys

from lsmgpu import Callback, IteratedLocalSearch, candidate_polish
from lsmgpu.problems import TSP


class PrintImprovements(Callback):
    """One line per new best tour: seconds, kicks, length and gap to the optimum if known."""

    def __init__(self, tsp):
        self.tsp = tsp

    def on_best(self, state):
        gap = self.tsp.gap(state.best)
        print(f"{state.seconds:8.2f} s  {state.iteration:7d} kicks  {state.best:,.0f}"
              + ("" if gap is None else f"  ({100 * gap:.3f} % above the optimum)"))


def solve(path, seconds: float, backend: str = "auto"):
    """The TSP read from ``path`` and the result of ``seconds`` of ILS on ``backend``, stopped
    early at the known optimum."""
    tsp = TSP.from_file(path, neighbourhood="2opt-candidates")
    search = IteratedLocalSearch(tsp, seed=0, backend=backend, callbacks=PrintImprovements(tsp),
                                 polish=candidate_polish(tsp.neighbourhood.candidates))
    return tsp, search.run(seconds=seconds, target=tsp.best_known)


if __name__ == "__main__":
    tsp, result = solve(sys.argv[1] if len(sys.argv) > 1 else TSP.shipped("kroA100"),
                        float(sys.argv[2]) if len(sys.argv) > 2 else 5.0)
    tsp.write_solution(result.solution, f"{tsp.name}.tour")
    print(f"best fitness: {result.fitness:,.0f} after {result.iterations} kicks, {result.seconds:.1f} s on "
          f"{result.backend} ({result.status}); tour written to {tsp.name}.tour")
