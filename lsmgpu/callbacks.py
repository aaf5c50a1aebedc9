"""Observers of a running search: one convention for every algorithm.

A callback is a :class:`Callback` (override any hook) or a plain function, taken as
``on_iteration``. ``on_iteration`` returning a truthy value stops the search with
status ``"callback"``.
"""
from __future__ import annotations

import inspect
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


def _takes_one_argument(function) -> bool:
    """Whether ``function(state)`` is a valid call (True where the signature cannot be read)."""
    try:
        inspect.signature(function).bind(None)
    except TypeError:
        return False
    except ValueError:          # a builtin without a readable signature
        return True
    return True


class CallbackList(Callback):
    """Several callbacks called in order; anything else than a Callback, a function of the state
    or a list of them is refused here (TypeError naming `callbacks`), not at the first iteration."""

    def __init__(self, callbacks: Iterable[CallbackLike] | CallbackLike | None):
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback) or callable(callbacks):
            callbacks = [callbacks]
        elif not isinstance(callbacks, (list, tuple)):
            raise TypeError(f"`callbacks` must be a Callback, a function of the state or a list of them, got "
                            f"{callbacks!r} ({type(callbacks).__name__})")
        self.callbacks = []
        for cb in callbacks:
            if isinstance(cb, Callback):
                self.callbacks.append(cb)
            elif callable(cb):
                if not _takes_one_argument(cb):
                    raise TypeError(f"`callbacks`: a function callback is called as f(state) after every "
                                    f"iteration; {getattr(cb, '__name__', cb)!r} does not take one argument")
                self.callbacks.append(_FunctionCallback(cb))
            else:
                raise TypeError(f"`callbacks` must hold Callbacks or functions of the state, got {cb!r} "
                                f"({type(cb).__name__})")

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
