"""The DIMACS TSP Challenge's random instances, made as its generators make them, from Knuth's
portable subtractive generator (sprand / lprand): ``portgen(n, seed)`` n uniform cities, integer
coordinates in [0, 1,000,000) (a number divided by 1,000, x then y for each city);
``portcgen(n, seed)`` n clustered ones around n // 100 centres. With seed n they are the
challenge's: portgen(1000, 1000) is E1k.0 and portcgen(1000, 1000) C1k.0 (LKH-3's tours of the
two are 23,360,648 and 11,387,430 long, the lengths listed for the two instances), so
portgen(1_000_000, 1_000_000) is E1M.0, in a few seconds, with no file in the repository.

The reference length of a uniform instance is the asymptotic estimate of the optimal tour of n
uniform points in a square of area A, 0.7124 sqrt(n A) (Johnson, McGeoch & Rothberg 1996, the
constant of Percus & Martin), within a fraction of a percent at n = 10^6. Clustered instances
have no such estimate: the benchmarks measure them to the Held-Karp bound.
"""
from __future__ import annotations

import numpy as np

from lsmgpu.problems.tsp import UNIFORM_TOUR

__all__ = ["portgen", "portcgen", "uniform_reference", "MAXCOORD"]

MAXCOORD = 1_000_000
PRANDMAX = 1_000_000_000
#: portcgen's cities a centre
CLUSTER_FACTOR = 100


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
    return (_numbers(seed, 2 * n) // (PRANDMAX // MAXCOORD)).reshape(n, 2).astype(np.float64)


def portcgen(n: int, seed: int) -> np.ndarray:
    """(n, 2) integer coordinates (as float64) of n cities around n // 100 centres, as portcgen draws
    them: the centres' x and y, then for each city its centre and two normal offsets (Knuth's polar
    method: a pair of uniforms in (-1, 1) drawn until inside the unit circle gives two normals, the
    second used first), each scaled by 1,000,000 / sqrt(n) and truncated toward zero."""
    centres = n // CLUSTER_FACTOR
    if centres < 1:
        raise ValueError(f"portcgen: at least {CLUSTER_FACTOR} cities (one centre a {CLUSTER_FACTOR}), got {n}")
    numbers = _numbers(seed, 2 * centres + 4 * n + 1024)
    at = 2 * centres
    xy = (numbers[:at] / PRANDMAX * MAXCOORD).astype(np.int64).reshape(centres, 2)
    scale = 1.0 / np.sqrt(n)                                # portcgen's: offset * scale * MAXCOORD, in that order
    out = np.empty((n, 2), dtype=np.int64)
    for city in range(n):
        if at + 1 + 2 * 64 > len(numbers):                   # rejections beyond the stock: draw more
            numbers = _numbers(seed, 2 * len(numbers))
        centre = int(numbers[at] / PRANDMAX * centres)
        at += 1
        while True:
            v1, v2 = 2 * numbers[at] / PRANDMAX - 1.0, 2 * numbers[at + 1] / PRANDMAX - 1.0
            at += 2
            s = v1 * v1 + v2 * v2
            if s < 1.0:
                break
        t = np.sqrt(-2.0 * np.log(s) / s)
        out[city] = xy[centre] + np.trunc(np.array([v2 * t, v1 * t]) * scale * MAXCOORD).astype(np.int64)
    return out.astype(np.float64)


def uniform_reference(n: int) -> float:
    """The estimated optimal length of n uniform cities in portgen's square."""
    return UNIFORM_TOUR * np.sqrt(n * float(MAXCOORD) ** 2)
