"""The variable-depth LK chain of the don't-look descents (lsmgpu/backends/lk.py): every chain's
delta against the tour re-measured, the first stage against a brute force that applies each
chain's reversals to a copy of the tour, descents ending where no chain improves; on the GPU,
descents, ILS chains, focused ants and tour segments equal the NumPy reference with it."""
import numpy as np
import pytest

from lsmgpu import DontLookDescent, DontLookILS, FocusedACO, TourSegments
from lsmgpu.backends.cuda.dontlook import CHAIN_BLOCK
from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules, check_city
from lsmgpu.backends.tour_steps import apply_steps
from lsmgpu.backends.dontlook_chains import WALK_TRIES
from lsmgpu.backends.lk import lk_check, lk_stage
from lsmgpu.cubins import nvcc_compile
from lsmgpu.kernels import render_skeleton
from lsmgpu.problems import TSP

from .test_dontlook import (applied_change, assert_gpu_ants_equal_the_hosts, assert_gpu_rows_equal_the_hosts, length,
                            positions, tsp_of)
from .test_dontlook import rules_of as dontlook_rules


def rules_of(problem, k=6, depth=5, **moves):
    """test_dontlook's rules (quadrant candidates, segments of 3) with the LK chain of ``depth``."""
    return dontlook_rules(problem, k, lk_depth=depth, **moves)


def local_optima(problem, rules, rows=3, seed=0):
    """Tours descended by 2-opt, Or-opt, Or-3opt and LK3 moves (no LK chain): where chains start."""
    plain = DontLookRules(rules.candidates, 3, or3=True, lk=True)
    rng = np.random.default_rng(seed)
    descent = CpuDontLook(plain, problem.edge_distance(), rows)
    descent.load(np.stack([rng.permutation(problem.n) for _ in range(rows)]))
    descent.descend(np.ones(rows, bool))
    return descent.solutions().astype(np.int64)


@pytest.mark.parametrize("kind", ["int-coords", "real-coords", "matrix"])
@pytest.mark.parametrize("n,depth", [(8, 2), (13, 3), (60, 5), (250, 8), (250, 12)])
def test_every_chain_changes_the_length_by_its_delta(kind, n, depth):
    """From random tours and from local optima of the other moves, every improving chain keeps a
    tour and changes its length by its delta; chains longer than a stage occur (kept levels)."""
    problem = tsp_of(kind, n, seed=n)
    rules, between = rules_of(problem, depth=depth), problem.edge_distance().between
    rng = np.random.default_rng(n)
    tours = [rng.permutation(n) for _ in range(20)] + list(local_optima(problem, rules))
    longest = found = 0
    for x in tours:
        x = np.array(x, dtype=np.int64)
        pos = positions(x)
        for c in range(n):
            chain = lk_check(c, x, pos, rules, between)
            if chain is None:
                continue
            delta, number, steps, touched = chain
            assert applied_change(problem, x, pos, steps) == pytest.approx(delta, abs=1e-6) and delta < 0
            assert len(steps) <= depth and number == rules.moves and touched[0] == c
            longest, found = max(longest, len(steps)), found + 1
    assert found > 0
    if n >= 60:
        assert longest > lk_stage(depth)


def brute_first_stage(c, x, problem, rules):
    """The least closing delta (and its chain's number) over every chain of the first stage, each
    level made by really reversing a copy of the tour (the chain's rules written out plainly)."""
    n, K, s = len(x), rules.k, lk_stage(rules.lk_depth)
    dist = lambda a, b: float(problem.edge_distance().between(np.array([a]), np.array([b]))[0])  # noqa: E731
    best = (np.inf, -1)
    for number in range(2 * K ** s):
        way = 1 if number < K ** s else -1
        y = x.copy()
        pos = positions(y)
        t2 = int(y[(pos[c] + way) % n])
        gain, added, removed = dist(c, t2), [], [{c, t2}]
        for j in range(s):
            t3 = int(rules.candidates[t2, (number % K ** s) // K ** (s - 1 - j) % K])
            ahead = (pos[t3] - pos[c]) * way % n
            gain_left = gain - dist(t2, t3)
            if ahead < 3 or gain_left <= 0 or {t2, t3} in removed:
                break
            t4 = int(y[(pos[t3] - way) % n])
            if {t3, t4} in added + [{t2, t3}]:
                break
            apply_steps(y, pos, [((c, t2), (t3, t4))])      # may reverse the other side: way follows t4
            way = 1 if y[(pos[c] + 1) % n] == t4 else -1
            assert y[(pos[c] + way) % n] == t4
            gain = gain_left + dist(t3, t4)
            best = min(best, (dist(t4, c) - gain, number))
            added.append({t2, t3})
            removed.append({t3, t4})
            t2 = t4
    return best


@pytest.mark.parametrize("depth", [2, 3])
def test_a_single_stage_finds_the_brute_forces_best_chain(depth):
    """Where the chain has one stage, lk_check's move is the brute force's best improving one
    (its delta; the same number of levels' steps re-made by the chain)."""
    problem = tsp_of("int-coords", 40, seed=3)
    rules, between = rules_of(problem, k=5, depth=depth), problem.edge_distance().between
    compared = 0
    for x in list(local_optima(problem, rules, rows=4)) + [np.random.default_rng(5).permutation(40)]:
        for c in range(problem.n):
            expected, _ = brute_first_stage(c, x, problem, rules)
            chain = lk_check(c, x.copy(), positions(x), rules, between)
            if expected >= 0:
                assert chain is None
            else:
                assert chain is not None and chain[0] == expected
                compared += 1
    assert compared > 5


@pytest.mark.parametrize("or3", [False, True])
def test_descents_with_chains_end_where_no_chain_improves(or3):
    """Descents with the LK chain, repeated from every city until one makes no move (a change can
    open a chain to a city not queued: its chains read the whole tour's order), end where no city
    has an improving move or chain left (check_city finds none), shorter than without the chain
    (one city a round, as the chains' and ants' descents)."""
    problem = tsp_of("int-coords", 400, seed=9)
    rules = rules_of(problem, k=5, depth=6, or3=or3, lk=True)
    assert_descents_end_where_nothing_improves(problem, rules, DontLookRules(rules.candidates, 3, or3, True, 0))


def descended_until_still(problem, rules, start, wide: int = 1) -> np.ndarray:
    """``start`` descended by ``rules`` (``wide`` cities a round) again from every city until a
    descent makes no move (at most 20 descents), each ending at a tour of the length it reports."""
    descent = CpuDontLook(rules, problem.edge_distance(), 1, wide=wide)
    x = start
    for _ in range(20):
        descent.load(x[None])
        made, _, finished = descent.descend(np.ones(1, bool))
        x = descent.solutions()[0].astype(np.int64)
        assert finished and descent.values()[0] == length(problem, x)
        if made[0] == 0:
            break
    return x


def assert_descents_end_where_nothing_improves(problem, chained, plain):
    """One city a round (as the chains' and ants' descents), descents by ``chained`` rules repeated
    from every city until one makes no move end where check_city finds no move, shorter than
    those by the ``plain`` rules (the same without the chain) from the same random tour."""
    distance, start = problem.edge_distance(), np.random.default_rng(2).permutation(problem.n)
    ends = []
    for rules in (plain, chained):
        x = descended_until_still(problem, rules, start)
        ends.append(length(problem, x))
    pos = positions(x)
    assert all(check_city(c, x, pos, chained, distance.between) is None for c in range(problem.n))
    assert ends[1] < ends[0]


def test_lk_depth_is_checked_and_named(capsys):
    """lk_depth is an integer 0 .. 12, named in the error and in the descent's repr; the CLI
    takes it for the methods that descend with it and refuses it elsewhere."""
    from lsmgpu.cli import main
    with pytest.raises(ValueError, match="`lk_depth` is at most 12 for chains of 2-opt moves, got 13"):
        DontLookDescent(lk_depth=13)
    for bad in (-1, 401):
        with pytest.raises(ValueError, match="`lk_depth` must be an integer in"):
            DontLookDescent(lk_depth=bad)
    assert "lk_depth=6" in repr(DontLookDescent(lk_depth=6))
    problem = TSP.from_file(TSP.shipped("berlin52"))
    assert FocusedACO(problem, backend="cpu", lk_depth=4).rules.lk_depth == 4
    assert DontLookILS(problem, backend="cpu", lk_depth=5).rules.lk_depth == 5
    assert main(["solve", "berlin52", "--algorithm", "faco", "--backend", "cpu", "--iterations", "2",
                 "--lk-depth", "6"]) == 0
    said = capsys.readouterr()
    assert "LK chains of up to 6 moves" in said.out + said.err
    assert main(["solve", "berlin52", "--algorithm", "ils", "--backend", "cpu", "--iterations", "2",
                 "--lk-depth", "6"]) != 0
    assert "--lk-depth applies to --algorithm faco" in capsys.readouterr().err


@pytest.mark.nvcc
@pytest.mark.parametrize("depth,shared,segments", [(2, False, 0), (6, True, 0), (12, False, 1)])
def test_lk_kernel_compiles_for_sm90(depth, shared, segments):
    """The descents' kernel with the LK chain, one and several stages, tours in global or shared
    memory, the tour segments' rows."""
    device = tsp_of("int-coords", 20).edge_distance().device_source()
    assert nvcc_compile(render_skeleton("dontlook.cu.j2", K=5, S=3, OR3=1, LK=1, LK_DEPTH=depth,
                                        LK_STAGE=lk_stage(depth), BLOCK=CHAIN_BLOCK, DISTANCE=device,
                                        SHARED_ROWS=shared, WALK_TRIES=WALK_TRIES, SEGMENT_ROWS=segments,
                                        TABLE_WIDTH=2))


@pytest.mark.gpu
@pytest.mark.parametrize("kind,n,k,depth", [("int-coords", 300, 6, 5), ("real-coords", 200, 5, 8),
                                            ("matrix", 120, 10, 3), ("int-coords", 9, 8, 6), ("int-coords", 400, 5, 12)])
def test_gpu_descents_with_chains_equal_the_hosts(kind, n, k, depth):
    """The same tours, lengths, moves and checks as the NumPy reference with the LK chain."""
    problem = tsp_of(kind, n, seed=n)
    xs = np.stack([np.random.default_rng(r).permutation(n) for r in range(6)]).astype(np.int32)
    assert_gpu_rows_equal_the_hosts(rules_of(problem, k, depth, or3=True, lk=True), problem.edge_distance(), xs)


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["dontlook-ils", "faco", "segments"])
def test_gpu_searches_with_chains_equal_the_cpu_searches(method):
    """DontLookILS, FocusedACO and TourSegments with the LK chain: the same tour on both backends."""
    if method == "segments":
        rng = np.random.default_rng(12)
        problem = TSP(np.round(rng.uniform(0, 10**5, (3000, 2))), name="uniform3000")
        make = lambda b: TourSegments(problem, backend=b, seed=7, segment_cities=200, round_kicks=20,  # noqa: E731
                                      lk_depth=6)
        iterations = 2
    else:
        problem = TSP.from_file(TSP.shipped("kroA100"))
        make = (lambda b: DontLookILS(problem, chains=3, backend=b, seed=2, round_checks=100, lk_depth=6)) \
            if method == "dontlook-ils" else (lambda b: FocusedACO(problem, ants=6, backend=b, seed=2, lk_depth=6))
        iterations = 25
    runs = [make(b).run(iterations=iterations) for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


@pytest.mark.gpu
@pytest.mark.parametrize("share_rows", [True, False])
def test_gpu_ants_with_chains_equal_the_hosts(share_rows, monkeypatch):
    """Focused ants that walk, then descend with the LK chain on 1,200 cities: tours and lengths
    equal the reference's (an ant's walk queues its step's cities, a chain its own)."""
    from lsmgpu.backends.cuda import dontlook as cuda_dontlook
    from lsmgpu.backends.focused import FocusRules
    monkeypatch.setattr(cuda_dontlook, "SHARE_ROWS", share_rows)
    problem = tsp_of("int-coords", 1200, seed=4)
    rules = rules_of(problem, k=10, depth=6, or3=True)
    source = local_optima(problem, rules, rows=1)[0]
    assert_gpu_ants_equal_the_hosts(problem, rules, FocusRules(5, 16, 10**6), 8, source, 2)


def test_the_chain_is_on_by_default_on_a_gpu_only():
    """FocusedACO descends with chains of GPU_LK_DEPTH on a GPU, TourSegments with chains of
    SEGMENTS_LK_DEPTH, none on the CPU (the NumPy reference's chains are slow), unless lk_depth
    is given."""
    from lsmgpu.search.dontlook import GPU_LK_DEPTH, MAX_LK_DEPTH, default_lk_depth
    from lsmgpu.search.segments import SEGMENTS_LK_DEPTH

    class Gpu:
        name = "cuda"
    problem = TSP.from_file(TSP.shipped("berlin52"))
    assert FocusedACO(problem, backend="cpu").rules.lk_depth == 0
    assert FocusedACO(problem, backend="cpu", lk_depth=3).rules.lk_depth == 3
    assert TourSegments(problem, backend="cpu").descent.lk_depth == 0
    assert default_lk_depth(None, Gpu()) == GPU_LK_DEPTH == 6 and default_lk_depth(2, Gpu()) == 2
    assert default_lk_depth(None, Gpu(), SEGMENTS_LK_DEPTH) == SEGMENTS_LK_DEPTH == 9
    assert default_lk_depth(None, Gpu(), SEGMENTS_LK_DEPTH) <= MAX_LK_DEPTH
