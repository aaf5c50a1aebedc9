"""Don't-look-bit descents as a population method's local search (lsmgpu/backends/dontlook.py).

``local_search=DontLookDescent()`` (or ``"dontlook"``) descends every tour a population method
hands over with 2-opt and Or-opt over candidate lists, one city at a time, looking only at the
cities whose edges changed (Bentley's don't-look bits): after a construction or a crossover the
work follows what changed, not n. On CUDA each tour's whole descent runs in one block (one
kernel for all of them); on the CPU the NumPy reference descends them one after another.
``polish=`` then descends the results with a chain of the batched descents (e.g. "auto": the
problem's ILS chain with candidate 3-opt): from a don't-look local optimum that chain has few
steps left to make.
"""
from __future__ import annotations

import numpy as np

from ..backends.dontlook import CpuDontLook, DontLookRules, dontlook_for
from ..backends.population import auto_chain, population_for
from ..neighbourhoods import Neighbourhood
from ..validation import check_count, check_flag

__all__ = ["ALPHA_CANDIDATES", "MAX_LK_DEPTH", "MAX_KOPT_DEPTH", "LK_MOVES", "GPU_LK_DEPTH", "DontLookDescent",
           "default_lk_depth"]

#: ``candidates="alpha"``: the 5 α-nearest cities, LKH's default (MAX_CANDIDATES = 5)
ALPHA_CANDIDATES = 5
#: the deepest LK chain of 2-opt moves (levels; the GPU block's shared memory holds them)
MAX_LK_DEPTH = 12
#: the deepest chain of 5-opt moves (levels): the GPU makes its kept moves on the tour, so a level
#: costs the block's shared memory about 50 bytes (its steps, undo, added edges, cities to queue)
MAX_KOPT_DEPTH = 400
#: the LK chain's moves: 2-opt moves (lsmgpu/backends/lk.py) or 5-opt basis moves (kopt.py)
LK_MOVES = (2, 5)
#: FocusedACO's LK chain on a GPU where ``lk_depth`` is not given (H100, 60 s:
#: FocusedACO's mean gap on nine TSPLIB instances of 1,002-18,512 cities 0.156 -> 0.075 %;
#: docs/benchmarks/tsp-depth.md; TourSegments has its own, SEGMENTS_LK_DEPTH); none on the
#: CPU, where the NumPy reference's chains are slow
GPU_LK_DEPTH = 6


def default_lk_depth(lk_depth, backend, gpu_depth: int = GPU_LK_DEPTH) -> int:
    """``lk_depth`` where given, else ``gpu_depth`` on a GPU and 0 on the CPU."""
    return (gpu_depth if backend.name != "cpu" else 0) if lk_depth is None else lk_depth


class DontLookDescent:
    """2-opt and Or-opt (segments up to ``segment`` cities) over ``candidates`` with don't-look bits.

    candidates : an (n, K) table of each city's candidates, an int K (the problem's
                 ``candidate_lists(K)``), "alpha" (the problem's 5 α-nearest, ALPHA_CANDIDATES:
                 a TSP's; their Held-Karp ascent runs in the search's set-up), or None: the
                 problem's ILS candidate lists (TSP: 10 quadrant neighbours)
    segment    : the longest segment Or-opt moves (default 3; 0: no Or-opt moves, 2-opt alone: the
                 MMAS paper's local search with 32 nearest candidates)
    or3        : also the Or-3opt moves (two adjacent stretches of any length swap places, found from
                 c's and then c4's candidates: 2 K^2 more moves a check; default False). Not for
                 descents after the chains' kicks, which are such swaps: it undoes 99 % of them
                 (benchmarks/probes/kicks_undone.py), so DontLookILS and TourSegments do not take it
    lk         : also the LK3 moves (Lin-Kernighan's third level: a 2-opt move continued from c4 to
                 one of its candidates and closed by a second reversal: 2 K^2 more moves a check;
                 default False)
    lk_depth   : d > 0: where none of those moves improves, Lin-Kernighan's variable-depth move, a
                 chain of up to d 2-opt moves from the city over its free end's candidates, searched
                 in stages of 3 levels (lsmgpu/backends/lk.py; at most MAX_LK_DEPTH, MAX_KOPT_DEPTH with
                 lk_move 5; default 0: none)
    lk_move    : the chain's moves: 2 (default), the 2-opt moves above; 5, LKH's sequential 5-opt
                 basis moves over each city's first 5 candidates, chained in stages of 4 levels, whose
                 levels in between need not be tours (lsmgpu/backends/kopt.py; LKH-3's trials gain
                 nothing without them); with candidates="alpha" their gain criterion reads the
                 ascent's penalties, as LKH's does. On a GPU templates/skeleton/kopt.cu.j2
    chain_alone: with lk_move 5, a check is the 5-opt chain alone: no 2-opt, Or-opt or other move
                 evaluated first (LKH's LK, whose 5-opt basis move holds the 2- and 3-opt moves; deep
                 chains reach better local optima so: docs/benchmarks/tsp-depth.md; default False)
    polish     : None, "auto" (the problem's ILS chain) or a Neighbourhood or a sequence of them:
                 a chain of batched descents run from the don't-look local optima
    """

    def __init__(self, candidates=None, *, segment: int = 3, or3: bool = False, lk: bool = False, lk_depth: int = 0,
                 lk_move: int = 2, chain_alone: bool = False, polish=None):
        if isinstance(candidates, str) and candidates != "alpha":
            raise ValueError(f"DontLookDescent: `candidates` must be an int, 'alpha', a table or None, "
                             f"got {candidates!r}")
        self.candidates = candidates if candidates is None or isinstance(candidates, (int, np.integer, str)) \
            else np.asarray(candidates)
        self.segment = check_count("DontLookDescent", "segment", segment, 0, 16)
        self.or3 = check_flag("DontLookDescent", "or3", or3)
        self.lk = check_flag("DontLookDescent", "lk", lk)
        if lk_move not in LK_MOVES or isinstance(lk_move, bool):
            raise ValueError(f"DontLookDescent: `lk_move` must be one of {LK_MOVES}, got {lk_move!r}")
        self.lk_move = int(lk_move)
        if self.lk_move == 2 and isinstance(lk_depth, (int, np.integer)) and MAX_LK_DEPTH < lk_depth <= MAX_KOPT_DEPTH:
            raise ValueError(f"DontLookDescent: `lk_depth` is at most {MAX_LK_DEPTH} for chains of 2-opt moves, got "
                             f"{lk_depth}; chains of 5-opt moves (lk_move=5) go to {MAX_KOPT_DEPTH}")
        deepest = MAX_KOPT_DEPTH if self.lk_move == 5 else MAX_LK_DEPTH
        self.lk_depth = check_count("DontLookDescent", "lk_depth", lk_depth, 0, deepest)
        self.chain_alone = check_flag("DontLookDescent", "chain_alone", chain_alone)
        if self.chain_alone and not (self.lk_move == 5 and self.lk_depth):
            raise ValueError(f"DontLookDescent: `chain_alone` needs chains of 5-opt moves (lk_move=5 and "
                             f"lk_depth > 0), got lk_move={self.lk_move}, lk_depth={self.lk_depth}")
        if isinstance(polish, Neighbourhood):
            polish = [polish]
        if not (polish is None or polish == "auto" or (isinstance(polish, (list, tuple)) and polish
                                                        and all(isinstance(nb, Neighbourhood) for nb in polish))):
            raise TypeError(f"DontLookDescent: `polish` must be None, 'auto', a Neighbourhood or a sequence of them, "
                            f"got {polish!r}")
        self.polish = polish

    def _chain(self, problem) -> list:
        """The polishing chain's problems (one per neighbourhood), or []."""
        if self.polish is None:
            return []
        chain = auto_chain(problem) if self.polish == "auto" else list(self.polish)
        return [problem.with_neighbourhood(nb) for nb in chain]

    def bound(self, problem) -> DontLookRules:
        """The rules for ``problem`` (ValueError / TypeError naming what it lacks)."""
        if problem.edge_distance() is None:
            raise TypeError(f"DontLookDescent: {problem.name} has no edge distance (Problem.edge_distance); "
                            "it descends tours")
        table = self.candidates
        if isinstance(table, str):                  # "alpha", made when first read
            return DontLookRules(lambda: problem.candidate_lists(ALPHA_CANDIDATES, "alpha"), self.segment, self.or3,
                                 self.lk, self.lk_depth, self.lk_move, problem.penalties, self.chain_alone)
        if isinstance(table, (int, np.integer)):
            k = check_count("DontLookDescent", "candidates", table, 1, problem.n - 1)
            table = problem.candidate_lists(k)
            if table is None:
                raise ValueError(f"DontLookDescent: {problem.name} has no candidate lists; "
                                 "give `candidates` as a table")
        if table is None:
            ils = problem.default_ils() or {}
            table = getattr(ils.get("neighbourhood"), "candidates", None)
            if table is None:
                raise ValueError(f"DontLookDescent: {problem.name} has no candidate lists; give `candidates`")
        if table.ndim != 2 or table.shape[0] != problem.n or table.shape[1] < 1 or table.dtype.kind not in "iu":
            raise ValueError(f"DontLookDescent: `candidates` must be an ({problem.n}, K) integer table, got "
                             f"{table.shape} {table.dtype}")
        if table.min() < 0 or table.max() >= problem.n:
            raise ValueError(f"DontLookDescent: `candidates` must hold cities 0 .. {problem.n - 1}")
        return DontLookRules(table, self.segment, self.or3, self.lk, self.lk_depth, self.lk_move,
                             chain_alone=self.chain_alone)

    def population(self, backend, problem, rows: int, rng):
        """The rows that run this descent (and its polish) on ``backend`` (``rng`` unused: the
        descents draw nothing)."""
        first = dontlook_for(backend, "dontlook", CpuDontLook, self.bound(problem), problem.edge_distance(), rows,
                             announce="DontLookDescent", what="the descents")
        chain = self._chain(problem)
        if not chain:
            return first
        return PolishedRows(first, population_for(backend, chain, rows, announce="DontLookDescent's polish"))

    def __repr__(self):
        table = self.candidates
        table = "problem's" if table is None else repr(table) if isinstance(table, (int, np.integer, str)) \
            else f"{table.shape[1]} per city"
        polish = "" if self.polish is None else f", polish={self.polish!r}"
        moves = (", or3=True" if self.or3 else "") + (", lk=True" if self.lk else "") \
            + (f", lk_depth={self.lk_depth}" if self.lk_depth else "") + (", lk_move=5" if self.lk_move == 5 else "") \
            + (", chain_alone=True" if self.chain_alone else "")
        return f"DontLookDescent(candidates={table}, segment={self.segment}{moves}{polish})"


class PolishedRows:
    """Don't-look descents, then a chain of batched descents from their local optima (the
    population protocol as the population methods use it)."""

    def __init__(self, first, then):
        self.first, self.then, self.rows = first, then, first.rows
        self.device = getattr(first, "device", "")

    def load(self, xs) -> None:
        self.first.load(xs)

    def descend(self, rows, rule: str = "best", deadline: float | None = None):
        made, evaluated, finished = self.first.descend(rows, rule, deadline)
        self.then.load(self.first.solutions())
        if not finished:
            return made, evaluated, False
        more, seen, finished = self.then.descend(rows, rule, deadline)
        return made + more, evaluated + seen, finished

    def solutions(self) -> np.ndarray:
        return self.then.solutions()

    def values(self) -> np.ndarray:
        return self.then.values()

    def close(self) -> None:
        self.first.close()
        self.then.close()
