"""Don't-look-bit descents as a population method's local search (lsmgpu/backends/dontlook.py).

``local_search=DontLookDescent()`` (or ``"dontlook"``) descends every tour a population method
hands over with 2-opt and Or-opt over candidate lists, one city at a time, looking only at the
cities whose edges changed (Bentley's don't-look bits): after a construction or a crossover the
work follows what changed, not n. On CUDA each tour's whole descent runs in one block (one
kernel for all of them); on the CPU the NumPy reference descends them one after another.
"""
from __future__ import annotations

import numpy as np

from ..backends.dontlook import DontLookRules, dontlook_for
from ..validation import check_count

__all__ = ["DontLookDescent"]


class DontLookDescent:
    """2-opt and Or-opt (segments up to ``segment`` cities) over ``candidates`` with don't-look bits.

    candidates : an (n, K) table of each city's candidates, or None: the problem's ILS candidate
                 lists (TSP: 10 quadrant neighbours)
    segment    : the longest segment Or-opt moves (default 3)
    """

    def __init__(self, candidates=None, *, segment: int = 3):
        self.candidates = None if candidates is None else np.asarray(candidates)
        self.segment = check_count("DontLookDescent", "segment", segment, 1, 16)

    def bound(self, problem) -> DontLookRules:
        """The rules for ``problem`` (ValueError / TypeError naming what it lacks)."""
        if problem.edge_distance() is None:
            raise TypeError(f"DontLookDescent: {problem.name} has no edge distance (Problem.edge_distance); "
                            "it descends tours")
        table = self.candidates
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
        return DontLookRules(table, self.segment)

    def population(self, backend, problem, rows: int, rng):
        """The rows that run this descent on ``backend`` (``rng`` unused: the descent draws nothing)."""
        return dontlook_for(backend, self.bound(problem), problem.edge_distance(), rows,
                            announce="DontLookDescent")

    def __repr__(self):
        table = "problem's" if self.candidates is None else f"{self.candidates.shape[1]} per city"
        return f"DontLookDescent(candidates={table}, segment={self.segment})"
