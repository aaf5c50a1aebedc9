"""TSP: TSPLIB reading, distance rounding, swap and 2-opt deltas, starts and kicks."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsmgpu import HillClimbing, Swap, TwoOpt
from lsmgpu.backends.cpu import CpuBackend
from lsmgpu.problems import TSP
from lsmgpu.problems.distances import distance, geo_radians
from lsmgpu.problems.tsp import double_bridge
from tests.checks import assert_delta_is_reevaluation, assert_file_rejected


def tsplib_reference(kind, a, b):
    """TSPLIB 95's C formulas, one pair at a time."""
    if kind == "GEO":
        def rad(v):
            deg = int(v)
            return 3.141592 * (deg + 5.0 * (v - deg) / 3.0) / 180.0
        la, lo, lb, mb = rad(a[0]), rad(a[1]), rad(b[0]), rad(b[1])
        q1, q2, q3 = math.cos(lo - mb), math.cos(la - lb), math.cos(la + lb)
        return int(6378.388 * math.acos(0.5 * ((1 + q1) * q2 - (1 - q1) * q3)) + 1.0)
    dx, dy = a[0] - b[0], a[1] - b[1]
    if kind == "EUC_2D":
        return int(math.sqrt(dx * dx + dy * dy) + 0.5)
    if kind == "CEIL_2D":
        return math.ceil(math.sqrt(dx * dx + dy * dy))
    r = math.sqrt((dx * dx + dy * dy) / 10.0)
    t = int(r + 0.5)
    return t + 1 if t < r else t


@pytest.mark.parametrize("kind", ["EUC_2D", "CEIL_2D", "ATT", "GEO"])
def test_distances_follow_tsplib(kind):
    """Vectorised distances equal TSPLIB's scalar formulas."""
    rng = np.random.default_rng(1)
    pts = rng.uniform(-80, 80, (200, 2)) if kind == "GEO" else rng.uniform(0, 5000, (200, 2))
    p = geo_radians(pts) if kind == "GEO" else pts
    got = distance(kind, p[:100], p[100:])
    want = [tsplib_reference(kind, a, b) for a, b in zip(pts[:100], pts[100:])]
    assert got.tolist() == want


@st.composite
def tsp_and_tour(draw):
    n = draw(st.integers(4, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["EUC_2D", "CEIL_2D", "ATT", "GEO", "EXPLICIT"]))
    neighbourhood = draw(st.sampled_from(["swap", "2opt", "3exchange"]))
    coordinates = draw(st.booleans())  # force the on-the-fly path (no matrix)
    if kind == "EXPLICIT":
        m = rng.integers(1, 100, (n, n))
        tsp = TSP(matrix=m + m.T, neighbourhood=neighbourhood)
    else:
        pts = rng.uniform(-80, 80, (n, 2)) if kind == "GEO" else rng.uniform(0, 1000, (n, 2))
        tsp = TSP(pts, weight_type=kind, neighbourhood=neighbourhood)
        if coordinates:
            tsp.matrix = None
    return tsp, rng.permutation(n)


@given(tsp_and_tour())
def test_delta_equals_full_reevaluation(case):
    """delta == length(after) - length(before) for every swap / 2-opt move, adjacent swaps included."""
    tsp, tour = case
    assert_delta_is_reevaluation(tsp, tour)


def test_berlin52_hill_climbing_ends_in_2opt_local_optimum(berlin52):
    """2-opt best-improvement hill climbing ends with no improving move, within 10 % of 7542."""
    result = HillClimbing(berlin52, seed=0, backend="cpu").run()
    assert result.status == "local_optimum"
    nb = berlin52.neighbourhood
    assert berlin52.delta(result.solution, nb.decode(np.arange(nb.size))).min() >= 0
    assert result.fitness <= 1.10 * 7542
    assert berlin52.best_known == 7542


def test_large_instances_skip_the_matrix():
    """Beyond matrix_limit cities the distances come from coordinates; both paths agree."""
    pts = np.random.default_rng(0).uniform(0, 1e4, (TSP.matrix_limit + 1, 2))
    big = TSP(pts)
    assert big.matrix is None
    small = TSP(pts[:500])
    tour = np.arange(500)
    small_fly = TSP(pts[:500])
    small_fly.matrix = None
    assert small.evaluate(tour) == small_fly.evaluate(tour)


def test_explicit_formats_agree(tmp_path):
    """FULL_MATRIX, UPPER_ROW, LOWER_DIAG_ROW and UPPER_DIAG_ROW encodings of one matrix read the same."""
    n = 6
    rng = np.random.default_rng(2)
    m = rng.integers(1, 50, (n, n))
    m = m + m.T
    np.fill_diagonal(m, 0)
    bodies = {
        "FULL_MATRIX": [m[i, j] for i in range(n) for j in range(n)],
        "UPPER_ROW": [m[i, j] for i in range(n) for j in range(i + 1, n)],
        "LOWER_ROW": [m[i, j] for i in range(n) for j in range(i)],
        "UPPER_DIAG_ROW": [m[i, j] for i in range(n) for j in range(i, n)],
        "LOWER_DIAG_ROW": [m[i, j] for i in range(n) for j in range(i + 1)],
    }
    for fmt, values in bodies.items():
        path = tmp_path / f"{fmt}.tsp"
        path.write_text(f"NAME: x\nTYPE: TSP\nDIMENSION: {n}\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                        f"EDGE_WEIGHT_FORMAT: {fmt}\nEDGE_WEIGHT_SECTION\n{' '.join(map(str, values))}\nEOF\n")
        assert np.array_equal(TSP.from_file(path).matrix, m), fmt


GOOD = "NAME: t\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n" + \
    "".join(f"{i + 1} {i * 3.0} {i * i}\n" for i in range(5)) + "EOF\n"


@pytest.mark.parametrize("text,message", [
    (GOOD.replace("5 12.0 16\n", ""), "truncated file or wrong DIMENSION"),
    (GOOD.replace("DIMENSION: 5", "DIMENSION: 6"), "DIMENSION says 6"),
    (GOOD.replace("DIMENSION: 5\n", ""), "no DIMENSION"),
    (GOOD.replace("3 6.0 4", "3 nan 4"), "NaN"),
    (GOOD.replace("EUC_2D", "XRAY1"), "not supported"),
    ("NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\nEOF\n",
     "n must be >= 4"),
    (GOOD.replace("TYPE: TSP", "TYPE: ATSP"), "symmetric TSP only"),
    (GOOD.replace("NODE_COORD_SECTION", "FIXED_EDGES_SECTION\n1 4\n-1\nNODE_COORD_SECTION"), "FIXED_EDGES_SECTION"),
])
def test_bad_files_raise_clear_errors(tmp_path, text, message):
    """Malformed TSPLIB files raise ValueError naming the file and the fault."""
    assert_file_rejected(tmp_path, TSP.from_file, "bad.tsp", text, message)


def test_an_empty_fixed_edges_section_is_read(tmp_path):
    """A FIXED_EDGES_SECTION with no edge (only its -1) fixes nothing: the file reads as without it."""
    path = tmp_path / "t.tsp"
    path.write_text(GOOD.replace("NODE_COORD_SECTION", "FIXED_EDGES_SECTION\n-1\nNODE_COORD_SECTION"))
    assert np.array_equal(TSP.from_file(path).coords, [[i * 3.0, i * i] for i in range(5)])


def test_bad_arguments_raise():
    """Wrong shapes, asymmetric matrices and unknown options are refused by name."""
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        TSP(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        TSP(matrix=np.arange(25).reshape(5, 5))
    with pytest.raises(ValueError, match="neighbourhood"):
        TSP(np.random.default_rng(0).random((5, 2)), neighbourhood="3opt")


def test_nearest_neighbour_start_and_double_bridge(berlin52, rng):
    """The start is a valid tour much shorter than random; a double bridge keeps a permutation."""
    tour = berlin52.initial_solution(rng)
    assert sorted(tour.tolist()) == list(range(52))
    assert berlin52.evaluate(tour) < 0.5 * berlin52.evaluate(rng.permutation(52))
    kicked = double_bridge(tour, rng)
    assert sorted(kicked.tolist()) == list(range(52)) and not np.array_equal(kicked, tour)


def test_write_solution(tmp_path, berlin52):
    """write_solution writes a TSPLIB .tour with 1-based cities ending in -1."""
    berlin52.write_solution(np.arange(52), tmp_path / "x.tour")
    lines = (tmp_path / "x.tour").read_text().split("\n")
    assert "TOUR_SECTION" in lines and lines[lines.index("TOUR_SECTION") + 1] == "1" and "-1" in lines


def test_neighbourhood_objects_accepted():
    """A Neighbourhood object works as well as its name."""
    pts = np.random.default_rng(0).random((8, 2)) * 100
    assert isinstance(TSP(pts, neighbourhood=TwoOpt()).neighbourhood, TwoOpt)
    assert isinstance(TSP(pts, neighbourhood=Swap()).neighbourhood, Swap)


def test_large_instance_starts(rng):
    """Beyond 5,000 cities `auto` takes the greedy start (up to it the nearest neighbour from a
    seeded city); greedy, Hilbert and strip starts are valid tours far shorter than random ones,
    greedy the shortest, and say they are one tour whatever the seed (start_is_drawn)."""
    pts = rng.uniform(0, 1e5, (5_001, 2))
    lengths = {}
    for start in ("auto", "greedy", "hilbert", "strips"):
        tsp = TSP(pts, neighbourhood="2opt", start=start)
        tour = tsp.initial_solution(rng)
        assert np.array_equal(np.sort(tour), np.arange(5_001)), start
        assert not tsp.start_is_drawn and np.array_equal(tsp.initial_solution(np.random.default_rng(9)), tour), start
        lengths[start] = tsp.evaluate(tour)
    assert lengths["auto"] == lengths["greedy"] < min(lengths["hilbert"], lengths["strips"])
    assert lengths["hilbert"] < 0.05 * TSP(pts).evaluate(rng.permutation(5_001))
    smaller = TSP(pts[:5_000])
    assert not np.array_equal(smaller.initial_solution(np.random.default_rng(1)),
                              smaller.initial_solution(np.random.default_rng(2)))      # nearest, seeded
    assert smaller.start_is_drawn and TSP(pts, start="random").start_is_drawn
    with pytest.raises(ValueError, match="start"):
        TSP(pts[:10], start="spiral")
    with pytest.raises(ValueError, match="coordinates"):
        TSP(matrix=np.ones((5, 5)) - np.eye(5), start="strips")


def test_segment_local_double_bridge(rng):
    """A local double bridge changes exactly three edges, all within `window` consecutive
    positions of the old tour; 'auto' uses it from 10,000 cities on."""
    tour = rng.permutation(500)
    for _ in range(20):
        kicked = double_bridge(tour, rng, window=30)
        assert sorted(kicked.tolist()) == list(range(500))
        edges = lambda t: {frozenset(e) for e in zip(t, np.roll(t, -1))}  # noqa: E731
        removed = edges(tour) - edges(kicked)
        assert len(removed) == 3
        position = {c: p for p, c in enumerate(tour)}
        ends = sorted(position[c] for e in removed for c in e)
        widest_gap = max(max(b - a for a, b in zip(ends, ends[1:])), 500 - ends[-1] + ends[0])
        assert 500 - widest_gap <= 30            # the cut points lie within 31 consecutive positions
    points = np.random.default_rng(0).uniform(0, 1, (10_000, 2))
    assert TSP(points, start="random").kick_window == 1000
    assert TSP(points[:100], start="random").kick_window is None
    with pytest.raises(ValueError, match="kick_window"):
        TSP(points[:100], kick_window=2)


@pytest.mark.parametrize("neighbourhood", ["2opt", "2opt-candidates", "oropt", "3opt-candidates"])
@pytest.mark.parametrize("n, window", [(60, None), (500, 30)])
def test_kick_moves_are_the_double_bridge(neighbourhood, n, window):
    """kick_moves draws what perturb draws and, applied as moves of the neighbourhood (three
    2-opt reversals, on either side of the tour for candidate 2-opt, or one block exchange),
    gives the same tour as a cycle (the same array for a whole-tour kick by positional moves);
    the CPU evaluator's apply_moves returns the length change."""
    pts = np.random.default_rng(n).uniform(0, 1000, (n, 2))
    tsp = TSP(pts, neighbourhood=neighbourhood, kick_window=window)
    edges = lambda t: {frozenset(e) for e in zip(t.tolist(), np.roll(t, -1).tolist())}  # noqa: E731
    for seed in range(20):
        tour = np.random.default_rng(seed).permutation(n)
        strength = 1 if neighbourhood == "2opt-candidates" else 2   # later cuts fall on its own layout
        kicked = tsp.perturb(tour, np.random.default_rng(seed), strength)
        moves = tsp.kick_moves(tour, np.random.default_rng(seed), strength)
        evaluator = CpuBackend().evaluator(tsp, tsp.neighbourhood)
        evaluator.load(tour)
        change = evaluator.apply_moves(moves)
        assert edges(evaluator.x) == edges(kicked)
        if window is None and neighbourhood != "2opt-candidates":   # which reverses the shorter side
            assert np.array_equal(evaluator.x, kicked)
        assert change == tsp.evaluate(kicked) - tsp.evaluate(tour)
    assert TSP(pts, neighbourhood="swap").kick_moves(tour, np.random.default_rng(0), 1) is None


def test_explicit_moves_are_checked():
    """apply_moves refuses moves of the wrong shape or type and moves outside the tour
    (which the GPU would apply unchecked), naming the move."""
    pts = np.random.default_rng(0).uniform(0, 1000, (30, 2))
    for neighbourhood, bad in (("2opt", [[0, 5]]), ("2opt", [[4, 30]]), ("2opt", [[6, 5]]), ("swap", [[-1, 3]]),
                               ("oropt", [[3, 2, 9, 0]]), ("oropt", [[0, 4, 29, 0]]), ("oropt", [[1, 2, 3, 3]])):
        tsp = TSP(pts, neighbourhood=neighbourhood)
        evaluator = CpuBackend().evaluator(tsp, tsp.neighbourhood)
        evaluator.load(np.arange(30))
        with pytest.raises(ValueError, match="invalid move"):
            evaluator.apply_moves(np.array(bad))
        assert np.array_equal(evaluator.x, np.arange(30))
    with pytest.raises(ValueError, match=r"\(m, 2\) integer array"):
        evaluator = CpuBackend().evaluator(TSP(pts), TSP(pts).neighbourhood)
        evaluator.load(np.arange(30))
        evaluator.apply_moves(np.array([[1.0, 2.0]]))
    tsp = TSP(pts, neighbourhood="oropt")
    evaluator = CpuBackend().evaluator(tsp, tsp.neighbourhood)
    evaluator.load(np.arange(30))
    assert evaluator.apply_moves(np.array([[0, 0, 0, -1]])) == 0     # the null move is fine


def test_a_nearest_neighbour_start_cut_by_the_deadline_does_not_follow_the_file_order():
    """A start whose time ran out is completed along a Hilbert curve over the cities, whatever the
    file's order (the same cities listed in another order give the same tour), and within a tenth of
    the Hilbert tour's length; without coordinates in a fixed shuffled order, not the file's, which
    some files list along an optimal tour (pr2392)."""
    import time

    from lsmgpu.budget import deadline_scope
    from lsmgpu.problems.tsp import nearest_neighbour_tour
    from problems.candidates import hilbert_tour
    rng = np.random.default_rng(8)
    pts = np.round(rng.uniform(0, 10_000, (3000, 2)))
    relisted = rng.permutation(3000)
    tsp, again = TSP(pts, name="u3000"), TSP(pts[relisted], name="u3000-relisted")
    first_there = int(np.flatnonzero(relisted == 0)[0])                 # city 0 in the relisted file
    with deadline_scope(time.perf_counter() - 1):
        tour, other = nearest_neighbour_tour(tsp, 0), nearest_neighbour_tour(again, first_there)
    assert sorted(tour.tolist()) == list(range(3000)) and np.array_equal(relisted[other], tour)
    assert tsp.fitness(tour) < 1.1 * tsp.fitness(hilbert_tour(pts))
    circle = np.array([[np.cos(t), np.sin(t)] for t in np.linspace(0, 2 * np.pi, 200, endpoint=False)]) * 1000
    matrix = TSP(matrix=TSP(np.round(circle)).matrix, name="circle200")       # the file order is the optimal tour
    with deadline_scope(time.perf_counter() - 1):
        tour = nearest_neighbour_tour(matrix, 0)
    assert sorted(tour.tolist()) == list(range(200))
    assert matrix.fitness(tour) > 2 * matrix.fitness(np.arange(200))


def test_clustering_reads_uniform_clustered_and_lattice_cities_apart():
    """TSP.clustering(): about 1 for uniform cities (Poisson counts over the grid), far above for
    cities in clusters (DIMACS-like: n / 100 centres, normal spread), below 1 for a lattice; a TSP
    given by its matrix has no cities to read and says so."""
    rng = np.random.default_rng(5)
    assert TSP(rng.uniform(0, 1e6, (40_000, 2))).clustering() == pytest.approx(1.0, abs=0.1)
    centres = rng.uniform(0, 1e6, (400, 2))
    clustered = centres[rng.integers(0, 400, 40_000)] + rng.normal(0, 1e6 / np.sqrt(40_000), (40_000, 2))
    assert TSP(clustered).clustering() > 10
    lattice = np.stack(np.meshgrid(np.arange(200.0), np.arange(200.0)), axis=-1).reshape(-1, 2)
    assert TSP(lattice).clustering() < 0.5
    with pytest.raises(ValueError, match="clustering needs coordinates"):
        TSP(matrix=np.abs(np.subtract.outer(np.arange(6), np.arange(6)))).clustering()
