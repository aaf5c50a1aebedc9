"""Uniform random Euclidean instances made as the DIMACS TSP Challenge's portgen makes them:
integer coordinates in [0, 1,000,000) from Knuth's portable subtractive generator (sprand /
lprand), x then y for each city. ``portgen(1_000_000, seed)`` gives a 1,000,000-city instance
in a few seconds, reproducibly, with no file in the repository.

Which challenge instance a seed reproduces (E1M.0 and its kin) we cannot check here: their
files are not in our data. The reference length is therefore the asymptotic estimate of the
optimal tour of n uniform points in a square of area A, 0.7124 sqrt(n A) (Johnson, McGeoch &
Rothberg 1996, the constant of Percus & Martin), within a fraction of a percent at n = 10^6.
"""
from __future__ import annotations

import numpy as np

from lsmgpu.problems.tsp import UNIFORM_TOUR

__all__ = ["portgen", "uniform_reference", "MAXCOORD"]

MAXCOORD = 1_000_000
PRANDMAX = 1_000_000_000


def _numbers(seed: int, count: int) -> np.ndarray:
    """``count`` numbers of Knuth's subtractive generator seeded as portgen's sprand."""
    table = [0] * 55
    seed %= PRANDMAX
    table[0] = last = seed
    following = 1
    for i in range(1, 55):
        at = (21 * i) % 55
        table[at] = following
        following = last - following
        if following < 0:
            following += PRANDMAX
        last = table[at]
    a, b = 0, 24
    out = np.empty(count + 165, dtype=np.int64)
    for k in range(count + 165):
        a = 54 if a == 0 else a - 1
        b = 54 if b == 0 else b - 1
        t = table[a] - table[b]
        if t < 0:
            t += PRANDMAX
        table[a] = t
        out[k] = t
    return out[165:]


def portgen(n: int, seed: int) -> np.ndarray:
    """(n, 2) integer coordinates (as float64), portgen's x and y for each city in turn."""
    return (_numbers(seed, 2 * n) % MAXCOORD).reshape(n, 2).astype(np.float64)


def uniform_reference(n: int) -> float:
    """The estimated optimal length of n uniform cities in portgen's square."""
    return UNIFORM_TOUR * np.sqrt(n * float(MAXCOORD) ** 2)
