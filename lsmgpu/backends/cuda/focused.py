"""Focused ant colony optimisation's ants on the GPU: the ``focused`` and ``focused_pheromone``
kernels of ``templates/skeleton/dontlook.cu.j2`` (lsmgpu/backends/focused.py holds the rules and
the NumPy reference they equal), one block an ant, every ant of an iteration in one launch; the
source, the best tour and the pheromone stay on the GPU, the host reads the ants' lengths."""
from __future__ import annotations

import numpy as np

from ..focused import CandidatePheromone
from .dontlook import CHAIN_BLOCK, CudaDontLook
from .driver import cuda, launch, pack, synchronize

__all__ = ["CudaFocusedAnts"]


class CudaFocusedAnts(CudaDontLook):
    """``ants`` ants walking a source tour and descending on the GPU (the protocol of
    lsmgpu.backends.focused.CpuFocusedAnts)."""

    what = "focused ant colony"
    block = CHAIN_BLOCK
    shares_rows = True
    descends_wide = False

    @staticmethod
    def city_array_bytes(n: int, k: int) -> int:
        """The source and best tours with their positions (4 n ints), eta, tau and weights (3 n k doubles)."""
        return 16 * n + 24 * n * k

    def __init__(self, rules, focus, distance, ants: int, beta: float, options):
        if rules.k > 32:
            raise ValueError(f"{self.what}: a warp weighs a city's candidates, at most 32; the rules have {rules.k}")
        super().__init__(rules, distance, ants, options)
        self.focus, self.ants = focus, self.rows
        self.kernel, self.pheromone_kernel = (self.module.get_function(f) for f in ("focused", "focused_pheromone"))
        self._allow_shared(self.kernel)
        n, K = self.n, rules.k
        self.source, self.source_pos, self.best, self.best_pos = (self.buffers.alloc(n * 4) for _ in range(4))
        self.eta_host = CandidatePheromone(rules.candidates, distance.between, beta).eta
        self.eta = self.buffers.upload(self.eta_host)
        self.tau, self.weights = self.buffers.alloc(n * K * 8), self.buffers.alloc(n * K * 8)
        cuda.memset_d8(self.queued, 0, self.rows * n)
        cuda.memset_d32(self.checks, 0, 2 * self.rows)
        self.length = 0.0

    def _focus(self, iteration: int = 0) -> bytes:
        f = self.focus
        return pack("3PdQiii4x", int(self.source), int(self.source_pos), int(self.weights), self.length,
                    f.seed % 2**64, int(iteration), f.moves, f.walk)            # sizeof(Focus) = 56

    def start(self, tour, length: float, tau: float) -> None:
        self._upload(tour, (self.source, self.source_pos), (self.best, self.best_pos))
        tau = np.full((self.n, self.rules.k), float(tau))
        cuda.memcpy_htod(self.tau, tau)
        cuda.memcpy_htod(self.weights, tau * self.eta_host)
        self.length = float(length)

    def build(self, iteration: int) -> np.ndarray:
        """Every ant's walk from the source and its descent: the ants' tour lengths."""
        launch(self.kernel, "focused ants", (self.rows, 1, 1), self.block, self._rows_struct() + self._focus(iteration),
               self.row_shared)
        synchronize("the focused ants", (self.rows,), (self.block,))
        return self.values()

    def follow(self, k: int, length: float) -> None:
        """Ant k's tour (k = -1: the best kept) is the next source."""
        n = self.n
        tour, pos = (self.best, self.best_pos) if k < 0 else (int(self.x) + 4 * n * k, int(self.pos) + 4 * n * k)
        cuda.memcpy_dtod(self.source, tour, 4 * n)
        cuda.memcpy_dtod(self.source_pos, pos, 4 * n)
        self.length = float(length)

    def adopt_best(self, tour) -> None:
        """A tour from elsewhere as the best kept."""
        self._upload(tour, (self.best, self.best_pos))

    def keep_best(self, k: int) -> None:
        n = self.n
        cuda.memcpy_dtod(self.best, int(self.x) + 4 * n * k, 4 * n)
        cuda.memcpy_dtod(self.best_pos, int(self.pos) + 4 * n * k, 4 * n)

    def deposit(self, keep: float, deposit: float, tau_min: float, tau_max: float) -> None:
        threads = 128
        launch(self.pheromone_kernel, "focused pheromone", ((self.n + threads - 1) // threads, 1, 1), threads,
               self._focus() + pack("4Pi4x4d", int(self.tau), int(self.eta), int(self.weights), int(self.cand), self.n,
                                    keep, deposit, tau_min, tau_max))

    def pheromone(self) -> np.ndarray:
        """tau (n, K), read back."""
        out = np.empty((self.n, self.rules.k))
        cuda.memcpy_dtoh(out, self.tau)
        return out

    def memory(self) -> dict:
        """What the ants keep between iterations, read back (as CpuFocusedAnts.memory)."""
        source, best = np.empty(self.n, np.int32), np.empty(self.n, np.int32)
        checks = np.empty(self.rows, np.int64)
        synchronize("the focused ants")
        cuda.memcpy_dtoh(source, self.source)
        cuda.memcpy_dtoh(best, self.best)
        cuda.memcpy_dtoh(checks, self.checks)
        return {"source": source, "length": self.length, "best": best, "tau": self.pheromone(), "checks": checks}

    def load_memory(self, memory: dict) -> None:
        """Take back what ``memory()`` wrote (this class's or CpuFocusedAnts')."""
        self._upload(memory["source"], (self.source, self.source_pos))
        self._upload(memory["best"], (self.best, self.best_pos))
        tau = np.ascontiguousarray(memory["tau"], dtype=np.float64)
        cuda.memcpy_htod(self.tau, tau)
        cuda.memcpy_htod(self.weights, tau * self.eta_host)
        cuda.memcpy_htod(self.checks, np.ascontiguousarray(memory["checks"], dtype=np.int64))
        self.length = float(memory["length"])

    def checked(self) -> int:
        """Cities the ants' descents have checked."""
        checks = np.empty(self.rows, np.int64)
        cuda.memcpy_dtoh(checks, self.checks)
        return int(checks.sum())

    def tour(self, k: int) -> np.ndarray:
        out = np.empty(self.n, np.int32)
        cuda.memcpy_dtoh(out, int(self.x) + 4 * self.n * int(k))
        return out

    def best_tour(self) -> np.ndarray:
        """The best tour kept, read back."""
        out = np.empty(self.n, np.int32)
        cuda.memcpy_dtoh(out, self.best)
        return out
