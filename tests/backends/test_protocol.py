"""The evaluator protocol (lsmgpu.backends.base) is all the searches and the batch driver rely on:
a fake backend written against it alone, which evaluates every neighbour by full re-evaluation
(no problem delta, no NumPy backend), runs every search and a batched multi-start, and follows
the CPU backend's trajectories move for move."""
import dataclasses

import numpy as np
import pytest

from lsmgpu import HillClimbing, IteratedLocalSearch, MultiStart, TabuSearch
from lsmgpu.backends.base import BatchChunk, BatchEvaluator, Evaluator, Query, Selection, select_in
from lsmgpu.problems import QAP, TSP


class BruteEvaluator(Evaluator):
    """Deltas by evaluating each neighbour whole; a dictionary for the tabu matrix."""

    backend, device = "fake", "a pen and paper"

    def enable_tabu(self):
        self.tabu = {}

    def load(self, x):
        self.x = np.array(x, dtype=self.problem.encoding.dtype)

    def _moves(self, step):
        return self.neighbourhood.moves(self.x, np.arange(self.neighbourhood.size, dtype=np.int64), step)

    def deltas(self, step=0):
        before = self.problem.evaluate(self.x)
        changes = []
        for move in self._moves(step):
            y = self.x.copy()
            self.neighbourhood.apply(y, move)
            changes.append(self.problem.evaluate(y) - before)
        return np.array(changes, dtype=self.problem.fitness_dtype)

    def select(self, query: Query) -> Selection:
        d = self.deltas(query.step)
        stamps = None
        if query.tabu:
            attrs = self.neighbourhood.added(self.x, self._moves(query.step))
            stamps = np.array([min(self.tabu.get((int(a), int(b)), 0) for a, b in row) for row in attrs])
        k = select_in(self.sense * d, stamps, query)
        return Selection(k, d[k].item() if k >= 0 else 0, len(d))

    def apply(self, index, step=0, tabu_until=None, move=None):
        move = self.move_at(index, step) if move is None else move
        if tabu_until is not None:
            for a, b in self.neighbourhood.removed(self.x, move):
                self.tabu[(int(a), int(b))] = tabu_until
        self.neighbourhood.apply(self.x, move)
        return move


class BruteBatch(BatchEvaluator):
    """A batch of brute evaluators stepped one after the other, with the protocol's stop tests."""

    backend, device = "fake", "a pen and paper"

    def __init__(self, problem, neighbourhood, starts):
        self.problem, self.timings = problem, {}
        self.evaluators = [BruteEvaluator(problem, neighbourhood) for _ in range(starts)]

    def load(self, xs, current):
        for ev, x in zip(self.evaluators, xs):
            ev.load(x)
            ev.enable_tabu()
        self.best_x = np.array(xs)

    def restart(self, starts, xs, current):
        for k, x in zip(starts, xs):
            self.evaluators[k].load(x)
            self.evaluators[k].enable_tabu()

    def set_tenures(self, table):
        self.tenures = table

    def advance(self, step, count, rules, stagnation, target, ledger, deadline=None):
        B = len(self.evaluators)
        made, values, code = np.zeros(B, int), np.zeros((B, count), ledger.current.dtype), np.zeros(B, int)
        for k in np.flatnonzero(ledger.active):
            current, best, since = ledger.current[k], ledger.best[k], ledger.since[k]
            for i in range(count):
                query = dataclasses.replace(rules, step=step + i, current=current, best=best)
                sel, move = self.evaluators[k].move(query, step + i + 1 + int(self.tenures[k, (step + i) % 1024]))
                if move is None:
                    code[k] = 1
                    break
                current += self.problem.sense * sel.delta
                values[k, i], made[k] = current, i + 1
                since = 0 if current < best else since + 1
                if current < best:
                    best, self.best_x[k] = current, self.evaluators[k].x.copy()
                if target is not None and best <= target:
                    code[k] = 2
                elif stagnation is not None and since >= stagnation:
                    code[k] = 3
                if code[k]:
                    break
        return BatchChunk(made, values, code)

    def best_solutions(self):
        return self.best_x.copy()


class FakeBackend:
    name, device = "fake", "a pen and paper"

    def evaluator(self, problem, neighbourhood):
        return BruteEvaluator(problem, neighbourhood)

    def batch_evaluator(self, problem, neighbourhood, starts):
        return BruteBatch(problem, neighbourhood, starts)


def runs(search, problem, backend, **options):
    return search(problem, seed=3, backend=backend, **options).run(40)


@pytest.mark.parametrize("search,options", [(TabuSearch, {}), (HillClimbing, {"rule": "first"}),
                                            (HillClimbing, {"rule": "independent"}),
                                            (IteratedLocalSearch, {"rule": "best"})],
                         ids=["tabu", "hc-first", "hc-independent", "ils"])
def test_searches_run_on_a_backend_that_implements_the_protocol(search, options):
    """Searches run on a backend that implements the protocol."""
    pts = np.random.default_rng(5).uniform(0, 100, (14, 2))
    problem = TSP(pts, neighbourhood="2opt", start="random")
    fake, cpu = runs(search, problem, FakeBackend(), **options), runs(search, problem, "cpu", **options)
    assert fake.backend == "fake" and fake.device == "a pen and paper"
    assert np.array_equal(fake.history, cpu.history) and np.array_equal(fake.solution, cpu.solution)


def test_a_batched_multistart_runs_on_the_protocol():
    """A batched multistart runs on the protocol."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    fake = MultiStart(TabuSearch, qap, starts=3, seed=1, backend=FakeBackend()).run(30)
    cpu = MultiStart(TabuSearch, qap, starts=3, seed=1, backend="cpu").run(30)
    assert fake.runs[0].backend == "fake"
    for got, want in zip(fake.runs, cpu.runs):
        assert np.array_equal(got.history, want.history) and got.fitness == want.fitness
