"""Wide descents of a lone tour (lsmgpu/backends/dontlook.py): a round's moves found on the tour
as it was and applied where they still shorten it; the tour stays a tour with its length, ends at
a local optimum of the moves, and on the GPU the wide rounds equal the NumPy reference's."""
import numpy as np
import pytest

from lsmgpu.backends import dontlook as host_dontlook
from lsmgpu.backends.dontlook import CpuDontLook, check_city, interleaved, wide_checks
from lsmgpu.backends.tour_steps import apply_checked, apply_steps

from .test_dontlook import assert_gpu_rows_equal_the_hosts, length, positions, rules_of, tsp_of


def test_wide_checks_is_for_a_lone_tour_and_grows_with_it():
    """One city at a time for several tours or a small one; WIDE at most."""
    assert wide_checks(2, 10**6) == 1 and wide_checks(1, 100) == 1
    assert wide_checks(1, 64 * 7) == 7 and wide_checks(1, 10**7) == host_dontlook.WIDE


@pytest.mark.parametrize("count,wide", [(10, 3), (12, 4), (7, 1), (5, 8)])
def test_interleaved_reads_across_the_stretches(count, wide):
    """The cities cut into ``wide`` stretches of ceil(count / wide), read first of each, second of
    each, ..: every city once, a stretch's cities in their order, consecutive picks from different
    stretches."""
    cities = np.arange(100, 100 + count)
    out = interleaved(cities, wide)
    per = -(-count // wide)
    assert sorted(out.tolist()) == cities.tolist()
    stretch = (out - 100) // per
    for s in range(wide):
        assert np.all(np.diff(out[stretch == s]) == 1)
    assert wide == 1 or np.all(stretch[1:] != stretch[:-1])
    if (count, wide) == (10, 3):
        assert out.tolist() == [100, 104, 108, 101, 105, 109, 102, 106, 103, 107]


@pytest.mark.parametrize("kind", ["int-coords", "real-coords", "matrix"])
def test_a_move_applied_on_a_changed_tour_shortens_it_by_its_change_or_is_undone(kind):
    """A city's best move, found on a tour that other moves change before it is applied: where
    apply_checked keeps it, the tour is a tour and shorter by exactly the move's delta; where
    not, the tour and positions are as before it."""
    problem = tsp_of(kind, 80, seed=5)
    rules, between = rules_of(problem, or3=True, lk=True, lk_depth=6), problem.edge_distance().between
    rng = np.random.default_rng(5)
    kept = undone = 0
    for _ in range(200):
        x = rng.permutation(problem.n)
        pos = positions(x)
        found = [m for m in (check_city(int(c), x, pos, rules, between) for c in rng.choice(problem.n, 4)) if m]
        if len(found) < 2:
            continue
        for move in found[:-1]:                  # the others change the tour first
            apply_steps(x, pos, move[2])
        before, before_length = x.copy(), length(problem, x)
        delta = found[-1][0]
        assert np.array_equal(pos[x], np.arange(problem.n)) and delta < 0
        if apply_checked(x, pos, found[-1][2], between, delta):
            assert length(problem, x) - before_length == delta
            kept += 1
        else:
            assert np.array_equal(x, before)
            undone += 1
        assert np.array_equal(pos[x], np.arange(problem.n)) and np.array_equal(np.sort(x), np.arange(problem.n))
    assert kept > 20 and undone > 5


@pytest.mark.parametrize("wide", [3, 17, 64])
@pytest.mark.parametrize("or3,lk,depth", [(False, False, 0), (True, True, 0), (True, True, 6)])
def test_a_wide_descent_ends_at_a_local_optimum_with_its_length(wide, or3, lk, depth):
    """Checked ``wide`` cities a round, a tour ends with its length as its value, far below the
    start's, where a second descent from every city finds little (as one city a round: a city is
    looked at again when its own edges change, not its candidates')."""
    problem = tsp_of("int-coords", 400, seed=wide)
    rules, distance = rules_of(problem, or3=or3, lk=lk, lk_depth=depth), problem.edge_distance()
    x0 = np.random.default_rng(wide).permutation(problem.n)
    rows = CpuDontLook(rules, distance, 1, wide=wide)
    rows.load(x0[None])
    made, evaluated, finished = rows.descend(np.ones(1, bool))
    x = rows.solutions()[0].astype(np.int64)
    assert finished and rows.wide == wide and made[0] > problem.n // 2
    assert rows.values()[0] == length(problem, x) < length(problem, x0) / 3
    rows.load(x[None])
    assert rows.descend(np.ones(1, bool))[0][0] <= made[0] // 10


def test_a_lone_tour_is_descended_wide_by_default():
    """CpuDontLook checks a lone tour as wide_checks says, several tours one city at a time."""
    problem = tsp_of("int-coords", 300)
    rules, distance = rules_of(problem), problem.edge_distance()
    one, three = CpuDontLook(rules, distance, 1), CpuDontLook(rules, distance, 3)
    one.load(np.arange(300)[None])
    three.load(np.stack([np.arange(300)] * 3))
    assert one.wide == wide_checks(1, 300) == 4 and three.wide == 1


@pytest.mark.gpu
@pytest.mark.parametrize("kind,n,depth,wide", [("int-coords", 300, 0, None), ("real-coords", 2000, 6, None),
                                               ("matrix", 400, 6, None), ("int-coords", 5000, 9, None),
                                               ("int-coords", 3000, 6, 512), ("int-coords", 700, 0, 2)])
def test_gpu_wide_descents_equal_the_hosts(kind, n, depth, wide, monkeypatch):
    """A lone tour descended wide on the GPU: the NumPy reference's tour, length, moves and
    checks (WIDE set to ``wide`` where given: as wide as the tour's cities allow, or 2)."""
    if wide is not None:
        monkeypatch.setattr(host_dontlook, "WIDE", wide)
        monkeypatch.setattr(host_dontlook, "WIDE_SPACING", 1)
    problem = tsp_of(kind, n, seed=n)
    x = np.random.default_rng(n).permutation(n)[None].astype(np.int32)
    assert wide_checks(1, n) > 1
    assert_gpu_rows_equal_the_hosts(rules_of(problem, 8, 3, or3=True, lk=depth > 0, lk_depth=depth),
                                    problem.edge_distance(), x)
