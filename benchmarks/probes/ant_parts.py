"""Whether focused ACO's ants that lose to the colony's best still carry parts that beat it.

An ant of FocusedACO (lsmgpu/search/focused.py) moves cities of its source in several places and
descends; the iteration keeps its best ant whole, so an ant that is longer than the colony's best
is lost even where one of its separate changes was an improvement. Partition crossover
(lsmgpu/search/partition.py) takes the shorter side in each place. The probe runs the CLI's 5-opt
configuration (the 5 α-nearest, chains of FIVE_OPT_DEPTH 5-opt levels alone, no restarts) for
``iterations``; from iteration ``late`` on, every ``every`` iterations, it crosses the colony's
best with each ant alone (how many ants hold a shorter part) and with all of them in turn, the
shortest ant first (what merging them all would gain), beside the iteration's best ant's gain,
and the merge's milliseconds in NumPy. With ``moves`` (a list), the probed iteration's ants are
built again from the same source with each number of moved cities and crossed alike (the colony
goes on with its own number's ants).

    python -m benchmarks.probes.ant_parts .data/tsplib rl11849,rl5915 120 30 5
    python -m benchmarks.probes.ant_parts .data/tsplib rl5915 80 30 10 128,512,2048
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from lsmgpu.cli_population import FIVE_OPT_DEPTH
from lsmgpu.search.partition import partition_crossover
from problems.tsp import TSP

from .watched_colony import WatchedACO


class PartsACO(WatchedACO):
    """FocusedACO that, at the probed iterations, prints and keeps in ``rows`` what partition
    crossover of the colony's best with its ants would gain."""

    late: int
    every: int
    probed_moves: list

    def _set_up(self) -> None:
        super()._set_up()
        self.rows = []

    def _watch(self, build) -> np.ndarray:
        if self.iteration < self.late or (self.iteration - self.late) % self.every:
            return build(self.iteration)
        own = self.colony.focus.moves
        for moves in self.probed_moves:
            self.colony.focus.moves = moves
            self.rows.append({"instance": self.problem.name, "moves": moves, **self._parts(build(self.iteration))})
            print(self.rows[-1], flush=True)
        self.colony.focus.moves = own
        return build(self.iteration)

    def _parts(self, lengths: np.ndarray) -> dict:
        between = self.problem.edge_distance().between
        best = self.colony.best_tour(0).astype(np.int64)
        best_length = float(self.problem.evaluate(best))
        started = time.perf_counter()
        alone, child, merged = 0, best, 0.0
        for k in np.argsort(lengths):
            ant = self.colony.tour(int(k)).astype(np.int64)
            crossed, gain = partition_crossover(best, ant, between)
            alone += gain > 0
            child, more = (crossed, gain) if child is best else partition_crossover(child, ant, between)
            merged += more
        return {"iteration": self.iteration, "since_best": self.colony_since[0],
                "best_gap_pct": round(100 * self.problem.gap(best_length), 4),
                "ants_shorter": int((lengths < best_length).sum()),
                "best_ant_gain": max(0.0, best_length - float(lengths.min())),
                "ants_with_shorter_part": int(alone), "merged_gain": merged,
                "merged_gap_pct": round(100 * self.problem.gap(best_length - merged), 4),
                "merge_ms": round(1000 * (time.perf_counter() - started))}


def main(folder: str, names: str, iterations: int, late: int, every: int, moves: str = "", backend: str = "cuda") -> None:
    for name in names.split(","):
        problem = TSP.from_file(Path(folder) / f"{name}.tsp")
        search = PartsACO(problem, candidates="alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5, chain_alone=True,
                          restart_after=None, backend=backend, seed=0)
        search.late, search.every = late, every
        search.probed_moves = [int(m) for m in moves.split(",")] if moves else [search.moves]
        result = search.run(iterations=iterations)
        print({"instance": name, "iterations": result.iterations, "gap_pct": round(100 * problem.gap(result.fitness), 4),
               "ants": search.ants, "device": search.device}, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), *sys.argv[6:8])
