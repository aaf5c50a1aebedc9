"""The tour segments' chains on the GPU: the don't-look ILS chains' kernel with every chain on its
own segment's cities (SEGMENT_ROWS; lsmgpu/backends/segments.py holds the cut and the NumPy
reference this equals)."""
from __future__ import annotations

import numpy as np

from ...problem import EdgeDistance
from ..dontlook import DontLookRules
from ..segments import SegmentCut, fixed_end_source
from .dontlook_chains import CudaChains
from .driver import cuda, download

__all__ = ["CudaSegmentChains"]


class CudaSegmentChains(CudaChains):
    """``rows`` chains of ``m`` cities each on the GPU, one block a segment of the cut (``set_cut``)
    with the descent's moves of ``rules`` and the problem's ``distance`` (a table of per-city rows:
    coordinates)."""

    what = "tour segments"
    per_row_cities = True

    def __init__(self, rules: DontLookRules, kicks, distance: EdgeDistance, rows: int, m: int, options):
        n = len(rules.candidates)
        width = distance.table.size // n
        blocks = rules.with_candidates(np.zeros((rows * m, rules.k), np.int32))
        local = EdgeDistance(distance.between, np.zeros(rows * m * width, distance.table.dtype),
                             lambda: fixed_end_source(distance.device_source()))
        super().__init__(blocks, kicks, local, rows, options)

    def set_cut(self, cut: SegmentCut) -> None:
        """The segments the next ``load`` starts from: their candidates and table rows uploaded."""
        self.cut = cut
        cuda.memcpy_htod(self.cand, cut.candidates)
        cuda.memcpy_htod(self.table, cut.table)

    def _tour_lengths(self, xs) -> np.ndarray:
        return self.cut.lengths(xs)

    def best_solutions(self, rows) -> np.ndarray:
        """The best tours of the chains ``rows``, in that order (all of them read in one copy)."""
        out = download(self.best_x, (self.rows, self.n), np.int32)
        return out[np.asarray(rows, dtype=np.int64)]
