"""Neighbourhoods: the moves around a solution, numbered 0..size-1.

Every neighbourhood maps a flat 64-bit index to a move and back (vectorised NumPy here,
the same arithmetic in the CUDA skeletons), applies a move to a solution, and names the
*attributes* a move adds and removes, which tabu search forbids.

Tabu attributes are pairs (a, b) indexing a ``tabu_shape`` matrix of "tabu until
iteration" counters: (position, value) for vector encodings, (city, city) edges for 2-opt.
A move is tabu when *all* the attributes it would add were removed recently (Taillard's
rule for the QAP swap, used here for every neighbourhood).

A neighbourhood is declared unbound (``Swap()``) and bound to a problem's encoding by
:meth:`Neighbourhood.bind`, which checks that the two fit and fixes ``n``.
"""
from __future__ import annotations

import copy
import math
from math import comb

import numpy as np

from .encodings import Discrete, Encoding, Permutation, Real
from .mappings import index_to_pair, index_to_triple, pair_to_index, triple_to_index

__all__ = ["Neighbourhood", "BitFlip", "ValueChange", "Swap", "ThreeExchange", "TwoOpt", "CandidateTwoOpt",
           "BlockExchange", "OrOpt", "CandidateThreeOpt", "Crowns", "candidate_polish"]


class Neighbourhood:
    """Base class. Subclasses set ``family`` (the CUDA skeleton) and ``arity``."""

    family: str = ""
    arity: int = 0
    #: moves do not depend on the solution or the iteration, so they may be cached
    static: bool = True
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

    def _check(self, encoding: Encoding) -> None:
        """Raise ValueError if ``encoding`` is too small for this neighbourhood."""

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

    def encode(self, moves) -> np.ndarray:
        """Flat indices of ``moves`` (inverse of :meth:`decode`)."""
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

    def footprint(self, moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first, last) positions of the tour that each move reads or changes, -1 <= first
        and last <= n (-1 and n stand for positions n-1 and 0 across the tour's end). Moves with
        disjoint footprints can be applied together, their deltas adding up. Only tour
        neighbourhoods define it."""
        raise TypeError(f"{type(self).__name__} defines no footprints: its moves cannot be applied together")

    # --- tabu attributes -------------------------------------------------------------
    def tabu_shape(self) -> tuple[int, int] | None:
        """Shape of the tabu matrix, or None when tabu search does not apply."""
        return None

    def added(self, x: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """Attributes each move would add, shape (m, r, 2)."""
        raise NotImplementedError

    def removed(self, x: np.ndarray, move: np.ndarray) -> np.ndarray:
        """Attributes one move removes from ``x``, shape (r, 2)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _pair_one(k: int, n: int) -> tuple[int, int]:
    """Exact one-to-two mapping of a single index, in Python integers (math.isqrt)."""
    r = n * (n - 1) // 2 - 1 - k           # reversed rank = C(a, 2) + b, a > b
    a = (1 + math.isqrt(1 + 8 * r)) // 2
    return n - 1 - a, n - 1 - (r - a * (a - 1) // 2)


def _triple_one(k: int, n: int) -> tuple[int, int, int]:
    """Exact one-to-three mapping of a single index, in Python integers."""
    r = n * (n - 1) * (n - 2) // 6 - 1 - k
    a = max(2, round((6 * r) ** (1 / 3)))
    while a * (a - 1) * (a - 2) // 6 > r:
        a -= 1
    while (a + 1) * a * (a - 1) // 6 <= r:
        a += 1
    r -= a * (a - 1) * (a - 2) // 6
    b = (1 + math.isqrt(1 + 8 * r)) // 2
    return n - 1 - a, n - 1 - b, n - 1 - (r - b * (b - 1) // 2)


def _stack(*columns) -> np.ndarray:
    return np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1)


class BitFlip(Neighbourhood):
    """Flip 1, 2 or 3 distinct bits: C(n, distance) moves (Hamming distance 1, 2, 3)."""

    encodings = (Discrete,)

    def __init__(self, distance: int = 1):
        if distance not in (1, 2, 3):
            raise ValueError(f"BitFlip: `distance` must be 1, 2 or 3, got {distance!r}")
        self.distance = distance
        self.arity = distance
        self.family = ("single", "pair", "triple")[distance - 1]

    def _check(self, encoding):
        if encoding.k != 2:
            raise TypeError("BitFlip needs a Binary encoding (k = 2); use ValueChange for k > 2")
        if encoding.n < self.distance:
            raise ValueError(f"BitFlip({self.distance}): n must be >= {self.distance}, got {encoding.n}")

    @property
    def size(self):
        return comb(self.n, self.distance)

    def decode(self, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        if self.distance == 1:
            return index[:, None].copy()
        if self.distance == 2:
            return _stack(*index_to_pair(index, self.n))
        return _stack(*index_to_triple(index, self.n))

    def decode_one(self, index):
        if self.distance == 1:
            return np.array([index], dtype=np.int64)
        if self.distance == 2:
            return np.array(_pair_one(int(index), self.n), dtype=np.int64)
        return np.array(_triple_one(int(index), self.n), dtype=np.int64)

    def encode(self, moves):
        moves = np.asarray(moves, dtype=np.int64)
        if self.distance == 1:
            return moves[:, 0].copy()
        if self.distance == 2:
            return pair_to_index(moves[:, 0], moves[:, 1], self.n)
        return triple_to_index(moves[:, 0], moves[:, 1], moves[:, 2], self.n)

    def apply(self, x, move):
        x[move] = 1 - x[move]

    def tabu_shape(self):
        return (self.n, 2)

    def added(self, x, moves):
        return np.stack([moves, 1 - x[moves]], axis=2)

    def removed(self, x, move):
        return np.stack([move, x[move]], axis=1)

    def __repr__(self):
        return f"BitFlip(distance={self.distance})"


class ValueChange(Neighbourhood):
    """Give one position another of the k values: (k - 1) n moves.

    Move (i, o): position ``i = index // (k-1)`` takes value ``(x[i] + 1 + o) % k`` with
    ``o = index % (k-1)`` (the paper's mapping for discrete vectors).
    """

    family = "value"
    arity = 2
    encodings = (Discrete,)

    @property
    def size(self):
        return (self.encoding.k - 1) * self.n

    def decode(self, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        k1 = self.encoding.k - 1
        return _stack(index // k1, index % k1)

    def encode(self, moves):
        moves = np.asarray(moves, dtype=np.int64)
        return moves[:, 0] * (self.encoding.k - 1) + moves[:, 1]

    def new_values(self, x, moves):
        """The value each move gives its position."""
        return (x[moves[:, 0]] + 1 + moves[:, 1]) % self.encoding.k

    def apply(self, x, move):
        x[move[0]] = (x[move[0]] + 1 + move[1]) % self.encoding.k

    def _valid(self, moves):
        return (moves[:, 0] >= 0) & (moves[:, 0] < self.n) & (moves[:, 1] >= 0) & (moves[:, 1] < self.encoding.k - 1)

    def tabu_shape(self):
        return (self.n, self.encoding.k)

    def added(self, x, moves):
        return _stack(moves[:, 0], self.new_values(x, moves))[:, None, :]

    def removed(self, x, move):
        return np.array([[move[0], x[move[0]]]], dtype=np.int64)


class Swap(Neighbourhood):
    """Exchange the values at positions i < j: n (n - 1) / 2 moves (2-exchange)."""

    family = "pair"
    arity = 2
    encodings = (Permutation, Discrete)

    def _check(self, encoding):
        if encoding.n < 2:
            raise ValueError(f"Swap: n must be >= 2, got {encoding.n}")

    @property
    def size(self):
        return comb(self.n, 2)

    def decode(self, index, step=0):
        return _stack(*index_to_pair(index, self.n))

    def decode_one(self, index):
        return np.array(_pair_one(int(index), self.n), dtype=np.int64)

    def encode(self, moves):
        moves = np.asarray(moves, dtype=np.int64)
        return pair_to_index(moves[:, 0], moves[:, 1], self.n)

    def apply(self, x, move):
        i, j = move
        x[i], x[j] = x[j], x[i]

    def tabu_shape(self):
        k = self.encoding.k if isinstance(self.encoding, Discrete) else self.n
        return (self.n, k)

    def added(self, x, moves):
        i, j = moves[:, 0], moves[:, 1]
        return np.stack([_stack(i, x[j]), _stack(j, x[i])], axis=1)

    def removed(self, x, move):
        i, j = move
        return np.array([[i, x[i]], [j, x[j]]], dtype=np.int64)


class ThreeExchange(Neighbourhood):
    """Rotate the values at three positions i < j < k: 2 C(n, 3) moves (Luong et al., A.3).

    Move (i, j, k, r): index = 2 * triple_index(i, j, k) + r (the one-to-three mapping).
    r = 0 rotates right (x[i] goes to j, x[j] to k, x[k] to i), r = 1 rotates left.
    A rotation is an even permutation: on its own this neighbourhood never leaves the parity
    class of the start (combine it with Swap, or restart, to reach the other half).
    """

    family = "three"
    arity = 4
    encodings = (Permutation, Discrete)

    def _check(self, encoding):
        if encoding.n < 3:
            raise ValueError(f"ThreeExchange: n must be >= 3, got {encoding.n}")

    @property
    def size(self):
        return 2 * comb(self.n, 3)

    def decode(self, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        i, j, k = index_to_triple(index // 2, self.n)
        return _stack(i, j, k, index % 2)

    def decode_one(self, index):
        return np.array((*_triple_one(int(index) // 2, self.n), int(index) % 2), dtype=np.int64)

    def encode(self, moves):
        moves = np.asarray(moves, dtype=np.int64)
        return 2 * triple_to_index(moves[:, 0], moves[:, 1], moves[:, 2], self.n) + moves[:, 3]

    @staticmethod
    def targets(x, moves) -> tuple[np.ndarray, np.ndarray]:
        """(positions (m, 3), the values they receive (m, 3)) for each move."""
        pos = moves[:, :3]
        old = x[pos]
        right = np.stack([old[:, 2], old[:, 0], old[:, 1]], axis=1)   # i <- x[k], j <- x[i], k <- x[j]
        left = np.stack([old[:, 1], old[:, 2], old[:, 0]], axis=1)    # i <- x[j], j <- x[k], k <- x[i]
        return pos, np.where(moves[:, 3:4] == 0, right, left)

    def apply(self, x, move):
        pos, new = self.targets(x, np.asarray(move, dtype=np.int64)[None, :])
        x[pos[0]] = new[0]

    def tabu_shape(self):
        k = self.encoding.k if isinstance(self.encoding, Discrete) else self.n
        return (self.n, k)

    def added(self, x, moves):
        pos, new = self.targets(x, moves)
        return np.stack([pos, new], axis=2)

    def removed(self, x, move):
        pos = np.asarray(move[:3], dtype=np.int64)
        return np.stack([pos, x[pos]], axis=1)


class TwoOpt(Neighbourhood):
    """2-opt on a cyclic tour: reverse the segment x[i..j], 1 <= i < j <= n-1.

    Position 0 stays fixed, so every distinct 2-opt move appears exactly once:
    n (n - 3) / 2 moves. The pairs (i-1, j-1) over n-1 items are numbered by the
    one-to-two mapping, skipping pair (0, n-2) (i = 1, j = n-1: reversing everything
    but x[0] gives the same cycle). The move removes edges (x[i-1], x[i]) and
    (x[j], x[j+1 mod n]) and adds (x[i-1], x[j]) and (x[i], x[j+1 mod n]).
    """

    family = "twoopt"
    arity = 2
    encodings = (Permutation,)
    #: a dense (city, city) tabu matrix beyond this size would take gigabytes
    max_tabu_n = 20_000

    def _check(self, encoding):
        if encoding.n < 4:
            raise ValueError(f"TwoOpt: a tour needs n >= 4 cities, got {encoding.n}")

    @property
    def size(self):
        return self.n * (self.n - 3) // 2

    def decode(self, index, step=0):
        k = np.asarray(index, dtype=np.int64)
        k = k + (k >= self.n - 3)
        a, b = index_to_pair(k, self.n - 1)
        return _stack(a + 1, b + 1)

    def decode_one(self, index):
        k = int(index)
        a, b = _pair_one(k + (k >= self.n - 3), self.n - 1)
        return np.array((a + 1, b + 1), dtype=np.int64)

    def encode(self, moves):
        moves = np.asarray(moves, dtype=np.int64)
        k = pair_to_index(moves[:, 0] - 1, moves[:, 1] - 1, self.n - 1)
        return k - (k > self.n - 3)

    def apply(self, x, move):
        i, j = move
        x[i:j + 1] = x[i:j + 1][::-1].copy()

    def _valid(self, moves):
        return (moves[:, 0] >= 1) & (moves[:, 0] <= moves[:, 1]) & (moves[:, 1] <= self.n - 1)

    def footprint(self, moves):
        return moves[:, 0] - 1, moves[:, 1] + 1

    def tabu_shape(self):
        if self.n > self.max_tabu_n:
            raise ValueError(f"TwoOpt: tabu search keeps a (city, city) matrix, too large for "
                             f"n = {self.n} > {self.max_tabu_n}; use IteratedLocalSearch")
        return (self.n, self.n)

    def _edges(self, u, v):
        return np.stack([np.minimum(u, v), np.maximum(u, v)], axis=-1).astype(np.int64)

    def added(self, x, moves):
        i, j = moves[:, 0], moves[:, 1]
        after = x[(j + 1) % self.n]
        return np.stack([self._edges(x[i - 1], x[j]), self._edges(x[i], after)], axis=1)

    def removed(self, x, move):
        i, j = move
        return self._edges(np.array([x[i - 1], x[j]]), np.array([x[i], x[(j + 1) % self.n]]))


def _candidate_table(owner: str, candidates) -> np.ndarray:
    """``candidates`` as an (n, k) int64 table, or ValueError naming ``owner``."""
    cand = np.asarray(candidates)
    if cand.ndim != 2 or cand.shape[1] < 1 or not np.issubdtype(cand.dtype, np.integer):
        raise ValueError(f"{owner}: `candidates` must be an (n, k) integer table, got {cand.shape}")
    return cand.astype(np.int64)


def _check_candidates(owner: str, candidates: np.ndarray, n: int) -> None:
    """Raise ValueError unless the table has n rows of cities 0..n-1."""
    if candidates.shape[0] != n or candidates.min() < 0 or candidates.max() >= n:
        raise ValueError(f"{owner}: `candidates` must have {n} rows of values in 0..{n - 1}")


def _positions(x: np.ndarray) -> np.ndarray:
    """pos[c]: where value c stands in the permutation x."""
    pos = np.empty(len(x), dtype=np.int64)
    pos[x] = np.arange(len(x))
    return pos


class CandidateTwoOpt(TwoOpt):
    """2-opt restricted to candidate edges: n k moves instead of n (n - 3) / 2.

    ``candidates`` is an (n, k) table of values (cities) per value, e.g. each city's k nearest
    (lsmgpu.problems.candidates). Move q joins value c = q // k to c' = candidates[c, q % k]:
    with a, b the positions of c and c', it reverses x[min+1 .. max] (or, when shorter, the
    rest of the tour across its end: the same cycle), which creates the edges (c, c') and
    (succ c, succ c'). Moves are TwoOpt position pairs (i, j), so a problem's
    2-opt delta applies unchanged; a move whose edge (c, c') is already in the tour comes out
    as the null move (i, i) with delta 0. Meant for hill climbing and ILS (improving moves);
    it defines no tabu attributes. Moves depend on the tour (``static = False``).
    """

    static = False
    device_decoded = True

    def __init__(self, candidates):
        self.candidates = _candidate_table("CandidateTwoOpt", candidates)

    def _check(self, encoding):
        super()._check(encoding)
        _check_candidates("CandidateTwoOpt", self.candidates, encoding.n)

    @property
    def size(self):
        return self.candidates.size

    def decode(self, index, step=0):
        raise TypeError("CandidateTwoOpt: moves depend on the tour; use moves(x, index)")

    def encode(self, moves):
        raise TypeError("CandidateTwoOpt: moves are position pairs of one tour; they have no fixed index")

    def moves(self, x, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        k = self.candidates.shape[1]
        pos = _positions(x)
        a, b = pos[index // k], pos[self.candidates[index // k, index % k]]
        low, high = np.minimum(a, b), np.maximum(a, b)
        null = (high - low == 1) | ((low == 0) & (high == self.n - 1))
        i = np.where(null, 1, low + 1)
        return _stack(i, np.where(null, i, high))

    def apply(self, x, move):
        """Reverse the shorter side: x[i..j], or its complement x[j+1 .. i-1] across the
        tour's end (the same cycle: the edges the move adds and removes do not change)."""
        i, j = int(move[0]), int(move[1])
        n = len(x)
        if 2 * (j - i + 1) <= n:
            x[i:j + 1] = x[i:j + 1][::-1].copy()
            return
        outside = (j + 1 + np.arange(n - (j - i + 1))) % n
        x[outside] = x[outside[::-1]]

    def footprint(self, moves):
        outside = 2 * (moves[:, 1] - moves[:, 0] + 1) > self.n
        return (np.where(outside, moves[:, 1] - self.n, moves[:, 0] - 1),
                np.where(outside, moves[:, 0], moves[:, 1] + 1))

    def random_moves(self, rng, count):
        raise TypeError("CandidateTwoOpt: random moves depend on the tour")

    def tabu_shape(self):
        return None

    def __repr__(self):
        return f"CandidateTwoOpt(k={self.candidates.shape[1]})"


class BlockExchange(Neighbourhood):
    """Base of the tour neighbourhoods whose moves are block exchanges over candidate lists
    (Or-opt, candidate 3-opt). A move (i, j, k, mode), i <= j < k, has the blocks X = x[i..j]
    and Y = x[j+1..k] trade places (mode 0: Y X; mode 1: Y reversed(X); mode 2: reversed(Y) X):
    three tour edges out, three in. (0, 0, 0, -1) is the null move (delta 0), for indices whose
    move does not apply to the current tour. Meant for hill climbing and ILS; no tabu
    attributes; moves depend on the tour (``static = False``)."""

    static = False
    device_decoded = True
    arity = 4
    encodings = (Permutation,)
    candidates: np.ndarray

    def _check(self, encoding):
        if encoding.n < 5:
            raise ValueError(f"{type(self).__name__}: n must be >= 5, got {encoding.n}")
        _check_candidates(type(self).__name__, self.candidates, encoding.n)

    def decode(self, index, step=0):
        raise TypeError(f"{type(self).__name__}: moves depend on the tour; use moves(x, index)")

    @staticmethod
    def exchanged(x: np.ndarray, move) -> np.ndarray:
        """The block x[i..k] after the exchange (mode -1: unchanged)."""
        i, j, k, mode = (int(v) for v in move)
        a, b = x[i:j + 1], x[j + 1:k + 1]
        if mode == 1:
            a = a[::-1]
        elif mode == 2:
            b = b[::-1]
        return np.concatenate([b, a]) if mode >= 0 else x[i:k + 1]

    @staticmethod
    def valid_or_null(n, i, j, k, mode, valid) -> np.ndarray:
        """The moves (i, j, k, mode), with the null move where ``valid`` is False or the
        positions are out of order or cross the tour's end."""
        valid = valid & (i >= 0) & (i <= j) & (j < k) & (k <= n - 1) & ~((i == 0) & (k == n - 1))
        return _stack(np.where(valid, i, 0), np.where(valid, j, 0), np.where(valid, k, 0), np.where(valid, mode, -1))

    def apply(self, x, move):
        i, k = int(move[0]), int(move[2])
        x[i:k + 1] = self.exchanged(x, move)

    def _valid(self, moves):
        i, j, k, mode = moves.T
        null = (mode == -1) & (i == 0) & (j == 0) & (k == 0)
        kept = self.valid_or_null(self.n, i, j, k, mode, True)[:, 3] == mode
        return null | ((mode >= 0) & (mode <= 2) & kept)

    def footprint(self, moves):
        return moves[:, 0] - 1, moves[:, 2] + 1

    def random_moves(self, rng, count):
        raise TypeError(f"{type(self).__name__}: random moves depend on the tour")


class OrOpt(BlockExchange):
    """Or-opt over candidate lists: move a segment of 1..``max_length`` consecutive cities of
    the tour next to a candidate neighbour of its first city, in either orientation (Or 1976;
    the "or3opt" reconnection of Fosin et al.): n * max_length * k * 2 moves.

    Move q = ((c * max_length + l - 1) * k + r) * 2 + o takes the segment of l cities that
    starts at city c (in tour order) and re-inserts it so that c becomes adjacent to
    v = candidates[c, r]: o = 0 puts the segment right after v (v, c, ..., e), o = 1 puts it
    reversed right before v (e, ..., c, v). Moves are block exchanges (see BlockExchange); a
    move that does not apply to the current tour (v inside or next to the segment, a segment
    across the tour's end) is the null move.
    """

    def __init__(self, candidates, max_length: int = 3):
        cand = _candidate_table("OrOpt", candidates)
        if not isinstance(max_length, (int, np.integer)) or max_length < 1:
            raise ValueError(f"OrOpt: `max_length` must be an integer >= 1, got {max_length!r}")
        self.candidates, self.max_length = cand, int(max_length)

    @property
    def size(self):
        return self.candidates.size * self.max_length * 2

    def moves(self, x, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        k = self.candidates.shape[1]
        pos = _positions(x)
        o, rest = index % 2, index // 2
        r, rest = rest % k, rest // k
        length, c = rest % self.max_length + 1, rest // self.max_length
        p = pos[c]
        last = p + length - 1
        pv = pos[self.candidates[c, r]]
        after, before = pv > last, pv < p
        # the block exchange of each case (see the class docstring)
        i = np.where(after, p, np.where(o == 0, pv + 1, pv))
        j = np.where(after, last, p - 1)
        kk = np.where(after, np.where(o == 0, pv, pv - 1), last)
        mode = np.where(o == 0, 0, np.where(after, 1, 2))
        return self.valid_or_null(self.n, i, j, kk, mode, after | before)

    def __repr__(self):
        return f"OrOpt(k={self.candidates.shape[1]}, max_length={self.max_length})"


class CandidateThreeOpt(BlockExchange):
    """3-opt over candidate lists (Fosin et al.'s "or3opt" and "segment reversal" moves over
    (i, j, k) triples): the three reconnections of three removed edges that keep both blocks
    in the tour as block exchanges, each new edge but one joining a city to one of its
    candidates: n k^2 * 3 moves for a table of k candidates.

    Move q = ((c * k + r1) * k + r2) * 3 + mode, with c at position a, c' = candidates[c, r1]
    at position b > a + 1 and the blocks X = x[a+1..j], Y = x[j+1..k]:
    mode 0 (Y X, pure segment exchange) and mode 1 (Y reversed(X)): j + 1 = b (the new edge
    (c, c')), and x[k] = candidates[x[a+1], r2] (mode 0: new edge (x[k], x[a+1])) or
    candidates[x[j], r2] (mode 1: new edge (x[k], x[j]));
    mode 2 (reversed(Y) X): k = b (the new edge (c, c')), and x[j+1] = candidates[x[a+1], r2]
    (the new edge (x[j+1], x[a+1])). Positions out of order give the null move.
    """

    def __init__(self, candidates):
        self.candidates = _candidate_table("CandidateThreeOpt", candidates)

    @property
    def size(self):
        return self.candidates.size * self.candidates.shape[1] * 3

    def moves(self, x, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        n, k, cand = self.n, self.candidates.shape[1], self.candidates
        pos = _positions(x)
        mode, rest = index % 3, index // 3
        r2, rest = rest % k, rest // k
        r1, c = rest % k, rest // k
        i = pos[c] + 1
        b = pos[cand[c, r1]]
        first = x[i % n]                                         # the city after c
        # modes 0/1: Y starts at b; its end k from the candidate of x[i] (0) or of x[b-1] (1)
        end = pos[cand[np.where(mode == 1, x[b - 1], first), r2]]
        # mode 2: Y ends at b; its start j+1 from the candidate of x[i]
        start = pos[cand[first, r2]]
        j = np.where(mode == 2, start - 1, b - 1)
        kk = np.where(mode == 2, b, end)
        return self.valid_or_null(n, i, j, kk, mode, i < n)

    def __repr__(self):
        return f"CandidateThreeOpt(k={self.candidates.shape[1]})"


def candidate_polish(candidates) -> list[Neighbourhood]:
    """The polish chain of an iterated local search over candidate lists: Or-opt, then candidate
    3-opt, on the same lists (a descent with candidate 2-opt ends where neither improves). On
    TSPLIB instances of 1,000-3,000 cities it left ILS 2 n about 20 % closer to the optimum than
    Or-opt alone (1.17 vs 1.47 % mean gap, docs/benchmarks.md) for about 0.3 ms more per kick."""
    return [OrOpt(candidates), CandidateThreeOpt(candidates)]


def counter_uniform(seed: int, step: int, index, draw) -> np.ndarray:
    """Counter-based uniform numbers in [0, 1): a SplitMix64 hash of (seed, step, index, draw).

    Stateless, so the CPU and the GPU (same hash in ``templates/skeleton/random.cu.j2``)
    draw the same numbers for a neighbour without sharing a generator. ``index`` and ``draw``
    broadcast (NumPy rules): one call can give every draw of many neighbours.
    """
    def mix(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        key = mix(np.uint64(seed) * golden + np.uint64(step))
        z = mix(key ^ (np.asarray(index, dtype=np.uint64) * golden + np.asarray(draw, dtype=np.uint64)))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


class Crowns(Neighbourhood):
    """Real-vector neighbourhood of ``m`` points in concentric rings (Luong et al.).

    Neighbour q lies in ring q: at a distance drawn uniformly in [q h, (q+1) h] from x,
    h = radius / m (radius 1/n by default, as in the paper), along a random direction u/|u|;
    then clipped to the box. The numbers come from :func:`counter_uniform` keyed on
    (seed, step, q), so a neighbour is reproducible and the neighbourhood changes every
    iteration (``static = False``). Each component of u is a sum of four uniforms minus 2
    (bell-shaped, near normal, so the direction is near isotropic): with only additions,
    products, a division and a square root, all correctly rounded, the GPU computes the
    same points bit for bit (``templates/skeleton/moves.cu.j2``), which a logarithm or a
    cosine would not guarantee. Moves are the neighbour points themselves.
    """

    family = "crowns"
    static = False
    encodings = (Real,)

    def __init__(self, m: int = 10_000, radius: float | None = None, seed: int = 0):
        if not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"Crowns: `m` must be an integer >= 1, got {m!r}")
        if radius is not None and not radius > 0:
            raise ValueError(f"Crowns: `radius` must be > 0, got {radius}")
        self.m, self.radius, self.seed = int(m), radius, seed

    @property
    def arity(self):
        return self.n

    @property
    def size(self):
        return self.m

    @property
    def max_radius(self) -> float:
        """The outer radius: ``radius`` or, by default, 1/n as in the paper."""
        return self.radius if self.radius is not None else 1.0 / self.n

    @property
    def ring_width(self) -> float:
        """h: the width of one ring."""
        return self.max_radius / self.m

    def displacement(self, index, step: int) -> np.ndarray:
        """The offset of each neighbour from the current point, shape (len(index), n). A
        neighbour's 4 n + 1 numbers come from one broadcast hash call (a call per number cost
        1.7 ms for the one move a step applies at n = 10), summed in the GPU's order."""
        q = np.asarray(index, dtype=np.int64)
        n = self.n
        draws = counter_uniform(self.seed, step, q[:, None], np.arange(4 * n + 1))
        four = draws[:, :4 * n].reshape(len(q), n, 4)
        u = ((four[..., 0] + four[..., 1]) + four[..., 2]) + four[..., 3] - 2.0
        norm2 = np.zeros(len(q))
        for d in range(n):                       # sequential, in the GPU's order
            norm2 = norm2 + u[:, d] * u[:, d]
        norm = np.sqrt(norm2)
        direction = u / np.where(norm > 0, norm, 1.0)[:, None]
        r = (q + draws[:, 4 * n]) * self.ring_width
        return direction * r[:, None]

    def decode(self, index, step=0):
        raise TypeError("Crowns: neighbours depend on the current point; use moves(x, index, step)")

    def moves(self, x, index, step=0) -> np.ndarray:
        """The neighbour points of ``x`` for the given indices and iteration."""
        e = self.encoding
        return np.clip(x[None, :] + self.displacement(index, step), e.low, e.high)

    def random_moves(self, rng, count):
        raise TypeError("Crowns: random moves depend on the current point")

    def kick(self, x, rng, strength):
        """A kicked copy of ``x``: ``strength`` distinct coordinates redrawn uniformly in the box.
        Crowns have no point-free random moves (neighbours depend on the current point), and a jump
        of one crown radius stays in the basin a descent has just left; the descent after the kick
        re-optimises the redrawn coordinates (on a sum over coordinates such as Weierstrass's, while
        the others keep their values)."""
        if not isinstance(strength, (int, np.integer)) or not 1 <= strength <= self.n:
            raise ValueError(f"Crowns: kick `strength` must be an integer in [1, n = {self.n}], got {strength!r}")
        y = np.array(x, dtype=np.float64, copy=True)
        chosen = rng.choice(self.n, size=int(strength), replace=False)
        y[chosen] = rng.uniform(self.encoding.low, self.encoding.high, len(chosen))
        return y

    def apply(self, x, move):
        x[:] = move

    def __repr__(self):
        return f"Crowns(m={self.m}, radius={self.max_radius if self.encoding else self.radius})"
