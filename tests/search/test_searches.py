"""The searches: budgets, stop criteria, callbacks, Ctrl-C, determinism, parameter checks."""
import numpy as np
import pytest

from lsmgpu import Callback, HillClimbing, IteratedLocalSearch, Swap, TabuSearch, TwoOpt
from lsmgpu.problems import QAP, TSP
from lsmgpu.search import SEARCHES


@pytest.fixture
def qap():
    rng = np.random.default_rng(7)
    return QAP(rng.integers(0, 50, (20, 20)), rng.integers(0, 50, (20, 20)), name="rand20")


def test_same_seed_same_trajectory(qap):
    """Two runs with one seed follow the same trajectory; another seed differs."""
    a = TabuSearch(qap, seed=3, backend="cpu").run(200)
    b = TabuSearch(qap, seed=3, backend="cpu").run(200)
    c = TabuSearch(qap, seed=4, backend="cpu").run(200)
    assert np.array_equal(a.history, b.history) and np.array_equal(a.solution, b.solution)
    assert not np.array_equal(a.history, c.history)


def test_history_keeps_the_improvements_by_default(qap):
    """By default the history is the start and each new best (memory bounded by improvements, not
    iterations), the same values the full history reaches at the iterations the bests came."""
    full = TabuSearch(qap, seed=1, backend="cpu", history="all").run(300)
    short = TabuSearch(qap, seed=1, backend="cpu").run(300)
    bests = [f for _, _, f in short.improvements]
    assert list(short.history) == [full.history[0]] + bests and len(short.history) < len(full.history)
    assert list(full.history[[i for i, _, _ in full.improvements]]) == bests
    assert np.all(np.diff(short.history) < 0) and short.history[-1] == short.fitness == full.fitness
    with pytest.raises(ValueError, match="history"):
        TabuSearch(qap, history="every")


def test_history_tracks_true_fitness(qap):
    """The incremental fitness equals a full evaluation of the best solution; history starts at s0."""
    result = TabuSearch(qap, seed=1, backend="cpu", history="all").run(300)
    assert len(result.history) == result.iterations + 1 == 301
    assert result.fitness == qap.evaluate(result.solution) == result.history.min()
    assert result.evaluations == 300 * qap.neighbourhood.size
    bests = [f for _, _, f in result.improvements]
    assert bests == sorted(bests, reverse=True) and bests[-1] == result.fitness


@pytest.mark.parametrize("budget,status", [
    ({"iterations": 50}, "iterations"), ({"evaluations": 1000}, "evaluations"),
    ({"seconds": 0.05}, "seconds"), ({"stagnation": 30}, "stagnation"),
])
def test_stop_criteria(qap, budget, status):
    """Each budget stops the run and is reported as the status."""
    result = TabuSearch(qap, seed=0, backend="cpu").run(**budget)
    assert result.status == status
    if status == "evaluations":
        assert result.evaluations >= 1000 and result.evaluations - qap.neighbourhood.size < 1000


def test_target_stops_early(qap):
    """A target fitness stops the run as soon as the best reaches it."""
    first = TabuSearch(qap, seed=0, backend="cpu").run(100)
    goal = first.history[10]
    result = TabuSearch(qap, seed=0, backend="cpu").run(100, target=goal)
    assert result.status == "target" and result.fitness <= goal and result.iterations <= 10


def test_callbacks_see_every_iteration_and_can_stop(qap):
    """A Callback gets on_start, every on_iteration, on_best and on_end; returning True stops."""
    class Recorder(Callback):
        def __init__(self):
            self.events = []

        def on_start(self, search):
            self.events.append("start")

        def on_iteration(self, state):
            self.events.append(state.iteration)
            return state.iteration == 25

        def on_best(self, state):
            assert state.best == state.fitness

        def on_end(self, result):
            self.events.append(result.status)

    rec = Recorder()
    result = TabuSearch(qap, seed=0, backend="cpu", callbacks=rec).run(100)
    assert result.status == "callback" and result.iterations == 25
    assert rec.events == ["start", *range(1, 26), "callback"]
    calls = []
    TabuSearch(qap, seed=0, backend="cpu", callbacks=lambda s: calls.append(s.fitness)).run(5)
    assert len(calls) == 5


def test_ctrl_c_returns_best_so_far(qap):
    """A KeyboardInterrupt mid-run returns the best solution so far with status 'interrupted'."""
    def interrupt(state):
        if state.iteration == 40:
            raise KeyboardInterrupt

    result = TabuSearch(qap, seed=0, backend="cpu", callbacks=interrupt).run(1000)
    assert result.status == "interrupted" and result.iterations == 40
    assert result.fitness == qap.evaluate(result.solution)


def test_a_run_s_result_counts_the_seconds_its_kernel_builds_held_it_up(qap, monkeypatch):
    """The seconds a run waited for kernel builds (the driver's count_build_wait, here at its
    start and in its iterations) are its result's ``timings["build"]``; a multi-start's result counts
    those of all its starts; a run that built nothing has no "build" entry."""
    from lsmgpu.budget import count_build_wait
    from lsmgpu.parallel.multistart import MultiStart
    assert "build" not in TabuSearch(qap, seed=0, backend="cpu").run(5).timings
    start, step = TabuSearch._start, TabuSearch.step
    monkeypatch.setattr(TabuSearch, "_start", lambda self: (count_build_wait(1.5), start(self))[1])
    monkeypatch.setattr(TabuSearch, "step", lambda self: (count_build_wait(0.25), step(self))[1])
    result = TabuSearch(qap, seed=0, backend="cpu").run(4)
    assert result.timings["build"] == 1.5 + 4 * 0.25 and len(result.timings) > 1       # the phases kept
    starts = MultiStart(TabuSearch, qap, starts=3, seed=0, batch=False, backend="cpu").run(4)
    assert starts.timings["build"] == 3 * (1.5 + 4 * 0.25)


def test_step_api_matches_run(qap):
    """start/step/result reproduces run()."""
    search = TabuSearch(qap, seed=5, backend="cpu")
    search.start(iterations=30)
    while not search.step():
        pass
    stepped = search.result()
    ran = TabuSearch(qap, seed=5, backend="cpu").run(30)
    assert np.array_equal(stepped.history, ran.history)


def test_tabu_forbids_reversal_and_aspiration_admits(qap):
    """Without aspiration a tabu search never undoes its last move within the tenure."""
    result = TabuSearch(qap, seed=0, tenure=5, aspiration=False, backend="cpu").run(100)
    h = result.history
    # an immediate undo would bring the fitness back to the value of two iterations before
    assert not np.any(h[2:] == h[:-2])


def test_hill_climbing_first_vs_best_and_restarts(qap):
    """Both strategies end in a local optimum; first improvement evaluates fewer moves per step;
    restarts count local optima and keep the best."""
    best = HillClimbing(qap, seed=0, rule="best", backend="cpu").run()
    first = HillClimbing(qap, seed=0, rule="first", backend="cpu").run()
    for r in (best, first):
        assert r.status == "local_optimum"
        assert qap.delta(r.solution, qap.neighbourhood.decode(np.arange(190))).min() >= 0
    assert first.evaluations / first.iterations < best.evaluations / best.iterations
    search = HillClimbing(qap, seed=0, restarts=4, backend="cpu")
    multi = search.run()
    assert search.local_optima == 5 and multi.fitness <= best.fitness


def test_ils_reaches_berlin52_and_kroa100_optimum():
    """ILS with 2-opt descents and double-bridge kicks reaches the optima of berlin52 and kroA100."""
    for name, optimum in (("berlin52", 7542), ("kroA100", 21282)):
        tsp = TSP.from_file(TSP.shipped(name), neighbourhood="2opt")
        result = IteratedLocalSearch(tsp, seed=0, backend="cpu").run(10 * tsp.n, target=optimum)
        assert result.fitness == optimum, name


def test_ils_acceptance_rules(qap):
    """Every acceptance rule runs; 'better' never lets the accepted fitness rise."""
    for acceptance in ("better", "better-equal", "always", 0.05):
        r = IteratedLocalSearch(qap, seed=0, acceptance=acceptance, strength=3, backend="cpu").run(20)
        assert r.iterations == 20
        if acceptance == "better":
            assert np.all(np.diff(r.history) <= 0)


def test_neighbourhood_override():
    """A search can use another neighbourhood than the problem's default."""
    tsp = TSP.from_file(TSP.shipped("eil51"), neighbourhood="swap")
    r = HillClimbing(tsp, neighbourhood=TwoOpt(), seed=0, backend="cpu").run()
    assert isinstance(tsp.neighbourhood, Swap)
    assert r.evaluations % (51 * 48 // 2) == 0


@pytest.mark.parametrize("make,message", [
    (lambda p: TabuSearch(p, tenure=-1), "tenure"),
    (lambda p: TabuSearch(p, tenure=(5, 2)), "tenure"),
    (lambda p: HillClimbing(p, rule="steepest"), "rule"),
    (lambda p: HillClimbing(p, restarts=-2), "restarts"),
    (lambda p: IteratedLocalSearch(p, acceptance="sometimes"), "acceptance"),
    (lambda p: TabuSearch(p, backend="tpu"), "backend"),
    (lambda p: TabuSearch(p, initial=[0, 1, 2]), "shape"),
    (lambda p: TabuSearch(p).run(iterations=-5), "iterations"),
    (lambda p: TabuSearch(p).run(seconds=float("nan")), "seconds"),
])
def test_bad_parameters_raise(qap, make, message):
    """Impossible parameters raise ValueError naming the parameter."""
    with pytest.raises(ValueError, match=message):
        make(qap)


def test_unknown_keyword_is_a_type_error(qap):
    """A misspelt option is an error, not a silent default."""
    with pytest.raises(TypeError):
        TabuSearch(qap, tenur=5)


def test_ils_honours_the_time_limit_inside_its_first_descent():
    """The first 2-opt descent from a random tour of 1,000 cities takes seconds on the CPU; a
    0.3 s budget still ends the run in about 0.3 s, with the best tour so far."""
    from lsmgpu.problems import TSP
    points = np.random.default_rng(0).uniform(0, 10_000, (1000, 2))
    tsp = TSP(points, neighbourhood="2opt", start="random")
    result = IteratedLocalSearch(tsp, seed=0, backend="cpu").run(seconds=0.3)
    assert result.status == "seconds"
    assert result.fitness == tsp.evaluate(result.solution) < tsp.evaluate(tsp.initial_solution(np.random.default_rng(0)))


def test_independent_moves_reach_a_local_optimum_in_fewer_iterations():
    """'independent' applies every non-overlapping improving 2-opt move per iteration: it ends
    at a true 2-opt local optimum in far fewer iterations than best improvement, and the
    fitness it tracks incrementally equals a full evaluation."""
    from lsmgpu.problems import TSP
    points = np.random.default_rng(1).uniform(0, 10_000, (300, 2))
    tsp = TSP(points, neighbourhood="2opt", start="random")
    best = HillClimbing(tsp, rule="best", seed=0, backend="cpu").run()
    search = HillClimbing(tsp, rule="independent", seed=0, backend="cpu")
    result = search.run()
    assert result.status == "local_optimum" and result.iterations < best.iterations / 4
    x = result.solution
    assert sorted(x.tolist()) == list(range(300))
    assert tsp.delta(x, tsp.neighbourhood.decode(np.arange(tsp.neighbourhood.size))).min() >= 0
    assert search.current == tsp.evaluate(search.evaluator.x) and result.fitness <= 1.05 * best.fitness


def test_independent_ils_and_unsupported_neighbourhoods():
    """ILS descends with independent Or-opt moves; a neighbourhood without footprints (QAP
    swap) is refused with a message that says so."""
    from lsmgpu.problems import QAP, TSP
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="oropt")
    result = IteratedLocalSearch(tsp, rule="independent", seed=0, backend="cpu").run(20)
    assert result.fitness == tsp.evaluate(result.solution)
    with pytest.raises(TypeError, match="footprints"):
        HillClimbing(QAP.from_file(QAP.shipped("tai12a")), rule="independent", backend="cpu").run()


def test_forced_moves_come_first_in_selection():
    """Taillard's long-term aspiration: with forced_after = t, a move adding an attribute not
    forbidden for t iterations is chosen before better non-tabu moves, aspiration by objective
    is in the same first class, and with t = 0 the usual rule holds."""
    from lsmgpu.backends.base import Query, select_in
    signed = np.array([-5.0, 3.0, -2.0, 1.0])
    stamps = np.array([90, 10, 95, 60])     # iteration 100: move 1 (stamp 10) last forbidden long ago
    query = Query(step=100, current=50.0, best=0.0, tabu=True, forced_after=50)
    assert select_in(signed, stamps, query) == 1
    assert select_in(signed, stamps, Query(step=100, current=50.0, best=0.0, tabu=True)) == 0
    # a move that beats the best joins the first class: the least delta of the class wins
    assert select_in(signed, stamps, Query(step=100, current=4.0, best=0.0, tabu=True, forced_after=50)) == 0
    # tabu moves (stamp > step) are never forced; no first-class move: the usual rule
    assert select_in(signed, np.array([150, 120, 95, 99]), query) == 2


def test_forced_after_is_the_same_on_every_chunking():
    """The CPU evaluator combines its chunks by class first: the trajectory with forced moves
    does not depend on the chunk size, and forced moves change the trajectory."""
    from lsmgpu.backends.cpu import CpuBackend
    problem = QAP.from_file(QAP.shipped("tai12a"))
    runs = [TabuSearch(problem, seed=3, backend=CpuBackend(chunk=chunk), forced_after=30).run(600)
            for chunk in (7, 1 << 18)]
    assert np.array_equal(runs[0].history, runs[1].history)
    plain = TabuSearch(problem, seed=3, backend="cpu", forced_after=0).run(600)
    assert not np.array_equal(plain.history, runs[0].history)
    assert TabuSearch(problem, backend="cpu").forced_after == 2 * 12 * 12
    with pytest.raises(ValueError, match="forced_after"):
        TabuSearch(problem, backend="cpu", forced_after=-1)


def test_ils_polish_descends_in_both_neighbourhoods():
    """ILS with a polish neighbourhood (candidate 2-opt, then Or-opt): every accepted tour, so
    the best, is a local optimum of both; the polish improves on 2-opt alone here; a polish
    that is not a neighbourhood is refused."""
    from lsmgpu import OrOpt
    problem = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates")
    oropt = OrOpt(problem.neighbourhood.candidates)
    plain = IteratedLocalSearch(problem, seed=0, backend="cpu").run(iterations=10)
    polished = IteratedLocalSearch(problem, seed=0, backend="cpu", polish=oropt).run(iterations=10)
    best = polished.solution
    for p in (problem, problem.with_neighbourhood(oropt)):    # each reads moves of its own neighbourhood
        nb = p.neighbourhood
        assert p.delta(best, nb.moves(best, np.arange(nb.size))).min() >= 0
    assert polished.fitness < plain.fitness
    assert problem.evaluate(best) == polished.fitness
    with pytest.raises(TypeError, match="polish"):
        IteratedLocalSearch(problem, backend="cpu", polish="oropt")
    with pytest.raises(TypeError, match="sequence"):
        IteratedLocalSearch(problem, backend="cpu", polish=[oropt, "3opt"])


def test_ils_polish_chain_ends_in_a_local_optimum_of_every_neighbourhood():
    """A polish sequence (Or-opt, then candidate 3-opt) is a variable neighbourhood descent:
    the best tour admits no improving move of candidate 2-opt, Or-opt or candidate 3-opt,
    and its length is its full evaluation; the 3-opt step changes the search's path."""
    from lsmgpu import candidate_polish
    points = np.random.default_rng(0).integers(0, 1000, size=(200, 2))
    problem = TSP(points, neighbourhood="2opt-candidates", start="random")
    chain = candidate_polish(problem.neighbourhood.candidates)
    result = IteratedLocalSearch(problem, seed=0, backend="cpu", polish=chain).run(iterations=20)
    best = result.solution
    three = problem.with_neighbourhood(chain[1])
    for p in (problem, problem.with_neighbourhood(chain[0]), three):
        nb = p.neighbourhood
        assert p.delta(best, nb.moves(best, np.arange(nb.size))).min() >= 0, nb
    assert problem.evaluate(best) == result.fitness
    only_oropt = IteratedLocalSearch(problem, seed=0, backend="cpu", polish=chain[:1]).run(iterations=20)
    assert not np.array_equal(only_oropt.history, result.history)


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_every_search_reports_its_work_and_runs_on_the_one_loop(name):
    """Each registered search is a lsmgpu.search.loop.Search; its result says what it made in its
    own unit (moves, kicks, ant tours, children ...), at least one per iteration it counted."""
    from lsmgpu.search.loop import Search
    problem = TSP(np.round(np.random.default_rng(2).uniform(0, 1000, (30, 2))), name="tsp30")
    search = SEARCHES[name](problem, backend="cpu", seed=0)
    assert isinstance(search, Search)
    result = search.run(iterations=3)
    count, unit = result.work
    assert unit and count >= result.iterations >= 1 and unit in result.summary()


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_every_search_takes_its_params_or_the_same_names_as_keywords(name):
    """Each registered search has a frozen Params dataclass: params= and the same values as
    keywords build equal options; both at once, a params of another search, a misspelt keyword
    (named with the nearest valid name) are refused at construction; the dataclass is frozen."""
    import dataclasses
    from lsmgpu.problems import TSP
    cls = SEARCHES[name]
    problem = TSP(np.round(np.random.default_rng(2).uniform(0, 1000, (30, 2))), name="tsp30")
    first = dataclasses.fields(cls.Params)[0]
    value = {"tenure": 5, "rule": "first", "ants": 4, "genes": 8, "chains": 2, "segment_cities": 10}.get(first.name,
                                                                                                first.default)
    by_name = cls(problem, backend="cpu", **{first.name: value})
    given = cls(problem, backend="cpu", params=cls.Params(**{first.name: value}))
    assert by_name.params == given.params and getattr(by_name.params, first.name) is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(given.params, first.name, value)
    with pytest.raises(TypeError, match="not both"):
        cls(problem, backend="cpu", params=cls.Params(), **{first.name: value})
    other = next(c for c in SEARCHES.values() if c.Params is not cls.Params)
    with pytest.raises(TypeError, match=f"`params` must be a {cls.Params.__name__}"):
        cls(problem, backend="cpu", params=other.Params())
    misspelt = first.name[:-1] + "x" * 2
    with pytest.raises(TypeError, match=f"unknown option `{misspelt}` \\(did you mean '{first.name}'\\?\\)"):
        cls(problem, backend="cpu", **{misspelt: value})
    with pytest.raises(TypeError, match="did you mean 'seed'"):
        cls(problem, backend="cpu", seeed=1)


def test_params_are_checked_when_made():
    """A Params dataclass checks its values itself (before any search exists), naming the option."""
    from lsmgpu.search.colony import MMASParams
    from lsmgpu.search.hill_climbing import HillClimbingParams
    from lsmgpu.search.tabu import TabuParams
    with pytest.raises(ValueError, match="`rule` must be one of"):
        HillClimbingParams(rule="steepest")
    with pytest.raises(ValueError, match="`p_best` must be in"):
        MMASParams(p_best=2.0)
    with pytest.raises(ValueError, match=r"low <= high"):
        TabuParams(tenure=(9, 3))
    assert TabuParams(tenure=7).tenure == (7, 7)
