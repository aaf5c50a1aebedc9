"""Candidate lists and O(n log n) start tours against brute force."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmgpu import CandidateThreeOpt, IteratedLocalSearch, OrOpt
from lsmgpu.problems import TSP
from lsmgpu.problems.candidates import greedy_tour, hilbert_tour, nearest_candidates, quadrant_candidates
from tests.checks import assert_delta_is_reevaluation


@pytest.fixture
def points():
    return np.random.default_rng(3).uniform(0, 1000, (300, 2))


def test_nearest_candidates_equal_brute_force(points):
    """The k-d tree lists equal a brute-force k-nearest computation (nearest first, self excluded)."""
    d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    assert np.array_equal(nearest_candidates(points, 8), np.argsort(d, axis=1, kind="stable")[:, :8])


@pytest.mark.parametrize("k", [1, 3, 8])
def test_quadrant_candidates_are_the_same_in_blocks_of_any_size(points, k, monkeypatch):
    """The choice made in blocks of 7 cities (the last one short) equals the one made at once."""
    import lsmgpu.problems.candidates as candidates
    whole = quadrant_candidates(points, k)
    monkeypatch.setattr(candidates, "QUADRANT_ROWS", 7)
    assert np.array_equal(quadrant_candidates(points, k), whole)


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


def hilbert_index(x: int, y: int, side: int) -> int:
    """The cell (x, y)'s place on the Hilbert curve over side x side cells (the textbook xy -> d)."""
    d, s = 0, side // 2
    while s > 0:
        rx, ry = int(x & s > 0), int(y & s > 0)
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = side - 1 - x, side - 1 - y
            x, y = y, x
        s //= 2
    return d


@pytest.mark.parametrize("order", [4, 8, 16])
def test_the_hilbert_tour_visits_the_cells_in_the_curves_order(order):
    """hilbert_tour's order (4 levels a step through its state tables) is the textbook curve's
    order of the cities' cells, ties kept in the cities' order; an order it cannot read is refused."""
    rng = np.random.default_rng(order)
    side = 1 << order
    cells = rng.integers(0, side, (2000, 2))
    cells[:2] = [[0, 0], [side - 1, side - 1]]          # the grid's corners span the box exactly
    cells[2:40] = cells[40:78]                           # cities sharing a cell
    index = [hilbert_index(int(x), int(y), side) for x, y in cells]
    assert np.array_equal(hilbert_tour(cells.astype(float), order), np.argsort(index, kind="stable"))
    with pytest.raises(ValueError, match="`order`"):
        hilbert_tour(cells, order + 2)


def test_bad_arguments(points):
    """More candidates than cities and coordinates that are not (n, 2) are refused, naming them."""
    with pytest.raises(ValueError, match="`k`"):
        nearest_candidates(points, 300)
    with pytest.raises(ValueError, match="shape"):
        quadrant_candidates(points[:, :1], 4)


def test_candidate_two_opt_moves_and_deltas(points):
    """Candidate 2-opt moves create the edge (c, candidate); their deltas equal re-evaluation,
    the null moves (edge already in the tour) included."""
    from lsmgpu import CandidateTwoOpt
    from tests.checks import assert_delta_is_reevaluation
    pts = points[:60]
    cand = nearest_candidates(pts, 5)
    tsp = TSP(pts, neighbourhood=CandidateTwoOpt(cand))
    rng = np.random.default_rng(1)
    tour = tsp.initial_solution(rng)
    assert_delta_is_reevaluation(tsp, tour)
    moves = tsp.neighbourhood.moves(tour, np.arange(tsp.neighbourhood.size))
    for q, (i, j) in enumerate(moves):
        if i == j:
            continue
        t = tour.copy()
        tsp.neighbourhood.apply(t, (i, j))
        c, c2 = q // 5, cand[q // 5, q % 5]
        pos = np.argsort(t)
        assert abs(pos[c] - pos[c2]) in (1, 59)   # c and its candidate are now tour neighbours


def test_candidate_two_opt_reverses_the_shorter_side(points):
    """A candidate 2-opt move longer than half the tour reverses the rest of the tour across
    its end instead (fewer positions written, the same cycle); its footprint covers what it
    changes, and disjoint moves applied together add up their deltas."""
    from lsmgpu import CandidateTwoOpt
    tsp = TSP(points[:10], neighbourhood=CandidateTwoOpt(nearest_candidates(points[:10], 3)))
    nb, tour = tsp.neighbourhood, np.arange(10)
    edges = lambda t: {frozenset(e) for e in zip(t.tolist(), np.roll(t, -1).tolist())}  # noqa: E731
    for move, changed in (((1, 8), [0, 9]), ((2, 9), [0, 1]), ((3, 5), [3, 5]), ((1, 5), [1, 2, 4, 5])):
        t, plain = tour.copy(), tour.copy()
        nb.apply(t, move)
        plain[move[0]:move[1] + 1] = plain[move[0]:move[1] + 1][::-1]
        assert edges(t) == edges(plain) and np.flatnonzero(t != tour).tolist() == changed
        first, last = nb.footprint(np.array([move]))
        covered = np.arange(first[0], last[0] + 1) % 10
        assert set(changed) <= set(covered.tolist())
    assert_delta_is_reevaluation(tsp, np.random.default_rng(0).permutation(10))


def test_candidate_two_opt_search_and_limits(points):
    """Hill climbing ends where no candidate move improves; tabu search refuses the
    neighbourhood, the GPU kernel finds its moves from the tour's positions (pos state) and
    refuses host generation of them, with clear errors."""
    from lsmgpu import CandidateTwoOpt, HillClimbing, TabuSearch
    from lsmgpu.kernels import render
    tsp = TSP(points, neighbourhood=CandidateTwoOpt(quadrant_candidates(points, 8)))
    result = HillClimbing(tsp, seed=0, backend="cpu").run()
    nb = tsp.neighbourhood
    assert result.status == "local_optimum"
    assert tsp.delta(result.solution, nb.moves(result.solution, np.arange(nb.size))).min() >= 0
    with pytest.raises(TypeError, match="tabu"):
        TabuSearch(tsp, backend="cpu").run(1)
    source = render(tsp)
    assert "move_at(const sol_t* x" in source and "d.pos" in source and "pos" in tsp.solution_data(result.solution)
    with pytest.raises(ValueError, match="generation='host'"):
        render(tsp, generation="host")
    with pytest.raises(ValueError, match="rows"):
        CandidateTwoOpt(np.zeros((5, 3), dtype=int)).bind(tsp.encoding)


def test_candidate_neighbourhood_by_name(points):
    """TSP(neighbourhood='2opt-candidates') builds 10 quadrant candidates per city; an ILS runs on it."""
    from lsmgpu import CandidateTwoOpt, IteratedLocalSearch
    tsp = TSP(points, neighbourhood="2opt-candidates")
    assert isinstance(tsp.neighbourhood, CandidateTwoOpt) and tsp.neighbourhood.size == 3000
    result = IteratedLocalSearch(tsp, rule="first", seed=0, backend="cpu").run(20)
    assert result.fitness == tsp.evaluate(result.solution) <= result.history[0]
    with pytest.raises(ValueError, match="coordinates"):
        TSP(matrix=np.ones((5, 5)) - np.eye(5), neighbourhood="2opt-candidates")


def check_block_exchanges(tsp, tour, owner):
    """Each move's delta equals the tour-length difference after applying it, the tour stays a
    permutation, and each valid move q makes city c adjacent to candidates[c, r], (c, r) =
    owner(q)."""
    assert_delta_is_reevaluation(tsp, tour)
    nb, n = tsp.neighbourhood, len(tour)
    index = np.arange(nb.size)
    for q, move in zip(index, nb.moves(tour, index)):
        if move[3] < 0:
            continue
        city, r = owner(q)
        after = tour.copy()
        nb.apply(after, move)
        assert np.array_equal(np.sort(after), np.arange(n))
        p = np.flatnonzero(after == city)[0]
        assert nb.candidates[city, r] in (after[p - 1], after[(p + 1) % n])


@settings(max_examples=40, deadline=None)
@given(st.integers(5, 60), st.integers(1, 3), st.integers(0, 10_000))
def test_oropt_delta_equals_tour_length_difference(n, max_length, seed):
    """Or-opt moves: deltas, permutations, and the first city next to its candidate."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 1000, (n, 2))
    tsp = TSP(points, neighbourhood=OrOpt(quadrant_candidates(points, min(8, n - 1)), max_length=max_length))
    k = tsp.neighbourhood.candidates.shape[1]
    check_block_exchanges(tsp, rng.permutation(n), lambda q: (q // 2 // k // max_length, q // 2 % k))


def test_oropt_ils_on_kroA100():
    """Iterated local search with Or-opt moves improves kroA100's nearest-neighbour start and
    ends at an Or-opt local optimum (no improving move left)."""
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="oropt")
    search = IteratedLocalSearch(tsp, seed=0, backend="cpu")
    result = search.run(iterations=30)
    start = tsp.evaluate(tsp.initial_solution(np.random.default_rng(0)))
    assert result.fitness < start and result.fitness == tsp.evaluate(result.solution)
    deltas = tsp.delta(result.solution, tsp.neighbourhood.moves(result.solution, np.arange(tsp.neighbourhood.size)))
    assert deltas.min() >= -1e-9


def test_oropt_rejects_bad_arguments():
    """Or-opt rejects bad arguments."""
    with pytest.raises(ValueError, match="max_length"):
        OrOpt(np.zeros((10, 2), dtype=int), max_length=0)
    with pytest.raises(ValueError, match="candidates"):
        TSP(np.random.default_rng(0).uniform(0, 1, (10, 2)), neighbourhood=OrOpt(np.zeros((9, 2), dtype=int)))


def exchange_source(move, p):
    """Mirror of templates/moves/block_exchange.cu.j2's exchange_source: the position whose city
    (before the exchange) lands on position p."""
    i, j, k, mode = move
    if mode < 0 or p < i or p > k:
        return p
    if mode == 3:
        return i + j - p if p <= j else j + 1 + k - p
    t, ly = p - i, k - j
    if t < ly:
        return k - t if mode == 2 else j + 1 + t
    return j - (t - ly) if mode == 1 else i + (t - ly)


def exchange_by_reversals(x, move):
    """Mirror of the kernel's exchange_blocks: the block exchange as two or three reversals."""
    i, j, k, mode = move
    if mode < 0:
        return
    for lo, hi, skip in ((i, j, 1), (j + 1, k, 2), (i, k, 3)):
        if mode != skip:
            x[lo:hi + 1] = x[lo:hi + 1][::-1].copy()


@settings(max_examples=40, deadline=None)
@given(st.integers(5, 60), st.integers(1, 8), st.integers(0, 10_000), st.sampled_from([3, 4]))
def test_three_opt_delta_equals_tour_length_difference(n, k, seed, reconnections):
    """Candidate 3-opt moves, with three and four reconnections: deltas, permutations, and each
    city next to its first candidate."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 1000, (n, 2))
    tsp = TSP(points, neighbourhood=CandidateThreeOpt(quadrant_candidates(points, min(k, n - 1)), reconnections))
    kk, r = tsp.neighbourhood.candidates.shape[1], reconnections
    check_block_exchanges(tsp, rng.permutation(n), lambda q: (q // r // kk // kk, q // r // kk % kk))


def test_the_fourth_reconnection_reverses_both_blocks_in_place():
    """Mode 3 of CandidateThreeOpt(reconnections=4) is a X' Y' b -> a rev(X) rev(Y) b: the new
    edges (c, c'), (x[a+1], its candidate) and the third that closes; with reconnections=3 no
    move has mode 3, and the other modes' moves are the same ones."""
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates")
    cand = tsp.neighbourhood.candidates
    three = tsp.with_neighbourhood(CandidateThreeOpt(cand)).neighbourhood
    four = tsp.with_neighbourhood(CandidateThreeOpt(cand, reconnections=4)).neighbourhood
    tour = np.random.default_rng(1).permutation(100)
    m3, m4 = three.moves(tour, np.arange(three.size)), four.moves(tour, np.arange(four.size))
    assert 3 not in m3[:, 3] and (m4[:, 3] == 3).sum() > 100
    assert np.array_equal(m4.reshape(-1, 4, 4)[:, :3], m3.reshape(-1, 3, 4))
    for move in m4[m4[:, 3] == 3][:50]:
        i, j, k, _ = move
        after = tour.copy()
        four.apply(after, move)
        assert np.array_equal(after[i:k + 1], np.concatenate([tour[i:j + 1][::-1], tour[j + 1:k + 1][::-1]]))
        assert tour[j] in cand[tour[i - 1]] and tour[k] in cand[tour[i]]
    for bad in (5, 3.0, True, "4"):
        with pytest.raises(ValueError, match="reconnections"):
            CandidateThreeOpt(cand, reconnections=bad)


def test_three_opt_improves_a_two_opt_local_optimum():
    """On kroA100 every reconnection mode has moves that apply to a random tour, and candidate
    3-opt improves the candidate 2-opt local optimum (moves 2-opt cannot make)."""
    from lsmgpu import HillClimbing
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates")
    three = tsp.with_neighbourhood(CandidateThreeOpt(tsp.neighbourhood.candidates))
    tour = np.random.default_rng(0).permutation(100)
    moves = three.neighbourhood.moves(tour, np.arange(three.neighbourhood.size))
    assert set(moves[:, 3]) == {-1, 0, 1, 2}
    two = HillClimbing(tsp, seed=0, backend="cpu").run()
    better = HillClimbing(three, seed=0, backend="cpu", initial=two.solution).run()
    assert better.fitness < two.fitness and better.fitness == tsp.evaluate(better.solution)


@settings(max_examples=30, deadline=None)
@given(st.integers(5, 200), st.integers(0, 10_000), st.sampled_from(["oropt", "3opt-candidates", "3opt-four"]))
def test_block_exchange_gpu_apply_logic_mirrors_the_cpu(n, seed, neighbourhood):
    """The GPU applies a block exchange (Or-opt, candidate 3-opt) as reversals and moves each
    city's position and edge length by exchange_source: on random tours, for every move (up to 1,000
    of them drawn at random on the larger tours), the reversals give the CPU's tour,
    exchange_source the new positions, and the edge lengths from position i-1 through k
    recomputed that way give the new tour's length."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 1000, (n, 2))
    if neighbourhood == "3opt-four":
        neighbourhood = CandidateThreeOpt(quadrant_candidates(points, min(10, n - 1)), reconnections=4)
    tsp = TSP(points, neighbourhood=neighbourhood)
    nb, tour = tsp.neighbourhood, rng.permutation(n)
    succ = tsp.dist(tour, np.roll(tour, -1))
    drawn = np.arange(nb.size) if nb.size <= 1000 else np.sort(rng.choice(nb.size, 1000, replace=False))
    for move in nb.moves(tour, drawn):
        expected = tour.copy()
        nb.apply(expected, move)
        reversed_ = tour.copy()
        exchange_by_reversals(reversed_, move)
        assert np.array_equal(reversed_, expected)
        moved = np.array([tour[exchange_source(move, p)] for p in range(n)])
        assert np.array_equal(moved, expected)
        i, k = int(move[0]), int(move[2])
        edges = succ.copy()
        for p in range(i - 1, k + 1):
            p %= n
            edges[p] = tsp.dist(moved[p], moved[(p + 1) % n])
        assert edges.sum() == tsp.evaluate(expected)


def test_independent_descent_polished_by_oropt_reaches_a_local_optimum_of_both():
    """A descent of independent moves (several per step) with Or-opt polishing, from kroA100's
    nearest-neighbour tour, ends where neither candidate 2-opt nor Or-opt improves."""
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates")
    oropt = OrOpt(tsp.neighbourhood.candidates)
    search = IteratedLocalSearch(tsp, rule="independent", polish=oropt, seed=0, backend="cpu")
    result = search.run(iterations=0)
    tour = result.solution
    assert result.fitness == tsp.evaluate(tour) < tsp.evaluate(tsp.initial_solution(np.random.default_rng(0)))
    for problem in (tsp, tsp.with_neighbourhood(oropt)):
        nb = problem.neighbourhood
        assert problem.delta(tour, nb.moves(tour, np.arange(nb.size))).min() >= 0


# --- the nearest cities on the GPU (lsmgpu/backends/cuda/nearest.py) -----------------------------
def brute_nearest(coords, count):
    """Each city's ``count`` nearest other cities by (squared distance, index): the GPU's order."""
    n = len(coords)
    d2 = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(axis=2)
    d2[np.arange(n), np.arange(n)] = np.inf
    order = np.lexsort((np.broadcast_to(np.arange(n), (n, n)), d2), axis=1)
    return order[:, :count]


def test_the_grid_covers_every_city_with_square_cells_of_about_two():
    """grid_of: every city falls in a cell of the grid, about two cities a cell on a uniform
    instance, and a degenerate one (cities on a line) still gets a grid of at most 2^15 cells a side."""
    from lsmgpu.backends.cuda.nearest import grid_of
    coords = np.random.default_rng(0).uniform(0, 1000, (20_000, 2))
    x0, y0, side, gx, gy = grid_of(coords)
    assert x0 + gx * side >= coords[:, 0].max() and y0 + gy * side >= coords[:, 1].max()
    assert 1.5 < len(coords) / (gx * gy) < 2.5
    line = np.stack([np.arange(5000.0), np.zeros(5000)], axis=1)
    _, _, side, gx, gy = grid_of(line)
    assert gy == 1 and gx <= 2**15 + 1 and gx * side >= 4999


@pytest.mark.nvcc
def test_the_nearest_kernel_compiles_for_sm90():
    """The nearest-cities kernel renders and compiles for every pool size the lists use."""
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    for pool in (10, 40):
        assert nvcc_compile(render_skeleton("nearest.cu.j2", POOL=pool))


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["uniform", "integer-ties", "clusters", "line-duplicates"])
def test_gpu_nearest_cities_equal_brute_force(kind):
    """The GPU's lists equal a brute-force sort by (squared distance, index), exactly: real
    coordinates, integer ones with many equal distances, clusters (crowded cells) and cities on a
    line with duplicates."""
    from lsmgpu.backends.cuda.nearest import nearest_on_gpu
    rng = np.random.default_rng(7)
    coords = {"uniform": rng.uniform(0, 1e4, (3000, 2)),
              "integer-ties": rng.integers(0, 60, (3000, 2)).astype(float),
              "clusters": np.concatenate([rng.normal(c, 5, (500, 2)) for c in rng.uniform(0, 1e5, (6, 2))]),
              "line-duplicates": np.stack([rng.integers(0, 500, 3000), np.zeros(3000)], axis=1).astype(float)}[kind]
    for count in (10, 40):
        assert np.array_equal(nearest_on_gpu(coords, count), brute_nearest(coords, count))


@pytest.mark.gpu
@pytest.mark.parametrize("k", [1, 3, 5, 10, 16])
def test_gpu_quadrant_picks_equal_the_hosts(k):
    """The GPU's quadrant picks (PER a quadrant, K < 4 by quadrant then nearness, the rest the
    nearest not chosen, in pool order) equal the host's on real coordinates, uniform and clustered."""
    from lsmgpu.backends.cuda.nearest import quadrant_on_gpu
    rng = np.random.default_rng(k)
    for coords in (rng.uniform(0, 1e4, (4000, 2)),
                   np.concatenate([rng.normal(c, 20, (800, 2)) for c in rng.uniform(0, 1e5, (5, 2))])):
        pool = min(len(coords) - 1, max(4 * k, 32))
        assert np.array_equal(quadrant_on_gpu(coords, k, pool), quadrant_candidates(coords, k))


@pytest.mark.gpu
def test_quadrant_lists_from_the_gpu_equal_the_k_d_trees(monkeypatch):
    """From GPU_NEAREST_FROM cities the quadrant lists come from the GPU's nearest cities: the same
    lists as the k-d tree's on real coordinates (no equal distances)."""
    import lsmgpu.problems.candidates as candidates
    coords = np.random.default_rng(3).uniform(0, 1e6, (50_000, 2))
    host, host_nearest = quadrant_candidates(coords, 10), nearest_candidates(coords, 8)
    monkeypatch.setattr(candidates, "GPU_NEAREST_FROM", 0)
    assert np.array_equal(quadrant_candidates(coords, 10), host)
    assert np.array_equal(nearest_candidates(coords, 8), host_nearest)


def test_a_failing_gpu_nearest_falls_back_to_the_k_d_tree_announced(monkeypatch):
    """Where the GPU's nearest cities fail (out of memory, a launch error), the k-d tree makes the
    lists, with a BackendFallback warning that says so; where no GPU answers, the k-d tree alone."""
    import lsmgpu.backends as backends
    import lsmgpu.backends.cuda.nearest as nearest
    import lsmgpu.problems.candidates as candidates
    from lsmgpu.errors import BackendFallback, KernelLaunchError
    coords = np.random.default_rng(4).uniform(0, 100, (500, 2))
    host = quadrant_candidates(coords, 8)
    monkeypatch.setattr(candidates, "GPU_NEAREST_FROM", 0)

    def fail(coords, *sizes):
        raise KernelLaunchError("out of memory")
    monkeypatch.setattr(backends, "cuda_available", lambda: (True, "a test GPU"))
    monkeypatch.setattr(nearest, "nearest_on_gpu", fail)
    monkeypatch.setattr(nearest, "quadrant_on_gpu", fail)
    with pytest.warns(BackendFallback, match="k-d tree"):
        assert np.array_equal(quadrant_candidates(coords, 8), host)
    monkeypatch.setattr(backends, "cuda_available", lambda: (False, "no GPU here"))
    assert np.array_equal(quadrant_candidates(coords, 8), host)


def test_the_gpu_nearest_cities_refuse_bad_lists_before_any_gpu_work():
    """nearest_on_gpu names a wrong shape or a list longer than n - 1 (or than a thread keeps)
    before it touches a GPU."""
    from lsmgpu.backends.cuda.nearest import MAX_COUNT, nearest_on_gpu
    coords = np.random.default_rng(0).uniform(0, 1, (50, 2))
    for bad, match in ((coords[:, :1], "shape"), (coords, "count")):
        with pytest.raises(ValueError, match=match):
            nearest_on_gpu(bad, 50 if bad is coords else 5)
    with pytest.raises(ValueError, match=str(MAX_COUNT)):
        nearest_on_gpu(np.random.default_rng(0).uniform(0, 1, (1000, 2)), MAX_COUNT + 1)


@pytest.mark.nvcc
def test_the_quadrant_kernel_compiles_for_sm90():
    """The quadrant picks' kernel renders and compiles for short and long lists (K < 4 included)."""
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    for pool, k in ((32, 1), (40, 10), (64, 16)):
        assert nvcc_compile(render_skeleton("nearest.cu.j2", POOL=pool, K=k, PER=max(1, k // 4)))
