"""LKH's trial starts: a walk that keeps the best tour's edges of α 0 and draws the rest.

LKH-3 does not restart its trials from a fixed tour nor kick the best one: each trial after the
first starts from a walk (Helsgaun's ChooseInitialTour) from a random city that goes on, at each
city, over the best tour's edge of α 0 where one leads to a city not yet walked, else to one of
its candidates not yet walked, drawn at random, else to any city left; the walk is descended
whole and the descent's tour merged with the best. The edges of α 0 are those of minimum 1-trees,
nearly all of a good tour's, so the walk keeps most of the best tour and lays its other places
anew: a place the best tour is stuck in (a local optimum no move leaves, as the links of the rows
of rl5915's drill holes in docs/benchmarks/tsp-depth.md's "Trials") is walked afresh, and the
merge takes it where the new descent did better there.

One change from LKH: where a city has no unwalked α-0 edge or candidate, the walk goes to the
nearest city left, not a random one (around rl5915's trapped tour LKH's random jumps leave walks
that a 2-opt + Or-opt descent ends 19-23 % above the optimum, nearest jumps 5.5-5.7 %).
scipy is imported where it is used, as in problems/candidates.py.
"""
from __future__ import annotations

import numpy as np

from .alpha import Graph, alpha_values, sparse_graph, tree_lifting

__all__ = ["TrialWalks"]

#: the nearest cities a jump looks at first (more where all of them are walked)
JUMP_NEAREST = 16


class TrialWalks:
    """LKH's trial walks over a TSP's ``candidates`` ((n, K) cities), the edges of α 0 those of the
    minimum 1-tree of the ascent's graph (problems/alpha.py's sparse_graph) under ``penalties`` (the
    ascent's π; None: none), built once here; ``walk(best, rng)`` draws one."""

    def __init__(self, tsp, candidates, penalties=None):
        self.tsp, self.n = tsp, tsp.n
        self.candidates = np.asarray(candidates, dtype=np.int64).tolist()
        u, v = sparse_graph(tsp)
        self._pi = np.zeros(tsp.n) if penalties is None else np.asarray(penalties, dtype=np.float64)
        weight = tsp.dist(u, v).astype(np.float64) + self._pi[u] + self._pi[v]
        tree = Graph(tsp.n, u, v).one_tree(weight)
        self._alpha = (u, v, weight, tree, tree_lifting(tsp.n, u, v, weight, tree))
        self._nearest = None

    def zero_alpha(self, tour) -> np.ndarray:
        """Whether each edge (tour[i], tour[i + 1]) of ``tour`` (the last closing it) has α 0."""
        a, b = np.asarray(tour, dtype=np.int64), np.roll(np.asarray(tour, dtype=np.int64), -1)
        u, v, weight, tree, lifting = self._alpha
        w = self.tsp.dist(a, b).astype(np.float64) + self._pi[a] + self._pi[b]
        return alpha_values(self.n, u, v, weight, tree, (a, b, w), lifting) == 0

    def walk(self, best, rng: np.random.Generator) -> np.ndarray:
        """A trial's start from the tour ``best``: the walk above from a random city (int64)."""
        n, candidates = self.n, self.candidates
        best = np.asarray(best, dtype=np.int64)
        zero = self.zero_alpha(best)
        after, before = [-1] * n, [-1] * n         # each city's best-tour neighbour over an α-0 edge
        nxt = np.roll(best, -1)
        for a, b in zip(best[zero].tolist(), nxt[zero].tolist()):
            after[a], before[b] = b, a
        seen = bytearray(n)
        draws = rng.random(n).tolist()
        city = int(rng.integers(n))
        tour = [city]
        seen[city] = 1
        for step in range(1, n):
            options = [c for c in (after[city], before[city]) if c >= 0 and not seen[c]]
            if not options:
                options = [c for c in candidates[city] if not seen[c]]
            city = options[int(draws[step] * len(options))] if options else self._nearest_left(city, seen)
            tour.append(city)
            seen[city] = 1
        return np.array(tour, dtype=np.int64)

    def _nearest_left(self, city: int, seen: bytearray) -> int:
        """The nearest city not yet walked: from a k-d tree of the coordinates (more of the nearest
        where all are walked), by the problem's distances without coordinates."""
        if self.tsp.coords is None:
            left = np.flatnonzero(np.frombuffer(bytes(seen), dtype=np.uint8) == 0)
            return int(left[np.argmin(self.tsp.dist(np.full(len(left), city), left))])
        if self._nearest is None:
            from scipy.spatial import cKDTree
            self._nearest = cKDTree(self.tsp.coords)
        k = JUMP_NEAREST
        while True:
            _, near = self._nearest.query(self.tsp.coords[city], min(k, self.n))
            for c in np.atleast_1d(near).tolist():
                if not seen[c]:
                    return c
            k *= 4
