"""A run's budget, checked in one place for every search and multi-start, single or batched, and
the run's deadline, which phases that cannot look at a search's clock (a kernel build, the wave
tuner, a start tour) read through :func:`time_left`."""
from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from dataclasses import dataclass

from .validation import check_count, check_number, check_seconds

__all__ = ["Budget", "DeadlineReached", "RunScope", "deadline_scope", "time_left", "count_build_wait",
           "check_deadline"]


@dataclass
class RunScope:
    """The running search's deadline (a time.perf_counter() value, or None) and the seconds it has
    waited for kernel builds (its result's ``timings["build"]``); ``outer``: the scope of the run
    that started this one (a multi-start's), which counts its builds too."""

    deadline: float | None
    outer: "RunScope | None" = None
    build_seconds: float = 0.0


_SCOPE: contextvars.ContextVar = contextvars.ContextVar("lsmgpu_run_scope", default=None)


class DeadlineReached(Exception):
    """The run's time ran out inside a phase that cannot be cut short (a kernel build): the
    search stops there with its best so far and status "seconds"."""


@contextmanager
def deadline_scope(deadline: float | None):
    """Within it, :func:`time_left` counts down to ``deadline`` (a time.perf_counter() value) and
    :func:`count_build_wait` adds to the RunScope it yields (and to the scopes around it)."""
    scope = RunScope(deadline, _SCOPE.get())
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def time_left() -> float | None:
    """Seconds left to the running search's deadline (None: no time budget, or no search)."""
    scope = _SCOPE.get()
    return None if scope is None or scope.deadline is None else scope.deadline - time.perf_counter()


def count_build_wait(seconds: float) -> None:
    """``seconds`` that the running search (and each run around it) waited for a kernel build."""
    scope = _SCOPE.get()
    while scope is not None:
        scope.build_seconds += seconds
        scope = scope.outer


@dataclass(frozen=True)
class Budget:
    """Stop criteria of a run (any combination; the first to fire ends it). ``target`` is in the
    problem's units (not signed); ``seconds`` is wall time from the call of ``run``, set-up
    included."""

    iterations: int | None = None
    evaluations: int | None = None
    seconds: float | None = None
    target: float | None = None
    stagnation: int | None = None

    @classmethod
    def checked(cls, owner: str, iterations=None, evaluations=None, seconds=None, target=None, stagnation=None,
                required: bool = False) -> "Budget":
        """The budget with every value checked (ValueError / TypeError naming it). ``required``:
        refuse a budget that can never end the run (a tabu search or an ILS never stops by itself)."""
        budget = cls(check_count(owner, "iterations", iterations), check_count(owner, "evaluations", evaluations),
                     check_seconds(owner, seconds), check_number(owner, "target", target),
                     check_count(owner, "stagnation", stagnation))
        if required and budget.endless:
            raise ValueError(f"{owner}: give a budget (iterations=, seconds= or stagnation=): "
                             "this search never stops by itself")
        return budget

    def spent(self, *, reached: bool, iteration: int, elapsed: float, since_best: int,
              evaluations: int = 0) -> str | None:
        """The criterion that ends the run now, in this order: "target" (``reached``: the caller
        compares its best in its own sense), "iterations", "evaluations", "seconds",
        "stagnation" (``since_best`` iterations without a new best); None while none does."""
        if reached:
            return "target"
        if self.iterations is not None and iteration >= self.iterations:
            return "iterations"
        if self.evaluations is not None and evaluations >= self.evaluations:
            return "evaluations"
        if self.seconds is not None and elapsed >= self.seconds:
            return "seconds"
        if self.stagnation is not None and since_best >= self.stagnation:
            return "stagnation"
        return None

    @property
    def endless(self) -> bool:
        """Whether nothing but a target (which may never be reached) or Ctrl-C can end the run."""
        return all(v is None for v in (self.iterations, self.evaluations, self.seconds, self.stagnation))


def check_deadline(before: str) -> None:
    """DeadlineReached when the running search's time is up, ``before`` a step of set-up that
    could not be cut once begun (building a backend's evaluator: rendering, compiling, allocating)."""
    left = time_left()
    if left is not None and left <= 0:
        raise DeadlineReached(f"the time budget ended before {before}")
