"""Observers of a running search: one convention for every algorithm.

A callback is a :class:`Callback` (override any hook) or a plain function, taken as
``on_iteration``. ``on_iteration`` returning a truthy value stops the search with
status ``"callback"``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Union

import numpy as np

__all__ = ["Callback", "State", "CallbackList"]


@dataclass(frozen=True)
class State:
    """Read-only snapshot given to callbacks after each iteration."""

    iteration: int
    fitness: float
    best: float
    move: np.ndarray | None
    seconds: float
    evaluations: int


class Callback:
    """Base class with no-op hooks."""

    def on_start(self, search) -> None:
        """Called once before the first iteration."""

    def on_iteration(self, state: State) -> bool | None:
        """Called after every iteration; return True to stop."""

    def on_best(self, state: State) -> None:
        """Called when the best fitness improves."""

    def on_end(self, result) -> None:
        """Called once with the final SearchResult."""


class _FunctionCallback(Callback):
    def __init__(self, function):
        self.function = function

    def on_iteration(self, state):
        return self.function(state)


CallbackLike = Union[Callback, Callable[[State], object]]


class CallbackList(Callback):
    """Several callbacks called in order."""

    def __init__(self, callbacks: Iterable[CallbackLike] | CallbackLike | None):
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback) or callable(callbacks):
            callbacks = [callbacks]
        self.callbacks = []
        for cb in callbacks:
            if isinstance(cb, Callback):
                self.callbacks.append(cb)
            elif callable(cb):
                self.callbacks.append(_FunctionCallback(cb))
            else:
                raise TypeError(f"callbacks: expected a Callback or a function, got {type(cb).__name__}")

    def on_start(self, search):
        for cb in self.callbacks:
            cb.on_start(search)

    def on_iteration(self, state):
        stop = False
        for cb in self.callbacks:
            stop = bool(cb.on_iteration(state)) or stop
        return stop

    def on_best(self, state):
        for cb in self.callbacks:
            cb.on_best(state)

    def on_end(self, result):
        for cb in self.callbacks:
            cb.on_end(result)
