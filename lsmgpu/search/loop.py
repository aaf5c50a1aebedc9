"""The one run loop of every search (ParadisEO-MO's local search loop, pymoo's ``has_next`` /
``next``): a search supplies its steps, the loop owns the rest.

Every search has ``start()`` (the budget, the start solution, the set-up), ``step()`` (one
iteration: what an iteration is, its class docstring says) and ``result()`` (a SearchResult of
the run so far). ``run()`` chains them and is the one place that holds the budget and the
deadline (set-up included), Ctrl-C and SIGTERM (the CLI delivers SIGTERM as Ctrl-C), the
callbacks' start and end, and the checkpoints; ``resume()`` reads a checkpoint back
(lsmgpu.checkpoint) and goes on through the same loop.

A search writes ``_start()`` (draw or take the start solution, build its parts), ``step()``,
``result()``, and, to be checkpointed, ``state()`` / ``_restore(state)`` over its own fields
(calling this class's for the counters and the random generator).
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import time

import numpy as np

from ..budget import Budget, DeadlineReached, deadline_scope
from ..callbacks import CallbackList
from ..checkpoint import Checkpointer, read_checkpoint
from ..result import HISTORIES, STATUSES, SearchResult
from ..validation import check_seed, nearest_hint

__all__ = ["Search", "COMMON_OPTIONS"]

log = logging.getLogger("lsmgpu")

#: the options every search takes by name (the rest are its ``Params``)
COMMON_OPTIONS = ("params", "neighbourhood", "backend", "seed", "initial", "callbacks", "history")

#: the fields of the run every search keeps (state() / _restore())
RUN_FIELDS = ("iteration", "evaluations", "best", "best_x", "history", "improvements", "_since_best")


class Search:
    """Base of every search: the run loop, the budget, the checkpoints.

    ``iterations`` counts the search's own step (a move for tabu search and hill climbing, a
    kick and its descent for ILS, a colony iteration, a generation): the class docstring names it.
    """

    algorithm = "Search"
    #: the search never stops by itself (tabu search, ILS, the population methods): run() refuses
    #: a budget that cannot end it
    needs_budget = False
    #: a run that combines others' results (a batch of starts) returns one even before any has a
    #: solution (each run None), where a search re-raises Ctrl-C that came before its start
    combines = False
    #: why a run of this search cannot be checkpointed (None: it can)
    checkpoint_refused: str | None = None
    #: the algorithm's own options: a frozen dataclass checked in its __post_init__ (None: none)
    Params = None

    @classmethod
    def option_names(cls) -> set[str]:
        """Every keyword the constructor takes: the common options and the Params' fields."""
        own = {f.name for f in dataclasses.fields(cls.Params)} if cls.Params is not None else set()
        return set(COMMON_OPTIONS) | own

    @classmethod
    def _params(cls, params, options: dict):
        """The search's Params: ``params`` as given, or built from the keyword ``options`` (an
        unknown keyword is a TypeError naming it and the nearest valid name; both at once too)."""
        owner = cls.algorithm
        if params is not None:
            if options:
                raise TypeError(f"{owner}: give its options in `params` or as keywords, not both (got `params` "
                                f"and {sorted(options)})")
            if not isinstance(params, cls.Params):
                raise TypeError(f"{owner}: `params` must be a {cls.Params.__name__}, got {type(params).__name__}")
            return params
        valid = cls.option_names()
        for name in options:
            if name not in valid:
                raise TypeError(f"{owner}: unknown option `{name}`{nearest_hint(name, valid)}; it takes "
                                f"{', '.join(sorted(valid))}")
        return cls.Params(**options)

    def _init_run(self, seed, callbacks, history: str) -> None:
        """The options every search takes: the seed, the callbacks, what the history keeps."""
        self.rng = np.random.default_rng(check_seed(self.algorithm, seed))
        self.callbacks = CallbackList(callbacks)
        if history not in HISTORIES:
            raise ValueError(f"{self.algorithm}: `history` must be one of {HISTORIES}, got {history!r}")
        self.keep_every_iteration = history == "all"
        self.status, self.best_x, self.iteration, self._stop_request = None, None, 0, None

    # --- the step API ------------------------------------------------------------------------
    def start(self, iterations=None, evaluations=None, seconds=None, target=None, stagnation=None, *,
              t0: float | None = None) -> None:
        """Prepare a run with the given budget (any combination; the step API may give none and
        drive the iterations itself). The clock starts at ``t0`` (``run``'s call), else now: the
        start solution and the set-up (kernel builds, tuning) count. The start solution is the
        best so far from the moment it exists."""
        self._begin(Budget.checked(self.algorithm, iterations, evaluations, seconds, target, stagnation), t0)
        self._start()
        self.callbacks.on_start(self)

    def _begin(self, budget: Budget, t0: float | None) -> None:
        self.budget = budget
        self.t0 = time.perf_counter() if t0 is None else t0
        self.iteration, self.evaluations, self.status, self._since_best = 0, 0, None, 0
        self.best, self.best_x = np.inf, None
        self.history, self.improvements = [], []

    def _start(self) -> None:
        raise NotImplementedError

    def step(self) -> bool:
        """One iteration; True once a stop criterion has fired."""
        raise NotImplementedError

    def result(self) -> SearchResult:
        raise NotImplementedError

    #: what one iteration is (the docs and ``work`` of a search whose iteration is its unit of work)
    iteration_unit = "iterations"

    @property
    def work(self) -> tuple[int, str]:
        """What the search has made so far, for throughput: (count, unit)."""
        return self.iteration, self.iteration_unit

    def _release(self) -> None:
        """Free what a run holds on its backend (the end of run())."""

    # --- the run -----------------------------------------------------------------------------
    def run(self, iterations=None, *, evaluations=None, seconds=None, target=None, stagnation=None,
            checkpoint=None, checkpoint_every=None) -> SearchResult:
        """Run until a stop criterion fires; ``seconds`` counts from this call, set-up included.
        Ctrl-C at any phase returns the best solution so far with status "interrupted".
        ``checkpoint``: a file the run's state is written to every ``checkpoint_every`` seconds
        (default 60) between iterations and at the end (``resume`` goes on from it)."""
        t0 = time.perf_counter()
        budget = Budget.checked(self.algorithm, iterations, evaluations, seconds, target, stagnation,
                                required=self.needs_budget)
        saver = self._checkpointer(checkpoint, checkpoint_every)

        def begin():
            self._begin(budget, t0)
            self._start()
            self.callbacks.on_start(self)
        return self._drive(begin, budget, t0, saver)

    def resume(self, path, *, iterations=None, evaluations=None, seconds=None, target=None, stagnation=None,
               checkpoint=None, checkpoint_every=None) -> SearchResult:
        """Go on from the checkpoint at ``path`` (written by a search of this algorithm built with
        the same options on the same problem: ValueError naming what differs). The budget is the
        checkpointed run's, with any value given here replacing its own; it counts the whole run,
        the iterations and seconds before the checkpoint included. A seeded run with an
        iteration budget ends exactly as the uninterrupted run."""
        t0 = time.perf_counter()
        if self.checkpoint_refused:
            raise ValueError(f"{self.algorithm}: no run of it is checkpointed ({self.checkpoint_refused})")
        payload = read_checkpoint(path, self)
        given = dict(iterations=iterations, evaluations=evaluations, seconds=seconds, target=target,
                     stagnation=stagnation)
        values = {k: (given[k] if given[k] is not None else v) for k, v in payload["budget"].items()}
        budget = Budget.checked(self.algorithm, **values, required=self.needs_budget)
        saver = self._checkpointer(checkpoint, checkpoint_every)
        started = t0 - payload["elapsed"]

        def begin():
            self._begin(budget, started)
            self._restore(payload["state"])
            self.callbacks.on_start(self)
        return self._drive(begin, budget, started, saver)

    def _checkpointer(self, path, every) -> Checkpointer:
        saver = Checkpointer(self.algorithm, path, every)
        if saver and self.checkpoint_refused:
            raise ValueError(f"{self.algorithm}: a run of it cannot be checkpointed ({self.checkpoint_refused})")
        return saver

    def _drive(self, begin, budget: Budget, t0: float, saver: Checkpointer) -> SearchResult:
        """``begin()``, then iterations until a stop criterion fires; the one place that turns the
        deadline and Ctrl-C into a status and writes the checkpoints."""
        self.status, self.best_x, self._stop_request = None, None, None
        scope = None
        try:
            try:
                with deadline_scope(None if budget.seconds is None else t0 + budget.seconds) as scope:
                    begin()
                    self.status = self.status or self._stop_request or self._budget_spent()
                    while self.status is None:
                        self.step()
                        self.status = self.status or self._stop_request
                        if self.status is None and saver.due():
                            saver.write(self)
                    if saver:
                        saver.write(self)          # between iterations: a run that can go on from here
            except (DeadlineReached, KeyboardInterrupt) as stop:
                if isinstance(stop, DeadlineReached):
                    log.info("%s: %s; returning the best so far", self.algorithm, stop)
                    self.status = "seconds"
                else:
                    self.status = self._stop_request or "interrupted"
                    log.warning("%s interrupted at iteration %d; returning the best so far", self.algorithm,
                                getattr(self, "iteration", 0))
                if saver and not saver.written:
                    log.warning("%s: no checkpoint written to %s: the run ended inside its start or its first "
                                "iteration", self.algorithm, saver.path)
                if self.best_x is None and not self.combines:
                    raise         # not even a start solution yet: nothing to return
            if self.best_x is not None:
                self._last_look()
            result = self.result()
            if scope is not None and scope.build_seconds:      # the seconds kernel builds held it up
                result = dataclasses.replace(result, timings={**result.timings, "build": scope.build_seconds})
        finally:
            self._release()
        self.callbacks.on_end(result)
        return result

    def _last_look(self) -> None:
        """At the run's end, however it ended, before its result: a search whose parts hold a
        better solution than any iteration recorded records it here (DontLookILS: a chain part-way
        down its first descent). None by default. It runs after the run's deadline scope has
        closed (the deadline may be past): milliseconds of host work on what the run already holds
        (read back from the GPU where it lives), never a kernel build or a new launch."""

    def stop(self, status: str = "interrupted") -> None:
        """Ask a running search to end after its current iteration with ``status`` (from another
        thread: a driver stopping its workers, a board that found the target); its result is the
        best so far, as after Ctrl-C."""
        if status not in STATUSES:
            raise ValueError(f"{self.algorithm}: `status` must be one of {STATUSES}, got {status!r}")
        self._stop_request = status

    def _budget_spent(self) -> str | None:
        """The stop criterion that fires now (Budget.spent), None while none does."""
        target = self.budget.target
        return self.budget.spent(reached=target is not None and self.best <= self.problem.sense * target,
                                 iteration=self.iteration, elapsed=self.elapsed, since_best=self._since_best,
                                 evaluations=self.evaluations)

    @property
    def elapsed(self) -> float:
        """Seconds since the run began (a resumed run's included)."""
        return time.perf_counter() - self.t0

    # --- checkpoints -------------------------------------------------------------------------
    #: a search's own host fields that a checkpoint keeps beside the run's (RUN_FIELDS)
    state_fields: tuple[str, ...] = ()

    def state(self) -> dict:
        """The run's state between iterations, copied (lsmgpu.checkpoint writes it): the run's
        fields, the search's ``state_fields`` and the generator; a search adds what its backend
        holds in its override."""
        state = {name: copy.deepcopy(getattr(self, name)) for name in RUN_FIELDS + self.state_fields}
        state["rng"] = self.rng.bit_generator.state
        return state

    def _restore(self, state: dict) -> None:
        """Take back a state written by ``state()``: the fields and the generator here, its
        backend's memories in a search's override."""
        self._set_fields(state, RUN_FIELDS + self.state_fields)
        self.rng.bit_generator.state = state["rng"]

    def _set_fields(self, state: dict, names) -> None:
        """The fields ``names`` from ``state``; ValueError naming those a checkpoint does not hold (one
        written by another lsmgpu version of this algorithm)."""
        missing = [name for name in names if name not in state]
        if missing:
            raise ValueError(f"{self.algorithm}: the checkpoint holds no {', '.join(missing)} (written by another "
                             f"lsmgpu version; resume it with that version)")
        for name in names:
            setattr(self, name, copy.deepcopy(state[name]))
