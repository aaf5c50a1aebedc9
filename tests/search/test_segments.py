"""Tour segments: the cut's candidates against their definition, every splice keeps a tour and
changes its length by the chains' gain, a segment's ends stay fixed, the decomposition reaches a
2-opt + Or-opt local optimum of a 10,000-city tour, checkpoints, errors; on the GPU, the chains
and the search equal the host's."""
import numpy as np
import pytest

from lsmgpu import TourSegments
from lsmgpu.backends import resolve
from lsmgpu.backends.cuda.dontlook import CHAIN_BLOCK
from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules, check_city
from lsmgpu.backends.dontlook_chains import WALK_TRIES, KickRules
from lsmgpu.backends.segments import FIXED_LENGTH, CpuSegmentChains, SegmentCut, fixed_end_source
from lsmgpu.cubins import nvcc_compile
from lsmgpu.kernels import render_skeleton
from lsmgpu.problems import TSP
from lsmgpu.problems.candidates import hilbert_tour, quadrant_candidates


def uniform(n: int, seed: int = 0) -> TSP:
    return TSP(np.round(np.random.default_rng(seed).uniform(0, 10_000, (n, 2))), name=f"uniform{n}")


def cut_of(problem, m, offset, seed=0, k=8, lk=False, or3=False):
    tour = np.random.default_rng(seed).permutation(problem.n)
    cand = quadrant_candidates(problem.coords, k)
    return tour, cand, SegmentCut(tour, m, offset, DontLookRules(cand, 3, or3=or3, lk=lk), problem.edge_distance().table,
                                  problem.dist)


@pytest.mark.parametrize("n,m,offset", [(100, 10, 0), (103, 10, 57), (64, 32, 63)])
def test_the_cut_renumbers_each_citys_candidates_in_its_own_segment(n, m, offset):
    """Segment k holds the tour's m cities from offset + k m on; a city's local candidates are its
    global candidates in the same segment, renumbered, the others its tour neighbour in the segment;
    the crossing cities are those with a candidate elsewhere or in no segment."""
    problem = uniform(n, seed=n)
    tour, cand, cut = cut_of(problem, m, offset)
    B = n // m
    assert cut.ids.shape == (B, m)
    rolled = np.roll(tour, -offset)
    assert np.array_equal(cut.ids.ravel(), rolled[:B * m])
    crossing = set(rolled[B * m:].tolist())
    for k in range(B):
        members = {int(c): i for i, c in enumerate(cut.ids[k])}
        for i, c in enumerate(cut.ids[k]):
            for j, g in enumerate(cand[c]):
                expected = members.get(int(g), i + 1 if i < m - 1 else i - 1)
                assert cut.candidates[k, i, j] == expected
            if any(int(g) not in members for g in cand[c]):
                crossing.add(int(c))
    assert set(cut.crossing.tolist()) == crossing
    assert np.array_equal(cut.table.reshape(B, m, 2), problem.coords[cut.ids].astype(cut.table.dtype))


def test_a_segments_lengths_count_the_closing_edge_as_minus_fixed():
    """A chain's tour length is its path's length minus FIXED_LENGTH (the closing edge {m-1, 0})."""
    problem = uniform(60, seed=3)
    _, _, cut = cut_of(problem, 20, 5)
    start = cut.identity()
    paths = [problem.dist(row[:-1], row[1:]).sum() for row in cut.ids]
    assert np.array_equal(cut.lengths(start), np.array(paths, float) - FIXED_LENGTH)
    assert np.array_equal(cut.start_lengths, cut.lengths(start))
    shuffled = np.array([np.random.default_rng(k).permutation(20) for k in range(3)])
    cycles = [problem.dist(cut.ids[k][x], cut.ids[k][np.roll(x, -1)]) for k, x in enumerate(shuffled)]
    closing = [np.isin(np.sort([x, np.roll(x, -1)], axis=0).T.tolist(), [[0, 19]]).all(axis=1) for x in shuffled]
    expected = [np.where(c, -FIXED_LENGTH, d).sum() for d, c in zip(cycles, closing)]
    assert np.array_equal(cut.lengths(shuffled), np.array(expected, float))
    between = cut.between_of(1)
    assert between(np.array([0, 19, 3]), np.array([19, 0, 4]))[:2].tolist() == [-FIXED_LENGTH] * 2


def run_round(problem, m, offset, kicks, seed=0, k=8, lk=False, or3=False):
    tour, cand, cut = cut_of(problem, m, offset, seed=seed, k=k, lk=lk, or3=or3)
    rules = DontLookRules(cand, 3, or3=or3, lk=lk)
    chains = CpuSegmentChains(rules, KickRules(seed, 5, kicks), cut.rows)
    chains.set_cut(cut)
    chains.load(cut.identity())
    while not chains.advance(256):
        pass
    return tour, cut, chains


@pytest.mark.parametrize("lk,or3", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("n,m,offset,kicks", [(300, 50, 17, 20), (211, 30, 200, 5), (64, 32, 1, 40)])
def test_every_splice_keeps_a_tour_with_fixed_ends_and_never_lengthens_it(n, m, offset, kicks, lk, or3):
    """Every chain's best path runs from its segment's first city to its last (the ends fixed); the
    spliced tour is a permutation whose length is the old one less the chains' gains, never more."""
    problem = uniform(n, seed=n)
    tour, cut, chains = run_round(problem, m, offset, kicks, lk=lk, or3=or3)
    before, after = cut.lengths(cut.identity()), chains.bests()
    assert np.all(after <= before) and np.any(after < before)
    paths, kept = cut.paths(chains.best_solutions(np.arange(cut.rows)))
    assert kept.all() and np.all(paths[:, 0] == 0) and np.all(paths[:, -1] == m - 1)
    for k in range(cut.rows):
        assert np.array_equal(np.sort(paths[k]), np.arange(m))
        path = cut.ids[k][paths[k]]
        assert problem.dist(path[:-1], path[1:]).sum() == after[k] + FIXED_LENGTH
    rows = np.flatnonzero(after < before)
    spliced = cut.splice(chains.best_solutions(rows), rows)
    assert np.array_equal(np.sort(spliced), np.arange(n))
    assert problem.evaluate(spliced) == problem.evaluate(tour) - (before[rows] - after[rows]).sum()
    untouched = np.setdiff1d(np.arange(cut.rows), rows)
    rolled = np.roll(spliced, -cut.offset)
    assert np.array_equal(rolled[:cut.rows * m].reshape(-1, m)[untouched], cut.ids[untouched])
    assert np.array_equal(rolled[cut.rows * m:], np.roll(tour, -cut.offset)[cut.rows * m:])


def test_a_chain_that_lost_its_closing_edge_is_not_spliced():
    """paths() reports a cycle without the edge {m-1, 0} (no chain accepts one) and gives the
    segment in tour order for it."""
    problem = uniform(40, seed=1)
    _, _, cut = cut_of(problem, 10, 0)
    x = cut.identity().copy()
    x[1] = [0, 5, 9, 1, 2, 3, 4, 6, 7, 8]
    paths, kept = cut.paths(x)
    assert kept.tolist() == [True, False, True, True] and np.array_equal(paths[1], np.arange(10))


def test_the_decomposition_reaches_a_local_optimum_of_a_4000_city_tour():
    """Rounds of segment descents (every city of a segment queued) and the whole tour's descent from
    the crossing cities until a round changes nothing: then no city of the 4,000 has an improving
    2-opt or Or-opt move left (the NumPy reference, the CPU backend)."""
    problem = uniform(4000, seed=4)
    search = TourSegments(problem, backend="cpu", seed=0, round_kicks=0, segment_cities=400, candidates=8,
                          descent_every=1)
    result = search.run(iterations=30, stagnation=1)
    assert result.status == "stagnation" and result.iterations < 30
    assert result.fitness < problem.fitness(problem.initial_solution(np.random.default_rng(0)))
    rules, between = search.rules, problem.edge_distance().between
    x = result.solution.astype(np.int64)
    pos = np.empty_like(x)
    pos[x] = np.arange(len(x))
    assert all(check_city(c, x, pos, rules, between) is None for c in range(problem.n))


def test_the_whole_tours_descent_starts_from_unsettled_crossing_cities_alone():
    """Don't-look bits across rounds: a 2-opt move unsettles the cities near its four ends (along
    the tour, and those with one among their candidates) and no other; the whole tour's descents of
    a run start from fewer cities than cross its cuts, and the run still ends at a local optimum
    (the 4,000-city test above)."""
    problem = uniform(2000, seed=3)
    search = TourSegments(problem, backend="cpu", seed=0, round_kicks=0, segment_cities=200, candidates=8,
                          descent_every=1, lk=False)
    search.run(iterations=4)
    assert 0 < search.descended_share < search.crossing_share
    search.settled[:] = True
    before = search.tour.copy()
    after = before.copy()
    after[500:900] = after[500:900][::-1]                  # edges {499, 500} and {899, 900} replaced
    moved = search._unsettle(before, after)
    ends = before[[499, 500, 899, 900]]
    assert sorted(moved) == sorted(ends)
    places = np.empty(problem.n, dtype=np.int64)
    places[after] = np.arange(problem.n)
    reach = search.params.segment + 1
    near = np.zeros(problem.n, dtype=bool)
    for end in ends:
        near[after[(places[end] + np.arange(-reach, reach + 1)) % problem.n]] = True
    near |= near[search.rules.candidates].any(axis=1)
    assert np.array_equal(~search.settled, near)


def test_a_round_splices_improvements_and_the_result_is_its_tour():
    """Rounds of kicked chains: the result is a tour, its fitness the exact length, each round's
    best recorded and never worse than the last."""
    problem = uniform(1200, seed=6)
    search = TourSegments(problem, backend="cpu", seed=3, segment_cities=100, round_kicks=10, descent_every=2)
    result = search.run(iterations=3)
    assert np.array_equal(np.sort(result.solution), np.arange(problem.n))
    assert result.fitness == problem.evaluate(result.solution) and result.iterations == 3
    assert np.all(np.diff(result.history) <= 0) and result.work == (search.kicks, "kicks") and search.kicks > 0


def test_a_round_cut_short_counts_no_crossing_cities():
    """Ctrl-C inside a round's chains leaves the rounds and the crossing cities as the last whole
    round left them, so the crossing share stays a share (at most 1)."""
    problem = uniform(1200, seed=6)
    search = TourSegments(problem, backend="cpu", seed=3, segment_cities=100, round_kicks=10)
    search.start(iterations=5)
    search.step()
    rounds, crossing = search.rounds, search.crossing
    assert rounds == 1 and 0 < crossing <= problem.n

    def interrupted(*args):
        raise KeyboardInterrupt
    search.chains.advance = interrupted
    with pytest.raises(KeyboardInterrupt):
        search.step()
    assert (search.rounds, search.crossing) == (rounds, crossing) and search.crossing_share <= 1


def test_a_checkpointed_run_resumes_to_the_uninterrupted_tour(tmp_path):
    """Two rounds, a checkpoint, two more: the tour of four rounds at once."""
    problem = uniform(600, seed=2)
    make = lambda: TourSegments(problem, backend="cpu", seed=5, segment_cities=60, round_kicks=5)   # noqa: E731
    whole = make().run(iterations=4)
    path = tmp_path / "segments.ckpt"
    make().run(iterations=2, checkpoint=path)
    resumed = make().resume(path, iterations=4)
    assert np.array_equal(resumed.solution, whole.solution) and resumed.fitness == whole.fitness


def test_a_budget_spent_in_the_set_up_returns_the_start_tour():
    """seconds=0 returns the start tour, not a traceback."""
    problem = uniform(500, seed=8)
    start = np.random.default_rng(1).permutation(500)
    result = TourSegments(problem, backend="cpu", initial=start).run(seconds=0)
    assert np.array_equal(result.solution, start) and result.status == "seconds"


def test_a_descent_loaded_from_some_cities_checks_only_those():
    """CpuDontLook.load(xs, cities) queues the cities given, in that order."""
    problem = uniform(200, seed=9)
    rows = CpuDontLook(DontLookRules(quadrant_candidates(problem.coords, 8), 3), problem.edge_distance(), 2)
    xs = np.stack([np.random.default_rng(s).permutation(200) for s in (0, 1)])
    rows.load(xs, np.array([5, 3, 7]))
    assert rows.queues == [[5, 3, 7], [5, 3, 7]]


def test_the_start_is_the_hilbert_curve_or_the_problems():
    """Without `initial` the run starts from the cities along a Hilbert curve; start="problem"
    from the problem's own start tour; another value is refused, naming it."""
    problem = uniform(300, seed=5)
    curve = TourSegments(problem, backend="cpu").run(iterations=0)
    assert np.array_equal(curve.solution, hilbert_tour(problem.coords))
    own = TourSegments(problem, backend="cpu", start="problem", seed=1).run(iterations=0)
    assert np.array_equal(own.solution, problem.initial_solution(np.random.default_rng(1)))
    with pytest.raises(ValueError, match="`start` must be 'curve' or 'problem'"):
        TourSegments(problem, backend="cpu", start="greedy")


def test_segments_refuse_what_they_cannot_cut():
    """A matrix instance, a tour too short, a wrong option: errors naming them."""
    matrix = TSP(matrix=uniform(30).matrix, name="m30")
    with pytest.raises(ValueError, match="no coordinates"):
        TourSegments(matrix, backend="cpu")
    with pytest.raises(ValueError, match="at least 16 cities"):
        TourSegments(uniform(12), backend="cpu")
    with pytest.raises(TypeError, match="did you mean 'round_kicks'"):
        TourSegments(uniform(100), backend="cpu", round_kick=3)
    with pytest.raises(ValueError, match="segment_cities"):
        TourSegments(uniform(100), backend="cpu", segment_cities=4)


@pytest.mark.nvcc
def test_the_segment_chains_kernel_compiles_for_sm90():
    """The chains' kernel with SEGMENT_ROWS, the fixed-end distance over coordinates."""
    for problem in (uniform(20), TSP(np.random.default_rng(0).uniform(0, 1, (20, 2)), name="real20")):
        device = fixed_end_source(problem.edge_distance().device_source())
        for shared in (True, False):
            assert nvcc_compile(render_skeleton("dontlook.cu.j2", K=8, S=3, OR3=0, LK=1, BLOCK=CHAIN_BLOCK,
                                                DISTANCE=device, SHARED_ROWS=shared, WALK_TRIES=WALK_TRIES,
                                                SEGMENT_ROWS=1, TABLE_WIDTH=2))


@pytest.mark.gpu
@pytest.mark.parametrize("lk,walk,or3", [(False, 0, False), (True, 0, False), (False, 3, False), (True, 3, True)])
def test_gpu_segment_chains_equal_the_hosts(lk, walk, or3):
    """Every chain's best tour and length after a round, GPU and NumPy reference."""
    problem = uniform(2000, seed=11)
    tour, cand, cut = cut_of(problem, 150, 77, k=8, lk=lk, or3=or3)
    rules, kicks = DontLookRules(cand, 3, or3=or3, lk=lk), KickRules(4, 10, 30, walk)
    cpu = CpuSegmentChains(rules, kicks, cut.rows)
    gpu = resolve("cuda").segment_chains(rules, kicks, problem.edge_distance(), cut.rows, 150)
    try:
        for chains in (cpu, gpu):
            chains.set_cut(cut)
            chains.load(cut.identity())
            while not chains.advance(100):
                pass
        rows = np.arange(cut.rows)
        assert np.array_equal(cpu.bests(), gpu.bests())
        assert np.array_equal(cpu.best_solutions(rows), gpu.best_solutions(rows))
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_search_equals_the_cpu_search():
    """Three rounds with the whole tour's descent, GPU and CPU: the same tour."""
    problem = uniform(3000, seed=12)
    runs = [TourSegments(problem, backend=b, seed=7, segment_cities=200, round_kicks=20, lk_depth=0).run(iterations=3)
            for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


def test_the_command_runs_the_segments_and_picks_them_for_large_tours_on_a_gpu(monkeypatch, capsys, tmp_path):
    """`lsmgpu solve --algorithm segments` runs them (with --lk and --candidates); on a GPU a TSP
    from SEGMENTS_FROM cities gets them by default, a smaller one focused ACO, and a clustered one
    (berlin52: clustering 4) focused ACO up to CLUSTERED_SEGMENTS_FROM cities."""
    import lsmgpu.cli as cli
    import lsmgpu.cli_method as method
    from lsmgpu.cli import main
    assert main(["solve", "berlin52", "--algorithm", "segments", "--backend", "cpu", "--iterations", "2", "--lk",
                 "--candidates", "8"]) == 0
    err = capsys.readouterr().err
    assert "TourSegments on berlin52 (n = 52, 2 segments of 26 cities" in err and "LK3" in err
    assert main(["solve", "berlin52", "--algorithm", "segments", "--backend", "cpu", "--iterations", "1", "--no-lk"]) == 0
    assert "LK3" not in capsys.readouterr().err
    seen = {}
    monkeypatch.setattr(method, "cuda_available", lambda: (True, "a test GPU"))
    monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: seen.update(vars(args)))
    cities = uniform(400, seed=3).coords
    even = tmp_path / "even400.tsp"
    even.write_text("NAME : even400\nTYPE : TSP\nDIMENSION : 400\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
                    + "".join(f"{i + 1} {x} {y}\n" for i, (x, y) in enumerate(cities)) + "EOF\n")
    for instance, segments_from, clustered_from, expected in (
            ("berlin52", 52, 52, "segments"), ("berlin52", 53, 53, "faco"), ("berlin52", 52, 53, "faco"),
            (str(even), 400, 401, "segments"), (str(even), 401, 401, "faco")):
        monkeypatch.setattr(method, "SEGMENTS_FROM", segments_from)
        monkeypatch.setattr(method, "CLUSTERED_SEGMENTS_FROM", clustered_from)
        main(["solve", instance, "--quiet"])
        assert seen["algorithm"] == expected, (instance, segments_from, clustered_from)
