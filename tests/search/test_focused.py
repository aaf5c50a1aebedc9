"""Focused ACO: the warp's scan and the next city's choice against the roulette's probabilities,
the walk against its definition (cities moved next to the current one, the change re-measured),
the pheromone update against a per-edge model, the search's contract and errors; on the GPU, the
kernel's ants equal the host's, tour by tour."""
from collections import deque

import numpy as np
import pytest
from scipy import stats

from lsmgpu import FocusedACO
from lsmgpu.backends import resolve
from lsmgpu.backends.focused import (CandidatePheromone, CpuFocusedAnts, FocusRules, choose_lane, focused_walk,
                                     trail_limits, warp_scan)
from lsmgpu.neighbourhoods.crowns import counter_uniform
from lsmgpu.problems import QAP, TSP

from .test_dontlook import assert_gpu_ants_equal_the_hosts, length, positions, rules_of, tsp_of


def test_warp_scan_is_an_inclusive_prefix_sum():
    """Warp scan is an inclusive prefix sum."""
    values = np.random.default_rng(0).random(13)
    scan = warp_scan(values)
    assert np.allclose(scan[:13], np.cumsum(values)) and np.allclose(scan[13:], scan[12])
    assert warp_scan(np.ones(32))[31] == 32.0


def test_the_roulette_picks_each_open_lane_by_its_weight():
    """Over many counter-based draws the chosen lanes' frequencies match w / sum of the open
    lanes' weights (chi-square); a closed lane is never chosen; no open lane: None."""
    weights = np.random.default_rng(1).uniform(0.2, 3.0, size=10)
    open_ = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1], dtype=bool)
    picks = np.array([choose_lane(weights, open_, u) for u in counter_uniform(4, 0, 0, np.arange(20000))])
    counts = np.bincount(picks, minlength=10)
    assert counts[~open_].sum() == 0
    expected = np.where(open_, weights, 0)[open_] / weights[open_].sum()
    assert stats.chisquare(counts[open_], expected * len(picks)).pvalue > 1e-3
    assert choose_lane(weights, np.zeros(10, bool), 0.5) is None
    assert choose_lane(weights, open_, 0.0) == 0 and choose_lane(weights, open_, 1 - 2**-53) == 9


def test_a_walk_step_draws_its_city_by_the_roulette():
    """The first step of ant 0 moves the city choose_lane picks from the start's candidates."""
    problem = tsp_of("int-coords", 40, seed=4)
    rules = rules_of(problem, k=8)
    weights = np.random.default_rng(1).uniform(0.2, 3.0, size=(40, 8))
    x = np.arange(40)
    for seed in range(40):
        y, pos, _, touched = walk_of(problem, rules, weights, x, seed, 0, 0, 1, walk=1)
        start = int(counter_uniform(seed, 0, 0, 0) * 40)
        ahead = (rules.candidates[start] - start) % 40
        lane = choose_lane(weights[start], (ahead >= 1) & (ahead <= 39), counter_uniform(seed, 0, 0, 1))
        chosen = int(rules.candidates[start][lane])
        assert touched[:3] == [start, (start + 1) % 40, chosen] if chosen != (start + 1) % 40 else touched == []


def walk_of(problem, rules, weights, x, seed, iteration, ant, moves, walk=10**6):
    y, pos = x.copy(), positions(x)
    delta, touched = focused_walk(y, pos, weights, rules.candidates, FocusRules(seed, moves, walk), iteration,
                                  ant, problem.dist)
    return y, pos, delta, touched


@pytest.mark.parametrize("n,moves", [(8, 3), (30, 1), (120, 8), (120, 40)])
def test_the_walk_moves_cities_next_to_the_walk_and_measures_the_change(n, moves):
    """The walk moves cities next to the walk and measures the change."""
    problem = tsp_of("int-coords", n, seed=n)
    rules = rules_of(problem)
    weights = np.random.default_rng(n).uniform(0.1, 1.0, size=rules.candidates.shape)
    rng = np.random.default_rng(0)
    for t in range(25):
        x = rng.permutation(n)
        y, pos, delta, touched = walk_of(problem, rules, weights, x, 5, t, 2, moves)
        assert np.array_equal(np.sort(y), np.arange(n)) and np.array_equal(pos, positions(y))
        assert delta == length(problem, y) - length(problem, x)
        moved = len(touched) // 5
        assert len(touched) % 5 == 0 and moved <= moves
        new = {frozenset(e) for e in zip(y, np.roll(y, -1))} - {frozenset(e) for e in zip(x, np.roll(x, -1))}
        assert len(new) <= 3 * moved and all(e <= set(touched) for e in new)
        if moved:                    # the last city moved ends beside the city the walk was at
            c, _, v = touched[-5:-2]
            assert abs(int(pos[c]) - int(pos[v])) in (1, n - 1)


def test_pheromone_update_against_an_edge_model():
    """Pheromone update against an edge model."""
    problem = tsp_of("int-coords", 60, seed=6)
    rules = rules_of(problem)
    pheromone = CandidatePheromone(rules.candidates, problem.dist, beta=2.0)
    rng = np.random.default_rng(0)
    pheromone.tau = rng.uniform(0.0, 2.0, size=rules.candidates.shape)
    before = pheromone.tau.copy()
    tour = rng.permutation(60)
    edges = {frozenset(e) for e in zip(tour, np.roll(tour, -1))}
    pheromone.update(tour, 0.5, 0.3, 0.25, 1.1)
    for c in range(60):
        for j, v in enumerate(rules.candidates[c]):
            tau = max(before[c, j] * 0.5, 0.25) + (0.3 if frozenset((c, int(v))) in edges else 0.0)
            assert pheromone.tau[c, j] == min(tau, 1.1)
    d = problem.dist(np.repeat(np.arange(60), rules.k), rules.candidates.ravel()).reshape(rules.candidates.shape)
    assert np.allclose(pheromone.eta, 1.0 / np.maximum(d, d[d > 0].min()).astype(float) ** 2)   # 0: the least > 0
    assert np.array_equal(pheromone.weights(), pheromone.tau * pheromone.eta)


def test_trail_limits_follow_mmas_over_the_candidate_lists():
    """Trail limits follow MMAS over the candidate lists."""
    tau_min, tau_max = trail_limits(1000.0, 16, 0.5, 0.1)
    root = 0.1 ** (1 / 16)
    assert tau_max == 1 / 500.0 and np.isclose(tau_min, tau_max * (1 - root) / (15 * root))
    assert trail_limits(1000.0, 1, 0.5, 0.1) == (tau_max, tau_max)


def test_a_zero_length_instance_is_solved_without_dividing_by_zero():
    """Every city at one point: the start is optimal (length 0), the trails take a length-1 scale."""
    assert trail_limits(0.0, 16, 0.5, 0.1) == trail_limits(1.0, 16, 0.5, 0.1)
    result = FocusedACO(TSP(np.zeros((40, 2))), backend="cpu", seed=0).run(iterations=3)
    assert result.fitness == 0 and sorted(result.solution) == list(range(40))


def test_ants_lengths_are_their_tours_and_the_source_deposits():
    """Ants lengths are their tours and the source deposits."""
    problem = tsp_of("int-coords", 150, seed=8)
    rules = rules_of(problem)
    ants = CpuFocusedAnts(rules, FocusRules(3, 8, 10**6), problem.edge_distance(), 6, beta=1.0)
    source = np.random.default_rng(1).permutation(150)
    ants.start(source, length(problem, source), 0.5)
    lengths = ants.build(4)
    assert [length(problem, ants.tour(k)) for k in range(6)] == list(lengths)
    assert ants.checked() > 0 and len({tuple(ants.tour(k)) for k in range(6)}) > 1
    model = CandidatePheromone(rules.candidates, problem.dist, 1.0)
    model.fill(0.5)
    ants.follow(2, lengths[2])
    ants.deposit(0.5, 0.01, 0.1, 0.6)
    model.update(ants.tour(2), 0.5, 0.01, 0.1, 0.6)
    assert np.array_equal(ants.pheromone(), model.tau) and ants.lengths[0] == lengths[2]
    ants.keep_best(4)
    ants.build(5)
    ants.follow(-1, lengths[4])           # the kept best, not ant 4's new tour
    assert length(problem, ants.source[0]) == lengths[4] and ants.lengths[0] == lengths[4]



def test_a_cpu_iteration_cut_at_the_deadline_keeps_its_finished_ants(monkeypatch):
    """At the deadline among a CPU iteration's ants, the ants that finished keep their tours'
    lengths and the rest get inf (never followed); where a colony has no finished ant the
    deadline propagates. A CPU focused ACO runs to the deadline instead of stopping where an
    iteration as long as the last would not fit; another colony stops there."""
    import lsmgpu.backends.focused as focused
    from lsmgpu.budget import DeadlineReached
    problem = tsp_of("int-coords", 80, seed=5)
    source = np.random.default_rng(2).permutation(80)
    for colonies, finished, cut in ((1, 2, False), (2, 4, False), (2, 2, True)):
        calls = []

        def deadline_after(before, finished=finished):
            calls.append(before)
            if before == "every ant had moved" and calls.count(before) > finished:
                raise DeadlineReached(f"the time budget ended before {before}")
        ants = CpuFocusedAnts(rules_of(problem), FocusRules(3, 8, 10**6, colonies=colonies), problem.edge_distance(),
                              6, beta=1.0)
        for colony in range(colonies):
            ants.start(source, length(problem, source), 0.5, colony=colony)
        monkeypatch.setattr(focused, "check_deadline", deadline_after)
        if cut:
            with pytest.raises(DeadlineReached):
                ants.build(1)
            continue
        lengths = ants.build(1)
        assert [length(problem, ants.tour(k)) for k in range(finished)] == list(lengths[:finished])
        assert np.isinf(lengths[finished:]).all()
    monkeypatch.undo()
    search = FocusedACO(TSP.from_file(TSP.shipped("berlin52")), backend="cpu", seed=0, ants=4)
    search.run(iterations=1, seconds=100)
    search._iteration_took = 1000.0
    assert not search._no_time_for_another()
    monkeypatch.setattr(CpuFocusedAnts, "cut_at_deadline", False)
    assert search._no_time_for_another() and search.status == "seconds"


def test_a_cpu_ants_descent_stops_at_the_deadline():
    """Inside a search whose time is up, a CPU ant's descent raises DeadlineReached from among its
    checks (one descent with deep chains takes seconds on the CPU) rather than running to its end;
    outside one it descends to the length its tour has."""
    import time

    from lsmgpu.backends.dontlook import enqueue
    from lsmgpu.budget import DeadlineReached, deadline_scope
    problem = tsp_of("int-coords", 150, seed=2)
    ants = CpuFocusedAnts(rules_of(problem, k=5), FocusRules(3, 8, 10**6), problem.edge_distance(), 2, beta=1.0)
    x = np.random.default_rng(4).permutation(150)
    for passed, checks in ((True, 0), (False, 1)):
        tour, pos = x.copy(), positions(x)
        queue, queued = deque(), np.zeros(150, dtype=bool)
        enqueue(np.arange(150), queue, queued)
        ants.checks[:] = checks
        if passed:
            with deadline_scope(time.perf_counter() - 1.0), pytest.raises(DeadlineReached, match="descent"):
                ants._descend(0, tour, pos, queue, queued)
            assert np.array_equal(tour, x)
        else:
            delta = ants._descend(0, tour, pos, queue, queued)
            assert delta < 0 and length(problem, tour) == length(problem, x) + delta

def test_each_colony_walks_its_own_source_and_pheromone():
    """Three colonies of two ants: ant k of colony c walks and descends as ant k of a lone colony
    started from c's source and tau (the random numbers follow the ant's number, the weights its
    colony's); a colony's deposit, follow and kept best leave the others' untouched; ants that do
    not divide into the colonies are refused."""
    problem = tsp_of("int-coords", 120, seed=5)
    rules, distance = rules_of(problem), problem.edge_distance()
    rng = np.random.default_rng(2)
    sources = [rng.permutation(120) for _ in range(3)]
    colonies = CpuFocusedAnts(rules, FocusRules(7, 8, 10**6, colonies=3), distance, 6, beta=1.0)
    for c, source in enumerate(sources):
        colonies.start(source, length(problem, source), 0.2 + 0.3 * c, colony=c)
    colonies.deposit(0.5, 0.05, 0.01, 0.9, colony=1)
    assert np.all(colonies.pheromone(0) == 0.2) and np.all(colonies.pheromone(2) == 0.8)
    assert not np.all(colonies.pheromone(1) == 0.5)
    lengths = colonies.build(3)
    for c, source in enumerate(sources):
        lone = CpuFocusedAnts(rules, FocusRules(7, 8, 10**6), distance, 6, beta=1.0)
        lone.start(source, length(problem, source), 0.2 + 0.3 * c)
        if c == 1:
            lone.deposit(0.5, 0.05, 0.01, 0.9)
        alone = lone.build(3)
        assert np.array_equal(lengths[2 * c:2 * c + 2], alone[2 * c:2 * c + 2])
        assert all(np.array_equal(colonies.tour(k), lone.tour(k)) for k in (2 * c, 2 * c + 1))
        assert [length(problem, colonies.tour(k)) for k in (2 * c, 2 * c + 1)] == list(lengths[2 * c:2 * c + 2])
    colonies.keep_best(5, colony=2)
    colonies.follow(4, lengths[4], colony=2)
    assert np.array_equal(colonies.best_tour(2), colonies.tour(5)) and np.array_equal(colonies.source[2], colonies.tour(4))
    assert np.array_equal(colonies.best_tour(0), sources[0]) and np.array_equal(colonies.source[1], sources[1])
    assert list(colonies.lengths) == [length(problem, s) for s in sources[:2]] + [lengths[4]]
    with pytest.raises(ValueError, match="7 ants do not make 3 colonies"):
        CpuFocusedAnts(rules, FocusRules(7, 8, 10**6, colonies=3), distance, 7, beta=1.0)


def test_reaches_berlin52s_optimum_and_is_reproducible():
    """Reaches berlin52s optimum and is reproducible."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    runs = [FocusedACO(problem, ants=8, backend="cpu", seed=0).run(iterations=30) for _ in range(2)]
    assert runs[0].fitness == problem.best_known == runs[1].fitness
    assert np.array_equal(runs[0].solution, runs[1].solution) and runs[0].status == "iterations"
    assert runs[0].iterations == 30 and problem.fitness(runs[0].solution) == runs[0].fitness


def test_the_default_moves_follow_the_size_and_the_lk_chain():
    """128 moved cities, but 64 from 10,000 cities without the LK chain and 192 from 30,000 with it
    (the measured defaults); a given ``moves`` wins."""
    def moves(n, **options):
        cities = TSP(np.random.default_rng(n).uniform(0, 10**6, (n, 2)).round(), name=f"u{n}")
        return FocusedACO(cities, backend="cpu", **options).moves

    assert moves(9_999) == 128 and moves(10_000) == 64 and moves(10_000, lk_depth=6) == 128
    assert moves(29_999, lk_depth=6) == 128 and moves(30_000, lk_depth=6) == 192
    assert moves(30_000) == 64 and moves(30_000, moves=100) == 100


def test_seconds_and_target_stop_it():
    """Seconds and target stop it."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    result = FocusedACO(problem, ants=4, backend="cpu", seed=1).run(seconds=1.0)
    assert result.status == "seconds" and result.fitness == problem.fitness(result.solution)
    assert FocusedACO(problem, ants=4, backend="cpu", seed=1).run(seconds=30, target=10**7).status == "target"


def test_restarts_merge_each_colony_into_the_best_and_start_afresh(monkeypatch):
    """With restart_after 2, a colony whose best stands still two iterations is merged into the
    best so far by partition crossover (never longer than the best) and a new colony starts from
    a new start tour's descent at its own length; the last colony is merged at the run's end; the
    run's best never gets longer, and is the length of its tour; a second run of the search counts
    only its own restarts."""
    from lsmgpu.search import focused
    problem = TSP.from_file(TSP.shipped("kroA100"))
    merges, starts = [], []
    crossover, descend = focused.partition_crossover, FocusedACO._descend_start

    def merge(a, b, between):
        child, gain = crossover(a, b, between)
        merges.append((problem.evaluate(a), problem.evaluate(child), gain))
        return child, gain

    def start(self, tour):
        source, length = descend(self, tour)
        starts.append(length == problem.evaluate(source))
        return source, length
    monkeypatch.setattr(focused, "partition_crossover", merge)
    monkeypatch.setattr(FocusedACO, "_descend_start", start)
    search = FocusedACO(problem, ants=4, moves=8, restart_after=2, backend="cpu", seed=3)
    result = search.run(iterations=30)
    assert search.restarts + 1 == len(merges) >= 4 and len(starts) == search.restarts + 1 and all(starts)
    assert all(child == best - gain <= best for best, child, gain in merges)
    assert result.fitness == problem.evaluate(result.solution) <= min(child for _, child, _ in merges)
    assert np.all(np.diff(result.history) <= 0)
    assert FocusedACO(problem, ants=4, moves=8, backend="cpu", seed=3).run(iterations=30).iterations == 30
    starts.clear()
    again = search.run(iterations=30)                   # the same search run again counts its own restarts
    assert search.restarts > 0 and len(starts) == search.restarts + 1
    assert again.fitness == problem.evaluate(again.solution)


def test_colonies_run_side_by_side_and_end_merged(monkeypatch):
    """Three colonies of four ants: twelve ant tours an iteration, each colony's best its own
    (at most the start's length), the result a tour of its length no longer than any colony's
    best, each colony's best merged into it at the end (three crossovers, no restart), and the run
    reproducible from its seed."""
    from lsmgpu.search import focused
    problem = TSP.from_file(TSP.shipped("kroA100"))
    merges = []
    crossover = focused.partition_crossover
    monkeypatch.setattr(focused, "partition_crossover", lambda *a: merges.append(1) or crossover(*a))
    runs = []
    for _ in range(2):
        search = FocusedACO(problem, ants=4, moves=8, colonies=3, restart_after=None, backend="cpu", seed=5)
        runs.append((search, search.run(iterations=12)))
    (search, result), (_, again) = runs
    assert search.work == (12 * 12, "ant tours") and search.restarts == 0 and len(merges) == 2 * 3
    bests = [problem.evaluate(search.colony.best_tour(c)) for c in range(3)]
    assert bests == search.colony_best and max(bests) <= result.history[0]
    assert result.fitness == problem.evaluate(result.solution) <= min(bests)
    assert again.fitness == result.fitness and np.array_equal(again.solution, result.solution)
    with pytest.raises(ValueError, match="colonies"):
        FocusedACO(problem, colonies=0, backend="cpu")


def test_no_restart_where_less_time_is_left_than_the_set_up_took(monkeypatch):
    """With less time left than the run's set-up took, a standing colony is still merged into the
    best (the crossover is quick) but goes on instead of a new start that could overrun the
    budget; with time enough it restarts."""
    from lsmgpu.search import focused
    problem = TSP.from_file(TSP.shipped("kroA100"))
    merges = []
    crossover = focused.partition_crossover
    monkeypatch.setattr(focused, "partition_crossover", lambda *a: merges.append(1) or crossover(*a))
    for left, restarted in ((1e-9, False), (1e9, True)):
        monkeypatch.setattr(focused, "time_left", lambda: left)
        merges.clear()
        search = FocusedACO(problem, ants=4, moves=8, restart_after=2, backend="cpu", seed=3)
        result = search.run(iterations=30)
        assert (search.restarts > 0) == restarted and len(merges) >= 3 and result.iterations == 30
        assert result.fitness == problem.evaluate(result.solution)


def test_ant_lists_make_the_lists_over_the_ants_tours(monkeypatch):
    """``ant_lists=3``: at the third iteration the lists and penalties become those TSP.alpha_over_tours
    makes from that iteration's ants' tours and the best (ants + 1 rows) with the lists they had; the
    ants go on over them, the evaluations go on growing, and the run's tour is valid; a second run
    starts over the given lists; a problem without tours' α-lists is refused, named."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    asked = []
    made_by = problem.alpha_over_tours
    monkeypatch.setattr(problem, "alpha_over_tours",
                        lambda tours, k, lists: asked.append((tours.copy(), lists.copy())) or made_by(tours, k, lists))
    search = FocusedACO(problem, backend="cpu", seed=1, ants=6, ant_lists=3)
    given = search.rules.candidates.copy()
    result = search.run(iterations=6)
    assert len(asked) == 1 and asked[0][0].shape == (7, problem.n) and np.array_equal(asked[0][1], given)
    assert all(sorted(tour) == list(range(problem.n)) for tour in asked[0][0])
    lists, pi = made_by(*asked[0][:1], given.shape[1], given)
    assert np.array_equal(search.rules.candidates, lists) and np.array_equal(search.rules.penalties, pi)
    assert not np.array_equal(lists, given)
    assert result.fitness == problem.evaluate(result.solution) and result.iterations == 6
    assert FocusedACO(problem, backend="cpu", seed=1, ants=6, ant_lists=3).run(iterations=3).evaluations < \
        result.evaluations
    asked.clear()
    search.run(iterations=2)
    assert np.array_equal(search.rules.candidates, given) and asked == []
    class NoTourLists(TSP):
        alpha_over_tours = None
    with pytest.raises(ValueError, match="ant_lists"):
        FocusedACO(NoTourLists(problem.coords), backend="cpu", ant_lists=3)


def test_ant_lists_start_each_colony_again_from_its_own_best(monkeypatch):
    """``ant_lists`` with two colonies: when the lists are made again, the colony that holds the best so
    far starts again from it and the other from its own best tour (each start's length its tour's), so
    that colonies side by side stay apart; the run's tour is valid."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    search = FocusedACO(problem, backend="cpu", seed=3, ants=4, colonies=2, ant_lists=3)
    seen, started = {}, []
    make_lists = search._lists_from_ants

    def lists_from_ants():
        seen.update(best=search.best_x.copy(), bests=[search.colony.best_tour(c).copy() for c in range(2)],
                    lengths=list(search.colony_best))
        started.clear()
        make_lists()
        seen["again"] = list(started)
    monkeypatch.setattr(search, "_lists_from_ants", lists_from_ants)
    start_colony = search._start_colony
    monkeypatch.setattr(search, "_start_colony", lambda colony, source, from_length: started.append(
        (colony, np.array(source), from_length)) or start_colony(colony, source, from_length))
    result = search.run(iterations=5)
    leader = int(np.argmin(seen["lengths"]))
    assert [colony for colony, _, _ in seen["again"]] == [0, 1] and seen["lengths"][0] != seen["lengths"][1]
    for colony, source, from_length in seen["again"]:
        want = seen["best"] if colony == leader else seen["bests"][colony]
        assert np.array_equal(source, want) and from_length == problem.evaluate(source)
    assert result.fitness == problem.evaluate(result.solution)


def test_a_deadline_in_the_ants_build_returns_the_descended_start(monkeypatch):
    """The budget ending while the ants' kernels build (a machine's first run: the start's
    descent built and run, the ants' build cut by the deadline) returns the descended start
    tour, not the start before its descent, with status "seconds"."""
    from lsmgpu.backends.dontlook import CpuDontLook, descend_rows
    from lsmgpu.budget import DeadlineReached
    problem = TSP.from_file(TSP.shipped("kroA100"))
    search = FocusedACO(problem, backend="cpu", seed=2, ants=6)

    def cut(distance):
        raise DeadlineReached("the time budget ran out while nvcc built a kernel")
    monkeypatch.setattr(search, "_build_colony", cut)
    result = search.run(seconds=100)
    descent = CpuDontLook(search.rules, problem.edge_distance(), 1)
    descent.load(search.start_x[None, :])
    descend_rows(descent)
    assert result.status == "seconds" and result.iterations == 0
    assert result.fitness == descent.values()[0] < problem.evaluate(search.start_x)
    assert np.array_equal(result.solution, descent.solutions()[0])


def test_the_ants_kernels_build_beside_the_start_s_descent():
    """A backend that builds ahead (``prebuild_focused_ants``, the CUDA backend's) is asked for the
    ants' kernels before the start's descent is built, with the rules, focus, ants and beta the
    ants are then made with; the run goes on as on the host (the same tour as the CPU's, the
    descent's options given: a backend other than the CPU chains 2-opt moves by default)."""
    from lsmgpu.backends.cpu import CpuBackend
    from lsmgpu.backends.dontlook import CpuDontLook
    problem = TSP.from_file(TSP.shipped("kroA100"))

    class Recording(CpuBackend):
        """The host's descents and ants as a backend's kernels, each call recorded in order."""
        name = "recording"

        def __init__(self):
            super().__init__()
            self.calls = []

        def prebuild_focused_ants(self, rules, focus, distance, ants, beta):
            self.calls.append(("prebuild", rules, focus, ants, beta))

        def dontlook(self, rules, distance, rows):
            self.calls.append(("dontlook",))
            return CpuDontLook(rules, distance, rows)

        def focused_ants(self, rules, focus, distance, ants, beta):
            self.calls.append(("focused_ants", rules, focus, ants, beta))
            return CpuFocusedAnts(rules, focus, distance, ants, beta=beta)
    backend = Recording()
    result = FocusedACO(problem, backend=backend, seed=4, ants=6, lk_depth=0).run(iterations=3)
    assert [call[0] for call in backend.calls] == ["prebuild", "dontlook", "focused_ants"]
    (_, rules, focus, ants, beta), (_, *made) = backend.calls[0], backend.calls[2]
    assert made[0] is rules and vars(made[1]) == vars(focus) and made[2:] == [ants, beta]
    expected = FocusedACO(problem, backend="cpu", seed=4, ants=6, lk_depth=0).run(iterations=3)
    assert result.fitness == expected.fitness and np.array_equal(result.solution, expected.solution)


@pytest.mark.gpu
def test_gpu_ants_take_the_module_built_ahead(monkeypatch, tmp_path):
    """CudaFocusedAnts.prebuild renders the source the ants then load: with every cache empty, the
    builds started ahead (the full one, and a quick one where NVRTC has the fast compile) are the
    only ones made, their constructor taking one of them, and the ants walk and descend as the
    reference's."""
    from lsmgpu.backends.cuda import driver
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    for held in ("_cubins", "_modules", "_building"):
        monkeypatch.setattr(driver, held, {})
    builds, build = [], driver._build
    monkeypatch.setattr(driver, "_build", lambda *args: builds.append(args[3]) or build(*args))
    problem = tsp_of("int-coords", 300, seed=2)
    rules, focus = rules_of(problem, or3=True, lk=True), FocusRules(5, 8, 10**6)
    resolve("cuda").prebuild_focused_ants(rules, focus, problem.edge_distance(), 8, 2.0)
    ahead = dict(driver._building)
    quick = (driver.QUICK_BUILD_OPTIONS,) if driver.quick_builds() else ()
    assert len({key[:2] for key in ahead}) == 1 and {key[2] for key in ahead} == {driver.BUILD_OPTIONS, *quick}
    assert_gpu_ants_equal_the_hosts(problem, rules, focus, 8, np.random.default_rng(2).permutation(300), 2)
    for future in ahead.values():
        future.result()
    assert sorted(builds) == sorted(key[2] for key in ahead)


def test_errors_name_what_is_wrong():
    """Errors name what is wrong."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    for options, match in (({"ants": 0}, "ants"), ({"moves": 0}, "moves"), ({"rho": 1.0}, "rho"),
                           ({"p_best": 0}, "p_best"), ({"beta": -1}, "beta"), ({"beta": float("nan")}, "beta"),
                           ({"global_best_source": 1.5}, "global_best_source"), ({"walk": 0}, "walk"),
                           ({"restart_after": 0}, "restart_after")):
        with pytest.raises(ValueError, match=match):
            FocusedACO(problem, backend="cpu", **options)
    with pytest.raises(TypeError, match="ants"):
        FocusedACO(problem, ants=2.5, backend="cpu")
    with pytest.raises(ValueError):
        FocusedACO(problem, initial=np.zeros(52, int), backend="cpu")
    with pytest.raises(TypeError, match="no edge distance"):
        FocusedACO(QAP.from_file(QAP.shipped("tai12a")), backend="cpu")
    with pytest.raises(ValueError, match="at least 8"):
        FocusedACO(tsp_of("int-coords", 7), backend="cpu")
    with pytest.raises(ValueError, match="iterations"):
        FocusedACO(problem, backend="cpu").run(iterations=3 * 10**9)


@pytest.mark.gpu
@pytest.mark.parametrize("share_rows", [True, False])
@pytest.mark.parametrize("kind,n,moves,or3,lk,colonies",
                         [("int-coords", 300, 8, True, False, 1), ("real-coords", 120, 4, False, False, 1),
                          ("matrix", 90, 8, True, False, 1), ("int-coords", 9, 3, False, False, 1),
                          ("int-coords", 300, 8, True, True, 1), ("real-coords", 120, 4, False, True, 1),
                          ("int-coords", 300, 8, True, False, 3), ("matrix", 90, 8, True, True, 4)])
def test_gpu_ants_equal_the_hosts(kind, n, moves, or3, lk, colonies, share_rows, monkeypatch):
    """Tours, lengths, checks and pheromone equal the reference's over iterations that follow
    ants and the kept best (descents with and without Or-3opt moves; each ant's tour in its
    block's shared memory or in global memory; one colony, or several from their own sources,
    each following its own ants and depositing on its own pheromone)."""
    from lsmgpu.backends.cuda import dontlook as cuda_dontlook
    monkeypatch.setattr(cuda_dontlook, "SHARE_ROWS", share_rows)
    problem = tsp_of(kind, n, seed=n)
    rules, distance, B = rules_of(problem, or3=or3, lk=lk), problem.edge_distance(), 12
    focus, per = FocusRules(17, moves, 10**6, colonies), B // colonies
    host = CpuFocusedAnts(rules, focus, distance, B, beta=2.0)
    gpu = resolve("cuda").focused_ants(rules, focus, distance, B, 2.0)
    assert (gpu.row_shared > 0) == share_rows
    try:
        rng = np.random.default_rng(n)
        for c in range(colonies):
            source = rng.permutation(n)
            for side in (host, gpu):
                side.start(source, float(length(problem, source)), 0.3 + 0.1 * c, c)
        for iteration in range(6):
            lengths = host.build(iteration)
            assert np.array_equal(gpu.build(iteration), lengths)
            assert all(np.array_equal(gpu.tour(k), host.tour(k)) for k in range(B))
            assert gpu.checked() == host.checked()
            for c in range(colonies):
                k = c * per + int(np.argmin(lengths[c * per:(c + 1) * per]))
                for side in (host, gpu):
                    if (iteration + c) % 2 == 0:
                        side.keep_best(k, c)
                    side.follow(-1 if iteration == 3 else k, lengths[k], c)
                    side.deposit(0.6, 1.0 / lengths[k], 0.2 / lengths[k], 3.0 / lengths[k], c)
                assert np.array_equal(gpu.pheromone(c), host.pheromone(c))
                assert np.array_equal(gpu.best_tour(c), host.best_tour(c))
        memory = gpu.memory()
        assert all(np.array_equal(memory[key], value) for key, value in host.memory().items())
    finally:
        gpu.close()


@pytest.mark.gpu
@pytest.mark.parametrize("or3,lk", [(False, False), (True, False), (True, True), (False, True)])
def test_gpu_search_equals_the_cpu_search(or3, lk):
    """GPU search equals the CPU search (with and without the Or-3opt and LK3 moves)."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [FocusedACO(problem, ants=6, backend=b, seed=2, or3=or3, lk=lk, lk_depth=0).run(iterations=25)
            for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)
    assert runs[0].evaluations == runs[1].evaluations


@pytest.mark.gpu
def test_gpu_many_ants_keep_tours_and_lengths():
    """1,024 blocks at once on 2,000 cities: every tour a permutation whose length is its value."""
    problem = tsp_of("int-coords", 2000, seed=9)
    rules = rules_of(problem)
    gpu = resolve("cuda").focused_ants(rules, FocusRules(5, 8, 10**6), problem.edge_distance(), 1024, 1.0)
    try:
        source = np.random.default_rng(0).permutation(2000)
        gpu.start(source, float(length(problem, source)), 1.0)
        lengths = gpu.build(0)
        tours = [gpu.tour(k) for k in range(0, 1024, 37)]
        assert all(np.array_equal(np.sort(x), np.arange(2000)) for x in tours)
        assert [length(problem, x) for x in tours] == list(lengths[::37])
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_lone_ant_equals_the_host_and_takes_no_wide_buffers():
    """One ant on 600 cities: its own kernel, one block, so no wide rounds (wide 1, none of their
    buffers), and its tours and lengths the reference's."""
    problem = tsp_of("int-coords", 600, seed=4)
    rules, distance = rules_of(problem, or3=True, lk=True), problem.edge_distance()
    focus = FocusRules(3, 8, 10**6)
    host = CpuFocusedAnts(rules, focus, distance, 1, beta=1.0)
    gpu = resolve("cuda").focused_ants(rules, focus, distance, 1, 1.0)
    try:
        assert gpu.wide == 1 and not hasattr(gpu, "round_cities")
        source = np.random.default_rng(4).permutation(600)
        for side in (host, gpu):
            side.start(source, float(length(problem, source)), 0.5)
        for iteration in range(4):
            lengths = host.build(iteration)
            assert np.array_equal(gpu.build(iteration), lengths) and np.array_equal(gpu.tour(0), host.tour(0))
            for side in (host, gpu):
                side.follow(0, lengths[0])
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_colonies_equal_the_cpu_colonies():
    """Three colonies side by side with restarts end on the GPU as on the CPU (the same tour,
    restarts, evaluations)."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [FocusedACO(problem, ants=4, colonies=3, backend=b, seed=4, lk_depth=0, restart_after=4)
            for b in ("cpu", "cuda")]
    results = [search.run(iterations=20) for search in runs]
    assert runs[0].restarts == runs[1].restarts > 0 and runs[0].colony_best == runs[1].colony_best
    assert results[0].fitness == results[1].fitness and np.array_equal(results[0].solution, results[1].solution)
    assert results[0].evaluations == results[1].evaluations


@pytest.mark.gpu
def test_gpu_search_with_restarts_equals_the_cpu_search():
    """Restarts on the GPU (the colony's best read back, the start's engine used again) end as on
    the CPU."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [FocusedACO(problem, ants=6, backend=b, seed=2, lk_depth=0, restart_after=3) for b in ("cpu", "cuda")]
    results = [search.run(iterations=40) for search in runs]
    assert runs[0].restarts == runs[1].restarts > 0
    assert results[0].fitness == results[1].fitness and np.array_equal(results[0].solution, results[1].solution)
