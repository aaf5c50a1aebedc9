"""The don't-look ILS with windows: moves on a path keep its ends and the rest of the tour and
change the length by their delta, path descents end at a local optimum of the legal moves, the
windowed chains' lengths are their tours', kicks split by quota, windows touch nothing outside;
on the GPU, the kernels' chains equal the host's after every round."""
import numpy as np
import pytest

from lsmgpu import DontLookILS
from lsmgpu.backends import resolve
from lsmgpu.backends.dontlook import apply_steps, check_city, enqueue, improve_city
from lsmgpu.backends.dontlook_chains import KickRules
from lsmgpu.backends.dontlook_windows import CpuWindowChains, Windows, window_span
from lsmgpu.problems import TSP

from .test_dontlook import length, rules_of, tsp_of


def path_of(x, lo, hi):
    """Window [lo, hi) of tour x: its view and its positions (-1 outside)."""
    view = x[lo:hi]
    pos = np.full(len(x), -1, dtype=np.int64)
    pos[view] = np.arange(hi - lo)
    return view, pos


@pytest.mark.parametrize("kind", ["int-coords", "real-coords", "matrix"])
def test_path_moves_keep_the_ends_and_the_rest_and_change_the_length_by_their_delta(kind):
    problem = tsp_of(kind, 60, seed=3)
    rules, between = rules_of(problem), problem.edge_distance().between
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(300):
        x = rng.permutation(60)
        lo = int(rng.integers(0, 40))
        hi = lo + int(rng.integers(16, 61 - lo))
        view, pos = path_of(x, lo, hi)
        c = int(view[rng.integers(hi - lo)])
        found = check_city(c, view, pos, rules, between, path=True)
        if found is None:
            continue
        delta, _, steps, touched = found
        before, old = length(problem, x), x.copy()
        apply_steps(view, pos, steps, path=True)
        assert np.array_equal(x[:lo], old[:lo]) and np.array_equal(x[hi:], old[hi:])
        assert x[lo] == old[lo] and x[hi - 1] == old[hi - 1] and set(x[lo:hi]) == set(old[lo:hi])
        assert np.array_equal(pos[view], np.arange(hi - lo)) and all(pos[t] >= 0 for t in touched)
        assert length(problem, x) - before == delta < 0
        seen += 1
    assert seen > 100


def test_path_descents_end_where_no_legal_2opt_move_improves():
    """Checked by a plain loop over every city's candidate 2-opt moves that keep the path's ends."""
    problem = tsp_of("int-coords", 80, seed=5)
    rules, between = rules_of(problem), problem.edge_distance().between
    d = lambda a, b: int(between(np.array([a]), np.array([b]))[0])     # noqa: E731
    for seed in range(4):
        x = np.random.default_rng(seed).permutation(80)
        view, pos = path_of(x, 10, 70)
        queue, queued = [], np.zeros(80, dtype=bool)
        enqueue(view.tolist(), queue, queued)
        while queue:
            c = queue.pop(0)
            queued[c] = False
            improve_city(c, view, pos, rules, between, queue, queued, path=True)
        m = len(view)
        for i, c in enumerate(view):
            for way in (1, -1):
                if not 0 <= i + way < m:
                    continue
                c2 = view[i + way]
                for c3 in rules.candidates[c]:
                    j = pos[c3]
                    if j < 0 or not 0 <= j + way < m or c3 in (c, c2) or view[j + way] == c:
                        continue
                    c4 = view[j + way]
                    if d(c, c3) < d(c, c2):
                        assert d(c, c3) + d(c2, c4) - d(c, c2) - d(c3, c4) >= 0


def windowed(problem, rows=3, length_=16, limit=30, seed=4):
    windows = Windows(problem.n, length_)
    kicks = KickRules(seed, window_span(length_, 10), limit)
    chains = CpuWindowChains(rules_of(problem), kicks, problem.edge_distance(), rows, windows)
    chains.load(np.stack([np.random.default_rng(k).permutation(problem.n) for k in range(rows)]))
    return chains


def test_windowed_chains_hold_their_lengths_and_split_their_kicks():
    problem = tsp_of("int-coords", 60, seed=2)
    chains = windowed(problem)
    assert (chains.windows.count, chains.windows.bounds(2)) == (3, (32, 60))
    seen = []
    while not chains.advance(25):
        seen.append(chains.bests())
        for k in range(3):
            assert chains.values()[k] == length(problem, chains.solutions()[k])
            assert chains.bests()[k] in (np.inf, length(problem, chains.best_solution(k)))
    seen = np.array(seen)
    assert np.isinf(seen[0]).all() and np.isfinite(seen[-1]).all()
    finite = seen[np.isfinite(seen).all(axis=1)]
    assert np.all(finite[1:] <= finite[:-1]) and finite[-1].sum() < finite[0].sum()
    assert np.array_equal(chains.counters()["kicks"], [30, 30, 30])
    assert np.array_equal(chains.slot_kicks, np.full((3, 3), 10))
    assert np.all(chains.counters()["moves"] > 0)


def test_a_window_changes_nothing_outside_its_path():
    problem = tsp_of("int-coords", 70, seed=6)
    chains = windowed(problem, rows=1, length_=20, limit=10**6)
    while chains.round < 0:
        chains.advance(10**6)
    before = chains.x.copy()
    chains._window(0, 1, 300, None)
    lo, hi = chains.windows.bounds(1)
    assert np.array_equal(chains.x[0, :lo + 1], before[0, :lo + 1])
    assert np.array_equal(chains.x[0, hi - 1:], before[0, hi - 1:])
    assert chains.slot_kicks[0, 1] > 0 and chains.slot_kicks[0, 0] == 0
    assert chains.gains[0, 1] <= 0 and np.array_equal(chains.pos[0, chains.x[0]], np.arange(70))


def test_windowed_search_is_reproducible_and_names_bad_windows():
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [DontLookILS(problem, chains=2, window=25, backend="cpu", seed=0, exchange_every=3,
                        round_checks=100).run(iterations=200) for _ in range(2)]
    assert runs[0].fitness == runs[1].fitness == problem.fitness(runs[0].solution)
    assert np.array_equal(runs[0].solution, runs[1].solution) and runs[0].status == "iterations"
    assert runs[0].fitness < 1.03 * problem.best_known
    for bad in (15, 101):
        with pytest.raises(ValueError, match="`window` must be an integer in \\[16, 100\\]"):
            DontLookILS(problem, window=bad, backend="cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("kind,n,window", [("int-coords", 200, 50), ("real-coords", 60, 16), ("matrix", 90, 40)])
def test_gpu_windows_equal_the_hosts_after_every_round(kind, n, window):
    problem = tsp_of(kind, n, seed=n)
    rules, distance, B = rules_of(problem), problem.edge_distance(), 6
    windows = Windows(n, window)
    kicks = KickRules(11, window_span(window, 20), 40)
    xs = np.stack([np.random.default_rng(k).permutation(n) for k in range(B)]).astype(np.int32)
    host = CpuWindowChains(rules, kicks, distance, B, windows)
    chains = resolve("cuda").dontlook_windows(rules, kicks, distance, B, windows)
    try:
        host.load(xs)
        chains.load(xs)
        for round_ in range(14):
            budget = 37 if round_ % 2 else 400       # the start tours' descent ends within the first calls
            assert chains.advance(budget) == host.advance(budget)
            if round_ == 9:
                for side in (host, chains):
                    side.adopt(np.array([-1, 0, -1, 2, -1, 4]))
            assert np.array_equal(chains.bests(), host.bests()) and np.array_equal(chains.values(), host.values())
            assert np.array_equal(chains.solutions(), host.solutions())
            assert all(np.array_equal(chains.best_solution(k), host.best_solution(k)) for k in range(B))
            for name, values in host.counters().items():
                assert np.array_equal(chains.counters()[name], values), name
        assert host.round > 3
    finally:
        chains.close()


@pytest.mark.gpu
def test_gpu_windowed_search_equals_the_cpu_search():
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [DontLookILS(problem, chains=3, window=30, backend=b, seed=2, exchange_every=3,
                        round_checks=100).run(iterations=60) for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


@pytest.mark.gpu
def test_gpu_many_windows_keep_tours_and_lengths():
    """8 chains of 64 windows (512 blocks at once): every tour a permutation whose length is its
    chain's value."""
    problem = tsp_of("int-coords", 2000, seed=9)
    rules, distance, B = rules_of(problem), problem.edge_distance(), 8
    windows = Windows(2000, 31)
    chains = resolve("cuda").dontlook_windows(rules, KickRules(5, window_span(31, 60), 10**6), distance, B, windows)
    try:
        chains.load(np.broadcast_to(np.random.default_rng(0).permutation(2000), (B, 2000)))
        for _ in range(30):
            chains.advance(2000)
        assert chains.round > 5
        xs, values, bests = chains.solutions(), chains.values(), chains.bests()
        assert all(np.array_equal(np.sort(x), np.arange(2000)) for x in xs)
        assert [length(problem, x) for x in xs] == list(values) == list(bests)
        assert chains.counters()["kicks"].min() > 64
    finally:
        chains.close()
