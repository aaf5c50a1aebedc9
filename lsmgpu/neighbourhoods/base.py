"""The neighbourhood base class: moves around a solution, numbered 0..size-1.

A neighbourhood is one self-contained unit (docs/architecture.md): its size, how a flat
64-bit index becomes a move and how a move is applied on the CPU, the *kind* of move it
yields (which a problem's delta evaluates), and the device move code it names
(``templates/moves/<device_code>.cu.j2``, the same arithmetic as its NumPy decode).

It also names the *attributes* a move adds and removes, which tabu search forbids. Tabu
attributes are pairs (a, b) indexing a ``tabu_shape`` matrix of "tabu until iteration"
counters: (position, value) for vector encodings, (city, city) edges for 2-opt. A move is tabu
when *all* the attributes it would add were removed recently (Taillard's rule for the QAP
swap, used here for every neighbourhood).

A neighbourhood is declared unbound (``Swap()``) and bound to a problem's encoding by
:meth:`Neighbourhood.bind`, which checks that the two fit and fixes ``n``.
"""
from __future__ import annotations

import copy

import numpy as np

from ..encodings import Discrete, Encoding

__all__ = ["Neighbourhood", "stack_columns"]


class Neighbourhood:
    """Base class. A subclass sets ``arity`` and ``move_kind``, and ``device_code`` where the
    CUDA backend can generate its moves."""

    arity: int = 0
    #: the kind of move it yields: what a problem's delta evaluates (``Problem.delta_<kind>``);
    #: neighbourhoods that yield the same moves share it (TwoOpt and CandidateTwoOpt: "twoopt")
    move_kind: str = ""
    #: its device move code: ``templates/moves/<device_code>.cu.j2`` (None: none, CPU only)
    device_code: str | None = None
    #: moves do not depend on the solution or the iteration, so they may be cached
    static: bool = True
    #: moves are drawn anew at each step (crowns): a search's steps see different neighbourhoods
    drawn: bool = False
    #: the GPU's decoded move (its fields i, j, k, r, the first ``arity`` of them) is the host's
    #: move: the CUDA backend hands back the move its kernel chose instead of decoding the index
    #: again on the host (tour neighbourhoods, where that costs an O(n) table of positions)
    device_decoded: bool = False
    encodings: tuple[type, ...] = (Encoding,)

    encoding: Encoding | None = None

    def bind(self, encoding: Encoding) -> "Neighbourhood":
        """A copy of this neighbourhood fixed to ``encoding`` (checks that they fit)."""
        if not isinstance(encoding, self.encodings):
            names = " or ".join(e.__name__ for e in self.encodings)
            raise TypeError(f"{type(self).__name__} needs a {names} encoding, got {type(encoding).__name__}")
        bound = copy.copy(self)
        bound.encoding = encoding
        bound._check(encoding)
        return bound

    #: the least n for which the neighbourhood has a move
    min_n: int = 1

    def _check(self, encoding: Encoding) -> None:
        """Raise ValueError if ``encoding`` is too small for this neighbourhood."""
        if encoding.n < self.min_n:
            raise ValueError(f"{type(self).__name__}: n must be >= {self.min_n}, got {encoding.n}")

    @property
    def n(self) -> int:
        if self.encoding is None:
            raise RuntimeError(f"{type(self).__name__} is not bound to an encoding; call bind()")
        return self.encoding.n

    @property
    def size(self) -> int:
        """Number of moves."""
        raise NotImplementedError

    def decode(self, index, step: int = 0) -> np.ndarray:
        """Moves of the flat indices ``index``, shape (len(index), arity)."""
        raise NotImplementedError

    def decode_one(self, index: int) -> np.ndarray:
        """The move of one flat index (the engine's per-iteration path: no vector set-up)."""
        return self.decode(np.array([index], dtype=np.int64))[0]

    def moves(self, x: np.ndarray, index, step: int = 0) -> np.ndarray:
        """The moves of the given indices around ``x`` at iteration ``step``.

        For most neighbourhoods this is :meth:`decode`; neighbourhoods whose moves depend
        on the current solution or the iteration (``static = False``) override it.
        """
        return self.decode(index, step)

    def apply(self, x: np.ndarray, move: np.ndarray) -> None:
        """Apply one move to ``x`` in place."""
        raise NotImplementedError

    def check_moves(self, moves) -> np.ndarray:
        """``moves`` as an (m, arity) int64 array, or ValueError naming the first bad one:
        explicit moves (an ILS kick) reach the GPU's apply code unchecked."""
        array = np.asarray(moves)
        if array.ndim != 2 or array.shape[1] != self.arity or not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"{type(self).__name__}: moves must be an (m, {self.arity}) integer array, "
                             f"got shape {array.shape} of {array.dtype}")
        array = array.astype(np.int64)
        bad = ~self._valid(array)
        if bad.any():
            raise ValueError(f"{type(self).__name__}: invalid move {array[np.argmax(bad)].tolist()} for n = {self.n}")
        return array

    def _valid(self, moves: np.ndarray) -> np.ndarray:
        """Which of the explicit ``moves`` are valid (default: every value a position 0..n-1)."""
        return ((moves >= 0) & (moves < self.n)).all(axis=1)

    def random_moves(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` uniformly drawn moves (used by perturbations)."""
        return self.decode(rng.integers(0, self.size, count, dtype=np.int64))

    def kick(self, x: np.ndarray, rng: np.random.Generator, strength: int) -> np.ndarray:
        """A kicked copy of ``x`` (``Problem.perturb``'s default): ``strength`` random moves applied."""
        y = x.copy()
        for move in self.random_moves(rng, strength):
            self.apply(y, move)
        return y

    def device_params(self) -> dict:
        """Options its device move code is compiled with (rendered into the kernel source: one
        build per distinct value, so only what decides the code, e.g. the candidate list width)."""
        return {}

    #: instance constants (KernelSpec.constants) rendered into this neighbourhood's kernels as
    #: literals instead of __constant__ variables, where that measured more than 3 % faster: one
    #: build per value (the source, the cache key, says so); docs/benchmarks.md, "Kernels built once"
    baked_constants: tuple[str, ...] = ()

    def device_constants(self) -> dict:
        """Numbers its device move code reads from ``__constant__`` memory, set for each instance
        when the kernel is loaded, not compiled in (e.g. a seed): name -> int or float."""
        return {}

    def footprint(self, moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first, last) positions of the tour that each move reads or changes, -1 <= first
        and last <= n (-1 and n stand for positions n-1 and 0 across the tour's end). Moves with
        disjoint footprints can be applied together, their deltas adding up. Only tour
        neighbourhoods define it."""
        raise TypeError(f"{type(self).__name__} defines no footprints: its moves cannot be applied together")

    def disjoint(self, moves: np.ndarray) -> np.ndarray:
        """Which of ``moves`` (best first) to apply together: each one whose footprint overlaps
        no move kept before it (their deltas then add up). A boolean mask."""
        n = self.n
        first, last = self.footprint(moves)
        used = np.zeros(n, dtype=bool)
        kept = np.zeros(len(moves), dtype=bool)
        for q, (lo, hi) in enumerate(zip(first.tolist(), last.tolist())):
            # footprints may cross the tour's end (-1 is position n-1, n is position 0)
            spans = [(lo % n, n - 1), (0, hi % n)] if lo < 0 or hi >= n else [(lo, hi)]
            if any(used[a:b + 1].any() for a, b in spans):
                continue
            for a, b in spans:
                used[a:b + 1] = True
            kept[q] = True
        return kept

    # --- tabu attributes -------------------------------------------------------------
    def tabu_shape(self) -> tuple[int, int] | None:
        """Shape of the tabu matrix, or None when tabu search does not apply."""
        return None

    def position_value_shape(self) -> tuple[int, int]:
        """The (position, value) tabu matrix of a vector: n x k values (k = n for a permutation)."""
        return (self.n, self.encoding.k if isinstance(self.encoding, Discrete) else self.n)

    def added(self, x: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """Attributes each move would add, shape (m, r, 2)."""
        raise NotImplementedError

    def removed(self, x: np.ndarray, move: np.ndarray) -> np.ndarray:
        """Attributes one move removes from ``x``, shape (r, 2)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def stack_columns(*columns) -> np.ndarray:
    """Columns of moves as one (m, len(columns)) int64 array."""
    return np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1)
