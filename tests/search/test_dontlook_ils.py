"""The don't-look ILS: kicks against their definition (segments swapped, delta re-measured),
chains whose lengths are their tours', rounds that cut anywhere without changing the result,
the islands' adoption, the search's contract and errors; on the GPU, the kernel's chains equal
the host's after every round."""
import numpy as np
import pytest

from lsmgpu import DontLookILS
from lsmgpu.backends import resolve
from lsmgpu.backends.tour_steps import apply_steps
from lsmgpu.backends.dontlook_chains import (WALK_TRIES, CpuChains, KickRules, kick_span, kick_spans, kick_walks,
                                             plan_kick)
from lsmgpu.neighbourhoods.crowns import counter_uniform
from lsmgpu.problems import QAP, TSP

from .test_dontlook import length, positions, rules_of, tsp_of


def cyclic_equal(a, b) -> bool:
    """Whether a and b are the same cycle (either direction)."""
    a, b = list(a), list(b)
    start = a.index(b[0])
    turned = a[start:] + a[:start]
    return turned == b or [turned[0]] + turned[1:][::-1] == b


@pytest.mark.parametrize("n,segment", [(8, 50), (9, 1), (30, 5), (60, 50)])
def test_kick_swaps_two_adjacent_segments(n, segment):
    """Kick t of chain k: a B C d -> a C B d with the draws' p, l1, l2; delta = re-measured change."""
    problem = tsp_of("int-coords", n, seed=n)
    span = kick_span(n, segment)
    assert 1 <= span <= (n - 3) // 2
    rng = np.random.default_rng(n)
    for t in range(40):
        x = rng.permutation(n)
        kicks = KickRules(seed=7, span=span, limit=100)
        delta, steps, touched = plan_kick(x, positions(x), kicks, t, 3, problem.dist, rules_of(problem).candidates)
        u = counter_uniform(7, t, 3, np.arange(3))
        p, l1, l2 = int(u[0] * n), 1 + int(u[1] * span), 1 + int(u[2] * span)
        order = np.roll(x, -p)                 # a B C d rest
        expected = np.concatenate([order[:1], order[1 + l1:1 + l1 + l2], order[1:1 + l1], order[1 + l1 + l2:]])
        y, pos = x.copy(), positions(x)
        apply_steps(y, pos, steps)
        assert cyclic_equal(y, expected) and np.array_equal(pos, positions(y))
        assert delta == length(problem, y) - length(problem, x)
        assert set(touched) == {order[0], order[1], order[l1], order[l1 + 1], order[l1 + l2], order[l1 + l2 + 1]}


@pytest.mark.parametrize("n,walk", [(8, 1), (40, 1), (40, 3), (300, 2)])
def test_walk_kick_cuts_after_three_cities_a_walk_apart_and_swaps_the_two_shorter_arcs(n, walk):
    """A walk kick: cuts after v = x[floor(u0 n)] and the ends of two walks of ``walk`` steps over
    the candidate lists from v (the first try with three distinct cities), the arc left out the
    longest; the tour a double bridge of those cuts, the delta re-measured. Tries that fail fall
    back to the segment kick."""
    problem = tsp_of("int-coords", n, seed=n)
    candidates, span = rules_of(problem).candidates, kick_span(n, 5)
    rng, walks, fallbacks = np.random.default_rng(n), 0, 0
    for t in range(60):
        x = rng.permutation(n)
        pos = positions(x)
        kicks = KickRules(seed=9, span=span, limit=100, walk=walk)
        u = counter_uniform(9, t, 2, np.arange(3 + 2 * WALK_TRIES * walk))
        v = x[int(u[0] * n)]
        cuts = None
        for attempt in range(WALK_TRIES):
            ends = []
            for j in range(2):
                c = v
                for s in range(walk):
                    c = candidates[c, int(u[3 + (2 * attempt + j) * walk + s] * candidates.shape[1])]
                ends.append(c)
            if len({v, *ends}) == 3:
                cuts = sorted(pos[[v, *ends]])
                break
        delta, steps, touched = plan_kick(x, pos, kicks, t, 2, problem.dist, candidates)
        y, ypos = x.copy(), pos.copy()
        apply_steps(y, ypos, steps)
        assert np.array_equal(ypos, positions(y)) and delta == length(problem, y) - length(problem, x)
        before = {frozenset((x[i], x[(i + 1) % n])) for i in range(n)}
        after = {frozenset((y[i], y[(i + 1) % n])) for i in range(n)}
        if cuts is None:
            fallbacks += 1
            p, l1, l2 = int(u[0] * n), 1 + int(u[1] * span), 1 + int(u[2] * span)
        else:
            walks += 1
            removed = {frozenset((x[q], x[(q + 1) % n])) for q in cuts}
            assert before - after <= removed and len(before - after) >= 2     # a kept edge: l1 = l2 = 1
            arcs = [cuts[1] - cuts[0], cuts[2] - cuts[1], n - cuts[2] + cuts[0]]    # the arc after each cut
            i = int(np.argmax(arcs)) + 1                                            # the swap leaves it out
            p, l1, l2 = cuts[i % 3], arcs[i % 3], arcs[(i + 1) % 3]
        order = np.roll(x, -p)
        expected = np.concatenate([order[:1], order[1 + l1:1 + l1 + l2], order[1:1 + l1], order[1 + l1 + l2:]])
        assert cyclic_equal(y, expected)
        assert set(touched) == {order[0], order[1], order[l1], order[l1 + 1], order[l1 + l2], order[l1 + l2 + 1]}
    assert walks >= 40


def test_kick_walks_spread_a_share_of_the_chains_evenly():
    """Kick walks spread a share of the chains evenly."""
    assert list(kick_walks(6, 40, 0.5)) == [0, 40, 0, 40, 0, 40]
    assert list(kick_walks(4, 40, 1.0)) == [40] * 4 and list(kick_walks(4, 40, 0.0)) == [0] * 4
    assert list(kick_walks(8, 9, 0.25)) == [0, 0, 0, 9, 0, 0, 0, 9] and (kick_walks(300, 5, 1 / 3) > 0).sum() == 100
    problem = TSP.from_file(TSP.shipped("berlin52"))
    assert list(DontLookILS(problem, chains=4, kick_walk=7, walk_share=0.5, backend="cpu").walks) == [0, 7, 0, 7]
    assert list(DontLookILS(problem, chains=2, backend="cpu").walks) == [128, 128]          # below 5,000 cities
    assert list(DontLookILS(tsp_of("int-coords", 5000), chains=2, backend="cpu").walks) == [0, 0]


def assert_kicks_as_alone(problem, x, together, alone):
    """Chain k's kicks under the per-chain rules ``together`` equal its kicks under ``alone[k]``."""
    candidates = rules_of(problem).candidates
    for chain, rules in enumerate(alone):
        for t in range(30):
            planned = plan_kick(x, positions(x), together, t, chain, problem.dist, candidates)
            expected = plan_kick(x, positions(x), rules, t, chain, problem.dist, candidates)
            assert planned[0] == expected[0] and planned[1] == expected[1] and planned[2] == expected[2]


def test_kick_spans_spread_geometrically_and_each_chain_kicks_with_its_own():
    """Kick spans spread geometrically and each chain kicks with its own."""
    spans = kick_spans(10_000, 300, 9, 4.0)
    assert spans[0] == 75 and spans[-1] == 1200 and spans[4] == 300 and np.all(np.diff(spans) > 0)
    assert np.allclose(spans[1:] / spans[:-1], 4.0 ** 0.25, rtol=0.02)
    assert list(kick_spans(50, 300, 3, 4.0)) == [23, 23, 23]          # capped at (n - 3) // 2
    assert list(kick_spans(1000, 300, 1, 4.0)) == [300] and set(kick_spans(1000, 300, 5, 1.0)) == {300}
    problem = tsp_of("int-coords", 60, seed=4)
    x = np.random.default_rng(4).permutation(60)
    spread = KickRules(seed=7, span=[1, 5, 28], limit=10)
    assert_kicks_as_alone(problem, x, spread, [KickRules(seed=7, span=span, limit=10) for span in (1, 5, 28)])
    with pytest.raises(ValueError, match="3 kick spans given for 4 chains"):
        CpuChains(rules_of(problem), spread, problem.edge_distance(), 4)
    mixed = KickRules(seed=7, span=5, limit=10, walk=[0, 3, 0])
    assert_kicks_as_alone(problem, x, mixed, [KickRules(seed=7, span=5, limit=10, walk=walk) for walk in (0, 3, 0)])
    with pytest.raises(ValueError, match="3 kick walks given for 4 chains"):
        CpuChains(rules_of(problem), mixed, problem.edge_distance(), 4)
    with pytest.raises(ValueError, match="longest segment"):
        KickRules(seed=7, span=[4, 0], limit=10)


def run_chains(problem, rows, budget, calls, seed=3, limit=30, adopt_at=None):
    chains = CpuChains(rules_of(problem), KickRules(seed, kick_span(problem.n, 10), limit), problem.edge_distance(),
                       rows)
    chains.load(np.stack([np.random.default_rng(k).permutation(problem.n) for k in range(rows)]))
    seen = []
    for call in range(calls):
        chains.advance(budget)
        if call == adopt_at:
            chains.adopt(np.array([-1, 0, -1, 2])[:rows])
        seen.append(chains.bests())
    return chains, seen


def test_chains_hold_their_lengths_and_their_bests_only_fall():
    """Chains hold their lengths and their bests only fall."""
    problem = tsp_of("int-coords", 40)
    chains, seen = run_chains(problem, 3, 25, 40)
    for k in range(3):
        assert chains.values()[k] == length(problem, chains.solutions()[k])
        assert chains.bests()[k] == length(problem, chains.best_solution(k))
    seen = np.array(seen)
    assert np.all(seen[1:] <= seen[:-1]) and np.isfinite(seen[-1]).all()
    counters = chains.counters()
    assert np.array_equal(counters["kicks"], [30, 30, 30]) and chains.advance(1)
    assert np.all(counters["checks"] > 40) and np.all(counters["moves"] > 0)


def test_a_rounds_cut_does_not_change_the_chains():
    """Advanced 7 checks at a time or all at once: the same tours, bests and counters."""
    problem = tsp_of("int-coords", 30, seed=4)
    whole, _ = run_chains(problem, 2, 10**9, 1)
    sliced, _ = run_chains(problem, 2, 7, 400)
    assert np.array_equal(whole.best_x, sliced.best_x) and np.array_equal(whole.bests(), sliced.bests())
    for name in ("kicks", "checks", "moves"):
        assert np.array_equal(whole.counters()[name], sliced.counters()[name])


def test_adopted_chains_go_on_from_the_sources_best():
    """Adopted chains go on from the sources best."""
    problem = tsp_of("int-coords", 30, seed=5)
    chains = CpuChains(rules_of(problem), KickRules(1, 5, 10), problem.edge_distance(), 4)
    chains.load(np.stack([np.random.default_rng(k).permutation(30) for k in range(4)]))
    chains.advance(50)
    before = chains.best_x.copy(), chains.bests()
    chains.adopt(np.array([-1, 0, -1, 2]))
    assert np.array_equal(chains.best_x[1], before[0][0]) and np.array_equal(chains.solutions()[3], before[0][2])
    assert chains.bests()[1] == before[1][0] and chains.values()[3] == before[1][2]
    assert np.array_equal(chains.best_x[0], before[0][0])
    chains.advance(10**6)
    assert chains.bests()[1] <= before[1][0]


def test_no_exchange_before_every_chains_first_descent_ended(monkeypatch):
    """A chain still in its first descent has no best tour (+inf) to give or to be ranked by."""
    seen, adopt = [], CpuChains.adopt

    def watched(self, sources):
        seen.append(self.bests())
        adopt(self, sources)

    monkeypatch.setattr(CpuChains, "adopt", watched)
    problem = TSP.from_file(TSP.shipped("kroA100"))
    result = DontLookILS(problem, chains=2, backend="cpu", seed=0, exchange_every=1, round_checks=5).run(iterations=20)
    assert seen and all(np.isfinite(bests).all() for bests in seen)
    assert result.fitness == problem.fitness(result.solution)


def test_reaches_berlin52s_optimum_and_is_reproducible():
    """Reaches berlin52s optimum and is reproducible."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    runs = [DontLookILS(problem, chains=2, backend="cpu", seed=0, exchange_every=2, round_checks=200).run(iterations=150)
            for _ in range(2)]
    assert runs[0].fitness == problem.best_known == runs[1].fitness
    assert np.array_equal(runs[0].solution, runs[1].solution) and runs[0].status == "iterations"
    assert runs[0].iterations == 150 and problem.fitness(runs[0].solution) == runs[0].fitness


def test_an_offered_tour_goes_to_the_worst_chain():
    """A shorter tour offered during a run is adopted by the worst chain after the round (and is
    then the search's best); a longer one is not; a non-tour is refused."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    optimum = DontLookILS(problem, chains=2, backend="cpu", seed=0, exchange_every=2, round_checks=200).run(150)
    worse = np.random.default_rng(0).permutation(52)
    alone = DontLookILS(problem, chains=2, backend="cpu", seed=7, round_checks=50).run(iterations=30)
    for offered, taken in ((optimum.solution, 1), (worse, 0)):
        holder = []

        def offer_once(state, offered=offered):
            if holder[0].rounds == 1:
                holder[0].offer(offered)

        search = DontLookILS(problem, chains=2, backend="cpu", seed=7, round_checks=50, callbacks=[offer_once])
        holder.append(search)
        result = search.run(iterations=30)
        assert search.migrants == taken and result.fitness == problem.fitness(result.solution)
        if taken:
            assert result.fitness == optimum.fitness
        else:                       # refused: the run is the one without an offer
            assert result.fitness == alone.fitness and np.array_equal(result.solution, alone.solution)
    with pytest.raises(ValueError):
        search.offer(np.zeros(52, dtype=int))


def test_or_opt_segments_grow_from_3000_cities():
    """Or-opt segments grow from 3,000 cities."""
    small, large = (TSP(np.random.default_rng(n).uniform(0, 10**4, (n, 2)), name=f"r{n}") for n in (2999, 3000))
    assert DontLookILS(small, backend="cpu").rules.segment == 3
    assert DontLookILS(large, backend="cpu").rules.segment == 5
    assert DontLookILS(large, backend="cpu", segment=2).rules.segment == 2


def test_seconds_and_target_stop_it():
    """Seconds and target stop it."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    search = DontLookILS(problem, chains=2, backend="cpu", seed=1, round_checks=50)
    result = search.run(seconds=1.0)
    assert result.status == "seconds" and result.fitness == problem.fitness(result.solution)
    assert search.counters["kicks"].sum() > 0
    start = problem.fitness(problem.initial_solution(np.random.default_rng(0)))
    assert DontLookILS(problem, chains=1, backend="cpu", seed=1).run(seconds=30, target=start).status == "target"


def test_cpu_chains_run_to_the_deadline_however_long_their_last_round(monkeypatch):
    """The CPU's chains cut a round at the deadline (``cut_at_deadline``), so a run goes on to it
    however long its last round took; chains that could not (the GPU's rounds are milliseconds
    and not cut) stop where a round as long as the last would end past it, status "seconds"."""
    search = DontLookILS(TSP.from_file(TSP.shipped("berlin52")), chains=1, backend="cpu", seed=0)
    search.run(iterations=1, seconds=100)
    search._iteration_took = 1000.0
    assert not search._no_time_for_another()
    monkeypatch.setattr(CpuChains, "cut_at_deadline", False)
    assert search._no_time_for_another() and search.status == "seconds"


def test_5opt_chains_alone_start_from_a_2opt_oropt_optimum(monkeypatch):
    """With the 5-opt chains alone every chain starts from the start tour descended by 2-opt +
    Or-opt over the problem's ILS lists (DontLookDescent's local optimum: descending it again moves
    nothing), shorter than the start; with the other checks, or ``pre_descent=False``, the chains
    start from the start tour (``start_descent=False`` throughout: its own descent comes after)."""
    from lsmgpu import DontLookDescent
    problem = TSP(np.random.default_rng(3).uniform(0, 1000, (300, 2)), name="u300")
    loaded = []
    original = CpuChains.load
    monkeypatch.setattr(CpuChains, "load", lambda self, xs, at_optimum=False: loaded.append(np.array(xs))
                        or original(self, xs, at_optimum))
    options = dict(chains=3, backend="cpu", seed=1, candidates="alpha", lk_depth=8, lk_move=5, start_descent=False)
    alone = DontLookILS(problem, chain_alone=True, **options)
    alone.run(iterations=1)
    plain = DontLookILS(problem, **options)
    plain.run(iterations=1)
    DontLookILS(problem, chain_alone=True, pre_descent=False, **options).run(iterations=1)
    descended, as_given, not_descended = loaded
    assert (descended == descended[0]).all() and (as_given == plain.start_x).all()
    assert (not_descended == alone.start_x).all()
    again = DontLookDescent().population(resolve("cpu"), problem, 1, None)
    again.load(descended[:1])
    made, _, finished = again.descend(np.ones(1, bool))
    assert finished and made[0] == 0
    assert problem.evaluate(descended[0]) < problem.evaluate(alone.start_x)


def test_the_start_is_descended_first_on_the_cpu_and_on_a_gpu_below_15000_cities():
    """``pre_descent`` not given: the 5-opt chains alone start from a 2-opt + Or-opt optimum on the
    CPU whatever the size, on a GPU below PRE_DESCENT_GPU_BELOW cities only (measured:
    docs/benchmarks/start-up.md); other checks never."""
    from lsmgpu.search.dontlook_ils import PRE_DESCENT_GPU_BELOW, default_pre_descent
    assert PRE_DESCENT_GPU_BELOW == 15000
    assert default_pre_descent(True, "cpu", 100) and default_pre_descent(True, "cpu", 10**6)
    assert default_pre_descent(True, "cuda", 14999) and not default_pre_descent(True, "cuda", 15000)
    assert not default_pre_descent(False, "cpu", 100) and not default_pre_descent(False, "cuda", 100)
    problem = TSP(np.random.default_rng(3).uniform(0, 1000, (300, 2)), name="u300")
    chains = dict(backend="cpu", candidates="alpha", lk_depth=8, lk_move=5, chain_alone=True)
    assert DontLookILS(problem, **chains).pre_descent
    assert not DontLookILS(problem, pre_descent=False, **chains).pre_descent
    assert not DontLookILS(problem, backend="cpu").pre_descent and DontLookILS(problem, backend="cpu",
                                                                              pre_descent=True).pre_descent
    with pytest.raises(TypeError, match="pre_descent"):
        DontLookILS(problem, backend="cpu", pre_descent="no")


def test_several_chains_descend_their_start_themselves_below_15000_cities():
    """``start_descent`` not given: several chains descend their shared start by their own moves
    below START_DESCENT_BELOW cities, and then no 2-opt + Or-opt descent comes first unless asked;
    one chain, or 15,000 cities and more, never."""
    from lsmgpu.search.dontlook_ils import START_DESCENT_BELOW, default_start_descent
    assert START_DESCENT_BELOW == 15000
    assert default_start_descent(2, 14999) and not default_start_descent(2, 15000)
    assert not default_start_descent(1, 100)
    problem = TSP(np.random.default_rng(3).uniform(0, 1000, (300, 2)), name="u300")
    chains = dict(backend="cpu", candidates="alpha", lk_depth=8, lk_move=5, chain_alone=True)
    several = DontLookILS(problem, chains=4, **chains)
    assert several.start_descent and not several.pre_descent
    assert DontLookILS(problem, chains=4, pre_descent=True, **chains).pre_descent
    one = DontLookILS(problem, **chains)
    assert not one.start_descent and one.pre_descent


def test_chains_that_share_a_start_are_loaded_at_its_own_descents_local_optimum(monkeypatch):
    """``start_descent`` (the default with more than one chain): the chains' shared start is
    descended once by their own rules until none moves and loaded at that local optimum: every
    chain the same tour, descending it again from every city moves nothing, no city queued and
    each chain's best its length before any kick; not with one chain or ``start_descent=False``,
    and a non-flag is refused by name."""
    from lsmgpu.backends.dontlook import CpuDontLook
    problem = TSP(np.random.default_rng(8).uniform(0, 1000, (300, 2)), name="u300")
    loaded = []
    original = CpuChains.load

    def load(self, xs, at_optimum=False):
        original(self, xs, at_optimum)
        loaded.append((np.array(xs), at_optimum, self.bests(), self.queued.any()))
    monkeypatch.setattr(CpuChains, "load", load)
    options = dict(backend="cpu", seed=2, candidates="alpha", lk_depth=8, lk_move=5, chain_alone=True)
    search = DontLookILS(problem, chains=3, **options)
    assert search.start_descent and not DontLookILS(problem, **options).start_descent
    search.run(iterations=1)
    DontLookILS(problem, chains=3, start_descent=False, **options).run(iterations=1)
    (tours, at_optimum, bests, queued), (_, at_optimum_without, bests_without, queued_without) = loaded
    assert at_optimum and not queued and (tours == tours[0]).all()
    assert np.array_equal(bests, np.full(3, problem.evaluate(tours[0])))
    assert not at_optimum_without and queued_without and np.isinf(bests_without).all()
    again = CpuDontLook(search.rules, problem.edge_distance(), 1)
    again.load(tours[:1])
    made, _, finished = again.descend(np.ones(1, bool))
    assert finished and made[0] == 0
    with pytest.raises(TypeError, match="start_descent"):
        DontLookILS(problem, start_descent="no", **options)


#: one chain: the 2-opt + Or-opt pre-descent; two: the chains' own descent of their start
START_DESCENTS = [pytest.param(1, id="pre-descent"), pytest.param(2, id="own-descent")]


def assert_cut_before_the_chains_returns_the_descended_start(seed: int, status: str, chains: int) -> None:
    """A run of ``chains`` 5-opt chains alone on 300 random cities (seeded), cut before its chains
    ran a kick, ends with ``status``, no iteration, and the tour of the descent of its start (the
    pre-descent's, or the chains' own): measured exactly, shorter than the start."""
    problem = TSP(np.random.default_rng(seed).uniform(0, 1000, (300, 2)), name="u300")
    search = DontLookILS(problem, backend="cpu", chains=chains, seed=0, candidates="alpha", lk_depth=8, lk_move=5,
                         chain_alone=True)
    assert (search.pre_descent, search.start_descent) == (chains == 1, chains == 2)
    result = search.run(iterations=5)
    assert result.status == status and result.iterations == 0
    assert result.fitness == problem.evaluate(result.solution) < problem.evaluate(search.start_x)


@pytest.mark.parametrize("chains", START_DESCENTS)
def test_a_deadline_before_the_chains_are_loaded_returns_the_descended_start(monkeypatch, chains):
    """Where the deadline passes during the descent of the start before the 5-opt chains (here: the
    chains' loading finds it past, as ``check_deadline`` does), the run returns that descent's
    tour, shorter than the start, with status "seconds"."""
    from lsmgpu.budget import DeadlineReached

    def past_the_deadline(self, xs, at_optimum=False):
        raise DeadlineReached("the chains' start tours were loaded")
    monkeypatch.setattr(CpuChains, "load", past_the_deadline)
    assert_cut_before_the_chains_returns_the_descended_start(4, "seconds", chains)


@pytest.mark.parametrize("chains", START_DESCENTS)
def test_ctrl_c_inside_the_descent_before_the_chains_returns_its_tour(monkeypatch, chains):
    """Ctrl-C inside the descent of the start before the 5-opt chains (here: raised as its first
    pass ends) returns that descent's tour, shorter than the start, with status "interrupted"."""
    from lsmgpu.backends.dontlook import CpuDontLook
    original = CpuDontLook.descend

    def interrupted(self, rows, rule="best", deadline=None):
        original(self, rows, rule, deadline)
        raise KeyboardInterrupt
    monkeypatch.setattr(CpuDontLook, "descend", interrupted)
    assert_cut_before_the_chains_returns_the_descended_start(5, "interrupted", chains)


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_run_ended_inside_the_first_descent_returns_the_tour_part_way_down(backend):
    """A run that ends before any chain has ended its first descent (here a callback stops it
    after 50 checks, no kick made) returns the shortest chain's tour as it stands, a tour shorter
    than the start, its fitness measured on it."""
    from lsmgpu import Callback

    class StopAtOnce(Callback):
        def on_iteration(self, state):
            return True
    problem = TSP(np.random.default_rng(6).uniform(0, 10_000, (2000, 2)), name="u2000")
    search = DontLookILS(problem, backend=backend, chains=4, seed=0, round_checks=50, start_descent=False,
                         callbacks=StopAtOnce())
    result = search.run(iterations=5)
    assert result.status == "callback" and result.iterations == 0 and result.work == (0, "kicks")
    assert np.array_equal(np.sort(result.solution), np.arange(2000))
    assert result.fitness == problem.evaluate(result.solution) < problem.evaluate(search.start_x)


def test_errors_name_what_is_wrong():
    """Errors name what is wrong."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    with pytest.raises(ValueError, match="chains"):
        DontLookILS(problem, chains=0, backend="cpu")
    with pytest.raises(ValueError, match="kick_segment"):
        DontLookILS(problem, kick_segment=0, backend="cpu")
    with pytest.raises(ValueError, match="kick_spread"):
        DontLookILS(problem, kick_spread=0.5, backend="cpu")
    with pytest.raises(ValueError, match="kick_spread"):
        DontLookILS(problem, kick_spread=float("nan"), backend="cpu")
    with pytest.raises(ValueError, match="exchange_every"):
        DontLookILS(problem, exchange_every=0, backend="cpu")
    with pytest.raises(ValueError, match="kick_walk.* in \\[0, 256\\], got 257"):
        DontLookILS(problem, kick_walk=257, backend="cpu")
    with pytest.raises(TypeError, match="kick_walk"):
        DontLookILS(problem, kick_walk=1.5, backend="cpu")
    for share in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="walk_share"):
            DontLookILS(problem, kick_walk=4, walk_share=share, backend="cpu")
    with pytest.raises(ValueError, match="walk kick's steps"):
        KickRules(seed=1, span=5, limit=10, walk=-1)
    with pytest.raises(ValueError, match="`initial` must be a tour of 52 cities or 2"):
        DontLookILS(problem, chains=2, initial=np.arange(51), backend="cpu")
    with pytest.raises(ValueError):
        DontLookILS(problem, chains=1, initial=np.zeros(52, int), backend="cpu")
    with pytest.raises(TypeError, match="no edge distance"):
        DontLookILS(QAP.from_file(QAP.shipped("tai12a")), backend="cpu")
    with pytest.raises(ValueError, match="at least 8 cities"):
        DontLookILS(tsp_of("int-coords", 7), backend="cpu")
    with pytest.raises(ValueError, match="budget"):
        DontLookILS(problem, backend="cpu").run()
    with pytest.raises(ValueError, match="iterations.* 2,147,483,647 .*got 3,000,000,000"):
        DontLookILS(problem, backend="cpu").run(iterations=3 * 10**9)


@pytest.mark.parametrize("n,rows,sms,per_block,per_sm,most,want", [
    (2392, 256, 132, 232_448, 233_472, 8, 8 * 2392),      # pr2392, 256 chains on an H100: 2 blocks an SM
    (11849, 256, 132, 232_448, 233_472, 8, 8 * 11849),    # rl11849: 2 x 94.8 KB
    (11849, 448, 132, 232_448, 233_472, 8, 0),            # 448 ants: 4 x 94.8 KB do not fit an SM
    (11849, 448, 132, 232_448, 233_472, 2, 8 * 11849),    # ... but an SM's threads hold 2 blocks of 1,024
    (18512, 256, 132, 232_448, 233_472, 8, 0),            # d18512: 2 x 148 KB do not fit an SM
    (18512, 132, 132, 232_448, 233_472, 8, 8 * 18512),    # one chain an SM
    (30000, 1, 132, 232_448, 233_472, 8, 0)])             # beyond a block's shared memory
def test_chains_keep_their_tours_in_shared_memory_where_every_chain_fits(n, rows, sms, per_block, per_sm, most, want):
    """Chains keep their tours in shared memory where every chain an SM holds at once fits (the
    rows spread over the SMs, at most the blocks its threads hold), beside the block's own shared
    memory, which a deep 5-opt chain's room enlarges."""
    from lsmgpu.backends.cuda.dontlook import BLOCK_SHARED, block_shared_bytes, shared_row_bytes
    from lsmgpu.backends.dontlook import DontLookRules
    got = shared_row_bytes(n, rows, sms, per_block, per_sm, BLOCK_SHARED, most)
    assert got == want
    if got:
        assert got + BLOCK_SHARED <= per_block and min(-(-rows // sms), most) * (got + BLOCK_SHARED) <= per_sm
    cand = np.zeros((n, 5), dtype=np.int32)
    beside = [block_shared_bytes(DontLookRules(cand, 3, lk_depth=depth, lk_move=5)) for depth in (0, 12, 400)]
    assert BLOCK_SHARED < beside[0] < beside[1] < beside[2]
    deep = shared_row_bytes(n, rows, sms, per_block, per_sm, beside[2])
    assert deep in (0, 8 * n) and (deep == 0 or -(-rows // sms) * (deep + beside[2]) <= per_sm)


def test_chains_and_ants_of_5opt_chains_take_the_wider_block():
    """The ILS chains and the focused ants run KOPT_CHAIN_BLOCK threads a block where their descent
    makes 5-opt chains, CHAIN_BLOCK otherwise; the descents' own block stays BLOCK."""
    from lsmgpu.backends.cuda.dontlook import BLOCK, CHAIN_BLOCK, KOPT_CHAIN_BLOCK, CudaDontLook
    from lsmgpu.backends.cuda.dontlook_chains import CudaChains
    from lsmgpu.backends.cuda.focused import CudaFocusedAnts
    from lsmgpu.backends.dontlook import DontLookRules
    cand = np.zeros((20, 5), dtype=np.int32)
    five, two, shallow = (DontLookRules(cand, 3, lk_depth=depth, lk_move=move)
                          for depth, move in ((100, 5), (6, 2), (0, 5)))
    for cls in (CudaChains, CudaFocusedAnts):
        assert [cls.threads(rules) for rules in (five, two, shallow)] == [KOPT_CHAIN_BLOCK, CHAIN_BLOCK, CHAIN_BLOCK]
    assert CudaDontLook.threads(five) == BLOCK and KOPT_CHAIN_BLOCK % 32 == 0 and KOPT_CHAIN_BLOCK <= 1024


@pytest.mark.gpu
@pytest.mark.parametrize("walk", [0, [3, 0, 5, 0, 2, 1]])
@pytest.mark.parametrize("share_rows", [True, False])
@pytest.mark.parametrize("kind,n", [("int-coords", 200), ("real-coords", 60), ("matrix", 90), ("int-coords", 8)])
def test_gpu_chains_equal_the_hosts_after_every_round(kind, n, share_rows, walk, monkeypatch):
    """The chains' tours in a block's shared memory during a launch, or in global memory; segment
    or walk kicks."""
    from lsmgpu.backends.cuda import dontlook as cuda_dontlook
    monkeypatch.setattr(cuda_dontlook, "SHARE_ROWS", share_rows)
    problem = tsp_of(kind, n, seed=n)
    rules, distance, B = rules_of(problem), problem.edge_distance(), 6
    kicks = KickRules(11, kick_spans(n, 20, B, 4.0), 25, walk)          # each chain its own longest segment
    xs = np.stack([np.random.default_rng(k).permutation(n) for k in range(B)]).astype(np.int32)
    host, chains = CpuChains(rules, kicks, distance, B), resolve("cuda").dontlook_chains(rules, kicks, distance, B)
    assert (chains.row_shared > 0) == share_rows
    try:
        host.load(xs)
        chains.load(xs)
        for round_ in range(12):
            assert chains.advance(37) == host.advance(37)
            if round_ == 5:
                for side in (host, chains):
                    side.adopt(np.array([-1, 0, -1, 2, -1, 4]))
            if round_ == 7:
                for side in (host, chains):
                    side.adopt_tour(3, xs[5], float(length(problem, xs[5])))
            assert np.array_equal(chains.bests(), host.bests()) and np.array_equal(chains.values(), host.values())
            assert np.array_equal(chains.solutions(), host.solutions())
            assert all(np.array_equal(chains.best_solution(k), host.best_solution(k)) for k in range(B))
            for name, values in host.counters().items():
                assert np.array_equal(chains.counters()[name], values), name
    finally:
        chains.close()


@pytest.mark.gpu
@pytest.mark.parametrize("walk,share,lk,candidates", [(0, 1.0, False, None), (2, 1.0, False, None),
                                                     (40, 0.5, False, None), (0, 1.0, True, "alpha")])
def test_gpu_search_equals_the_cpu_search(walk, share, lk, candidates):
    """GPU search equals the CPU search (also with LK3 moves over the α-nearest)."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [DontLookILS(problem, chains=3, backend=b, seed=2, exchange_every=3, round_checks=100,
                        kick_spread=3.0, kick_walk=walk, walk_share=share, lk=lk, candidates=candidates).run(iterations=40)
            for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


@pytest.mark.gpu
def test_gpu_search_with_the_5opt_chains_alone_equals_the_cpu_search():
    """With the 5-opt chains alone (their shared start descended by their own moves first, wide,
    on each backend's own rows, the chains loaded at its optimum) the GPU's search equals the
    CPU's; with the 2-opt + Or-opt descent first instead too."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    for starts in (dict(), dict(start_descent=False, pre_descent=True)):
        runs = [DontLookILS(problem, chains=3, backend=b, seed=2, round_checks=100, candidates="alpha", lk_depth=8,
                            lk_move=5, chain_alone=True, **starts).run(iterations=20) for b in ("cpu", "cuda")]
        assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


@pytest.mark.gpu
def test_gpu_refuses_chains_that_do_not_fit():
    """GPU refuses chains that do not fit."""
    problem = tsp_of("int-coords", 1000)
    with pytest.raises(ValueError, match="don't-look ILS: .* would fit"):
        resolve("cuda").dontlook_chains(rules_of(problem), KickRules(0, 50, 10), problem.edge_distance(), 10**7)


@pytest.mark.gpu
def test_gpu_many_chains_keep_tours_and_lengths_with_islands():
    """512 blocks at once (block-wide barriers under load), islands every round: every tour a
    permutation whose length is its chain's value, every best tour's its best."""
    problem = tsp_of("int-coords", 300, seed=9)
    rules, distance, B = rules_of(problem), problem.edge_distance(), 512
    chains = resolve("cuda").dontlook_chains(rules, KickRules(5, 60, 10**6), distance, B)
    try:
        chains.load(np.broadcast_to(np.random.default_rng(0).permutation(300), (B, 300)))
        for _ in range(8):
            chains.advance(200)
            bests = chains.bests()
            order = np.argsort(bests, kind="stable")
            sources = np.full(B, -1)
            sources[order[::-1][:B // 2]] = order[:B // 2]
            chains.adopt(sources)
        xs, values, bests = chains.solutions(), chains.values(), chains.bests()
        assert all(np.array_equal(np.sort(x), np.arange(300)) for x in xs)
        assert [length(problem, x) for x in xs] == list(values)
        assert all(length(problem, chains.best_solution(k)) == bests[k] for k in range(0, B, 7))
    finally:
        chains.close()
