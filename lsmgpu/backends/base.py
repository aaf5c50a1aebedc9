"""What every backend provides to the searches, written down: the evaluator protocol.

A backend is an object with a ``name`` ("cpu", "cuda"), a ``device`` (what runs it) and two
factories: ``evaluator(problem, neighbourhood)`` (an :class:`Evaluator`: one solution) and
``batch_evaluator(problem, neighbourhood, starts)`` (a :class:`BatchEvaluator`: many solutions
stepped together). tests/backends/test_protocol.py runs the searches on a fake backend that
implements exactly this.

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
and it would beat the best fitness so far. With ``forced_after = t > 0`` (Taillard's second
aspiration criterion, his robust tabu search's long-term diversification) some moves come
first: those with an added attribute not forbidden in the last t iterations
(``tabu[a, b] < iteration - t``; never forbidden counts as 0), and those that beat the best
fitness: when there is one, the least signed delta among them is chosen.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Query", "Selection", "Evaluator", "BatchEvaluator", "BatchChunk", "STOP_CODES", "select_in",
           "first_class", "TENURE_BLOCK", "MAX_TENURE", "DEVICE_STEP_LIMIT"]

#: the longest tabu tenure: tabu stamps (iteration + 1 + tenure) are 32-bit integers on the GPU
MAX_TENURE = 2**30
#: iterations a CUDA run can count: its step counters and tabu stamps are 32-bit on the GPU
DEVICE_STEP_LIMIT = 2**31 - 1 - MAX_TENURE - 1

#: host threads for NumPy work split into blocks (NumPy's gathers and ufuncs let go of the GIL)
HOST_THREADS = min(16, os.cpu_count() or 1)
#: tabu tenures are drawn this many at a time per search (one generator call), and a batch
#: evaluator holds this many per start (a power of two: the GPU indexes them by step & (it - 1))
TENURE_BLOCK = 1024


@dataclass(slots=True)
class Query:
    """What to select: ``rule`` is "best" or "first"; costs are signed (minimised)."""

    rule: str = "best"
    step: int = 0
    current: float = 0.0
    best: float = np.inf
    tabu: bool = False
    aspiration: bool = True
    #: Taillard's long-term aspiration window (0: off); see the module docstring
    forced_after: int = 0


@dataclass(slots=True)
class Selection:
    """The chosen move (``index`` -1: none), its raw delta and how many moves were evaluated."""

    index: int
    delta: float
    evaluated: int

    @property
    def found(self) -> bool:
        return self.index >= 0


def select_in(signed: np.ndarray, stamps: np.ndarray | None, query: Query) -> int:
    """Position of the move ``query`` selects among ``signed`` deltas, or -1. ``stamps``: each
    move's oldest tabu stamp (the least ``tabu[a, b]`` over its added attributes) when the
    query is tabu."""
    if query.rule == "first":
        hits = np.flatnonzero(signed < 0)
        return int(hits[0]) if hits.size else -1
    if stamps is not None:
        first = first_class(signed, stamps, query)
        if first is not None and first.any():
            return int(np.argmin(np.where(first, signed, np.inf)))
        aspired = query.current + signed < query.best if query.aspiration else np.zeros(signed.shape, bool)
        admissible = (stamps <= query.step) | aspired
        if not admissible.any():
            return -1
        signed = np.where(admissible, signed, np.inf)
    if signed.size == 0:
        return -1
    return int(np.argmin(signed))  # argmin returns the first of equal minima


def first_class(signed: np.ndarray, stamps: np.ndarray, query: Query) -> np.ndarray | None:
    """The moves chosen before all others under ``query.forced_after`` (None when it is off):
    an added attribute not forbidden for that long, or aspiration by objective."""
    if query.forced_after <= 0:
        return None
    first = stamps < query.step - query.forced_after
    if query.aspiration:
        first |= query.current + signed < query.best
    return first


class Evaluator:
    """Base class of the backends' evaluators (see the module docstring)."""

    backend: str = ""
    device: str = ""
    #: the most iterations one run can count here (None: no limit); a search reaching it stops
    #: with status "iterations" and says so
    max_steps: int | None = None

    def __init__(self, problem, neighbourhood):
        self.problem = problem
        self.neighbourhood = neighbourhood
        self.sense = problem.sense
        self.timings: dict[str, float] = {}
        self.x: np.ndarray | None = None
        #: the host tabu matrix, where the backend keeps it on the host
        self.tabu: np.ndarray | None = None

    def enable_tabu(self) -> None:
        """Allocate the tabu matrix (all attributes free)."""
        raise NotImplementedError

    def load(self, x: np.ndarray) -> None:
        raise NotImplementedError

    def tabu_memory(self) -> np.ndarray | None:
        """A copy of the tabu matrix (int64 stamps; None before enable_tabu), for a checkpoint."""
        return None if self.tabu is None else self.tabu.copy()

    def set_tabu_memory(self, stamps: np.ndarray) -> None:
        """Take back a tabu matrix written by ``tabu_memory`` (after enable_tabu)."""
        self.tabu[...] = stamps

    def load_from(self, other: "Evaluator") -> None:
        """Take ``other``'s current solution (another neighbourhood's evaluator of the same
        problem, as in a polish); backends that can copy it where it lives override this."""
        self.load(other.x)

    def select(self, query: Query) -> Selection:
        raise NotImplementedError

    def deltas(self, step: int = 0) -> np.ndarray:
        raise NotImplementedError

    def apply(self, index: int, step: int = 0, tabu_until: int | None = None, move=None) -> np.ndarray:
        """Apply move ``index``; return the move. The host mirror ``self.x`` follows.
        ``move``: the move of ``index``, where the caller has it already (finding a tour
        neighbourhood's move on the host costs an O(n) table of positions)."""
        raise NotImplementedError

    def apply_moves(self, moves: np.ndarray) -> float:
        """Apply ``moves`` (rows of the neighbourhood's move format, e.g. an ILS kick from
        ``Problem.kick_moves``) in order; return the fitness change they make together (in
        the problem's units). The host mirror ``self.x`` follows. This default computes the
        deltas on the host; the CUDA backend applies and measures them on the GPU."""
        total = 0
        for move in self.neighbourhood.check_moves(moves):
            total += self.problem.delta_of(self.x, move[None])[0].item()
            self.neighbourhood.apply(self.x, move)
        return total

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

    def finish(self) -> None:
        """Wait for the backend's queued work, raising a fault no result has read yet (the end of a
        run: the searches call it before building their result)."""

    def move_at(self, index: int, step: int = 0) -> np.ndarray:
        """The move of flat index ``index`` around the current solution."""
        if self.neighbourhood.static:
            return self.neighbourhood.decode_one(index)
        return self.neighbourhood.moves(self.x, np.array([index], dtype=np.int64), step)[0]

    def tabu_stamps(self, tabu: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """Each move's oldest stamp in the host tabu matrix ``tabu``: the least ``tabu[a, b]``
        over the attributes it adds (the move is tabu at iteration t when it is > t)."""
        attrs = self.neighbourhood.added(self.x, moves)
        return tabu[attrs[..., 0], attrs[..., 1]].min(axis=1)

    def forbid(self, tabu: np.ndarray | None, move: np.ndarray, until: int | None) -> None:
        """Mark the attributes ``move`` removes from the current solution tabu until ``until``."""
        if until is not None and tabu is not None:
            removed = self.neighbourhood.removed(self.x, move)
            tabu[removed[:, 0], removed[:, 1]] = until

    def _time(self, phase: str, seconds: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + seconds


#: why a start of a batch stopped (BatchChunk.code; the same numbers in the GPU's batch kernels)
STOP_CODES = {1: "no_admissible_move", 2: "target", 3: "stagnation"}


@dataclass
class BatchChunk:
    """What a batch evaluator reports for a chunk of iterations: ``made[k]`` iterations of start
    k, its signed fitness after each in ``values[k]`` (starts x count), its stop code (0: none,
    else a key of STOP_CODES), whether Ctrl-C cut the chunk short (the iterations reported
    were made), and ``steps``: the iterations the chunk covered when the deadline or Ctrl-C cut
    it short (None: all ``count``)."""

    made: np.ndarray
    values: np.ndarray
    code: np.ndarray
    interrupted: bool = field(default=False)
    steps: int | None = None


class BatchEvaluator:
    """The protocol of a backend's batch evaluator: ``starts`` searches of one problem stepped
    together, each with its own solution, tabu memory, current and best fitness (the batched
    tabu search of lsmgpu.parallel.batch drives it).

    * ``load(xs, current)``: start solutions (starts x n) and their signed fitness; fresh tabu memory;
    * ``restart(starts, xs, current)``: those starts go on from new solutions (islands);
    * ``set_tenures(table)``: the tenures of the next TENURE_BLOCK iterations, a row per start;
    * ``advance(step, count, rules, stagnation, target, ledger, deadline=None)``: up to ``count``
      iterations of every active start under ``rules`` (a Query), with the stop tests (target,
      stagnation, no admissible move) made per start: a :class:`BatchChunk`. ``ledger`` holds the
      host's account of the starts (current, best, since, active), which a backend that keeps them
      itself ignores; a backend that steps iterations on the host stops the chunk at ``deadline``
      (a time.perf_counter() value), one that queues them on a device may ignore it;
    * ``best_solutions()``: each start's best solution; ``close()``;
    * ``snapshot()`` / ``restore(snapshot)``: the starts' whole state between chunks as host arrays
      (solutions, best solutions, tabu memories, tenures, current and best fitness, the active
      starts; a backend that keeps the stagnation counters, those too), and that state put back on
      a freshly built evaluator: a checkpoint of the batch.
    """

    backend: str = ""
    device: str = ""
    timings: dict
    max_steps: int | None = None

    def load(self, xs: np.ndarray, current: np.ndarray) -> None:
        raise NotImplementedError

    def restart(self, starts, xs, current) -> None:
        raise NotImplementedError

    def set_tenures(self, table: np.ndarray) -> None:
        raise NotImplementedError

    def advance(self, step: int, count: int, rules: Query, stagnation, target, ledger, deadline=None) -> BatchChunk:
        raise NotImplementedError

    def best_solutions(self) -> np.ndarray:
        raise NotImplementedError

    def snapshot(self) -> dict:
        raise NotImplementedError

    def restore(self, snapshot: dict) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release device resources."""
