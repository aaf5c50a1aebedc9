"""Whether LKH-style trial tours carry parts that beat a stuck colony's best, where its ants carry none.

benchmarks/probes/ant_parts.py found that, once FocusedACO's colony stands still on rl5915 or
rl11849, none of its ants (each a few moved cities of the source, descended) holds a part shorter
than the colony's best. LKH-3 goes on improving such tours with its trials (Helsgaun 2000, 2009:
FindTour, ChooseInitialTour's walk): each trial is a new tour that keeps the best tour's edges of
α 0 and otherwise takes a random candidate, descended whole and merged with the best tour. The
probe builds such trials with the ants' own kernel: from the colony's best as the source, every
city may move, and the walk's weights are not the pheromone's but TRIAL_WEIGHT for a candidate
edge of α 0 on the best tour and 1 for every other candidate (an open candidate chosen uniformly;
none open: the tour's next city, LKH's last case). At the probed iterations it crosses the
colony's best with the ants as they are and with the trials (ant_parts' columns, and how far
they are from the best: the median gap above it, the median count of edges apart), then the
colony goes on with its own ants.

With ``ascents`` (a list) the same runs are made with the α-lists of other ascents: ``100`` (the
default period), ``half`` (LKH's initial period, n / 2) or a file of LKH-3's penalties (its
``PI_FILE``: the lists then come from LKH's π on lsmgpu's graph), so that the trials' medians
compare the candidate lists.

    python -m benchmarks.probes.trial_parts .data/tsplib rl5915 80 30 10
    python -m benchmarks.probes.trial_parts .data/tsplib rl5915 31 30 30 100,half,rl5915.pi
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from lsmgpu.backends.cuda.driver import cuda, download
from lsmgpu.cli_population import FIVE_OPT_DEPTH
from problems.alpha import pool_alpha
from problems.tsp import TSP

from .ant_parts import PartsACO

#: the walk's weight of a candidate edge of α 0 on the best tour, against 1 for the others: LKH takes
#: such an edge whenever one is open
TRIAL_WEIGHT = 1e9


def candidate_alpha(problem: TSP, candidates: np.ndarray) -> np.ndarray:
    """(n, K) α of each city's candidate edges at the ascent's penalties (the α-lists' own)."""
    pu, pv, _, alpha = pool_alpha(problem, problem._ascent)
    n = problem.n
    keys = pu.astype(np.int64) * n + pv
    order = np.argsort(keys)
    city = np.repeat(np.arange(n), candidates.shape[1]).reshape(candidates.shape)
    low, high = np.minimum(city, candidates), np.maximum(city, candidates)
    at = order[np.searchsorted(keys, low.astype(np.int64) * n + high, sorter=order)]
    return alpha[at]


def trial_weights(best: np.ndarray, candidates: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """(n, K) the trials' walk weights: TRIAL_WEIGHT where the candidate edge is on ``best`` and of
    α 0, 1 elsewhere."""
    n = len(best)
    succ, pred = np.empty(n, np.int64), np.empty(n, np.int64)
    succ[best], pred[best] = np.roll(best, -1), np.roll(best, 1)
    on_best = (candidates == succ[:, None]) | (candidates == pred[:, None])
    return np.where(on_best & (alpha <= 1e-9), TRIAL_WEIGHT, 1.0)


class TrialParts(PartsACO):
    """PartsACO that, at each probed iteration, also crosses the colony's best with trials."""

    def _set_up(self) -> None:
        super()._set_up()
        if self.backend.name != "cuda":
            raise ValueError("trial_parts: the trials are built by the GPU's ant kernel; run with the cuda backend")
        self.alpha = candidate_alpha(self.problem, self.rules.candidates)

    def _watch(self, build) -> np.ndarray:
        if self.iteration >= self.late and (self.iteration - self.late) % self.every == 0:
            for ants, make in (("ants", lambda: build(self.iteration)), ("trials", lambda: self._trials(build))):
                lengths = make()                    # the ants' rows on the GPU are the last built's
                self.rows.append({"instance": self.problem.name, "ants": ants, **self._spread(lengths),
                                  **self._parts(lengths)})
                print(self.rows[-1], flush=True)
        return build(self.iteration)

    def _spread(self, lengths: np.ndarray) -> dict:
        """How far the ants (as built last) are from the colony's best: their median gap above it
        and the median count of their edges it lacks."""
        best = self.colony.best_tour(0).astype(np.int64)
        best_length = float(self.problem.evaluate(best))
        edges = set(map(frozenset, zip(best, np.roll(best, -1))))
        apart = [sum(frozenset(e) not in edges for e in zip(ant, np.roll(ant, -1)))
                 for ant in (self.colony.tour(k).astype(np.int64) for k in range(0, len(lengths), 8))]
        return {"median_gap_above_best_pct": round(100 * float(np.median(lengths) - best_length) / best_length, 4),
                "median_edges_apart": int(np.median(apart))}

    def _trials(self, build) -> np.ndarray:
        """The trials' lengths: the ants built from the colony's best with the trial weights and
        every city free to move; the source, weights and moves put back after."""
        colony, n, K = self.colony, self.problem.n, self.rules.k
        source = download(colony._tours(0)[0], n, np.int32)
        length, weights = float(colony.lengths[0]), download(colony.weights, (n, K), np.float64)
        best = colony.best_tour(0)
        own = colony.focus.moves
        colony.follow(-1, self.colony_best[0])
        cuda.memcpy_htod(colony.weights, trial_weights(best, self.rules.candidates, self.alpha))
        colony.focus.moves = n
        try:
            return build(self.iteration + 10**6)          # random numbers of their own
        finally:
            colony.focus.moves = own
            cuda.memcpy_htod(colony.weights, weights)
            colony._upload(source, colony._tours(0)[:2])
            colony.lengths[0] = length


def read_pi(path: str, n: int) -> np.ndarray:
    """LKH's PI_FILE (its dimension, then "city pi" lines, pi in hundredths: PRECISION 100) as π."""
    pi = np.zeros(n)
    for line in Path(path).read_text().split("\n")[1:]:
        parts = line.split()
        if len(parts) == 2 and parts[0] != "-1":
            pi[int(parts[0]) - 1] = int(parts[1]) / 100.0
    return pi


def with_ascent(path: Path, which: str) -> TSP:
    """The instance at ``path`` with the ascent ``which`` names (module docstring), made now."""
    if which in ("100", "half"):
        problem = TSP.from_file(path, ascent_period=100 if which == "100" else "half")
        problem.penalties()
    else:
        problem = TSP.from_file(path)
        problem._ascent = dataclasses.replace(problem._held_karp_ascent(), pi=read_pi(which, problem.n))
    return problem


def main(folder: str, names: str, iterations: int, late: int, every: int, ascents: str = "100") -> None:
    for name, which in ((name, which) for name in names.split(",") for which in ascents.split(",")):
        problem = with_ascent(Path(folder) / f"{name}.tsp", which)
        print({"instance": name, "ascent": which, "seconds": round(problem._ascent.seconds, 2)}, flush=True)
        search = TrialParts(problem, candidates="alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5, chain_alone=True,
                            restart_after=None, backend="cuda", seed=0)
        search.late, search.every = late, every
        result = search.run(iterations=iterations)
        print({"instance": name, "iterations": result.iterations,
               "gap_pct": round(100 * problem.gap(result.fitness), 4), "ants": search.ants, "device": search.device},
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), *sys.argv[6:7])
