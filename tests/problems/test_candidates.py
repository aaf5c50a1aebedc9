"""Candidate lists and O(n log n) start tours against brute force."""
import numpy as np
import pytest

from lsmgpu.problems import TSP
from lsmgpu.problems.candidates import greedy_tour, hilbert_tour, nearest_candidates, quadrant_candidates


@pytest.fixture
def points():
    return np.random.default_rng(3).uniform(0, 1000, (300, 2))


def test_nearest_candidates_equal_brute_force(points):
    """The k-d tree lists equal a brute-force k-nearest computation (nearest first, self excluded)."""
    d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    assert np.array_equal(nearest_candidates(points, 8), np.argsort(d, axis=1, kind="stable")[:, :8])


def test_quadrant_candidates_hold_each_quadrants_nearest(points):
    """Every list has k distinct other cities, nearest first, and holds the nearest city of each
    quadrant whenever that city is among the 32 nearest overall (the search pool)."""
    k = 8
    cand = quadrant_candidates(points, k)
    d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    pool_radius = np.sort(d, axis=1)[:, 31]
    for c in range(len(points)):
        row = cand[c]
        assert len(set(row.tolist())) == k and c not in row
        assert np.all(np.diff(d[c, row]) >= 0)
        delta = points - points[c]
        quadrant = (delta[:, 0] >= 0).astype(int) * 2 + (delta[:, 1] >= 0)
        for q in range(4):
            members = np.flatnonzero((quadrant == q) & (np.arange(len(points)) != c))
            if members.size:
                nearest = members[np.argmin(d[c, members])]
                if d[c, nearest] <= pool_radius[c]:
                    assert nearest in row


def test_start_tours_are_valid_and_greedy_beats_nearest_neighbour(points):
    """Greedy matching and the Hilbert order give permutations; greedy is shorter than a
    nearest-neighbour tour here (and both far shorter than random)."""
    tsp = TSP(points, neighbourhood="2opt", start="nearest")
    rng = np.random.default_rng(0)
    greedy, hilbert = greedy_tour(points), hilbert_tour(points)
    for tour in (greedy, hilbert):
        assert np.array_equal(np.sort(tour), np.arange(300))
    assert tsp.evaluate(greedy) < tsp.evaluate(tsp.initial_solution(rng)) < tsp.evaluate(rng.permutation(300))


def test_bad_arguments(points):
    with pytest.raises(ValueError, match="`k`"):
        nearest_candidates(points, 300)
    with pytest.raises(ValueError, match="shape"):
        quadrant_candidates(points[:, :1], 4)
