"""The generic neighbourhoods: bit flips, value change, swap, 3-exchange, 2-opt.

Each maps a flat index to its move through the index mappings (lsmgpu.mappings; the device
code in ``templates/moves/`` uses the same arithmetic) and names its tabu attributes.
"""
from __future__ import annotations

from math import comb

import numpy as np

from ..encodings import Discrete, Permutation
from ..mappings import index_to_pair, index_to_triple, pair_of, triple_of
from .base import Neighbourhood, stack_columns

__all__ = ["BitFlip", "ValueChange", "Swap", "ThreeExchange", "TwoOpt"]


class BitFlip(Neighbourhood):
    """Flip 1, 2 or 3 distinct bits: C(n, distance) moves (Hamming distance 1, 2, 3)."""

    move_kind = device_code = "flip"
    encodings = (Discrete,)

    def __init__(self, distance: int = 1):
        if distance not in (1, 2, 3):
            raise ValueError(f"BitFlip: `distance` must be 1, 2 or 3, got {distance!r}")
        self.distance = distance
        self.arity = distance

    def device_params(self):
        return {"flip_distance": self.distance}

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
            return stack_columns(*index_to_pair(index, self.n))
        return stack_columns(*index_to_triple(index, self.n))

    def decode_one(self, index):
        if self.distance == 1:
            return np.array([index], dtype=np.int64)
        if self.distance == 2:
            return np.array(pair_of(int(index), self.n), dtype=np.int64)
        return np.array(triple_of(int(index), self.n), dtype=np.int64)


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

    move_kind = device_code = "value"
    arity = 2
    encodings = (Discrete,)
    #: moves decode by % K and / (K - 1): a literal K measured 9-20 % faster (graph colouring)
    baked_constants = ("K",)

    @property
    def size(self):
        return (self.encoding.k - 1) * self.n

    def decode(self, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        k1 = self.encoding.k - 1
        return stack_columns(index // k1, index % k1)


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
        return stack_columns(moves[:, 0], self.new_values(x, moves))[:, None, :]

    def removed(self, x, move):
        return np.array([[move[0], x[move[0]]]], dtype=np.int64)


class Swap(Neighbourhood):
    """Exchange the values at positions i < j: n (n - 1) / 2 moves (2-exchange)."""

    move_kind = device_code = "swap"
    arity = 2
    encodings = (Permutation, Discrete)

    min_n = 2

    @property
    def size(self):
        return comb(self.n, 2)

    def decode(self, index, step=0):
        return stack_columns(*index_to_pair(index, self.n))

    def decode_one(self, index):
        return np.array(pair_of(int(index), self.n), dtype=np.int64)

    def apply(self, x, move):
        i, j = move
        x[i], x[j] = x[j], x[i]

    def tabu_shape(self):
        return self.position_value_shape()

    def added(self, x, moves):
        i, j = moves[:, 0], moves[:, 1]
        return np.stack([stack_columns(i, x[j]), stack_columns(j, x[i])], axis=1)

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

    move_kind = device_code = "three"
    arity = 4
    encodings = (Permutation, Discrete)

    min_n = 3

    @property
    def size(self):
        return 2 * comb(self.n, 3)

    def decode(self, index, step=0):
        index = np.asarray(index, dtype=np.int64)
        i, j, k = index_to_triple(index // 2, self.n)
        return stack_columns(i, j, k, index % 2)

    def decode_one(self, index):
        return np.array((*triple_of(int(index) // 2, self.n), int(index) % 2), dtype=np.int64)


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
        return self.position_value_shape()

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

    move_kind = device_code = "twoopt"
    arity = 2
    encodings = (Permutation,)
    #: the one-to-two mapping's arithmetic on literal sizes measured 2-6 % faster (pr2392 .. pla85900)
    baked_constants = ("N", "NB_SIZE")
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
        return stack_columns(a + 1, b + 1)

    def decode_one(self, index):
        k = int(index)
        a, b = pair_of(k + (k >= self.n - 3), self.n - 1)
        return np.array((a + 1, b + 1), dtype=np.int64)


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
