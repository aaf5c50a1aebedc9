"""A region of a tour solved again as an instance of its own: LKH-3's subproblems (SUBPROBLEM_SIZE).

A region's cities, in the tour's order, make the subproblem. Where two of them follow each other in
the tour they keep that edge's length; where the tour leaves the region between them, the path
outside becomes a *bridge* between them: an edge of length 0 in the subproblem, every other edge
its length plus more than any move can gain elsewhere (``FIXED_EDGES`` times the region's longest
edge, plus 1), so no descent gives a bridge up (and the LK gain criterion stops at once where one
would). A subproblem tour that keeps every bridge, the bridges put back as the paths they stand
for, is a tour of the whole instance that differs from the old one inside the region only, and
the difference of the two lengths is the subproblem's.

Solved from its own start tour, a region is searched again from scratch where the whole tour's
search keeps its edges: rl5915's trap, a relinking of some seventy rows' ends that no move of the
whole tour's search leaves, is left in 5-10 s by FocusedACO on the 1,413 cities of one box of a
3 x 2 grid (docs/benchmarks/tsp-depth.md, "Regions solved again as instances of their own").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from lsmgpu.backends.crossover import positions_of

__all__ = ["FIXED_EDGES", "MAX_SUBPROBLEM", "REGION_CANDIDATES", "Subproblem", "grid_regions", "subproblem"]

#: a subproblem's edge that is no bridge costs its length plus this many times the region's
#: longest edge: more than a move of up to this many edges (LKH's 5-opt basis move, a double
#: bridge, Or-opt) can gain, so none gives a bridge up
FIXED_EDGES = 8
#: a subproblem's candidate lists: each city's bridge partner (where it has one), then its nearest
REGION_CANDIDATES = 10
#: the most cities a subproblem may hold: its explicit matrix of 32-bit lengths is then 400 MB
MAX_SUBPROBLEM = 10_000


@dataclass(frozen=True)
class Subproblem:
    """A region of ``tour`` as an instance: ``problem`` (an explicit TSP over ``cities``, the
    region's cities in the tour's order, so that ``np.arange(len(cities))`` is the tour there),
    its candidate table, how many bridges it holds, and ``whole(sub_tour)``, the tour of the whole
    instance it makes."""

    cities: np.ndarray
    problem: object
    candidates: np.ndarray
    bridges: int
    whole: Callable[[np.ndarray], np.ndarray]


def subproblem(tsp, tour: np.ndarray, region: np.ndarray, explicit_tsp) -> Subproblem:
    """The subproblem of ``tour``'s cities in ``region`` (an array of cities, at least 8), an
    ``explicit_tsp(matrix=, name=)`` (the TSP class, which imports this module)."""
    n = tsp.n
    inside = np.zeros(n, dtype=bool)
    inside[region] = True
    position = positions_of(tour)
    cities = tour[inside[tour]]
    m = len(cities)
    if not 8 <= m <= MAX_SUBPROBLEM:
        raise ValueError(f"TSP.region_subproblem: a region holds 8 to {MAX_SUBPROBLEM:,} cities (its explicit "
                         f"matrix), got {m:,}")
    after = np.roll(np.arange(m), -1)
    ends = np.flatnonzero((position[cities[after]] - position[cities]) % n != 1)
    length = tsp.dist(cities[:, None], cities[None, :]).astype(np.int64)
    matrix = length + FIXED_EDGES * int(length.max()) + 1
    np.fill_diagonal(matrix, 0)
    matrix[ends, after[ends]] = matrix[after[ends], ends] = 0
    far = np.eye(m, dtype=np.int64) * (1 << 40)              # a city is never its own candidate
    k = min(REGION_CANDIDATES, m - 1)
    nearest = np.argpartition(matrix + far, k - 1, axis=1)[:, :k]
    candidates = np.take_along_axis(nearest, np.argsort(np.take_along_axis(matrix, nearest, axis=1), axis=1,
                                                        kind="stable"), axis=1)
    paths = {}
    for i in ends:
        start, stop = position[cities[i]], position[cities[after[i]]]
        paths[int(i), int(after[i])] = tour[np.arange(start + 1, start + (stop - start) % n) % n]

    def whole(sub_tour: np.ndarray) -> np.ndarray:
        out = []
        for a, b in zip(sub_tour.tolist(), np.roll(sub_tour, -1).tolist()):
            out.append(cities[a:a + 1])
            if (a, b) in paths:
                out.append(paths[a, b])
            elif (b, a) in paths:
                out.append(paths[b, a][::-1])
        out = np.concatenate(out)
        if len(out) != n:
            raise ValueError(f"TSP.region_subproblem: the subproblem's tour gives up {len(paths) - _kept(sub_tour, paths)} "
                             f"of its {len(paths)} bridges; it makes no tour of {tsp.name}")
        return out

    problem = explicit_tsp(matrix=matrix, name=f"{tsp.name} region of {m}")
    return Subproblem(cities, problem, candidates.astype(np.int32), len(ends), whole)


def _kept(sub_tour: np.ndarray, paths: dict) -> int:
    """How many of the bridges ``sub_tour`` holds."""
    pairs = zip(sub_tour.tolist(), np.roll(sub_tour, -1).tolist())
    return sum((a, b) in paths or (b, a) in paths for a, b in pairs)


def grid_regions(coords: np.ndarray, cities: int) -> list[np.ndarray]:
    """The cities cut by a grid over their bounding box into boxes of about ``cities`` each (as many
    boxes as n / cities rounded up, as near square as the box allows), a box of more than twice
    that cut in halves, boxes of fewer than 8 cities left out: each box's cities, ascending."""
    n = len(coords)
    low, high = coords.min(axis=0), coords.max(axis=0)
    width, height = np.maximum(high - low, 1e-9)
    boxes = max(1, math.ceil(n / cities))
    columns = max(1, min(boxes, round(math.sqrt(boxes * width / height))))
    rows = math.ceil(boxes / columns)
    cell = np.minimum(((coords - low) / (width, height) * (columns, rows)).astype(np.int64), (columns - 1, rows - 1))
    label = cell[:, 0] * rows + cell[:, 1]
    order = np.argsort(label, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(label[order])) + 1)
    return [np.sort(part) for group in groups if len(group) >= 8 for part in _halves(coords, group, 2 * cities)]


def _halves(coords: np.ndarray, group: np.ndarray, most: int) -> list[np.ndarray]:
    """``group`` cut in two at the median of its longer side, again until no part holds more than
    ``most`` cities (a dense box of clustered cities), so that no region's matrix outgrows the rest."""
    if len(group) <= most:
        return [group]
    side = int(np.argmax(np.ptp(coords[group], axis=0)))
    order = group[np.argsort(coords[group, side], kind="stable")]
    half = len(order) // 2
    return _halves(coords, order[:half], most) + _halves(coords, order[half:], most)
