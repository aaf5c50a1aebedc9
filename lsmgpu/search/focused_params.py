"""Focused ACO's options (FocusedParams, checked at construction) and their measured defaults,
apart from the search (lsmgpu/search/focused.py) that reads them."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..validation import check_count, check_number

__all__ = ["FocusedParams", "default_ants", "default_moves"]


#: The defaults below are the measured best on the H100 (runs and figures:
#: docs/benchmarks/ant-colonies.md, "Focused ACO").
#: cities an ant moves when `moves` is not given: 128, but 64 from MOVES_FEWER_FROM cities without
#: the LK chain (lk_depth 0) and 192 from MOVES_MORE_FROM cities with it (60 s: pla85900 0.266 ->
#: 0.221 % over three seeds, pla33810 0.175 -> 0.103 %; at 15 s up to 18,512 cities 128 is ahead;
#: docs/benchmarks/tsp-depth.md, "More moved cities from 30,000 cities")
MOVES, MOVES_FEWER, MOVES_FEWER_FROM, MOVES_MORE, MOVES_MORE_FROM = 128, 64, 10_000, 192, 30_000
#: whether the ants' descents make Or-3opt moves when `or3` is not given (ahead on all five instances
#: measured at the MMAS paper's times)
OR3 = True
#: iterations without the colony's best improving before a restart when `restart_after` is not
#: given (H100, 15 s, nine TSPLIB instances of 1,002-18,512 cities, two seeds: mean gap 0.104 ->
#: 0.097 %; the runs without a restart unchanged)
RESTART_AFTER = 300


def default_moves(n: int, lk_depth: int) -> int:
    """Cities an ant moves on a tour of ``n`` cities, its descents' LK chain ``lk_depth`` deep (0: none)."""
    if not lk_depth:
        return MOVES_FEWER if n >= MOVES_FEWER_FROM else MOVES
    return MOVES_MORE if n >= MOVES_MORE_FROM else MOVES


def default_ants(n: int) -> int:
    """FACO's: 4 sqrt(n) rounded to a multiple of 64, at least 64."""
    return max(64, 64 * round(4 * math.sqrt(n) / 64))


@dataclass(frozen=True)
class FocusedParams:
    """Focused ACO's own options (FocusedACO's docstring says what each does); None: the
    defaults that depend on the instance's size."""

    ants: int | None = None
    moves: int | None = None
    rho: float = 0.5
    p_best: float = 0.1
    beta: float = 1.0
    global_best_source: float = 0.01
    walk: int | None = None
    candidates: object = None
    segment: int = 3
    or3: bool = OR3
    lk: bool = False
    lk_depth: int | None = None
    lk_move: int = 2
    chain_alone: bool = False
    bridges: bool = False
    ant_lists: int | None = None
    restart_after: int | None = RESTART_AFTER
    colonies: int = 1

    def __post_init__(self):
        owner = "FocusedACO"
        for name, low, high in (("ants", 1, 2**20), ("moves", 1, 2**31 - 1), ("walk", 1, 2**31 - 1),
                                ("ant_lists", 1, 2**31 - 1),
                                ("restart_after", 1, 2**31 - 1), ("colonies", 1, 64)):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_count(owner, name, getattr(self, name), low, high))
        for name, ok, bounds in (("rho", lambda v: 0 < v < 1, "in (0, 1)"),
                                 ("p_best", lambda v: 0 < v < 1, "in (0, 1)"),
                                 ("beta", lambda v: v >= 0, ">= 0"),
                                 ("global_best_source", lambda v: 0 <= v <= 1, "in [0, 1]")):
            value = check_number(owner, name, getattr(self, name))
            if not ok(value):
                raise ValueError(f"{owner}: `{name}` must be {bounds}, got {value!r}")
            object.__setattr__(self, name, float(value))
