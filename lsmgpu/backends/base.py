"""What every backend provides to the searches: an Evaluator over one neighbourhood.

A search never touches arrays of moves itself. It asks its evaluator to
* ``load(x)``: make ``x`` the current solution (the only upload of a solution);
* ``select(query)``: evaluate the neighbourhood and return the chosen move;
* ``deltas(step)``: the whole fitness-change array (host-side selection, analysis);
* ``apply(index, step, tabu_until)``: apply a move to the current solution, and mark
  the attributes it removed as tabu until iteration ``tabu_until``.

Selection rule, identical on every backend, so that runs with one seed follow one
trajectory: the engine minimises ``sense * delta``; with ``rule="best"`` it returns the
admissible move of least signed delta, ties to the lowest index; with ``rule="first"``
the lowest index whose signed delta is negative. A move is admissible when it is not
tabu (all its added attributes have ``tabu[a, b] > iteration``) or when aspiration is on
and it would beat the best fitness so far.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Query", "Selection", "Evaluator", "select_in"]


@dataclass(slots=True)
class Query:
    """What to select: ``rule`` is "best" or "first"; costs are signed (minimised)."""

    rule: str = "best"
    step: int = 0
    current: float = 0.0
    best: float = np.inf
    tabu: bool = False
    aspiration: bool = True


@dataclass(slots=True)
class Selection:
    """The chosen move (``index`` -1: none), its raw delta and how many moves were evaluated."""

    index: int
    delta: float
    evaluated: int

    @property
    def found(self) -> bool:
        return self.index >= 0


def select_in(signed: np.ndarray, tabu: np.ndarray | None, query: Query) -> int:
    """Position of the move ``query`` selects among ``signed`` deltas, or -1."""
    if query.rule == "first":
        hits = np.flatnonzero(signed < 0)
        return int(hits[0]) if hits.size else -1
    if tabu is not None:
        admissible = ~tabu
        if query.aspiration:
            admissible |= query.current + signed < query.best
        if not admissible.any():
            return -1
        signed = np.where(admissible, signed, np.inf)
    if signed.size == 0:
        return -1
    return int(np.argmin(signed))  # argmin returns the first of equal minima


class Evaluator:
    """Base class of the backends' evaluators (see the module docstring)."""

    backend: str = ""
    device: str = ""

    def __init__(self, problem, neighbourhood):
        self.problem = problem
        self.neighbourhood = neighbourhood
        self.sense = problem.sense
        self.timings: dict[str, float] = {}
        self.x: np.ndarray | None = None

    def enable_tabu(self) -> None:
        """Allocate the tabu matrix (all attributes free)."""
        raise NotImplementedError

    def load(self, x: np.ndarray) -> None:
        raise NotImplementedError

    def select(self, query: Query) -> Selection:
        raise NotImplementedError

    def deltas(self, step: int = 0) -> np.ndarray:
        raise NotImplementedError

    def apply(self, index: int, step: int = 0, tabu_until: int | None = None) -> np.ndarray:
        """Apply move ``index``; return the move. The host mirror ``self.x`` follows."""
        raise NotImplementedError

    def move(self, query: Query, tabu_until: int | None = None, improving_only: bool = False):
        """Select and, when a move is found (and improves, if ``improving_only``), apply it.

        Returns (selection, applied move or None). Backends may fuse the two steps (the
        CUDA backend applies the move inside the selecting launch); this default chains them.
        """
        sel = self.select(query)
        if not sel.found or (improving_only and self.sense * sel.delta >= 0):
            return sel, None
        return sel, self.apply(sel.index, query.step, tabu_until)

    def close(self) -> None:
        """Release device resources."""

    def move_at(self, index: int, step: int = 0) -> np.ndarray:
        """The move of flat index ``index`` around the current solution."""
        if self.neighbourhood.static:
            return self.neighbourhood.decode_one(index)
        return self.neighbourhood.moves(self.x, np.array([index], dtype=np.int64), step)[0]

    def tabu_mask(self, tabu: np.ndarray, moves: np.ndarray, step: int) -> np.ndarray:
        """Which ``moves`` are tabu at iteration ``step`` under the host tabu matrix ``tabu``."""
        attrs = self.neighbourhood.added(self.x, moves)
        return (tabu[attrs[..., 0], attrs[..., 1]] > step).all(axis=1)

    def forbid(self, tabu: np.ndarray | None, move: np.ndarray, until: int | None) -> None:
        """Mark the attributes ``move`` removes from the current solution tabu until ``until``."""
        if until is not None and tabu is not None:
            removed = self.neighbourhood.removed(self.x, move)
            tabu[removed[:, 0], removed[:, 1]] = until

    def _time(self, phase: str, seconds: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + seconds
