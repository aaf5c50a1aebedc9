"""Multi-start: spawned seeds, equality with single runs, budgets."""
import warnings

import numpy as np
import pytest

from lsmgpu import HillClimbing, TabuSearch
from lsmgpu.parallel.multistart import MultiStart, spawn_seeds
from lsmgpu.problems import QAP, TSP


@pytest.fixture
def qap():
    return QAP.from_file(QAP.shipped("tai12a"))


def test_each_start_equals_a_single_run_with_its_spawned_seed(qap):
    """Start k's trajectory is that of TabuSearch(seed=SeedSequence(seed).spawn(B)[k])."""
    result = MultiStart(TabuSearch, qap, starts=4, seed=7, backend="cpu").run(300)
    for k, seed in enumerate(np.random.SeedSequence(7).spawn(4)):
        single = TabuSearch(qap, seed=seed, backend="cpu").run(300)
        assert np.array_equal(result.runs[k].history, single.history)
    assert result.fitness == np.nanmin(result.fitnesses) and result.status == "done"
    assert len(set(result.fitnesses.tolist())) > 1 or result.fitness == qap.best_known


def test_target_ends_the_multistart(qap):
    """One after the other, the starts after the one that hits the target do not run; batched,
    they all stop at that iteration ("stopped")."""
    result = MultiStart("tabu", qap, starts=20, seed=0, backend="cpu", batch=False).run(5000, target=qap.best_known)
    assert result.status == "target" and result.fitness == qap.best_known
    assert any(r is None for r in result.runs)
    batched = MultiStart("tabu", qap, starts=20, seed=0, backend="cpu").run(5000, target=qap.best_known)
    assert batched.status == "target" and batched.fitness == qap.best_known
    statuses = [r.status for r in batched.runs]
    assert "target" in statuses and set(statuses) <= {"target", "stopped"}


def test_time_limit_is_honoured(qap):
    """Time limit is honoured."""
    result = MultiStart(HillClimbing, qap, starts=10_000, seed=0, backend="cpu", restarts=10**6).run(seconds=0.3)
    assert result.status == "seconds" and result.solution is not None


def test_bad_arguments(qap):
    """Zero starts, an unknown search name and a class that is not a search are refused, named."""
    with pytest.raises(ValueError, match="starts"):
        spawn_seeds(0, 0)
    with pytest.raises(ValueError, match="unknown search"):
        MultiStart("anneal", qap, starts=2)
    with pytest.raises(TypeError, match="LocalSearch"):
        MultiStart(int, qap, starts=2)


def test_a_combined_result_is_the_best_run_with_the_counters_summed(qap):
    """SearchResult.combined: the best run's solution and history by the problem's sense, the
    iterations, evaluations and work summed, each run's device replaced where given, and no
    solution (NaN fitness) where no run finished."""
    from lsmgpu import SearchResult
    runs = [TabuSearch(qap, seed=s, backend="cpu").run(30 + 10 * s) for s in range(3)]
    combined = SearchResult.combined([runs[0], None, runs[1], runs[2]], 1.5, "done", qap.sense, {2: "gpu 7"})
    best = min(runs, key=lambda r: r.fitness)
    assert combined.fitness == best.fitness and np.array_equal(combined.solution, best.solution)
    assert np.array_equal(combined.history, best.history)
    assert combined.iterations == 30 + 40 + 50 and combined.evaluations == sum(r.evaluations for r in runs)
    assert combined.work == (120, "moves") and combined.seconds == 1.5 and combined.status == "done"
    assert combined.runs[1] is None and combined.runs[2].device == "gpu 7" and combined.runs[0].device == runs[0].device
    assert np.isnan(combined.fitnesses[1]) and combined.fitnesses[0] == runs[0].fitness
    assert "3 of 4 ran" in combined.summary()
    empty = SearchResult.combined([None, None], 0.1, "interrupted", 1, algorithm="TabuSearch", problem="tai12a")
    assert empty.solution is None and np.isnan(empty.fitness) and empty.runs == (None, None)


def test_a_combined_result_waited_as_long_as_the_longest_build_wait_of_its_runs(qap):
    """SearchResult.combined of runs side by side (Ray's actors, each building its own kernels):
    ``timings["build"]`` is the longest any run waited, whichever run is the best; the best's own
    phases are kept; runs that built nothing leave no "build" entry."""
    import dataclasses

    from lsmgpu import SearchResult
    runs = [TabuSearch(qap, seed=s, backend="cpu").run(30 + 10 * s) for s in range(3)]
    best = min(range(3), key=lambda k: runs[k].fitness)
    waits = [4.0 if k != best else 1.0 for k in range(3)]
    waits[(best + 1) % 3] = 2.5
    built = [dataclasses.replace(r, timings={**r.timings, "build": w}) for r, w in zip(runs, waits)]
    combined = SearchResult.combined(built, 1.5, "done", qap.sense)
    assert combined.timings["build"] == 4.0 and combined.fitness == runs[best].fitness
    assert {k: v for k, v in combined.timings.items() if k != "build"} == runs[best].timings
    assert "build" not in SearchResult.combined(runs, 1.5, "done", qap.sense).timings


def test_starts_that_would_all_begin_from_one_tour_are_announced():
    """Where the problem's start is one solution whatever the seed (TSP's greedy tour, its "auto"
    start from 5,000 cities), MultiStart warns that its descents (hill climbing, tabu search) begin
    from one solution; starts drawn per seed (the nearest-neighbour tour) or given, one start, and
    iterated local searches (their kicks part them) pass without a word."""
    greedy = TSP(TSP.from_file(TSP.shipped("kroA100")).coords, start="greedy")
    with pytest.warns(UserWarning, match="MultiStart: .* the 3 HillClimbing starts begin from one solution"):
        MultiStart(HillClimbing, greedy, starts=3, seed=0, backend="cpu")
    with pytest.warns(UserWarning, match="the 2 TabuSearch starts begin from one solution"):
        MultiStart("tabu", greedy, starts=2, seed=0, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MultiStart(HillClimbing, TSP(greedy.coords), starts=3, seed=0, backend="cpu")
        MultiStart(HillClimbing, greedy, starts=3, seed=0, backend="cpu",
                   initial=greedy.start_solution(np.random.default_rng(0)))
        MultiStart(HillClimbing, greedy, starts=1, seed=0, backend="cpu")
        MultiStart("ils", greedy, starts=3, seed=0, backend="cpu")
