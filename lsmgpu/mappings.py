"""Index mappings between a flat neighbour index and the positions a move touches.

The GPU engine gives every thread one 64-bit index and lets it *compute* its move, so
no move table ever crosses the bus (Luong, Melab & Talbi, "GPU computing for parallel
local search metaheuristic algorithms", IEEE TC 2013, Propositions 1 and 2).

* pairs ``0 <= i < j < n`` are numbered row by row:
  ``f(i, j) = i (n - 1) + (j - 1) - i (i + 1) / 2``, inverted through a square root;
* triples ``0 <= i < j < k < n`` are numbered in lexicographic order and inverted with
  the combinatorial number system (a cube root, then a square root).

A double-precision root is only an estimate: from n = 5,915 on a *single*-precision
root gives wrong rows, and at n = 100,000 even a double root can be one off near a row
boundary. Every inverse therefore ends with an integer correction step, checked against
the forward formula. The CUDA templates use the same arithmetic (``templates/skeleton``).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["pair_count", "pair_to_index", "index_to_pair", "pair_of",
           "triple_count", "triple_to_index", "index_to_triple", "triple_of"]


def pair_count(n: int) -> int:
    """Number of pairs i < j over n items: n (n - 1) / 2."""
    return n * (n - 1) // 2


def triple_count(n: int) -> int:
    """Number of triples i < j < k over n items: n (n - 1) (n - 2) / 6."""
    return n * (n - 1) * (n - 2) // 6


def _int64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.int64)


def pair_to_index(i, j, n: int) -> np.ndarray:
    """Two-to-one mapping: the flat index of pair (i, j), i < j (vectorised)."""
    i, j = _int64(i), _int64(j)
    return i * (n - 1) + (j - 1) - i * (i + 1) // 2


def _row_start(i: np.ndarray, n: int) -> np.ndarray:
    """Flat index of the first pair (i, i + 1) of row i."""
    return i * (n - 1) - i * (i - 1) // 2


def index_to_pair(index, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One-to-two mapping: the pair (i, j), i < j, of flat index ``index`` (vectorised).

    Luong et al.'s closed form
    ``i = n - 2 - floor(sqrt(-8 index + 4 n (n - 1) - 7) / 2 - 1/2)`` in double precision,
    followed by an integer correction so that ``row_start(i) <= index < row_start(i + 1)``.
    """
    k = _int64(index)
    root = np.sqrt((4 * n * (n - 1) - 7 - 8 * k).astype(np.float64))
    i = (n - 2 - np.floor(root / 2.0 - 0.5)).astype(np.int64)
    i = np.clip(i, 0, n - 2)
    for _ in range(2):  # the estimate is at most one row off; two passes make sure
        i = np.where(_row_start(i, n) > k, i - 1, i)
        i = np.where(_row_start(i + 1, n) <= k, i + 1, i)
    j = k - _row_start(i, n) + i + 1
    return i, j


def _c2(a: np.ndarray) -> np.ndarray:
    return a * (a - 1) // 2


def _c3(a: np.ndarray) -> np.ndarray:
    return a * (a - 1) * (a - 2) // 6


def _largest(f, r: np.ndarray, estimate: np.ndarray, low: int, high: int) -> np.ndarray:
    """The largest a in [low, high] with f(a) <= r, from a root estimate a few units off."""
    a = np.clip(estimate, low, high)
    for _ in range(3):
        a = np.where(f(a) > r, a - 1, a)
        a = np.where(f(a + 1) <= r, a + 1, a)
    return a


def triple_to_index(i, j, k, n: int) -> np.ndarray:
    """Three-to-one mapping: lexicographic rank of the triple i < j < k (vectorised)."""
    a, b, c = n - 1 - _int64(i), n - 1 - _int64(j), n - 1 - _int64(k)
    return triple_count(n) - 1 - (_c3(a) + _c2(b) + c)


def index_to_triple(index, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-to-three mapping: the triple i < j < k of lexicographic rank ``index``.

    The reversed rank ``r = C(n, 3) - 1 - index`` is written in the combinatorial number
    system, ``r = C(a, 3) + C(b, 2) + c`` with ``a > b > c >= 0``; a and b come from a
    cube and a square root, each corrected in integers; then i = n-1-a, j = n-1-b, k = n-1-c.
    """
    r = triple_count(n) - 1 - _int64(index)
    a = _largest(_c3, r, np.floor(np.cbrt(6.0 * r.astype(np.float64))).astype(np.int64) + 1, 2, n - 1)
    r = r - _c3(a)
    b = _largest(_c2, r, np.floor(np.sqrt(2.0 * r.astype(np.float64))).astype(np.int64) + 1, 1, n - 1)
    c = r - _c2(b)
    return n - 1 - a, n - 1 - b, n - 1 - c


def pair_of(k: int, n: int) -> tuple[int, int]:
    """One-to-two mapping of a single index in Python integers (``math.isqrt``: exact, and without
    the vector set-up of :func:`index_to_pair`, which the engine's per-iteration path avoids)."""
    r = n * (n - 1) // 2 - 1 - k           # reversed rank = C(a, 2) + b, a > b
    a = (1 + math.isqrt(1 + 8 * r)) // 2
    return n - 1 - a, n - 1 - (r - a * (a - 1) // 2)


def triple_of(k: int, n: int) -> tuple[int, int, int]:
    """One-to-three mapping of a single index in Python integers (see :func:`pair_of`)."""
    r = n * (n - 1) * (n - 2) // 6 - 1 - k
    a = max(2, round((6 * r) ** (1 / 3)))
    while a * (a - 1) * (a - 2) // 6 > r:
        a -= 1
    while (a + 1) * a * (a - 1) // 6 <= r:
        a += 1
    r -= a * (a - 1) * (a - 2) // 6
    b = (1 + math.isqrt(1 + 8 * r)) // 2
    return n - 1 - a, n - 1 - b, n - 1 - (r - b * (b - 1) // 2)
