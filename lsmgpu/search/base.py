"""The one loop every local search shares (ParadisEO's moLocalSearch, in Python).

``start()`` draws or takes the start solution and loads it into the backend;
``step()`` runs one iteration (explore, select, apply, bookkeeping) and says whether a
stop criterion fired; ``result()`` builds the SearchResult. ``run()`` chains them and
turns Ctrl-C into ``status="interrupted"`` with the best solution so far. What differs
between algorithms lives in :meth:`LocalSearch._iterate`.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..backends import resolve
from ..backends.base import Query
from ..budget import Budget, DeadlineReached, check_deadline, deadline_scope
from ..callbacks import CallbackList, State
from ..problem import Problem, check_problem
from ..result import HISTORIES, SearchResult
from ..validation import check_seed

__all__ = ["LocalSearch", "Stop"]

log = logging.getLogger("lsmgpu")


class Stop(Exception):
    """Raised inside an iteration to end the search with a status."""

    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


class LocalSearch:
    """Base of the searches. Subclasses implement ``_iterate``.

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
    #: the search never stops by itself (tabu search, ILS): run() refuses a budget that cannot end it
    needs_budget = False

    def __init__(self, problem: Problem, *, neighbourhood=None, backend="auto", seed=None,
                 initial=None, callbacks=None, history: str = "improvements"):
        check_problem(self.algorithm, problem)
        if neighbourhood is not None:
            problem = problem.with_neighbourhood(neighbourhood)
        self.problem = problem
        self.neighbourhood = problem.neighbourhood
        self.backend = resolve(backend, problem)
        self.rng = np.random.default_rng(check_seed(self.algorithm, seed))
        self.initial = None if initial is None else problem.encoding.validate(initial)
        self.callbacks = CallbackList(callbacks)
        if history not in HISTORIES:
            raise ValueError(f"{self.algorithm}: `history` must be one of {HISTORIES}, got {history!r}")
        self.keep_every_iteration = history == "all"
        self.evaluator = None

    # --- the step API ---------------------------------------------------------------------
    def start(self, iterations=None, evaluations=None, seconds=None, target=None, stagnation=None, *,
              t0: float | None = None) -> None:
        """Prepare a run with the given budget (any combination; the step API may give none and
        drive the iterations itself). The clock starts at ``t0`` (``run``'s call), else now: the start
        solution, the backend's set-up (kernel builds, tuning) and a first descent all count.
        The start solution is the best so far from the moment it exists."""
        self.budget = Budget.checked(self.algorithm, iterations, evaluations, seconds, target, stagnation)
        self.t0 = time.perf_counter() if t0 is None else t0
        self.target = None if target is None else self.problem.sense * target
        self.iteration, self.evaluations, self.status = 0, 0, None
        self.improvements: list[tuple[int, float, float]] = []
        x = self.initial if self.initial is not None else self.problem.encoding.validate(
            self.problem.initial_solution(self.rng))
        self.current = self.problem.sense * self.problem.fitness(x)
        self.best_x, self.best = np.array(x, dtype=self.problem.encoding.dtype), self.current
        self.history = [self.current * self.problem.sense]
        if self.evaluator is None:
            check_deadline("the backend's set-up")
            self.evaluator = self.backend.evaluator(self.problem, self.neighbourhood)
        if self.uses_tabu:
            self.evaluator.enable_tabu()  # a fresh tabu memory for every run
        self.evaluator.load(x)           # (its fitness is self.current, evaluated above)
        self._since_best = 0
        self._start_hook()
        self.callbacks.on_start(self)

    def _load(self, x) -> None:
        """Make ``x`` the current solution (on the backend too) and evaluate it."""
        self.evaluator.load(x)
        self.current = self.problem.sense * self.problem.fitness(x)

    def _start_hook(self) -> None:
        """Per-algorithm set-up after the start solution is loaded."""

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
        status = self.budget.spent(reached=self.target is not None and self.best <= self.target,
                                   iteration=self.iteration, elapsed=self.elapsed, since_best=self._since_best,
                                   evaluations=self.evaluations)
        limit = self.evaluator.max_steps if self.evaluator is not None else None
        if status not in ("target", "iterations") and limit is not None and self.iteration >= limit:
            log.warning("%s: %d iterations is the most the %s backend counts in one run (32-bit counters "
                        "on the device); stopping with the best so far", self.algorithm, limit, self.backend.name)
            return "iterations"
        return status

    def _in_time(self) -> bool:
        """Whether the time budget leaves room for more work (long phases look at it inside)."""
        return self.budget.seconds is None or self.elapsed < self.budget.seconds

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

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
            algorithm=self.algorithm, problem=self.problem.name)

    def run(self, iterations=None, *, evaluations=None, seconds=None, target=None, stagnation=None) -> SearchResult:
        """Run until a stop criterion fires; ``seconds`` counts from this call, set-up included.
        Ctrl-C at any phase (start solution, kernel builds, first descent, iterations) returns
        the best solution so far with status "interrupted"."""
        t0 = time.perf_counter()
        budget = Budget.checked(self.algorithm, iterations, evaluations, seconds, target, stagnation,
                                required=self.needs_budget)
        self.status, self.best_x = None, None
        try:
            with deadline_scope(None if budget.seconds is None else t0 + budget.seconds):
                self.start(iterations, evaluations, seconds, target, stagnation, t0=t0)
                self.status = self._budget_spent()
                while self.status is None and not self.step():
                    pass
        except DeadlineReached as reached:
            log.info("%s: %s; returning the best so far", self.algorithm, reached)
            self.status = "seconds"
            if self.best_x is None:
                raise
        except KeyboardInterrupt:
            self.status = "interrupted"
            log.warning("%s interrupted at iteration %d; returning the best so far", self.algorithm,
                        getattr(self, "iteration", 0))
            if self.best_x is None:
                raise      # not even a start solution yet: nothing to return
        result = self.result()
        self.callbacks.on_end(result)
        return result

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
        """One descent step with ``rule`` ("best", "first" or "independent") at iteration
        ``step``: (whether it improved, the move applied, None for "independent", which
        applies several)."""
        if rule == "independent":
            return self._independent_moves(step) > 0, None
        _, move = self._move(Query(rule=rule, step=step, current=self.current), improving_only=True)
        return move is not None, move

    def _move(self, query: Query, tabu_until=None, improving_only=False):
        """Select a move and apply it (see Evaluator.move); returns (selection, move or None)."""
        sel, move = self.evaluator.move(query, tabu_until, improving_only)
        self.evaluations += sel.evaluated
        if move is not None:
            self.current += self.problem.sense * sel.delta
        return sel, move

    def __repr__(self):
        return f"{self.algorithm}({self.problem!r}, backend={self.backend.name})"
