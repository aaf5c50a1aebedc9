"""Bridging moves (LKH's Gain23 of the first kind): the search against a brute force over its
definition (every split of positive gain, every join, the tour rebuilt from its edges), the
ants' descents with them (no bridging move left, lengths re-measured), the option's errors; the
kernel compiled; on the GPU, the ants equal the host's."""
import numpy as np
import pytest

from lsmgpu import FocusedACO
from lsmgpu.backends.bridge import find_bridge
from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules
from lsmgpu.backends.focused import CpuFocusedAnts, FocusRules
from lsmgpu.backends.kopt import KOPT_CANDIDATES
from lsmgpu.problems import TSP

from .test_dontlook import assert_gpu_ants_equal_the_hosts, cycle_of_edges, length, positions, rules_of, tsp_of


def brute_force(problem, x, candidates):
    """Every bridging move by its definition, in the search's order: (gain, new tour) of each, the
    tour rebuilt from the edges left and added."""
    n, pos, d = len(x), positions(x), problem.dist
    edges = {tuple(sorted((int(x[i]), int(x[(i + 1) % n])))) for i in range(n)}
    found = []
    for way in (1, -1):
        for q in range(n):
            for rank in range(candidates.shape[1]):
                s1, s2 = int(x[q]), int(x[(q + way) % n])
                s3 = int(candidates[s2, rank])
                s4 = int(x[(pos[s3] + way) % n])
                if s3 in (s1, int(x[(q + 2 * way) % n])) or s4 == s1:
                    continue
                split = d(s1, s2) - d(s2, s3) + d(s3, s4) - d(s4, s1)
                if split <= 0:
                    continue
                a = [int(x[(pos[s2] + way * i) % n]) for i in range(((pos[s3] - pos[s2]) * way) % n + 1)]
                b = [c for c in (int(x[(pos[s4] + way * i) % n]) for i in range(n - len(a)))]
                short, other = (a, b) if len(a) <= len(b) else (b, a)
                for m in range(len(short) - 1):
                    t1, t2 = short[m], short[m + 1]
                    for rank2 in range(candidates.shape[1]):
                        t3 = int(candidates[t2, rank2])
                        if t3 not in other:
                            continue
                        j = other.index(t3)
                        for t4 in [other[i] for i in (j + 1, j - 1) if 0 <= i < len(other)]:
                            gain = split + d(t1, t2) - d(t2, t3) + d(t3, t4) - d(t4, t1)
                            made = set(edges)
                            for e in ((s1, s2), (s3, s4), (t1, t2), (t3, t4)):
                                made.remove(tuple(sorted(e)))
                            for e in ((s2, s3), (s4, s1), (t2, t3), (t4, t1)):
                                made.add(tuple(sorted(e)))
                            found.append((gain, cycle_of_edges(n, made)))
    return found


@pytest.mark.parametrize("n,seed", [(12, 0), (30, 1), (40, 2), (60, 3)])
def test_the_bridge_is_the_best_by_its_definition_and_makes_one_tour(n, seed):
    """On random tours: every bridging move by its definition makes one tour of its gain shorter;
    the search returns the largest gain (the first in the order among equals) and its tour; None
    where no move shortens the tour."""
    problem = tsp_of("int-coords", n, seed=seed)
    rules = rules_of(problem, k=5)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        x = rng.permutation(n)
        moves = brute_force(problem, x, rules.candidates)
        for gain, tour in moves:
            assert tour is not None and length(problem, x) - length(problem, tour) == gain
        bridge = find_bridge(x, positions(x), rules.candidates, problem.edge_distance().between)
        positive = [m for m in moves if m[0] > 0]
        if not positive:
            assert bridge is None
            continue
        best = max(m[0] for m in positive)
        first = next(tour for gain, tour in positive if gain == best)
        assert bridge.gain == best
        assert length(problem, x) - length(problem, bridge.tour) == best
        assert np.array_equal(np.roll(bridge.tour, -int(np.flatnonzero(bridge.tour == 0)[0])), first) or \
            np.array_equal(np.roll(bridge.tour[::-1], -int(np.flatnonzero(bridge.tour[::-1] == 0)[0])), first)


@pytest.mark.parametrize("lk_depth", [0, 12])
def test_the_ants_descents_leave_no_bridging_move(lk_depth):
    """With bridges, each ant's tour after its descent has no bridging move left and its length is
    the tour's; the ants end no longer than without them from the same walks, on average."""
    problem = tsp_of("int-coords", 150, seed=5)
    lengths = {}
    for bridges in (False, True):
        rules = rules_of(problem, k=5, or3=True, lk_depth=lk_depth)
        rules.bridges = bridges
        ants = CpuFocusedAnts(rules, FocusRules(3, 12, 10**6), problem.edge_distance(), 8, beta=2.0)
        source = np.random.default_rng(0).permutation(problem.n)
        ants.start(source, float(length(problem, source)), 0.5)
        lengths[bridges] = ants.build(0)
        for k in range(8):
            tour = ants.tour(k).astype(np.int64)
            assert lengths[bridges][k] == length(problem, tour)
            if bridges:
                assert find_bridge(tour, positions(tour), rules.candidates, problem.edge_distance().between) is None
    assert lengths[True].mean() <= lengths[False].mean()


def test_the_bridge_search_stops_at_the_deadline():
    """Inside a search whose time is up, the bridge search raises DeadlineReached between its
    splits rather than scanning on; outside one it finds the move."""
    import time

    from lsmgpu.budget import DeadlineReached, deadline_scope
    problem = tsp_of("int-coords", 60, seed=3)
    rules = rules_of(problem, k=5)
    x = np.random.default_rng(3).permutation(60)
    assert find_bridge(x, positions(x), rules.candidates, problem.edge_distance().between) is not None
    with deadline_scope(time.perf_counter() - 1.0):
        with pytest.raises(DeadlineReached, match="the bridging move was found"):
            find_bridge(x, positions(x), rules.candidates, problem.edge_distance().between)


def test_the_option_is_checked_and_runs():
    """``bridges`` must be a bool (named where not); a run with it returns a valid tour of its length."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    with pytest.raises(TypeError, match="bridges"):
        FocusedACO(problem, backend="cpu", bridges="yes")
    result = FocusedACO(problem, backend="cpu", seed=0, ants=8, bridges=True).run(iterations=5)
    assert sorted(result.solution) == list(range(problem.n))
    assert result.fitness == problem.evaluate(result.solution)


@pytest.mark.nvcc
@pytest.mark.parametrize("shared,depth", [(False, 0), (True, 100)])
def test_the_bridges_kernel_compiles_for_sm90(shared, depth):
    """The ants' kernel with bridging moves, rows in global and shared memory, with and without
    the 5-opt chain alone."""
    from lsmgpu.backends.cuda.dontlook import KOPT_CHAIN_BLOCK
    from lsmgpu.backends.dontlook_chains import WALK_TRIES
    from lsmgpu.backends.kopt import kopt_context
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    device = tsp_of("int-coords", 20).edge_distance().device_source()
    assert nvcc_compile(render_skeleton("dontlook.cu.j2", K=5, S=3, OR3=0, LK=0, LK_DEPTH=depth, LK_STAGE=3,
                                        LK_MOVE=5, **kopt_context(KOPT_CANDIDATES), KO_ALONE=int(depth > 0), BRIDGES=1,
                                        BLOCK=KOPT_CHAIN_BLOCK, DISTANCE=device, SHARED_ROWS=shared,
                                        WALK_TRIES=WALK_TRIES, SEGMENT_ROWS=0, TABLE_WIDTH=2))


@pytest.mark.gpu
@pytest.mark.parametrize("share_rows", [True, False])
@pytest.mark.parametrize("kind,n,moves,lk_depth", [("int-coords", 300, 8, 0), ("matrix", 90, 8, 0),
                                                   ("int-coords", 400, 16, 12), ("int-coords", 9, 3, 0),
                                                   ("int-coords", 500, 16, "5-opt alone")])
def test_gpu_ants_with_bridges_equal_the_hosts(kind, n, moves, lk_depth, share_rows, monkeypatch):
    """Tours, lengths and checks equal the reference's over iterations, with bridging moves (the
    ants' tours in shared or global memory; with and without the LK chain; with the CLI's chain of
    100 5-opt moves alone under penalties, from a tour that chain has descended, as the CLI's ants
    start: from a random tour the reference's first iteration alone takes minutes)."""
    from lsmgpu.backends.cuda import dontlook as cuda_dontlook
    monkeypatch.setattr(cuda_dontlook, "SHARE_ROWS", share_rows)
    problem = tsp_of(kind, n, seed=n)
    if lk_depth == "5-opt alone":
        pi = np.random.default_rng(n).uniform(-30, 30, n)
        rules = DontLookRules(rules_of(problem, k=5).candidates, 3, False, False, 100, 5, pi, True, bridges=True)
    else:
        rules = rules_of(problem, k=5, or3=True, lk_depth=lk_depth)
        rules.bridges = True
    source = np.random.default_rng(n).permutation(n)
    if lk_depth == "5-opt alone":
        descent = CpuDontLook(rules, problem.edge_distance(), 1)
        descent.load(source[None, :])
        descent.descend(np.ones(1, bool))
        source = descent.solutions()[0]
    assert_gpu_ants_equal_the_hosts(problem, rules, FocusRules(17, moves, 10**6), 12, source, 4, deposit=True)
