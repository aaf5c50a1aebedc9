"""Pheromone memories on the host, in float32 as on the GPU: the NumPy reference of the colonies.

Every update is ``tau <- tau * keep + add`` on a list of (row, item) cells, each cell updated
once per time it appears, in list order: the ACS local update (keep = 1 - xi, add = xi tau0),
the ACS global update (keep = 1 - rho, add = rho / L) and the MMAS deposit (keep = 1). The
arithmetic is two float32 roundings, a product then a sum, which the GPU's kernels write with
``__fmul_rn`` / ``__fadd_rn`` (no fused multiply-add), so both memories hold the same bits.

* :class:`MatrixPheromone`: the n x n matrix.
* :class:`SelectivePheromone`: the selective pheromone memory of Skinderowicz 2016 (ACS-SPM):
  per row, ``slots`` (item, tau) pairs; every other item reads ``tau_min``; updating an item not
  held overwrites the least recently added pair (a circular buffer, ``tail`` the newest) with
  the update applied to ``tau_min``. ACS's local update moves tau towards tau0 = tau_min, so on
  an item not held it would store tau_min again: it stores nothing (``insert=False``); else
  every exploring ant would push the best tour's pairs out of the memory.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MatrixPheromone", "SelectivePheromone", "update_value"]


def update_value(tau, keep, add):
    """``tau * keep + add`` rounded as the GPU rounds it (float32 product, then float32 sum)."""
    return (np.float32(tau) * np.float32(keep)).astype(np.float32) + np.float32(add)


class MatrixPheromone:
    """tau as an (n, n) float32 matrix."""

    def __init__(self, n: int, tau: float):
        self.tau = np.full((n, n), np.float32(tau), dtype=np.float32)

    def fill(self, tau: float) -> None:
        self.tau.fill(np.float32(tau))

    def values(self, rows: np.ndarray, items: np.ndarray) -> np.ndarray:
        """tau[rows, items] (rows broadcast against items)."""
        return self.tau[rows, items]

    def update(self, rows, items, keep: float, add: float, insert: bool = True) -> None:
        """``tau <- tau * keep + add`` once per (row, item) occurrence (``insert``: see the
        selective memory; the matrix holds every cell)."""
        cells = np.asarray(rows, dtype=np.int64) * self.tau.shape[1] + np.asarray(items, dtype=np.int64)
        cells, counts = np.unique(cells.ravel(), return_counts=True)
        flat = self.tau.reshape(-1)
        for times in range(1, int(counts.max(initial=0)) + 1):
            again = cells[counts >= times]
            flat[again] = update_value(flat[again], keep, add)

    def evaporate(self, keep: float) -> None:
        self.tau *= np.float32(keep)

    def clamp(self, low: float, high: float) -> None:
        np.clip(self.tau, np.float32(low), np.float32(high), out=self.tau)

    def matrix(self) -> np.ndarray:
        return self.tau.copy()


class SelectivePheromone:
    """The selective pheromone memory: ``slots`` (item, tau) pairs a row, ``tau_min`` elsewhere."""

    def __init__(self, n: int, tau_min: float, slots: int = 8):
        self.n, self.slots, self.tau_min = n, int(slots), np.float32(tau_min)
        self.fill(tau_min)

    def fill(self, tau: float) -> None:
        """Forget every pair: all of tau reads ``tau_min`` (a selective memory holds nothing else)."""
        self.items = np.full((self.n, self.slots), -1, dtype=np.int32)
        self.taus = np.full((self.n, self.slots), self.tau_min, dtype=np.float32)
        self.tail = np.full(self.n, -1, dtype=np.int32)

    def values(self, rows: np.ndarray, items: np.ndarray) -> np.ndarray:
        rows, items = np.broadcast_arrays(np.asarray(rows), np.asarray(items))
        held = self.items[rows] == items[..., None]
        return np.where(held.any(-1), (self.taus[rows] * held).sum(-1, dtype=np.float32), self.tau_min)

    def row_values(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows)
        out = np.full((len(rows), self.n), self.tau_min, dtype=np.float32)
        pairs = self.items[rows] >= 0
        lines = np.broadcast_to(np.arange(len(rows))[:, None], pairs.shape)
        out[lines[pairs], self.items[rows][pairs]] = self.taus[rows][pairs]
        return out

    def update(self, rows, items, keep: float, add: float, insert: bool = True) -> None:
        """Each (row, item) in order: its pair updated, or (``insert``) a new pair from tau_min
        over the oldest."""
        for row, item in zip(np.ravel(rows).tolist(), np.ravel(items).tolist()):
            slot = np.flatnonzero(self.items[row] == item)
            if slot.size:
                self.taus[row, slot[0]] = update_value(self.taus[row, slot[0]], keep, add)
            elif insert:
                tail = (self.tail[row] + 1) % self.slots
                self.tail[row] = tail
                self.items[row, tail] = item
                self.taus[row, tail] = update_value(self.tau_min, keep, add)

    def matrix(self) -> np.ndarray:
        return self.row_values(np.arange(self.n))
