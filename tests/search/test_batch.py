"""Batched multi-start (lsmgpu.parallel.batch): each start of a batch follows the trajectory of a single
tabu search seeded with its spawned seed; budgets, Ctrl-C and what cannot be batched."""
import numpy as np
import pytest

from lsmgpu import TabuSearch
from lsmgpu.parallel.batch import BatchTabuSearch, batch_unsupported
from lsmgpu.parallel.multistart import MultiStart, spawn_seeds
from lsmgpu.problems import PPP, QAP, TSP, GraphColoring
from lsmgpu.problems.coloring import random_graph


def batch_problems():
    """Problems of each encoding; the colouring with a tenure range (its default, TabuCol's
    reactive tenure, is a function and runs one start after the other)."""
    pts = np.random.default_rng(1).uniform(0, 100, (25, 2))
    return [QAP.from_file(QAP.shipped("tai12a")),
            TSP(pts, neighbourhood="swap", name="tsp25-swap"),
            TSP(pts, neighbourhood="2opt", name="tsp25-2opt"),
            PPP.planted(41, 37, 2, distance=2)[0],
            GraphColoring(40, random_graph(40, 0.2, 3), 4, name="coloring-40")]


def tenure_of(problem):
    return (3, 8) if isinstance(problem, GraphColoring) else None


def assert_same_runs(batched, singles):
    for got, want in zip(batched.runs, singles):
        assert np.array_equal(got.history, want.history)
        assert (got.iterations, got.evaluations, got.status) == (want.iterations, want.evaluations, want.status)
        assert np.array_equal(got.solution, want.solution) and got.fitness == want.fitness


@pytest.mark.parametrize("problem", batch_problems(), ids=lambda p: p.name)
def test_each_start_follows_its_single_search(problem):
    """Start k of a batch == TabuSearch(seed=spawn(B)[k]): histories, best solutions, counts."""
    batched = MultiStart(TabuSearch, problem, starts=5, seed=11, history="all", backend="cpu", tenure=tenure_of(problem)).run(200)
    assert batched.status == "done"
    singles = [TabuSearch(problem, seed=s, history="all", backend="cpu", tenure=tenure_of(problem)).run(200)
               for s in spawn_seeds(11, 5)]
    assert_same_runs(batched, singles)


@pytest.mark.parametrize("flush", [1, 16])
def test_stagnation_stops_starts_one_by_one(monkeypatch, flush):
    """Each start stops on its own stagnation, at the iteration a single search would; the
    histories are the same whether the ledger splits them per start after every chunk or
    every 16 (starts stopping in between)."""
    from lsmgpu.backends.ledger import Ledger
    monkeypatch.setattr(Ledger, "HISTORY_FLUSH", flush)
    problem = QAP.from_file(QAP.shipped("tai12a"))
    batched = MultiStart(TabuSearch, problem, starts=6, seed=2, history="all", backend="cpu").run(3000, stagnation=300)
    singles = [TabuSearch(problem, seed=s, history="all", backend="cpu").run(3000, stagnation=300) for s in spawn_seeds(2, 6)]
    assert_same_runs(batched, singles)
    assert len({r.iterations for r in batched.runs}) > 1


def test_seconds_stop_the_whole_batch():
    """Seconds stop the whole batch."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    result = MultiStart(TabuSearch, problem, starts=8, seed=0, backend="cpu").run(seconds=0.3)
    assert result.status == "seconds"
    assert {r.status for r in result.runs} == {"seconds"}
    assert len({r.iterations for r in result.runs}) == 1


def test_ctrl_c_returns_the_best_so_far(monkeypatch):
    """KeyboardInterrupt inside an iteration: every start returns its best solution so far."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    search = BatchTabuSearch(problem, spawn_seeds(0, 3), backend="cpu")
    from lsmgpu.backends.cpu import CpuBatchEvaluator
    calls = {"n": 0}
    iterate = CpuBatchEvaluator.iterate

    def interrupted(self, step, rules):
        calls["n"] += 1
        if calls["n"] == 50:
            raise KeyboardInterrupt
        return iterate(self, step, rules)

    monkeypatch.setattr(CpuBatchEvaluator, "iterate", interrupted)
    result = search.run(1000)
    assert result.status == "interrupted"
    for r in result.runs:
        assert r.status == "interrupted" and r.iterations == 49
        assert r.fitness == problem.fitness(r.solution) == r.history.min()


def test_what_cannot_be_batched_runs_one_start_after_the_other():
    """What cannot be batched runs one start after the other."""
    from lsmgpu import HillClimbing
    problem = QAP.from_file(QAP.shipped("tai12a"))
    assert batch_unsupported(TabuSearch, {"backend": "cpu"}) is None
    assert "HillClimbing" in batch_unsupported(HillClimbing, {})
    assert "tenure function" in batch_unsupported(TabuSearch, {"tenure": lambda f, rng: 3})
    assert "per-search" in batch_unsupported(TabuSearch, {"callbacks": print})
    assert not MultiStart(TabuSearch, problem, starts=2, tenure=lambda f, rng: 3).batched
    assert not MultiStart(TabuSearch, problem, starts=2, batch=False).batched
    coloring = GraphColoring(10, random_graph(10, 0.3, 0), 3)
    assert "tenure function" in batch_unsupported(TabuSearch, {}, coloring)
    with pytest.raises(ValueError, match="tenure function"):
        BatchTabuSearch(problem, spawn_seeds(0, 2), tenure=lambda f, rng: 3)


def test_on_chunk_reports_progress():
    """After each chunk of 64 iterations: the iterations made and the best fitness so far."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    seen = []
    result = MultiStart(TabuSearch, problem, starts=3, seed=0, backend="cpu").run(
        150, on_chunk=lambda done, best: seen.append((done, best)))
    assert [d for d, _ in seen] == [64, 128, 150]
    assert seen[-1][1] == result.fitness and all(b1 >= b2 for (_, b1), (_, b2) in zip(seen, seen[1:]))


def test_islands_exchange_the_best_solutions():
    """exchange_every: the worse half restarts from kicked copies of the better half's best
    (a start's fitness jumps without an iteration), every start keeps a true best solution,
    and a seeded run is reproducible."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    islands = [MultiStart(TabuSearch, problem, starts=6, seed=4, backend="cpu", exchange_every=128,
                          exchange_strength=3, history="all").run(512) for _ in range(2)]
    independent = MultiStart(TabuSearch, problem, starts=6, seed=4, backend="cpu", history="all").run(512)
    for a, b in zip(*(run.runs for run in islands)):
        assert np.array_equal(a.history, b.history)
    changed = [k for k, (a, b) in enumerate(zip(islands[0].runs, independent.runs))
               if not np.array_equal(a.history, b.history)]
    assert len(changed) >= 3          # the worse half, restarted at iteration 128
    for r in islands[0].runs:
        assert r.iterations == 512 and len(r.history) == 513
        assert problem.evaluate(r.solution) == r.fitness == r.history.min()
    # the restarted starts' first iterations match: identical up to the exchange
    for k in changed:
        assert np.array_equal(islands[0].runs[k].history[:129], independent.runs[k].history[:129])


def test_islands_need_a_batch():
    """Islands need a batch."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    with pytest.raises(ValueError, match="exchange_every"):
        MultiStart(TabuSearch, problem, starts=2, seed=0, backend="cpu", batch=False, exchange_every=64)
    with pytest.raises(ValueError, match="exchange_every"):
        BatchTabuSearch(problem, spawn_seeds(0, 2), backend="cpu", exchange_every=0)
