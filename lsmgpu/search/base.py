"""Local search over one solution (ParadisEO's moLocalSearch, in Python): hill climbing, tabu
search and ILS on the problem's neighbourhood, evaluated by the backend.

The run loop is lsmgpu.search.loop.Search's; ``_start()`` draws or takes the start solution and
loads it into the backend, ``step()`` runs one iteration (explore, select, apply, bookkeeping).
What differs between algorithms lives in :meth:`LocalSearch._iterate`.
"""
from __future__ import annotations

import logging

import numpy as np

from ..backends import resolve
from ..backends.base import Query
from ..budget import check_deadline
from ..callbacks import State
from ..problem import Problem, check_problem
from ..result import SearchResult
from .loop import Search

__all__ = ["LocalSearch", "Stop"]

log = logging.getLogger("lsmgpu")


class Stop(Exception):
    """Raised inside an iteration to end the search with a status."""

    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


class LocalSearch(Search):
    """Base of the single-solution searches. Subclasses implement ``_iterate``.

    Parameters
    ----------
    problem : Problem
    neighbourhood : Neighbourhood, optional
        Replaces the problem's default neighbourhood.
    backend : "auto" | "cpu" | "cuda" | backend object
    seed : int | numpy.random.Generator | None
    initial : array, optional
        Start solution (else ``problem.initial_solution(rng)``).
    callbacks : Callback, function or list of them
    history : "improvements" (default) or "all"
        What ``SearchResult.history`` keeps: the start fitness and each new best, or the
        current fitness after every iteration (8 bytes an iteration: 4 GB an hour at the GPU's
        rate on a small neighbourhood).
    """

    algorithm = "LocalSearch"
    uses_tabu = False

    def __init__(self, problem: Problem, *, neighbourhood=None, backend="auto", seed=None,
                 initial=None, callbacks=None, history: str = "improvements"):
        check_problem(self.algorithm, problem)
        if neighbourhood is not None:
            problem = problem.with_neighbourhood(neighbourhood)
        self.problem = problem
        self.neighbourhood = problem.neighbourhood
        self.backend = resolve(backend, problem)
        self._init_run(seed, callbacks, history)
        self.initial = None if initial is None else problem.encoding.validate(initial)
        self.evaluator = None

    def _start(self) -> None:
        x = self.initial if self.initial is not None else self.problem.start_solution(self.rng)
        self.current = self.problem.sense * self.problem.fitness(x)
        self.best_x, self.best = np.array(x, dtype=self.problem.encoding.dtype), self.current
        self.history = [self.current * self.problem.sense]
        self._set_up_evaluator()
        self.evaluator.load(x)           # (its fitness is self.current, evaluated above)
        self._start_hook()

    def _set_up_evaluator(self) -> None:
        """The backend's evaluator (built once per search), with a fresh tabu memory for a run."""
        if self.evaluator is None:
            check_deadline("the backend's set-up")
            self.evaluator = self.backend.evaluator(self.problem, self.neighbourhood)
        if self.uses_tabu:
            self.evaluator.enable_tabu()

    def _load(self, x) -> None:
        """Make ``x`` the current solution (on the backend too) and evaluate it."""
        self.evaluator.load(x)
        self.current = self.problem.sense * self.problem.fitness(x)

    def _start_hook(self) -> None:
        """Per-algorithm set-up after the start solution is loaded."""

    # --- checkpoints -------------------------------------------------------------------------
    def state(self) -> dict:
        state = super().state()
        state.update(current=self.current, x=self.evaluator.x.copy(),
                     tabu=self.evaluator.tabu_memory() if self.uses_tabu else None)
        return state

    def _restore(self, state: dict) -> None:
        super()._restore(state)
        self.current = state["current"]
        self._set_up_evaluator()
        self.evaluator.load(state["x"])
        if state["tabu"] is not None:
            self.evaluator.set_tabu_memory(state["tabu"])

    def step(self) -> bool:
        """One iteration; True once a stop criterion has fired."""
        if self.status is not None:
            return True
        try:
            move = self._iterate()
        except Stop as stop:
            self.status = stop.status
            return True
        self.iteration += 1
        if self.keep_every_iteration:
            self.history.append(self.current * self.problem.sense)
        if self.current < self.best:
            if not self.keep_every_iteration:
                self.history.append(self.current * self.problem.sense)
            self.best, self.best_x = self.current, self.evaluator.x.copy()
            self._since_best = 0
            self.improvements.append((self.iteration, self.elapsed, self.best * self.problem.sense))
            self.callbacks.on_best(self._state(move))
        else:
            self._since_best += 1
        if self.callbacks.callbacks and self.callbacks.on_iteration(self._state(move)):
            self.status = "callback"
        self.status = self.status or self._budget_spent()
        return self.status is not None

    def _budget_spent(self) -> str | None:
        status = super()._budget_spent()
        limit = self.evaluator.max_steps if self.evaluator is not None else None
        if status not in ("target", "iterations") and limit is not None and self.iteration >= limit:
            log.warning("%s: %d iterations is the most the %s backend counts in one run (32-bit counters "
                        "on the device); stopping with the best so far", self.algorithm, limit, self.backend.name)
            return "iterations"
        return status

    def _in_time(self) -> bool:
        """Whether the time budget leaves room for more work (long phases look at it inside)."""
        return self.budget.seconds is None or self.elapsed < self.budget.seconds

    def _state(self, move) -> State:
        s = self.problem.sense
        return State(self.iteration, self.current * s, self.best * s, move, self.elapsed, self.evaluations)

    def _unrecorded(self) -> list:
        """Solutions the search holds that may beat the best recorded one (a descent cut short by
        Ctrl-C or the clock has improved its current solution without an iteration ending)."""
        return [] if self.evaluator is None or self.evaluator.x is None else [self.evaluator.x]

    def result(self) -> SearchResult:
        """The SearchResult of the run so far: the best solution seen, re-evaluated exactly. The
        backend's queued work is waited for first, so a device fault is raised, not ignored."""
        if self.evaluator is not None:
            self.evaluator.finish()
        fitness = self.problem.fitness(self.best_x)  # exact, free of accumulated rounding
        sense = self.problem.sense
        for x in self._unrecorded():
            value = self.problem.fitness(x)
            if sense * value < sense * fitness:
                self.best_x, fitness = np.array(x, copy=True), value
                self.best = min(self.best, sense * value)
        evaluator = self.evaluator
        return SearchResult(
            solution=self.best_x.copy(), fitness=fitness, iterations=self.iteration,
            evaluations=self.evaluations, seconds=self.elapsed,
            history=np.asarray(self.history), improvements=list(self.improvements),
            backend=self.backend.name, device=evaluator.device if evaluator else getattr(self.backend, "device", ""),
            status=self.status or "interrupted", timings=dict(evaluator.timings) if evaluator else {},
            algorithm=self.algorithm, problem=self.problem.name, work=self.work)

    # --- shared pieces of an iteration ---------------------------------------------------------
    def _iterate(self):
        """Explore, select and apply one move; return it. Raise Stop to end the run."""
        raise NotImplementedError

    def _independent_moves(self, step: int) -> int:
        """Apply every improving move that does not overlap a better one (Neighbourhood.disjoint),
        best first, in one iteration; return how many. A 2-opt descent from a poor tour then needs
        far fewer iterations than one move each."""
        nb, sense = self.evaluator.neighbourhood, self.problem.sense   # the polisher's, in a polish
        deltas = self.evaluator.deltas(step)
        self.evaluations += len(deltas)
        signed = sense * deltas
        order = np.flatnonzero(signed < 0)
        if order.size == 0:
            return 0
        order = order[np.argsort(signed[order], kind="stable")]
        moves = nb.moves(self.evaluator.x, order, step)
        kept = nb.disjoint(moves)
        # a move changes only positions inside its footprint, so the others' moves stay as found
        for index, move in zip(order[kept], moves[kept]):
            self.evaluator.apply(int(index), step, move=move)
            self.current += signed[index].item()           # signed units, as in _move
        return int(kept.sum())

    def _improve(self, rule: str, step: int):
        """One descent step with ``rule`` ("best", "first", "random" or "independent") at
        iteration ``step``: (whether it improved, the move applied, None for "independent",
        which applies several)."""
        if rule == "independent":
            return self._independent_moves(step) > 0, None
        if rule == "random":
            move = self._random_move(step)
            return move is not None, move
        _, move = self._move(Query(rule=rule, step=step, current=self.current), improving_only=True)
        return move is not None, move

    def _random_move(self, step: int):
        """Luong et al.'s random selection: an improving move drawn uniformly from the search's
        generator (the whole neighbourhood evaluated on the backend, its deltas read back: the
        same draw on every backend); the move applied, or None where none improves."""
        deltas = self.evaluator.deltas(step)
        self.evaluations += len(deltas)
        signed = self.problem.sense * deltas
        improving = np.flatnonzero(signed < 0)
        if improving.size == 0:
            return None
        index = int(improving[self.rng.integers(improving.size)])
        move = self.evaluator.apply(index, step)
        self.current += signed[index].item()
        return move

    def _move(self, query: Query, tabu_until=None, improving_only=False):
        """Select a move and apply it (see Evaluator.move); returns (selection, move or None)."""
        sel, move = self.evaluator.move(query, tabu_until, improving_only)
        self.evaluations += sel.evaluated
        if move is not None:
            self.current += self.problem.sense * sel.delta
        return sel, move

    def __repr__(self):
        return f"{self.algorithm}({self.problem!r}, backend={self.backend.name})"
