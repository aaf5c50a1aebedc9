"""The 5-opt chain alone (``chain_alone``: LKH's LK, no 2-opt or Or-opt move evaluated first): a
check is the chain's, descents end where no chain improves, the option is refused where there is
no 5-opt chain and carried by the rules and the searches, the kernel compiles with it, and on a
GPU its descents, chains and ants equal the reference's."""
import numpy as np
import pytest

from lsmgpu import DontLookDescent
from lsmgpu.backends.cuda.dontlook import chain_room, keeps_moves, wide_city_bytes
from lsmgpu.backends.dontlook import DontLookRules, check_city
from lsmgpu.backends.kopt import KOPT_CANDIDATES, STAGE_LEVELS, kopt_check, kopt_context
from lsmgpu.backends.tour_steps import apply_steps

from .test_dontlook import assert_gpu_rows_equal_the_hosts, length, positions, tsp_of
from .test_kopt import assert_gpu_chains_and_ants_equal_the_hosts, rules_of
from .test_lk import descended_until_still


def alone_rules(problem, depth: int, k: int = 6, penalties=None) -> DontLookRules:
    """rules_of's 5-opt chain of ``depth`` levels, alone."""
    plain = rules_of(problem, depth, k, penalties)
    return DontLookRules(plain.candidates, plain.segment, lk_depth=depth, lk_move=5, penalties=penalties,
                         chain_alone=True)


def test_a_check_is_the_chain_alone_even_where_a_2opt_move_improves():
    """With chain_alone, check_city returns kopt_check's chain (number ``moves``) on a random tour,
    where the best 2-opt or Or-opt move would be taken otherwise, and the chain's delta is the
    tour's change."""
    problem = tsp_of("int-coords", 120, seed=5)
    alone, mixed = alone_rules(problem, 12), rules_of(problem, 12, 6)
    x = np.random.default_rng(1).permutation(problem.n)
    pos, between = positions(x), problem.edge_distance().between
    differ = 0
    for c in range(40):
        found, plain = check_city(c, x, pos, alone, between), check_city(c, x, pos, mixed, between)
        chain = kopt_check(c, x, pos, alone, between)
        assert (found is None) == (chain is None)
        if found is not None:
            assert found[0] == chain[0] and found[1] == alone.moves and found[2] == chain[2] and found[3] == chain[3]
            moved, moved_pos = x.copy(), pos.copy()
            apply_steps(moved, moved_pos, found[2])
            assert length(problem, moved) - length(problem, x) == found[0] < 0
        differ += plain is not None and plain[1] < mixed.moves
    assert differ > 0                                                  # the other moves would have been taken


def test_descents_of_the_chain_alone_end_where_no_chain_improves():
    """One city a round and wide, descents with the chain alone end where no city has an improving
    chain, at a tour of the length they report, shorter than the random start."""
    problem = tsp_of("int-coords", 150, seed=9)
    rules, distance = alone_rules(problem, 12), problem.edge_distance()
    start = np.random.default_rng(2).permutation(problem.n)
    for wide in (1, 8):
        x = descended_until_still(problem, rules, start, wide)
        pos = positions(x)
        assert all(kopt_check(c, x, pos, rules, distance.between) is None for c in range(problem.n))
        assert length(problem, x) < length(problem, start)


def test_chain_alone_is_checked_named_and_carried():
    """chain_alone needs lk_move 5 and a depth (refused naming it otherwise), is a flag, shows in
    the descent's repr, and is kept by the rules, a segment's rules and the searches' params; a
    check of the chain alone counts its first level's 2-opt closings (2 K, K at most 5), no 2-opt
    or Or-opt move of the other rules."""
    from lsmgpu.search.dontlook_ils import DontLookILSParams
    from lsmgpu.search.focused import FocusedParams
    for options in ({"lk_depth": 8}, {"lk_move": 5}, {}):
        with pytest.raises(ValueError, match="`chain_alone` needs chains of 5-opt moves"):
            DontLookDescent(chain_alone=True, **options)
    with pytest.raises((TypeError, ValueError), match="chain_alone"):
        DontLookDescent(lk_depth=8, lk_move=5, chain_alone="yes")
    descent = DontLookDescent(lk_depth=8, lk_move=5, chain_alone=True)
    assert "chain_alone=True" in repr(descent) and "chain_alone" not in repr(DontLookDescent(lk_depth=8, lk_move=5))
    rules = descent.bound(tsp_of("int-coords", 30))
    assert rules.chain_alone and rules.with_candidates(rules.candidates).chain_alone
    assert rules.moves == 2 * KOPT_CANDIDATES < DontLookDescent(lk_depth=8, lk_move=5).bound(tsp_of("int-coords", 30)).moves
    assert rules.with_candidates(rules.candidates[:, :3]).moves == 6     # t2 either side, t3 among 3 candidates
    assert DontLookDescent("alpha", lk_depth=8, lk_move=5, chain_alone=True).bound(tsp_of("int-coords", 30)).chain_alone
    assert FocusedParams(chain_alone=True).chain_alone and DontLookILSParams(chain_alone=True).chain_alone


def test_wide_rounds_copy_the_tour_only_where_chains_keep_moves():
    """A wide round's city has room for its block's copy of the tour (8 n bytes) exactly where a
    chain may keep a move (5-opt chains deeper than a stage)."""
    problem = tsp_of("int-coords", 40)
    for depth, move, keeps in ((STAGE_LEVELS, 5, False), (STAGE_LEVELS + 1, 5, True), (12, 2, False), (0, 5, False)):
        rules = DontLookRules(rules_of(problem, 4).candidates, 3, lk_depth=depth, lk_move=move)
        steps, touched = chain_room(rules)
        assert keeps_moves(rules) == keeps
        assert wide_city_bytes(rules, 1000) == 20 + 16 * steps + 4 * touched + (8000 if keeps else 0)


@pytest.mark.nvcc
@pytest.mark.parametrize("depth,shared", [(12, False), (100, True)])
def test_the_chain_alone_kernel_compiles_for_sm90(depth, shared):
    """The descents' kernel with the chain alone (KO_ALONE), rows in global and shared memory."""
    from lsmgpu.backends.cuda.dontlook import KOPT_CHAIN_BLOCK
    from lsmgpu.backends.dontlook_chains import WALK_TRIES
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    device = tsp_of("int-coords", 20).edge_distance().device_source()
    assert nvcc_compile(render_skeleton("dontlook.cu.j2", K=5, S=3, OR3=0, LK=0, LK_DEPTH=depth, LK_STAGE=3, LK_MOVE=5,
                                        **kopt_context(KOPT_CANDIDATES),
                                        KO_ALONE=1, BLOCK=KOPT_CHAIN_BLOCK, DISTANCE=device, SHARED_ROWS=shared,
                                        WALK_TRIES=WALK_TRIES, SEGMENT_ROWS=0, TABLE_WIDTH=2))


@pytest.mark.nvcc
@pytest.mark.parametrize("shared", [False, True])
def test_each_gpu_class_builds_only_its_own_kernels(shared):
    """A descent's, the chains' and the focused ants' builds of dontlook.cu.j2 each hold the
    kernels their class launches (its ``kernels``, the template's KERNELS) and no other, and
    compile; without KERNELS the source holds all seven (the compile checks' sources). The sources
    are the kernel-builds probe's (benchmarks/probes/kernel_builds.py)."""
    import re

    from benchmarks.probes.kernel_builds import BUILDS, five_opt_source
    from lsmgpu.cubins import nvcc_compile

    def built(source):
        return re.findall(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(', source)
    assert built(five_opt_source(None, shared)) == [
        "descend", "wide_examine", "wide_apply", "chains", "adopt", "focused", "focused_pheromone"]
    for _, kernels in BUILDS[1:]:
        source = five_opt_source(kernels, shared)
        assert built(source) == list(kernels)
        assert nvcc_compile(source)


@pytest.mark.gpu
@pytest.mark.parametrize("n,depth,rows", [(300, 12, 4), (500, 100, 1), (400, 40, 1), (200, 4, 3)])
def test_gpu_descents_of_the_chain_alone_equal_the_hosts(n, depth, rows):
    """The same tours, lengths, moves and checks as the reference with the chain alone, one block
    a row and a lone row checked wide (its blocks' kept moves made on their own copies)."""
    problem = tsp_of("int-coords", n, seed=n)
    pi = np.random.default_rng(n).uniform(-30, 30, n)
    xs = np.stack([np.random.default_rng(r).permutation(n) for r in range(rows)]).astype(np.int32)
    assert_gpu_rows_equal_the_hosts(alone_rules(problem, depth, 5, pi), problem.edge_distance(), xs)


@pytest.mark.gpu
@pytest.mark.parametrize("share_rows", [True, False])
def test_gpu_chains_and_ants_of_the_chain_alone_equal_the_hosts(share_rows, monkeypatch):
    """ILS chains and focused ants descending with the chain alone (60 levels): the same tours,
    lengths and counters as the host's, their tours in shared or global memory."""
    from lsmgpu.backends.cuda import dontlook as cuda_dontlook
    monkeypatch.setattr(cuda_dontlook, "SHARE_ROWS", share_rows)
    problem = tsp_of("int-coords", 160, seed=3)
    rules = alone_rules(problem, 60, 6, np.random.default_rng(3).uniform(-30, 30, 160))
    assert_gpu_chains_and_ants_equal_the_hosts(problem, rules, 4)


@pytest.mark.gpu
def test_gpu_ants_launch_where_their_tour_and_the_chains_room_pass_48_kb_together():
    """Focused ants of 5,950 cities (a tour and positions of 47,600 bytes in shared memory) with
    chains of 100 levels (a Shared struct of some KB): the launch opts in past 48 KB, and every ant's
    tour is a permutation of the length the build reports."""
    from lsmgpu.backends import resolve
    from lsmgpu.backends.focused import FocusRules
    problem = tsp_of("int-coords", 5950, seed=7)
    rules, distance = alone_rules(problem, 100, 5), problem.edge_distance()
    ants = resolve("cuda").focused_ants(rules, FocusRules(5, 8, 10**6), distance, 2, 2.0)
    try:
        assert ants.row_shared == 8 * problem.n
        source = np.random.default_rng(0).permutation(problem.n)
        ants.start(source, float(problem.evaluate(source)), 0.3)
        lengths = ants.build(0)
        for b in range(2):
            assert np.array_equal(np.sort(ants.tour(b)), np.arange(problem.n))
            assert problem.evaluate(ants.tour(b)) == lengths[b]
    finally:
        ants.close()
