"""LKH's sequential 5-opt basis move in the don't-look descents (lsmgpu/backends/kopt.py, ``lk_move=5``):
every chain's delta against the tour re-measured, a stage's first improving closing and kept move
against a brute force that checks each closing's edges for one cycle, a closing at t2, descents ending where no
5-opt chain improves, the option checked and named, the GPU kernel's table and room, and on a GPU
the descents, chains and ants equal to the reference's."""
import math
import pickle
import warnings

import numpy as np
import pytest

from lsmgpu import DontLookDescent
from lsmgpu.backends.cuda.dontlook import chain_room
from lsmgpu.backends.dontlook import DontLookRules
from lsmgpu.backends.kopt import (KOPT_CANDIDATES, STAGE_LEVELS, _stage, _steps, kopt_check, lengths_of, order_code,
                                  kopt_context, reversal_keys, reversal_table)
from lsmgpu.backends.tour_steps import edge_lengths
from lsmgpu.errors import BackendFallback

from .test_dontlook import (applied_change, assert_gpu_ants_equal_the_hosts, assert_gpu_rows_equal_the_hosts, positions,
                            tsp_of)
from .test_lk import assert_descents_end_where_nothing_improves, local_optima


def rules_of(problem, depth: int, k: int = 8, penalties=None) -> DontLookRules:
    """Quadrant candidates (k a city), Or-opt segments of 3 and the 5-opt chain of ``depth`` levels."""
    from .test_dontlook import rules_of as dontlook_rules
    plain = dontlook_rules(problem, k)
    return DontLookRules(plain.candidates, 3, lk_depth=depth, lk_move=5, penalties=penalties)


def one_cycle(n: int, edges) -> bool:
    """Whether ``edges`` (pairs of cities) make one cycle through all n cities."""
    ends = {city: [] for city in range(n)}
    for a, b in edges:
        ends[a].append(b)
        ends[b].append(a)
    if len(edges) != n or any(len(around) != 2 for around in ends.values()):
        return False
    before, at, walked = -1, 0, 0
    while True:
        before, at = at, ends[at][0] if ends[at][0] != before else ends[at][1]
        walked += 1
        if at == 0:
            return walked == n


def brute_sequences(c, t2, x, problem, candidates, levels, pi):
    """Every sequence of one stage from t1 = c and t2 in LKH's depth-first order (the module's
    rules written again as LKH's recursion, the gain criterion over d + π), each as (cities t1 ..
    t2j, G, real lengths removed less added, whether its closing makes one cycle)."""
    n, d = len(x), problem.dist
    pos = positions(x)
    tour = {frozenset((int(x[i]), int(x[(i + 1) % n]))) for i in range(n)}

    def cost(a, b):
        return float(d(a, b)) + pi[a] + pi[b]

    def around(city):
        return int(x[(pos[city] + 1) % n]), int(x[(pos[city] - 1) % n])

    def extend(t, gain, real, added, removed):
        if len(added) == levels:
            return
        free = t[-1]
        for t3 in map(int, candidates[free, :KOPT_CANDIDATES]):
            g = gain - cost(free, t3)
            if g <= 0 or t3 in around(free) or frozenset((free, t3)) in added:
                continue
            for t4 in around(t3):
                if t4 == c or frozenset((t3, t4)) in removed:
                    continue
                now_added, now_removed = added | {frozenset((free, t3))}, removed | {frozenset((t3, t4))}
                now_real = real - float(d(free, t3)) + float(d(t3, t4))
                edges = (tour - now_removed) | now_added | {frozenset((t4, c))}
                closes = one_cycle(n, [tuple(edge) for edge in edges])
                yield t + [t3, t4], g + cost(t3, t4), now_real, closes
                yield from extend(t + [t3, t4], g + cost(t3, t4), now_real, now_added, now_removed)
    yield from extend([c, t2], cost(c, t2), float(d(c, t2)), frozenset(), frozenset({frozenset((c, t2))}))


def brute_stage(c, x, problem, candidates, levels, pi):
    """The first improving closing of one stage from c (t2 its predecessor, then its successor)
    in depth-first order, a closing counting where its edges make one cycle and the real lengths
    shrink: its change of length, or None."""
    n, pos = len(x), positions(x)
    for t2 in (int(x[(pos[c] - 1) % n]), int(x[(pos[c] + 1) % n])):
        for t, _, real, closes in brute_sequences(c, t2, x, problem, candidates, levels, pi):
            if closes and float(problem.dist(t[-1], c)) - real < 0:
                return float(problem.dist(t[-1], c)) - real
    return None


@pytest.mark.parametrize("kind", ["int-coords", "real-coords", "matrix"])
@pytest.mark.parametrize("n,depth", [(8, 2), (13, 4), (60, 8), (120, 12), (120, 60)])
def test_every_5opt_chain_changes_the_length_by_its_delta(kind, n, depth):
    """From random tours and from local optima of the other moves, every improving 5-opt chain
    keeps a tour and changes its length by its delta; on the larger tours with coordinates chains
    of two and more stages occur (a kept non-improving 5-opt move, then the improving one; the
    matrix kind's candidates come from unrelated points)."""
    problem = tsp_of(kind, n, seed=n)
    rng = np.random.default_rng(n)
    rules, between = rules_of(problem, depth, penalties=rng.uniform(-20, 20, n)), problem.edge_distance().between
    found = deep = 0
    for x in [rng.permutation(n) for _ in range(4)] + list(local_optima(problem, rules)):
        x = np.array(x, dtype=np.int64)
        for c in range(n):
            pos = positions(x)
            chain = kopt_check(c, x, pos, rules, between)
            if chain is None:
                continue
            delta, number, steps, touched = chain
            assert np.array_equal(pos, positions(x))                      # the check leaves the tour alone
            assert applied_change(problem, x.copy(), pos.copy(), steps) == pytest.approx(delta, abs=1e-6)
            assert delta < 0 and number == rules.moves and touched[0] == c
            found += 1
            deep += len(touched) > 2 * (STAGE_LEVELS + 1)
    assert found > 0
    if n >= 60 and kind != "matrix":
        assert deep > 0


@pytest.mark.parametrize("with_penalties", [False, True])
@pytest.mark.parametrize("n,seed", [(10, 1), (14, 2), (19, 3), (30, 4)])
def test_a_stage_finds_the_brute_forces_first_closing(n, seed, with_penalties):
    """With one stage (lk_depth 4: up to 5 removed edges) kopt_check's move is the first improving
    sequential move in LKH's depth-first order whose closing makes one cycle, found by a recursion
    one sequence at a time, with and without penalties in the gain criterion; None exactly where
    the recursion finds none (local optima of the other moves give such cities)."""
    problem = tsp_of("int-coords", n, seed=seed)
    pi = np.random.default_rng(seed).uniform(-80, 80, n) if with_penalties else np.zeros(n)
    rules, between = rules_of(problem, STAGE_LEVELS, k=6, penalties=pi), problem.edge_distance().between
    tours = list(local_optima(problem, rules, rows=2, seed=seed)) + [np.random.default_rng(seed).permutation(n)]
    none = some = 0
    for x in tours:
        x = np.array(x, dtype=np.int64)
        for c in range(n):
            expected = brute_stage(c, x, problem, rules.candidates, STAGE_LEVELS, pi)
            chain = kopt_check(c, x, positions(x), rules, between)
            if expected is None:
                assert chain is None
                none += 1
            else:
                assert chain is not None and chain[0] == pytest.approx(expected)
                some += 1
    assert some > 0 and none > 0


@pytest.mark.parametrize("n,seed,tours", [(12, 5, 3), (16, 6, 3), (25, 3, 1)])
def test_a_stage_keeps_the_largest_gain_that_may_go_on(n, seed, tours):
    """Where no closing improves, a stage keeps the closing after its last level with the largest
    G (ties: the first in depth-first order) among those whose G is at least the cheapest
    non-tour candidate edge of the last city and whose last removed edge is not one the chain
    added before (LKH's best non-gainful 5-opt move), as a brute force over the sequences finds
    (from every city of ``tours`` random tours)."""
    problem = tsp_of("int-coords", n, seed=seed)
    rng = np.random.default_rng(seed)
    pi = rng.uniform(-40, 40, n)
    rules = rules_of(problem, STAGE_LEVELS, k=6, penalties=pi)
    cand = rules.candidates[:, :KOPT_CANDIDATES]
    dist = edge_lengths(problem.edge_distance().between)
    cost = lambda a, b: dist(a, b) + pi[a] + pi[b]                                  # noqa: E731
    lengths = lengths_of(rules, problem.edge_distance().between)
    kept = none = 0
    for x in [rng.permutation(n) for _ in range(tours)]:
        x, pos = np.array(x, dtype=np.int64), positions(np.array(x))
        added = [(int(x[i]), int(x[i + 1])) for i in rng.choice(n - 1, 3, replace=False)]
        for c in range(n):
            t2 = int(x[(pos[c] - 1) % n])
            _, found = _stage(c, t2, float(cost(c, t2)), x, pos, lengths, STAGE_LEVELS, added)
            best = None
            for t, G, _, closes in brute_sequences(c, t2, x, problem, cand, STAGE_LEVELS, pi):
                t9, t10 = t[-2], t[-1]
                others = [o for o in cand[t10] if o not in (x[(pos[t10] + 1) % n], x[(pos[t10] - 1) % n])]
                cheapest = min((float(cost(t10, o)) for o in others), default=np.inf)
                if len(t) == 2 * STAGE_LEVELS + 2 and closes and G >= cheapest and \
                        not any({t9, t10} == {a, b} for a, b in added) and (best is None or G > best[0]):
                    best = (G, t)
            if best is None:
                assert found is None
                none += 1
            else:
                assert found is not None and found[0] == pytest.approx(best[0]) and list(found[2]) == best[1]
                kept += 1
    assert kept > 0 and none > 0


@pytest.mark.parametrize("n,seed", [(30, 7), (60, 8)])
def test_a_closing_at_t2_puts_the_first_removed_edge_back(n, seed):
    """A stage's closings whose last city is t2 itself (as LKH's Best5OptMove allows; only t1 is
    refused) make one tour that holds {t1, t2} again, changed in length by the closing's delta;
    on random tours such closings occur."""
    problem = tsp_of("int-coords", n, seed=seed)
    rng = np.random.default_rng(seed)
    rules = rules_of(problem, STAGE_LEVELS, k=6, penalties=rng.uniform(-20, 20, n))
    lengths = lengths_of(rules, problem.edge_distance().between)
    at_t2 = 0
    for x in [rng.permutation(n) for _ in range(3)]:
        x = np.array(x, dtype=np.int64)
        pos = positions(x)
        for c in range(n):
            t2 = int(x[(pos[c] + 1) % n])
            closings, _ = _stage(c, t2, float(lengths.cost(c, t2)), x, pos, lengths, STAGE_LEVELS, [])
            for delta, _, t, ports in closings:
                for i in np.flatnonzero((t[:, -1] == t2) & np.isfinite(delta))[:2]:
                    y, where = x.copy(), pos.copy()
                    assert applied_change(problem, y, where, _steps(t[i], ports[i], x, pos)) == pytest.approx(delta[i])
                    assert t2 in (y[(where[c] + 1) % n], y[(where[c] - 1) % n])
                    at_t2 += 1
    assert at_t2 > 0


def test_5opt_descents_end_where_no_chain_improves():
    """Descents with the 5-opt chain, repeated from every city until one makes no move, end where
    no city has an improving move or chain left, shorter than the descents without a chain."""
    problem = tsp_of("int-coords", 150, seed=9)
    rules = rules_of(problem, 8)
    assert_descents_end_where_nothing_improves(problem, rules, DontLookRules(rules.candidates, 3, lk_move=5))


def test_lk_move_is_checked_and_named():
    """lk_move is 2 or 5, named in the error and in the descent's repr and kept by the rules; with
    the α-nearest the rules carry the ascent's penalties (TSP.penalties(), the same ascent), a
    segment's rules none."""
    for bad in (3, "5", True):
        with pytest.raises(ValueError, match="`lk_move` must be one of"):
            DontLookDescent(lk_move=bad)
    descent = DontLookDescent(lk_depth=4, lk_move=5)
    assert "lk_move=5" in repr(descent) and "lk_move" not in repr(DontLookDescent(lk_depth=4))
    problem = tsp_of("int-coords", 30)
    rules = descent.bound(problem)
    assert rules.lk_move == 5 and rules.with_candidates(rules.candidates).lk_move == 5 and rules.penalties is None
    alpha_rules = DontLookDescent("alpha", lk_depth=4, lk_move=5).bound(problem)
    assert alpha_rules.candidates.shape == (30, 5)                     # the ascent runs here, once
    assert np.array_equal(alpha_rules.penalties, problem.penalties()) and problem.penalties().shape == (30,)
    assert np.abs(problem.penalties()).sum() > 0 and alpha_rules.with_candidates(alpha_rules.candidates).penalties is None


def test_the_chains_depth_is_capped_by_its_moves():
    """A chain of 2-opt moves goes to MAX_LK_DEPTH levels, one of 5-opt moves (made on the GPU's
    tour) to MAX_KOPT_DEPTH; deeper is refused, naming lk_depth."""
    from lsmgpu.search.dontlook import MAX_KOPT_DEPTH, MAX_LK_DEPTH
    assert DontLookDescent(lk_depth=MAX_LK_DEPTH).lk_depth == MAX_LK_DEPTH < MAX_KOPT_DEPTH
    assert DontLookDescent(lk_depth=MAX_KOPT_DEPTH, lk_move=5).lk_depth == MAX_KOPT_DEPTH
    for depth, move in ((MAX_LK_DEPTH + 1, 2), (MAX_KOPT_DEPTH + 1, 5), (MAX_KOPT_DEPTH + 1, 2)):
        with pytest.raises(ValueError, match="lk_depth"):
            DontLookDescent(lk_depth=depth, lk_move=move)
    with pytest.raises(ValueError, match=f"at most {MAX_LK_DEPTH} for chains of 2-opt moves.*lk_move=5"):
        DontLookDescent(lk_depth=40)


def test_the_reversal_table_holds_every_order_and_the_room_every_chain():
    """The GPU's table of reversals has every order of 2 .. 5 stretches once, each made by its
    reversals from the stretches in order; chain_room holds the most steps and cities a chain of
    stages can have (5 reversals at most a stage)."""
    table = reversal_table()
    assert len({(j, code) for j, code, _ in table}) == len(table) == sum(
        math.factorial(j - 1) * 2 ** (j - 1) for j in range(2, STAGE_LEVELS + 2))
    for j, code, reversals in table:
        state = [(s, 1) for s in range(1, j)]
        for a, b in reversals:
            state[a - 1:b] = [(s, -sign) for s, sign in reversed(state[a - 1:b])]
        assert order_code(tuple(state)) == code
    assert max(len(r) for _, _, r in table) == 5
    for depth in (4, 8, 12, 100, 400):
        steps, touched = chain_room(rules_of(tsp_of("int-coords", 20), depth))
        assert steps == 5 * -(-depth // STAGE_LEVELS) and touched == 1 + (2 * STAGE_LEVELS + 1) * -(-depth // STAGE_LEVELS)


def test_the_reversal_keys_find_every_row_by_halves():
    """reversal_keys holds each row of the table once under j 2^16 + code (every code under 2^16),
    ascending, so the kernel's search in halves (a lower bound over the keys, as written below) finds
    each closing's own row, and a key that is not there finds no row of its (j, code)."""
    table = reversal_table()
    keys = reversal_keys(table)
    assert sorted(row for _, row in keys) == list(range(len(table)))
    assert [key for key, _ in keys] == sorted({key for key, _ in keys}) and max(c for _, c, _ in table) < 2**16

    def lower_bound(want):
        low, last = 0, len(keys) - 1
        while low < last:
            mid = (low + last) // 2
            low, last = (mid + 1, last) if keys[mid][0] < want else (low, mid)
        return keys[low][1]

    for j, code, _ in table:
        assert table[lower_bound(j * 2**16 + code)][:2] == (j, code)
    assert table[lower_bound(3 * 2**16 + 2**15)][:2] != (3, 2**15)


@pytest.mark.nvcc
@pytest.mark.parametrize("depth,shared,segments", [(4, False, 0), (400, True, 0), (8, False, 1)])
def test_kopt_kernel_compiles_for_sm90(depth, shared, segments):
    """The descents' kernel with the 5-opt chain, one and several stages up to the deepest (its
    shared memory within the block's static 48 KB), tours in global or shared memory, the tour
    segments' rows."""
    from lsmgpu.backends.cuda.dontlook import KOPT_CHAIN_BLOCK
    from lsmgpu.backends.dontlook_chains import WALK_TRIES
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    device = tsp_of("int-coords", 20).edge_distance().device_source()
    assert nvcc_compile(render_skeleton("dontlook.cu.j2", K=6, S=3, OR3=1, LK=1, LK_DEPTH=depth, LK_STAGE=3, LK_MOVE=5,
                                        **kopt_context(KOPT_CANDIDATES), BLOCK=KOPT_CHAIN_BLOCK, DISTANCE=device,
                                        SHARED_ROWS=shared, WALK_TRIES=WALK_TRIES,
                                        SEGMENT_ROWS=segments, TABLE_WIDTH=2))


@pytest.mark.nvcc
@pytest.mark.parametrize("kind", ["CudaDontLook", "CudaChains", "CudaFocusedAnts"])
def test_the_5opt_kernels_build_quick(kind):
    """Each don't-look class's 5-opt kernels (its KERNELS: chains of 100 levels alone over 5
    candidates, rows in shared memory) build with a quick build's options (QUICK_BUILD_OPTIONS, the
    compiler's fast compile, as a first run builds them first): an option this nvcc refuses fails here."""
    from lsmgpu.backends.cuda import dontlook, dontlook_chains, focused
    from lsmgpu.backends.cuda.driver import QUICK_BUILD_OPTIONS
    from lsmgpu.backends.dontlook_chains import WALK_TRIES
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    cls = {"CudaDontLook": dontlook.CudaDontLook, "CudaChains": dontlook_chains.CudaChains,
           "CudaFocusedAnts": focused.CudaFocusedAnts}[kind]
    device = tsp_of("int-coords", 20).edge_distance().device_source()
    source = render_skeleton("dontlook.cu.j2", K=5, S=3, OR3=0, LK=0, LK_DEPTH=100, LK_STAGE=3, LK_MOVE=5,
                             **kopt_context(KOPT_CANDIDATES), KO_ALONE=1,
                             BLOCK=dontlook.KOPT_CHAIN_BLOCK, DISTANCE=device, SHARED_ROWS=True, WALK_TRIES=WALK_TRIES,
                             SEGMENT_ROWS=0, TABLE_WIDTH=2, KERNELS=cls.kernels)
    assert QUICK_BUILD_OPTIONS[-1].startswith("--Ofast-compile=")
    assert all(name.encode() in nvcc_compile(source, options=QUICK_BUILD_OPTIONS) for name in cls.kernels)


def penalized_rules(problem, k: int, depth: int, seed: int, with_penalties: bool) -> DontLookRules:
    """The 5-opt chain's rules over quadrant candidates with random real penalties (or none)."""
    pi = np.random.default_rng(seed).uniform(-30, 30, problem.n) if with_penalties else None
    return rules_of(problem, depth, k=k, penalties=pi)


@pytest.mark.gpu
@pytest.mark.parametrize("kind,n,k,depth,rows,with_penalties", [
    ("int-coords", 200, 6, 4, 6, False), ("int-coords", 300, 8, 12, 6, True), ("matrix", 90, 5, 8, 4, True),
    ("int-coords", 9, 5, 8, 3, False), ("real-coords", 150, 6, 8, 4, True), ("int-coords", 700, 6, 8, 1, True),
    ("int-coords", 400, 5, 60, 4, True), ("real-coords", 300, 5, 100, 3, False), ("int-coords", 600, 5, 100, 1, True)])
def test_gpu_5opt_descents_equal_the_hosts(kind, n, k, depth, rows, with_penalties):
    """The same tours, lengths, moves and checks as the NumPy reference with the 5-opt chain, one
    and several stages up to deep chains (their kept moves made on the rows' tours and undone),
    with and without penalties; a lone row checked wide (the kept moves read as reversals)."""
    problem = tsp_of(kind, n, seed=n)
    xs = np.stack([np.random.default_rng(r).permutation(n) for r in range(rows)]).astype(np.int32)
    assert_gpu_rows_equal_the_hosts(penalized_rules(problem, k, depth, n, with_penalties), problem.edge_distance(), xs)


@pytest.mark.gpu
@pytest.mark.parametrize("depth", [8, 60])
@pytest.mark.parametrize("share_rows", [True, False])
def test_gpu_5opt_chains_and_ants_equal_the_hosts(share_rows, depth, monkeypatch):
    """ILS chains and focused ants descending with the 5-opt chain, of two stages and of many: the
    same tours, lengths and counters as the host's, their tours in shared or global memory."""
    from lsmgpu.backends.cuda import dontlook as cuda_dontlook
    monkeypatch.setattr(cuda_dontlook, "SHARE_ROWS", share_rows)
    problem = tsp_of("int-coords", 160, seed=3)
    assert_gpu_chains_and_ants_equal_the_hosts(problem, penalized_rules(problem, 6, depth, 3, True), 5)


def assert_gpu_chains_and_ants_equal_the_hosts(problem, rules, rounds: int) -> None:
    """Four ILS chains (``rounds`` launches of 29 checks) and four focused ants (three iterations)
    on the GPU from random tours of ``problem``: the same tours, lengths and counters as the host's."""
    from lsmgpu.backends import resolve
    from lsmgpu.backends.dontlook_chains import CpuChains, KickRules, kick_spans
    from lsmgpu.backends.focused import FocusRules
    n, distance, B = problem.n, problem.edge_distance(), 4
    xs = np.stack([np.random.default_rng(r).permutation(n) for r in range(B)]).astype(np.int32)
    kicks = KickRules(11, kick_spans(n, 20, B, 4.0), 25, 0)
    host, chains = CpuChains(rules, kicks, distance, B), resolve("cuda").dontlook_chains(rules, kicks, distance, B)
    try:
        host.load(xs)
        chains.load(xs)
        for _ in range(rounds):
            assert chains.advance(29) == host.advance(29)
            assert np.array_equal(chains.solutions(), host.solutions()) and np.array_equal(chains.bests(), host.bests())
    finally:
        chains.close()
    assert_gpu_ants_equal_the_hosts(problem, rules, FocusRules(17, 8, 10**6), B, xs[0], 3)


@pytest.mark.gpu
def test_gpu_improve_with_the_5opt_chain_equals_the_cpus():
    """improve() with the deep 5-opt chain over the α-nearest (the ascent's penalties) gives the
    CPU's tours and lengths on the GPU, with no fallback announced."""
    from lsmgpu.parallel import improve
    problem = tsp_of("int-coords", 120, seed=4)
    tours = np.stack([np.random.default_rng(r).permutation(120) for r in range(3)])
    descent = DontLookDescent("alpha", lk_depth=40, lk_move=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BackendFallback)
        on_gpu = improve(problem, tours, descent, backend="cuda")
    on_cpu = improve(problem, tours, descent, backend="cpu")
    assert np.array_equal(on_gpu.solutions, on_cpu.solutions) and np.array_equal(on_gpu.fitness, on_cpu.fitness)


def test_the_command_takes_the_5opt_chains_where_measured(monkeypatch, capsys, tmp_path):
    """`lsmgpu solve` on a GPU gives focused ACO (chosen or given: --algorithm faco) the 5-opt chains alone over the
    α-nearest and restarts after FIVE_OPT_RESTART_AFTER iterations for a TSP of FIVE_OPT_CITIES cities run for
    FIVE_OPT_SECONDS or more (a resumed run: its checkpoint's budget) unless --candidates, --lk-depth or --lk-move
    is given (--no-chain-alone and --restart-after kept), with them the candidate lists from the ants' tours after
    ANT_LISTS_AFTER iterations in a run of ANT_LISTS_SECONDS or more (--ant-lists kept) and with the lists
    ANT_LISTS_MOVES moved cities from ANT_LISTS_MOVES_FROM cities (--moves kept), and with the lists bridging moves
    in a run of BRIDGES_SECONDS or more below BRIDGES_BELOW cities (--bridges / --no-bridges kept), with them at most
    BRIDGES_ANTS ants (--ants kept); a resumed run
    takes the options its checkpoint keeps where no flag gives them (one that keeps none: as its budget decides);
    --lk-move, --chain-alone and --restart-after are named where they do not apply, a chain alone without 5-opt
    chains is refused, and a run with them says so."""
    import lsmgpu.cli as cli
    import lsmgpu.cli_method as method
    import lsmgpu.cli_population as defaults
    from lsmgpu import FocusedACO
    from lsmgpu.cli import main
    from lsmgpu.problems import TSP
    assert main(["solve", "berlin52", "--algorithm", "faco", "--backend", "cpu", "--iterations", "2", "--lk-depth", "4",
                 "--lk-move", "5"]) == 0
    assert "LK chains of up to 4 5-opt moves" in capsys.readouterr().err
    assert main(["solve", "berlin52", "--algorithm", "mmas", "--backend", "cpu", "--iterations", "1", "--lk-move", "5"]) != 0
    assert "--lk-move applies to --algorithm faco or dontlook-ils" in capsys.readouterr().err
    assert main(["solve", "berlin52", "--algorithm", "faco", "--backend", "cpu", "--iterations", "2", "--lk-depth", "8",
                 "--lk-move", "5", "--chain-alone", "--restart-after", "3"]) == 0
    assert "LK chains of up to 8 5-opt moves alone" in capsys.readouterr().err
    for flags, named in ((["--algorithm", "mmas", "--chain-alone"], "--chain-alone / --no-chain-alone apply to"),
                         (["--algorithm", "dontlook-ils", "--restart-after", "5"], "--restart-after applies to"),
                         (["--algorithm", "faco", "--chain-alone"], "`chain_alone` needs chains of 5-opt moves")):
        assert main(["solve", "berlin52", "--backend", "cpu", "--iterations", "1"] + flags) != 0
        assert named in capsys.readouterr().err
    saved, kept = tmp_path / "faco.ckpt", tmp_path / "faco-kept.ckpt"
    FocusedACO(TSP.from_file(TSP.shipped("berlin52")), backend="cpu", seed=1, ants=4).run(
        iterations=1, seconds=60, checkpoint=str(kept))
    payload = pickle.loads(kept.read_bytes())
    del payload["options"]                              # as an older lsmgpu wrote it: the budget decides
    saved.write_bytes(pickle.dumps(payload))
    seen = {}
    monkeypatch.setattr(method, "cuda_available", lambda: (True, "a test GPU"))
    monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: seen.update(vars(args)))
    five = ("alpha", defaults.FIVE_OPT_DEPTH, 5, True, defaults.FIVE_OPT_RESTART_AFTER, defaults.ANT_LISTS_AFTER)
    none = (None,) * 6
    below = f"{defaults.ANT_LISTS_SECONDS - 0.5:g}"
    for cities, flags, expected in ((range(52, 53), ["--seconds", "60"], five),
                                    (range(52, 53), ["--resume", str(saved)], five),
                                    (range(52, 53), ["--resume", str(kept)], (None, None, 2, False, 300, None)),
                                    (range(52, 53), ["--resume", str(kept), "--restart-after", "7"],
                                     (None, None, 2, False, 7, None)),
                                    (range(52, 53), ["--seconds", "60", "--no-chain-alone", "--restart-after", "7"],
                                     five[:3] + (False, 7, defaults.ANT_LISTS_AFTER)),
                                    (range(52, 53), ["--seconds", below], five[:5] + (0,)),
                                    (range(52, 53), ["--seconds", below, "--ant-lists", "4"], five[:5] + (4,)),
                                    (range(52, 53), ["--seconds", "60", "--ant-lists", "0"], five[:5] + (0,)),
                                    (range(52, 53), ["--seconds", f"{defaults.FIVE_OPT_SECONDS:g}"], five[:5] + (0,)),
                                    (range(52, 53), ["--seconds", f"{defaults.FIVE_OPT_SECONDS - 0.5:g}"], none),
                                    (range(52, 53), [], none),
                                    (range(53, 60), ["--seconds", "60"], none),
                                    (range(52, 53), ["--seconds", "60", "--lk-depth", "6"], (None, 6) + none[2:]),
                                    (range(52, 53), ["--seconds", "60", "--candidates", "8"], (8,) + none[1:])):
        monkeypatch.setattr(defaults, "FIVE_OPT_CITIES", cities)
        for given in ([], ["--algorithm", "faco"]):
            main(["solve", "berlin52", "--quiet"] + given + flags)
            chosen = tuple(seen[k] for k in ("candidates", "lk_depth", "lk_move", "chain_alone", "restart_after",
                                             "ant_lists"))
            assert seen["algorithm"] == "faco" and chosen == expected, flags
    monkeypatch.setattr(defaults, "FIVE_OPT_CITIES", range(52, 53))
    for moves_from, flags, moves in ((52, ["--seconds", "60"], defaults.ANT_LISTS_MOVES),
                                     (53, ["--seconds", "60"], None),
                                     (52, ["--seconds", "60", "--moves", "100"], 100),
                                     (52, ["--seconds", below], None),
                                     (52, ["--seconds", "60", "--ant-lists", "0"], None)):
        monkeypatch.setattr(defaults, "ANT_LISTS_MOVES_FROM", moves_from)
        main(["solve", "berlin52", "--quiet"] + flags)
        assert seen["moves"] == moves, (moves_from, flags)
    for below, flags, bridges in ((53, ["--seconds", "60"], True),
                                  (52, ["--seconds", "60"], None),
                                  (53, ["--seconds", "60", "--no-bridges"], False),
                                  (53, ["--seconds", f"{defaults.BRIDGES_SECONDS - 0.5:g}"], None),
                                  (53, ["--seconds", "60", "--ant-lists", "0"], None),
                                  (53, ["--resume", str(saved)], True),
                                  (53, ["--resume", str(kept)], False)):
        monkeypatch.setattr(defaults, "BRIDGES_BELOW", below)
        main(["solve", "berlin52", "--quiet"] + flags)
        assert seen["bridges"] == bridges, (below, flags)
    monkeypatch.setattr(defaults, "BRIDGES_BELOW", 53)
    for most, flags, ants in ((32, ["--seconds", "60"], 32),
                              (256, ["--seconds", "60"], 64),           # berlin52's own default, 64, is less
                              (32, ["--seconds", "60", "--ants", "100"], 100),
                              (32, ["--seconds", "60", "--no-bridges"], None),
                              (32, ["--seconds", f"{defaults.BRIDGES_SECONDS - 0.5:g}"], None),
                              (32, ["--resume", str(saved)], 32),
                              (32, ["--resume", str(kept)], 4)):
        monkeypatch.setattr(defaults, "BRIDGES_ANTS", most)
        main(["solve", "berlin52", "--quiet"] + flags)
        assert seen["ants"] == ants, (most, flags)
    assert main(["solve", "berlin52", "--quiet", "--resume", str(tmp_path / "none.ckpt")]) == 2
    assert "--resume: no checkpoint at" in capsys.readouterr().err


def test_the_colonies_and_the_genetic_algorithm_take_the_5opt_descent():
    """MMAS and the memetic GA take a DontLookDescent with the 5-opt chain as their local search:
    their best is a tour of the length they report, within 1 % of kroA100's optimum in a few
    iterations."""
    from lsmgpu import GeneticAlgorithm, MaxMinAntSystem
    from lsmgpu.problems import TSP
    problem = TSP.from_file(TSP.shipped("kroA100"))
    descent = DontLookDescent("alpha", lk_depth=8, lk_move=5)
    for result in (MaxMinAntSystem(problem, ants=8, local_search=descent, backend="cpu", seed=1).run(iterations=3),
                   GeneticAlgorithm(problem, genes=16, local_search=descent, backend="cpu", seed=1).run(iterations=2)):
        assert np.array_equal(np.sort(result.solution), np.arange(problem.n))
        assert problem.evaluate(result.solution) == result.fitness <= 1.01 * problem.best_known
