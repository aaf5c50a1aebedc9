"""A population on a backend: B solutions of one problem improved together by a chain of
neighbourhoods (the engine under lsmgpu.parallel.improve and the batched iterated local search).

A population holds, per row k: the current solution and its signed fitness (``current``, the
problem's sense times the fitness, minimised), the accepted ("home") solution of an ILS chain
and its value, and the best solution kept. What it does:

* ``load(xs)``: rows of solutions; current, home and best are those;
* ``descend(rows, rule, deadline)``: the rows in ``rows`` descended to local optima of the chain
  (variable neighbourhood descent: the first neighbourhood until none of its moves improves, then
  the next ones in order, back to the first where one improved), a step taking the best improving
  move (``rule="best"``, ties to the lowest index) or the improving move of lowest index
  (``"first"``); the signed fitness accumulates the moves' deltas, as a single search's does;
* ``kick(draws, rows)``: one kick unit per row from the numbers ``Problem.kick_draws`` drew;
* ``set_rows(rows, xs, values, home=False)``: new current (and home) solutions (a host kick, islands);
* ``keep(accepted, rejected)``: home <- current where accepted, current <- home where rejected;
* ``save_best(rows)``: best <- current; ``solutions()``, ``home_solutions()``, ``best_solutions()``.

:class:`EvaluatorPopulation` does this with any backend's single-solution evaluators, one row
after another: it is the CPU backend's population and the reference every batched one equals
row by row. The CUDA backend's own (lsmgpu/backends/cuda/population.py) runs every row at once.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import announce_fallback
from .base import Query

__all__ = ["EvaluatorPopulation", "population_for", "descend", "auto_chain", "RULES"]

#: how a descent step picks its move
RULES = ("best", "first")


def auto_chain(problem) -> list:
    """The local search "auto" means: the problem's measured ILS chain (its descent's neighbourhood,
    then its polish; TSP: candidate 2-opt, Or-opt, candidate 3-opt), else its neighbourhood."""
    ils = problem.default_ils()
    return [ils["neighbourhood"], *ils.get("polish", [])] if ils else [problem.neighbourhood]


def population_for(backend, steps, rows: int, *, announce: str = "the population"):
    """The population of ``rows`` solutions of the chain ``steps`` (the problem over each
    neighbourhood) on ``backend``: its own batched one where it has one, else the evaluators'
    one after another (announced by a BackendFallback warning on a backend other than the CPU)."""
    why = None
    if backend.name != "cpu":
        why = next((r for r in (s.unsupported(s.neighbourhood, backend.name) for s in steps) if r), None)
        if why is None and getattr(backend, "population", None) is not None:
            batched = backend.population(steps, rows)
            if batched is not None:
                return batched
        why = why or "it has no batched population for these options"
        announce_fallback(f"{announce}: the {rows} solutions are improved one after another on {backend.name} "
                          f"({why})")
    return EvaluatorPopulation(backend, steps, rows)


class EvaluatorPopulation:
    """A population served by single-solution evaluators (one per neighbourhood of the chain),
    row after row; rows and their values live on the host."""

    def __init__(self, backend, steps, rows: int):
        from . import evaluator_for            # (the package imports this module)
        self.problem, self.steps, self.rows = steps[0], list(steps), int(rows)
        self.sense = self.problem.sense
        self.evaluators = [evaluator_for(backend, step) for step in self.steps]
        self.backend, self.device = backend.name, getattr(backend, "device", "")
        self.timings: dict[str, float] = {}
        dtype = self.problem.encoding.dtype
        n = self.problem.n
        self.x = np.zeros((self.rows, n), dtype)
        self.home, self.best = self.x.copy(), self.x.copy()
        self.current = np.zeros(self.rows, dtype=self.problem.fitness_dtype)
        self.home_value = self.current.copy()

    def load(self, xs) -> None:
        xs = np.asarray(xs, dtype=self.x.dtype)
        self.x[:], self.home[:], self.best[:] = xs, xs, xs
        self.current = np.array([self.sense * self.problem.fitness(x) for x in xs], dtype=self.current.dtype)
        self.home_value = self.current.copy()

    def descend(self, rows, rule: str = "best", deadline: float | None = None):
        """The rows in the mask ``rows`` to local optima of the chain: (moves made per row, moves
        evaluated per row, whether every descent finished before ``deadline``)."""
        made = np.zeros(self.rows, dtype=np.int64)
        evaluated = np.zeros(self.rows, dtype=np.int64)
        for k in np.flatnonzero(rows):
            if deadline is not None and time.perf_counter() >= deadline:
                return made, evaluated, False
            self.x[k], self.current[k], made[k], evaluated[k] = descend(self.evaluators, self.x[k], self.current[k],
                                                                        rule, self.sense)
        return made, evaluated, True

    def kick(self, draws, rows) -> None:
        """One kick unit on each row in ``rows`` from its draws (Problem.kick_of, applied through
        the first evaluator as a single ILS applies its kick moves)."""
        main = self.evaluators[0]
        for k in np.flatnonzero(rows):
            main.load(self.x[k])
            moves = self.problem.kick_of(self.x[k].copy(), draws[k])
            self.current[k] += self.sense * main.apply_moves(moves)
            self.x[k] = main.x

    def set_rows(self, rows, xs, values, home: bool = False) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        self.x[rows], self.current[rows] = xs, values
        if home:
            self.home[rows], self.home_value[rows] = xs, values

    def keep(self, accepted, rejected) -> None:
        self.home[accepted], self.home_value[accepted] = self.x[accepted], self.current[accepted]
        self.x[rejected], self.current[rejected] = self.home[rejected], self.home_value[rejected]

    def save_best(self, rows) -> None:
        self.best[rows] = self.x[rows]

    def values(self) -> np.ndarray:
        """Each row's current signed fitness."""
        return self.current.copy()

    def solutions(self) -> np.ndarray:
        return self.x.copy()

    def home_solutions(self) -> np.ndarray:
        return self.home.copy()

    def best_solutions(self) -> np.ndarray:
        return self.best.copy()

    def close(self) -> None:
        for evaluator in self.evaluators:
            evaluator.close()


def descend(evaluators, x, current, rule: str, sense: int):
    """One solution to a local optimum of the chain whose evaluators are given, from signed fitness
    ``current``: (the solution, its signed fitness, the improving moves made, the moves evaluated)."""
    main = evaluators[0]
    main.load(x)
    made = evaluated = 0
    while True:
        current, count, seen = _steps(main, current, rule, sense)
        made, evaluated = made + count, evaluated + seen
        for polisher in evaluators[1:]:
            polisher.load_from(main)
            current, count, seen = _steps(polisher, current, rule, sense)
            made, evaluated = made + count, evaluated + seen
            if count:
                main.load_from(polisher)
                break
        else:
            return np.array(main.x, copy=True), current, made, evaluated


def _steps(evaluator, current, rule: str, sense: int):
    """Improving steps on one evaluator until none is left: (signed fitness, steps, moves evaluated)."""
    made = evaluated = 0
    while True:
        selection, move = evaluator.move(Query(rule=rule, step=0, current=current), improving_only=True)
        evaluated += selection.evaluated
        if move is None:
            return current, made, evaluated
        current += sense * selection.delta
        made += 1
