"""Regions of a tour solved again, in turn, as instances of their own, the tour outside them fixed
(LKH-3's subproblems; problems/regions.py builds a region's instance): FocusedACO's
``region_cities``. A region's search starts from its instance's own start tour, not from the tour,
so it searches again from scratch what the whole tour's search keeps (a trap that no move leaves);
partition crossover then keeps its tour where it is shorter, place by place."""
from __future__ import annotations

import numpy as np

from .partition import partition_crossover

__all__ = ["Regions"]


class Regions:
    """The regions of about ``cities`` cities of a TSP (TSP.regions: the boxes of a grid) in an
    order drawn from ``seed``, so that a run and its resumption solve them alike."""

    def __init__(self, problem, cities: int, seed: int):
        regions = problem.regions(cities)
        self.problem, self.seed = problem, seed
        self.order = [regions[k] for k in np.random.default_rng(seed).permutation(len(regions))]

    def solve(self, best: np.ndarray, solved: int, search_of, **budget):
        """Region number ``solved`` (in turn, again from the first after the last) of the tour
        ``best``, searched by ``search_of(subproblem)`` with ``budget`` (run()'s): its tour merged
        into ``best`` by partition crossover, the merge's gain and the region's run's result."""
        sub = self.problem.region_subproblem(best, self.order[solved % len(self.order)])
        result = search_of(sub).run(**budget)
        merged, gain = partition_crossover(best, sub.whole(result.solution), self.problem.edge_distance().between)
        return merged, gain, result
