"""A region of a tour as an instance of its own (problems/regions.py): the tour back from it, its
lengths, its bridges kept by the optimum, the grid's regions and the errors."""
import itertools

import numpy as np
import pytest

from lsmgpu.problems import TSP
from lsmgpu.problems.regions import FIXED_EDGES, grid_regions


def instance(n: int, seed: int) -> TSP:
    rng = np.random.default_rng(seed)
    return TSP(rng.integers(0, 1000, size=(n, 2)).astype(np.float64), name=f"random{n}")


def units(bridged: np.ndarray) -> list[list[int]]:
    """The subproblem's positions grouped into runs joined by bridges (position i and i + 1 where
    ``bridged[i]``): any order and orientation of the runs keeps every bridge."""
    m = len(bridged)
    first = int(np.flatnonzero(~bridged)[0]) + 1               # a run starts after an edge that is no bridge
    runs, run = [], []
    for step in range(m):
        i = (first + step) % m
        run.append(i)
        if not bridged[i]:
            runs.append(run)
            run = []
    return runs


def bridged_positions(tsp: TSP, tour: np.ndarray, sub) -> np.ndarray:
    """Whether each position's edge to the next in the subproblem's own order is a bridge (the
    tour leaves the region there)."""
    position = np.empty(tsp.n, dtype=np.int64)
    position[tour] = np.arange(tsp.n)
    return (position[np.roll(sub.cities, -1)] - position[sub.cities]) % tsp.n != 1


@pytest.mark.parametrize("seed", range(3))
def test_a_subproblem_tour_that_keeps_the_bridges_changes_the_whole_tour_by_its_own_change(seed):
    """The identity order gives the tour back; any order of the bridged runs (each either way)
    makes a tour of the whole instance whose length changed by exactly the subproblem's change,
    the cities outside the region in the same paths, and the subproblem's matrix charges each
    edge that is no bridge its length plus more than FIXED_EDGES of the region's longest."""
    tsp, rng = instance(120, seed), np.random.default_rng(seed)
    tour = rng.permutation(tsp.n)
    region = tsp.regions(40)[seed]
    sub = tsp.region_subproblem(tour, region)
    m = len(sub.cities)
    assert sorted(sub.cities.tolist()) == sorted(region.tolist())
    back = sub.whole(np.arange(m))
    assert tsp.evaluate(back) == tsp.evaluate(tour) and set(zip(back, np.roll(back, -1))) | set(
        zip(np.roll(back, -1), back)) == set(zip(tour, np.roll(tour, -1))) | set(zip(np.roll(tour, -1), tour))
    bridged = bridged_positions(tsp, tour, sub)
    assert sub.bridges == bridged.sum() > 0
    length = tsp.dist(sub.cities[:, None], sub.cities[None, :])
    matrix = sub.problem.matrix
    after = np.roll(np.arange(m), -1)
    assert np.all(matrix[bridged.nonzero()[0], after[bridged]] == 0)
    free = ~np.eye(m, dtype=bool)
    free[bridged.nonzero()[0], after[bridged]] = free[after[bridged], bridged.nonzero()[0]] = False
    assert np.all(matrix[free] > length[free] + FIXED_EDGES * length.max())
    outside = np.setdiff1d(np.arange(tsp.n), region)
    for trial in range(20):
        runs = units(bridged)
        order = [run if rng.random() < 0.5 else run[::-1] for k in rng.permutation(len(runs)) for run in [runs[k]]]
        sub_tour = np.concatenate(order)
        whole = sub.whole(sub_tour)
        assert sorted(whole.tolist()) == list(range(tsp.n))
        assert tsp.evaluate(whole) - tsp.evaluate(tour) == \
            sub.problem.evaluate(sub_tour) - sub.problem.evaluate(np.arange(m))
        kept = set(zip(tour, np.roll(tour, -1))) | set(zip(np.roll(tour, -1), tour))
        assert all((a, b) in kept for a, b in zip(whole, np.roll(whole, -1)) if a in outside or b in outside)


def test_the_subproblems_optimum_keeps_every_bridge():
    """Over every tour of a 9-city subproblem (brute force), the shortest keeps all its bridges and
    is the shortest of the tours that keep them: the fixed edges lose nothing."""
    tsp = instance(40, 7)
    tour = np.random.default_rng(7).permutation(tsp.n)
    region = np.argsort(tsp.coords[:, 0])[:9]               # the nine westmost cities
    sub = tsp.region_subproblem(tour, region)
    bridged = bridged_positions(tsp, tour, sub)
    after = np.roll(np.arange(9), -1)
    bridges = {frozenset((int(i), int(after[i]))) for i in np.flatnonzero(bridged)}
    best, best_keeping = None, None
    for rest in itertools.permutations(range(1, 9)):
        t = np.array((0,) + rest)
        value = sub.problem.evaluate(t)
        if best is None or value < best[0]:
            best = value, t
        if bridges <= {frozenset(e) for e in zip(t.tolist(), np.roll(t, -1).tolist())}:
            best_keeping = value if best_keeping is None else min(best_keeping, value)
    assert best[0] == best_keeping
    assert tsp.evaluate(sub.whole(best[1])) <= tsp.evaluate(tour)


def test_a_tour_that_gives_up_a_bridge_and_bad_regions_are_named_errors():
    """A subproblem tour without one of its bridges, a region outside the instance or of fewer than
    8 cities, and regions of an explicit matrix are ValueErrors that say what is wrong."""
    tsp = instance(60, 1)
    tour = np.random.default_rng(1).permutation(tsp.n)
    sub = tsp.region_subproblem(tour, tsp.regions(20)[0])
    bridged = bridged_positions(tsp, tour, sub)
    i, m = int(np.flatnonzero(bridged)[0]), len(sub.cities)
    end = (i + 1) % m                                        # the bridge (i, end) broken: end moved away
    broken = [p for p in range(m) if p != end]
    broken.insert(broken.index((i + 4) % m) + 1, end)
    with pytest.raises(ValueError, match="gives up"):
        sub.whole(np.array(broken))
    with pytest.raises(ValueError, match="region"):
        tsp.region_subproblem(tour, np.array([0, 1, tsp.n]))
    with pytest.raises(ValueError, match="8 to"):
        tsp.region_subproblem(tour, np.arange(5))
    with pytest.raises(ValueError, match="coordinates"):
        TSP(matrix=tsp.dist(np.arange(60)[:, None], np.arange(60)[None, :])).regions(20)
    with pytest.raises(ValueError, match="cities"):
        tsp.regions(3)


def test_the_grid_cuts_every_city_into_one_box_of_about_the_size_asked():
    """On 2,000 uniform cities, boxes of about 100: 20 boxes (5 x 4 on a 5:4 field), every city in
    exactly one, each box the cities inside its cell; boxes of fewer than 8 cities are left out, and
    one of more than twice the size asked is cut in halves until none is."""
    rng = np.random.default_rng(3)
    coords = rng.random((2000, 2)) * (500, 400)
    boxes = grid_regions(coords, 100)
    assert len(boxes) == 20
    assert sorted(np.concatenate(boxes).tolist()) == list(range(2000))
    for box in boxes:
        low, high = coords[box].min(axis=0), coords[box].max(axis=0)
        inside = np.flatnonzero(np.all((coords >= low) & (coords <= high), axis=1))
        assert set(box.tolist()) <= set(inside.tolist()) and len(inside) - len(box) < 0.2 * len(box)
        assert 60 <= len(box) <= 140
    lonely = np.r_[coords[:100], [[10_000.0, 10_000.0]]]    # one far city: a box of its own, left out
    boxes = grid_regions(lonely, 25)                        # the other 100 in one cell: cut in halves
    assert sorted(np.concatenate(boxes).tolist()) == list(range(100)) and all(25 <= len(b) <= 50 for b in boxes)
