"""Don't-look-bit descents: every move's delta against the tour re-measured, descended tours are
local optima of the move set (no city has an improving move left) with their lengths, the
deadline, the population methods with it, errors; on the GPU, the kernel's rows equal the host's."""
import numpy as np
import pytest

from lsmgpu import DontLookDescent, GeneticAlgorithm, MaxMinAntSystem
from lsmgpu.backends import resolve
from lsmgpu.backends.cuda.dontlook import BLOCK, CHAIN_BLOCK
from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules, check_city, moves_per_city
from lsmgpu.backends.dontlook_chains import WALK_TRIES
from lsmgpu.backends.tour_steps import apply_steps, edge_lengths
from lsmgpu.cubins import nvcc_compile
from lsmgpu.kernels import render_skeleton
from lsmgpu.problems import QAP, TSP
from lsmgpu.problems.candidates import quadrant_candidates


def tsp_of(kind: str, n: int, seed: int = 0) -> TSP:
    rng = np.random.default_rng(seed)
    coords = np.round(rng.uniform(0, 1000, (n, 2)))
    if kind == "real-coords":
        return TSP(rng.uniform(0, 100, (n, 2)), name=f"real{n}")
    if kind == "matrix":
        return TSP(matrix=TSP(coords).matrix, name=f"matrix{n}")
    return TSP(coords, name=f"tsp{n}")


def rules_of(problem, k=10, segment=3, or3=False, lk=False, lk_depth=0):
    coords = problem.coords if problem.coords is not None else np.random.default_rng(1).uniform(0, 1, (problem.n, 2))
    return DontLookRules(quadrant_candidates(coords, min(k, problem.n - 1)), segment, or3, lk, lk_depth)


def assert_gpu_rows_equal_the_hosts(rules, distance, xs, launch_checks=(None,), monkeypatch=None):
    """The GPU's descents of the tours ``xs`` make the NumPy reference's tours, lengths, moves and
    checks, with each of ``launch_checks`` as the checks of a launch (None: the module's CHECKS)."""
    from lsmgpu.backends.cuda import dontlook
    host = CpuDontLook(rules, distance, len(xs))
    host.load(xs)
    expected = host.descend(np.ones(len(xs), bool))
    for checks in launch_checks:
        if checks is not None:
            monkeypatch.setattr(dontlook, "CHECKS", checks)
        rows = resolve("cuda").dontlook(rules, distance, len(xs))
        try:
            rows.load(xs)
            made, evaluated, finished = rows.descend(np.ones(len(xs), bool))
            assert finished and np.array_equal(made, expected[0]) and np.array_equal(evaluated, expected[1])
            assert np.array_equal(rows.solutions(), host.solutions()) and np.array_equal(rows.values(), host.values())
        finally:
            rows.close()


@pytest.mark.gpu
def test_gpu_rows_run_a_quick_build_until_the_full_one_is_made(monkeypatch, tmp_path):
    """Rows made with no build of their kernels held start on a quick build (where NVRTC has the
    fast compile); their first launch after the full build has ended takes its kernels. The
    descents on either build equal the NumPy reference's (tours, lengths, moves, checks)."""
    from lsmgpu.backends.cuda import driver
    if not driver.nvrtc.fast_compile():
        pytest.skip("NVRTC without the fast compile")
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.delenv("LSMGPU_QUICK_BUILDS", raising=False)
    for held in ("_cubins", "_modules", "_building"):
        monkeypatch.setattr(driver, held, {})
    problem = tsp_of("int-coords", 300, seed=7)
    rules, distance = rules_of(problem, k=8, or3=True, lk=True, lk_depth=5), problem.edge_distance()
    rng = np.random.default_rng(7)
    rows = resolve("cuda").dontlook(rules, distance, 3)
    host = CpuDontLook(rules, distance, 3)
    try:
        assert rows.quick
        full = driver._building[(*rows.module_build, driver.BUILD_OPTIONS)]
        for build in ("quick", "full"):
            xs = np.array([rng.permutation(problem.n) for _ in range(3)])
            for side in (rows, host):
                side.load(xs)
            made = rows.descend(np.ones(3, bool))
            assert all(np.array_equal(a, b) for a, b in zip(made, host.descend(np.ones(3, bool))))
            assert np.array_equal(rows.solutions(), host.solutions()) and np.array_equal(rows.values(), host.values())
            full.result()
        assert not rows.quick and rows.module is driver.load_module(*rows.module_build)
    finally:
        rows.close()


def test_a_failed_full_build_leaves_the_quick_kernels_running_announced(monkeypatch):
    """Rows on a quick build whose full build ended failed (KernelCompileError where the run takes
    it, e.g. NVRTC out of memory on the full optimisation) go on launching the quick build's kernels,
    with a BackendFallback warning naming the failure; the full build is not tried again."""
    from lsmgpu.backends.cuda import dontlook
    from lsmgpu.errors import BackendFallback, KernelCompileError

    class QuickModule:
        def get_function(self, name):
            return "quick " + name
    tried = []

    def load_module(source, arch):
        tried.append(source)
        raise KernelCompileError("nvcc failed on /tmp/k.cu:\nout of memory", "/tmp/k.cu")
    monkeypatch.setattr(dontlook, "built", lambda source, arch: True)
    monkeypatch.setattr(dontlook, "load_module", load_module)
    rows = dontlook.CudaDontLook.__new__(dontlook.CudaDontLook)
    rows.module, rows.quick, rows.functions = QuickModule(), True, {}
    rows.module_build, rows.row_shared = ("// k", "sm_90"), 0
    with pytest.warns(BackendFallback, match="full build of its kernels failed.*out of memory"):
        assert rows._kernel("descend") == "quick descend"
    assert rows._kernel("wide_apply") == "quick wide_apply" and tried == ["// k"] and not rows.quick


def assert_gpu_ants_equal_the_hosts(problem, rules, focus, ants, source, iterations, deposit=False):
    """``ants`` focused ants on the GPU and in the NumPy reference, both started from ``source``, over
    ``iterations``: each iteration the same lengths, tours and checks; both then follow the
    iteration's best (and deposit on it, with ``deposit``)."""
    from lsmgpu.backends.focused import CpuFocusedAnts
    distance = problem.edge_distance()
    host = CpuFocusedAnts(rules, focus, distance, ants, beta=2.0)
    gpu = resolve("cuda").focused_ants(rules, focus, distance, ants, 2.0)
    try:
        for side in (host, gpu):
            side.start(source, float(length(problem, source)), 0.3)
        for iteration in range(iterations):
            lengths = host.build(iteration)
            assert np.array_equal(gpu.build(iteration), lengths)
            assert all(np.array_equal(gpu.tour(k), host.tour(k)) for k in range(ants))
            assert gpu.checked() == host.checked()
            k = int(np.argmin(lengths))
            for side in (host, gpu):
                side.follow(k, lengths[k])
                if deposit:
                    side.deposit(0.6, 1.0 / lengths[k], 0.2 / lengths[k], 3.0 / lengths[k])
    finally:
        gpu.close()


def length(problem, x):
    return int(problem.dist(x, np.roll(x, -1)).sum())


def positions(x):
    pos = np.empty(len(x), dtype=np.int64)
    pos[x] = np.arange(len(x))
    return pos


def applied_change(problem, x, pos, steps):
    """A move's 2-opt ``steps`` applied to tour ``x`` with its positions ``pos`` (both in place):
    x stays a tour and pos its positions; the tour length's change."""
    before = length(problem, x)
    apply_steps(x, pos, steps)
    assert np.array_equal(np.sort(x), np.arange(len(x))) and np.array_equal(pos[x], np.arange(len(x)))
    return length(problem, x) - before


@pytest.mark.parametrize("or3,lk", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("kind", ["int-coords", "real-coords", "matrix"])
@pytest.mark.parametrize("n", [8, 9, 13, 60])
def test_every_chosen_move_changes_the_length_by_its_delta(kind, n, or3, lk):
    """Every chosen move changes the length by its delta."""
    problem = tsp_of(kind, n, seed=n)
    rules, between = rules_of(problem, or3=or3, lk=lk), problem.edge_distance().between
    rng = np.random.default_rng(n)
    seen = 0
    for _ in range(150):
        x = rng.permutation(n)
        pos = positions(x)
        found = check_city(int(rng.integers(n)), x, pos, rules, between)
        if found is None:
            continue
        delta, number, steps, touched = found
        assert applied_change(problem, x, pos, steps) == delta < 0
        assert 0 <= number < rules.moves and len(touched) in (4, 6)
        seen += 1
    assert seen > 50


def test_moves_per_city_counts_every_kind():
    """Moves per city counts every kind."""
    assert moves_per_city(10, 3) == 20 + 240 and DontLookRules(np.zeros((5, 4), int), 2).moves == 8 + 64
    assert moves_per_city(10, 3, or3=True) == 20 + 240 + 200
    assert moves_per_city(10, 3, or3=True, lk=True) == 20 + 240 + 200 + 200 == DontLookRules(
        np.zeros((5, 10), int), 3, True, True).moves


def third_level_draws(n: int, family, seed: int):
    """20 random tours of an n-city instance and a random city c of each, with the moves of c of
    ``family`` (_or3 or _lk3: deltas, legality, cities): (problem, rules, x, pos, c, cand, c2s, found)."""
    problem = tsp_of("int-coords", n, seed=seed)
    rules, between = rules_of(problem, k=6), problem.edge_distance().between
    dist = edge_lengths(between)
    rng = np.random.default_rng(n)
    for _ in range(20):
        x = rng.permutation(n)
        pos, c = positions(x), int(rng.integers(n))
        cand = rules.candidates[c].astype(np.int64)
        c2s = x[(pos[c] + np.array([1, -1])) % n]
        yield problem, rules, x, pos, c, cand, c2s, family(c, x, pos, rules, cand, c2s, dist(c, c2s)[:, None], dist)


def cycle_of_edges(n: int, edges) -> np.ndarray | None:
    """The cycle the multiset of undirected edges makes from city 0, or None where it is not one
    Hamiltonian cycle of n cities."""
    around = {c: [] for c in range(n)}
    for a, b in edges:
        around[a].append(b)
        around[b].append(a)
    if any(len(v) != 2 for v in around.values()):
        return None
    cycle, previous, city = [0], -1, 0
    while True:
        nxt = around[city][0] if around[city][0] != previous else around[city][1]
        previous, city = city, nxt
        if city == 0:
            return np.array(cycle) if len(cycle) == n else None
        cycle.append(city)


def is_tour(n: int, edges) -> bool:
    """Whether the multiset of undirected edges is one Hamiltonian cycle of n cities."""
    return cycle_of_edges(n, edges) is not None


@pytest.mark.parametrize("n", [8, 11, 40])
def test_every_lk3_move_is_the_sequential_three_opt_move_it_names(n):
    """Each LK3 move of c (c2, c3 and c4 as the 2-opt move's; c5 a candidate of c4): legal exactly
    when both partial gains are positive and one neighbour c6 of c5 makes removing {c, c2}, {c3, c4},
    {c5, c6} and adding {c, c3}, {c4, c5}, {c6, c2} a tour (brute force over the edge sets); then
    c6 is that neighbour, the plan's steps give that tour and its length changes by the delta."""
    from lsmgpu.backends.dontlook import _lk3, _plan_lk3
    legal = 0
    for problem, rules, x, pos, c, cand, c2s, found in third_level_draws(n, _lk3, n + 1):
        deltas, ok, (c4s, c3s, c6s, c5s) = found
        dist = lambda a, b: float(problem.edge_distance().between(np.array([a]), np.array([b]))[0])  # noqa: E731
        tour_edges = {frozenset((int(x[i]), int(x[(i + 1) % n]))) for i in range(n)}
        for d, r, r2 in np.ndindex(ok.shape):
            way = 1 - 2 * d
            c2, c3 = int(c2s[d]), int(cand[r])
            c4 = int(x[(pos[c3] + way) % n])
            c5 = int(rules.candidates[c4, r2])
            assert (c3s[d, r, r2], c4s[d, r, r2], c5s[d, r, r2]) == (c3, c4, c5)
            gains = dist(c, c3) < dist(c, c2) and dist(c4, c5) < dist(c, c2) - dist(c, c3) + dist(c3, c4)
            closing = set()
            for c6 in (int(x[(pos[c5] + 1) % n]), int(x[(pos[c5] - 1) % n])):
                removed = [frozenset(e) for e in ((c, c2), (c3, c4), (c5, c6))]
                added = [frozenset(e) for e in ((c, c3), (c4, c5), (c6, c2))]
                if (len(set(removed)) == 3 and len(set(added)) == 3 and all(len(e) == 2 for e in added)
                        and not set(added) & tour_edges
                        and is_tour(n, [tuple(e) for e in (tour_edges - set(removed)) | set(added)])):
                    closing.add(c6)
            assert ok[d, r, r2] == (gains and bool(closing)), (x, c, c2, c3, c4, c5, int(c6s[d, r, r2]))
            if not ok[d, r, r2]:
                continue
            c6 = int(c6s[d, r, r2])
            assert c6 in closing
            y, p = x.copy(), pos.copy()
            apply_steps(y, p, _plan_lk3(c, c2, c4, c3, c6, c5))
            assert length(problem, y) - length(problem, x) == deltas[d, r, r2]
            expected = (tour_edges - {frozenset((c, c2)), frozenset((c3, c4)), frozenset((c5, c6))}) | {
                frozenset((c, c3)), frozenset((c4, c5)), frozenset((c6, c2))}
            assert {frozenset((int(y[i]), int(y[(i + 1) % n]))) for i in range(n)} == expected
            legal += 1
    assert legal > 10


@pytest.mark.parametrize("n", [8, 11, 40])
def test_every_or3opt_move_swaps_two_stretches(n):
    """Each legal Or-3opt move of c, read from c going dir: c c2 .. c4 c3 .. c6 c5 .. becomes
    c c3 .. c6 c2 .. c4 c5 .., by the plan's steps, with the delta re-measured; the illegal ones
    are exactly those whose stretches are empty or overlap (c3 less than two on, c5 not beyond c3)."""
    from lsmgpu.backends.dontlook import _or3, _plan_or3
    legal = 0
    for problem, rules, x, pos, c, cand, c2, found in third_level_draws(n, _or3, n):
        deltas, ok, (c4s, c3s, c6s, c5s) = found
        between = problem.edge_distance().between
        dist = edge_lengths(between)
        for d, r, r2 in np.ndindex(ok.shape):
            way = 1 - 2 * d
            read = x[(pos[c] + way * np.arange(n)) % n]                       # the tour from c going dir
            i3, i5 = int(np.flatnonzero(read == c3s[d, r, r2])[0]), int(np.flatnonzero(read == c5s[d, r, r2])[0])
            i5 = i5 or n
            gain_rule = dist(c, read[i3]) < dist(c, read[1])
            assert ok[d, r, r2] == (i3 >= 2 and i5 > i3 and gain_rule)
            if not ok[d, r, r2]:
                continue
            assert (c4s[d, r, r2], c6s[d, r, r2]) == (read[i3 - 1], read[i5 - 1])
            expected = np.concatenate([read[:1], read[i3:i5], read[1:i3], read[i5:]])
            y, p = x.copy(), pos.copy()
            cities = [c, int(read[1]), int(c4s[d, r, r2]), int(c3s[d, r, r2]), int(c6s[d, r, r2]),
                      int(c5s[d, r, r2])]
            apply_steps(y, p, _plan_or3(*cities))
            assert length(problem, y) - length(problem, x) == deltas[d, r, r2]
            start = int(np.flatnonzero(y == c)[0])
            turned = np.roll(y, -start)
            assert np.array_equal(turned, expected) or np.array_equal(np.roll(turned[::-1], 1), expected)
            legal += 1
    assert legal > 20


@pytest.mark.parametrize("kind", ["int-coords", "matrix"])
def test_descents_end_near_local_optima_with_their_lengths(kind):
    """The rows' values are their tours' lengths; every city was checked after its own edges last
    changed, so a second descent from every city finds little (don't-look bits look at a city
    again only when one of its edges changes, not when a candidate's do)."""
    problem = tsp_of(kind, 120, seed=3)
    rules, distance = rules_of(problem), problem.edge_distance()
    xs = np.stack([np.random.default_rng(k).permutation(problem.n) for k in range(3)])
    rows = CpuDontLook(rules, distance, 3)
    rows.load(xs)
    made, evaluated, finished = rows.descend(np.ones(3, bool))
    out, values = rows.solutions(), rows.values()
    assert finished and np.all(made > 20) and np.all(evaluated % rules.moves == 0)
    for k, x in enumerate(out):
        assert np.array_equal(np.sort(x), np.arange(problem.n))
        assert values[k] == length(problem, x) < length(problem, xs[k])
    rows.load(out)
    again = rows.descend(np.ones(3, bool))[0]
    assert np.all(again <= made // 10) and np.all(rows.values() <= values)


def test_a_deadline_stops_the_descent_and_the_next_call_goes_on():
    """A deadline stops the descent and the next call goes on."""
    problem = tsp_of("int-coords", 150, seed=4)
    rules, distance = rules_of(problem), problem.edge_distance()
    xs = np.random.default_rng(0).permutation(problem.n)[None]
    cut = CpuDontLook(rules, distance, 1)
    cut.load(xs)
    assert cut.descend(np.ones(1, bool), deadline=0.0)[2] is False
    assert cut.descend(np.ones(1, bool))[2] is True
    whole = CpuDontLook(rules, distance, 1)
    whole.load(xs)
    whole.descend(np.ones(1, bool))
    assert np.array_equal(cut.solutions(), whole.solutions()) and cut.values()[0] == whole.values()[0]


@pytest.mark.parametrize("method,options", [(MaxMinAntSystem, {"ants": 8}), (GeneticAlgorithm, {"genes": 16})])
def test_population_methods_with_dontlook_descents(method, options):
    """Population methods with dontlook descents."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    result = method(problem, local_search="dontlook", backend="cpu", seed=0, **options).run(
        30, target=problem.best_known)
    assert result.fitness <= 1.02 * problem.best_known
    assert np.array_equal(np.sort(result.solution), np.arange(problem.n))


def test_polish_continues_from_the_dontlook_optima_with_the_chain():
    """polish="auto": each row ends where the problem's ILS chain, descending the don't-look
    result, ends (lsmgpu.parallel.improve is the reference)."""
    from lsmgpu.parallel import improve
    problem = tsp_of("int-coords", 90, seed=6)
    xs = np.stack([np.random.default_rng(k).permutation(problem.n) for k in range(3)]).astype(np.int32)
    plain = DontLookDescent().population(resolve("cpu"), problem, 3, None)
    plain.load(xs)
    plain.descend(np.ones(3, bool))
    ils = problem.default_ils()
    expected = improve(problem, plain.solutions(), [ils["neighbourhood"], *ils["polish"]], backend="cpu")
    polished = DontLookDescent(polish="auto").population(resolve("cpu"), problem, 3, None)
    polished.load(xs)
    made, _, finished = polished.descend(np.ones(3, bool))
    assert finished and np.all(made >= plain.descend(np.ones(3, bool))[0])
    assert np.array_equal(polished.solutions(), expected.solutions)
    assert np.array_equal(polished.values(), expected.fitness)


def test_bad_dontlook_descents_are_named():
    """Bad dontlook descents are named."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    with pytest.raises(TypeError, match="has no edge distance"):
        MaxMinAntSystem(qap, local_search="dontlook", backend="cpu")
    tsp = tsp_of("int-coords", 30)
    with pytest.raises(ValueError, match=r"must be an \(30, K\) integer table"):
        MaxMinAntSystem(tsp, local_search=DontLookDescent(np.zeros((29, 4), int)), backend="cpu")
    with pytest.raises(ValueError, match="must hold cities 0 .. 29"):
        MaxMinAntSystem(tsp, local_search=DontLookDescent(np.full((30, 4), 30)), backend="cpu")
    with pytest.raises(ValueError, match="`segment` must be an integer in"):
        DontLookDescent(segment=-1)
    assert "segment=2" in repr(DontLookDescent(segment=2))
    with pytest.raises(TypeError, match="`polish` must be None, 'auto'"):
        DontLookDescent(polish="3opt")


@pytest.mark.nvcc
@pytest.mark.parametrize("kind, block", [("int-coords", BLOCK), ("real-coords", BLOCK), ("matrix", BLOCK),
                                         ("int-coords", CHAIN_BLOCK), ("real-coords", CHAIN_BLOCK)])
def test_dontlook_kernel_compiles_for_sm90(kind, block):
    """The descents' block (BLOCK) and the chains' and focused ants' (CHAIN_BLOCK), the chains'
    tours in global or in shared memory."""
    device = tsp_of(kind, 20).edge_distance().device_source()
    for S, or3, lk, shared in ((3, 0, 0, False), (3, 1, 0, False), (3, 0, 0, True), (3, 1, 1, False), (3, 0, 1, True),
                               (0, 0, 0, False)):
        assert nvcc_compile(render_skeleton("dontlook.cu.j2", K=10, S=S, OR3=or3, LK=lk, BLOCK=block, DISTANCE=device,
                                            SHARED_ROWS=shared, WALK_TRIES=WALK_TRIES))


@pytest.mark.gpu
@pytest.mark.parametrize("kind,n,k,segment,or3,lk", [
    ("int-coords", 300, 10, 3, False, False), ("real-coords", 200, 8, 2, False, False),
    ("matrix", 150, 10, 3, False, False), ("int-coords", 9, 8, 3, False, False),
    ("int-coords", 300, 10, 3, True, False), ("real-coords", 120, 8, 2, True, False),
    ("matrix", 90, 6, 3, True, False), ("int-coords", 9, 8, 3, True, False),
    ("int-coords", 300, 10, 3, False, True), ("real-coords", 200, 8, 2, True, True),
    ("matrix", 90, 6, 3, True, True), ("int-coords", 9, 8, 3, False, True), ("int-coords", 300, 32, 0, False, False)])
def test_gpu_rows_equal_the_hosts(kind, n, k, segment, or3, lk, monkeypatch):
    """The same tours, lengths, moves and checks as the NumPy reference, also when a launch's
    check budget cuts the descents (CHECKS = 7); with and without the Or-3opt and LK3 moves."""
    problem = tsp_of(kind, n, seed=n)
    xs = np.stack([np.random.default_rng(r).permutation(n) for r in range(6)]).astype(np.int32)
    assert_gpu_rows_equal_the_hosts(rules_of(problem, k, segment, or3, lk), problem.edge_distance(), xs, (4096, 7),
                                    monkeypatch)


@pytest.mark.gpu
@pytest.mark.parametrize("polish", [None, "auto"])
def test_gpu_mmas_with_dontlook_equals_the_cpu_run(polish):
    """GPU MMAS with dontlook equals the CPU run."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [MaxMinAntSystem(problem, ants=16, local_search=DontLookDescent(polish=polish), backend=b, seed=1).run(5)
            for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


@pytest.mark.gpu
def test_gpu_refuses_rows_that_do_not_fit():
    """GPU refuses rows that do not fit."""
    problem = tsp_of("int-coords", 1000)
    with pytest.raises(ValueError, match="would fit"):
        resolve("cuda").dontlook(rules_of(problem), problem.edge_distance(), 10**7)


def test_candidates_is_an_int_or_a_table_in_every_search():
    """`candidates`: an int k (the problem's candidate_lists(k)) or an (n, k) table, the same in the
    don't-look descents and the colonies; a bad value is named."""
    from lsmgpu import MaxMinAntSystem
    problem = TSP.from_file(TSP.shipped("berlin52"))
    table = problem.candidate_lists(6)
    assert table.shape == (52, 6) and not (table == np.arange(52)[:, None]).any()
    assert np.array_equal(DontLookDescent(6).bound(problem).candidates, table)
    colony = MaxMinAntSystem(problem, candidates=table, ants=4, backend="cpu", seed=0)
    assert colony.run(iterations=1).iterations == 1 and np.array_equal(colony.model.candidates, table)
    assert MaxMinAntSystem(problem, candidates=6, ants=4, backend="cpu", seed=0).run(1).iterations == 1
    with pytest.raises(ValueError, match="`candidates` must be None, an integer in \\[1, 32\\]"):
        MaxMinAntSystem(problem, candidates=np.zeros((52, 40), int))
    with pytest.raises(ValueError, match="`candidates` must be"):
        DontLookDescent(60).bound(problem)


@pytest.mark.parametrize("or3", [False, True])
def test_a_descent_with_lk3_ends_where_no_move_of_any_kind_improves(or3):
    """Descended with the LK3 moves, every city of the tour has no improving move of any kind
    left (check_city finds none), and the tour is no longer than without them from the same start."""
    problem = tsp_of("int-coords", 200, seed=11)
    distance = problem.edge_distance()
    xs = np.random.default_rng(1).permutation(problem.n)[None]
    ends = {}
    for lk in (False, True):
        rules = rules_of(problem, or3=or3, lk=lk)
        rows = CpuDontLook(rules, distance, 1)
        rows.load(xs)
        assert rows.descend(np.ones(1, bool))[2]
        x = rows.solutions()[0].astype(np.int64)
        pos = positions(x)
        assert all(check_city(c, x, pos, rules, distance.between) is None for c in range(problem.n))
        ends[lk] = rows.values()[0]
    assert ends[True] <= ends[False] * 1.01


def test_segment_zero_is_two_opt_alone():
    """segment=0 (the MMAS paper's local search: 2-opt over the 32 nearest with don't-look bits):
    2 K moves a city, and the descent ends where no candidate 2-opt move of any city improves,
    which is not an Or-opt optimum (the Or-opt moves were left out)."""
    from lsmgpu.problems.candidates import nearest_candidates
    problem = tsp_of("int-coords", 300, seed=12)
    distance = problem.edge_distance()
    rules = DontLookRules(nearest_candidates(problem.coords, 32), 0)
    assert rules.moves == 64
    rows = CpuDontLook(rules, distance, 1)
    rows.load(np.random.default_rng(0).permutation(problem.n)[None])
    assert rows.descend(np.ones(1, bool))[2]
    x = rows.solutions()[0].astype(np.int64)
    pos = positions(x)
    assert all(check_city(c, x, pos, rules, distance.between) is None for c in range(problem.n))
    with_oropt = DontLookRules(rules.candidates, 3)
    assert any(check_city(c, x, pos, with_oropt, distance.between) is not None for c in range(problem.n))
    assert DontLookDescent(segment=0).segment == 0
