"""Focused ant colony optimisation's ants on the GPU: the ``focused`` kernel of
``templates/skeleton/dontlook.cu.j2`` (lsmgpu/backends/focused.py holds the rules and the NumPy
reference the kernel equals), one block an ant, every ant of an iteration in one launch."""
from __future__ import annotations

import numpy as np

from .dontlook import BLOCK, CudaDontLook
from .driver import cuda, launch, pack, synchronize

__all__ = ["CudaFocusedAnts"]


class CudaFocusedAnts(CudaDontLook):
    """``ants`` ants walking a source tour and descending on the GPU."""

    what = "focused ant colony"

    def __init__(self, rules, focus, distance, ants: int, options):
        if rules.k > 32:
            raise ValueError(f"{self.what}: a warp weighs a city's candidates, at most 32; the rules have {rules.k}")
        super().__init__(rules, distance, ants, options)
        self.focus, self.ants = focus, self.rows
        self.kernel = self.module.get_function("focused")
        n = self.n
        self.source, self.source_pos = self.buffers.alloc(n * 4), self.buffers.alloc(n * 4)
        self.weights = self.buffers.alloc(n * rules.k * 8)
        cuda.memset_d8(self.queued, 0, self.rows * n)
        cuda.memset_d32(self.checks, 0, 2 * self.rows)
        self.length = 0.0

    def set_source(self, tour, length: float) -> None:
        """The tour (of that ``length``) every ant of the next iteration starts from."""
        tour = np.ascontiguousarray(tour, dtype=np.int32)
        pos = np.empty_like(tour)
        pos[tour] = np.arange(len(tour), dtype=np.int32)
        cuda.memcpy_htod(self.source, tour)
        cuda.memcpy_htod(self.source_pos, pos)
        self.length = float(length)

    def build(self, iteration: int, weights: np.ndarray) -> np.ndarray:
        """Every ant's walk from the source and its descent: the ants' tour lengths."""
        cuda.memcpy_htod(self.weights, np.ascontiguousarray(weights, dtype=np.float64))
        f = self.focus
        focus = pack("3PdQiii4x", int(self.source), int(self.source_pos), int(self.weights), self.length,
                     f.seed % 2**64, int(iteration), f.new_edges, f.walk)        # sizeof(Focus) = 56
        launch(self.kernel, "focused ants", (self.rows, 1, 1), BLOCK, self._rows_struct() + focus)
        synchronize("the focused ants", (self.rows,), (BLOCK,))
        return self.values()

    def checked(self) -> int:
        """Cities the ants' descents have checked."""
        checks = np.empty(self.rows, np.int64)
        cuda.memcpy_dtoh(checks, self.checks)
        return int(checks.sum())

    def tour(self, k: int) -> np.ndarray:
        out = np.empty(self.n, np.int32)
        cuda.memcpy_dtoh(out, int(self.x) + 4 * self.n * int(k))
        return out
