"""Focused ant colony optimisation's ants on the GPU: the ``focused`` and ``focused_pheromone``
kernels of ``templates/skeleton/dontlook.cu.j2`` (lsmgpu/backends/focused.py holds the rules and
the NumPy reference they equal), one block an ant, every ant of an iteration in one launch; the
source, the best tour and the pheromone stay on the GPU, the host reads the ants' lengths."""
from __future__ import annotations

import numpy as np

from ..focused import CandidatePheromone
from .dontlook import CHAIN_BLOCK, KOPT_CHAIN_BLOCK, CudaDontLook
from .driver import cuda, download, launch, pack, prebuild_first, synchronize

__all__ = ["CudaFocusedAnts"]


class CudaFocusedAnts(CudaDontLook):
    """``ants`` ants walking their colony's source tour and descending on the GPU (the protocol
    of lsmgpu.backends.focused.CpuFocusedAnts)."""

    what = "focused ant colony"
    block = CHAIN_BLOCK
    kopt_block = KOPT_CHAIN_BLOCK
    shares_rows = True
    descends_wide = False
    kernels = ("focused", "focused_pheromone")
    shared_kernels = ("focused",)

    def city_array_bytes(self, n: int, k: int) -> int:
        """Each colony's source and best tours with their positions (4 n ints), tau and weights
        (2 n k doubles); eta (n k doubles)."""
        return self.focus.colonies * (16 * n + 16 * n * k) + 8 * n * k

    def _lay_out(self, rules, distance, ants: int, options, chains: bool = False) -> tuple[str, str]:
        """CudaDontLook's, the colonies' ants per colony and a warp's candidates checked first
        (``focus`` set before: the memory the colonies' arrays need depends on it)."""
        if rules.k > 32:
            raise ValueError(f"{self.what}: a warp weighs a city's candidates, at most 32; the rules have {rules.k}")
        self.per_colony = self.focus.per_colony(int(ants), self.what)
        return super()._lay_out(rules, distance, ants, options, chains)

    @classmethod
    def prebuild(cls, rules, focus, distance, ants: int, beta: float, options) -> None:
        """Starts building the module that ``cls(rules, focus, distance, ants, beta, options)`` loads
        in the background (driver.prebuild_first: the full build and a quick one), so that a first run
        builds the ants' kernels beside its start's descent rather than after it; nothing on the
        GPU is taken."""
        layout = cls.__new__(cls)
        layout.focus = focus
        prebuild_first(*layout._lay_out(rules, distance, ants, options))

    def __init__(self, rules, focus, distance, ants: int, beta: float, options):
        self.focus = focus
        super().__init__(rules, distance, ants, options)
        self.ants = self.rows
        n, K, C = self.n, rules.k, focus.colonies
        self.source, self.source_pos, self.best, self.best_pos = (self.buffers.alloc(C * n * 4) for _ in range(4))
        self.eta_host = CandidatePheromone(rules.candidates, distance.between, beta).eta
        self.eta = self.buffers.upload(self.eta_host)
        self.tau, self.weights = self.buffers.alloc(C * n * K * 8), self.buffers.alloc(C * n * K * 8)
        self.source_lengths = self.buffers.alloc(C * 8)
        cuda.memset_d8(self.queued, 0, self.rows * n)
        cuda.memset_d32(self.checks, 0, 2 * self.rows)
        self.lengths = np.zeros(C)

    def _tours(self, colony: int) -> tuple[int, int, int, int]:
        """The colony's source, its positions, its best tour and their positions (device addresses)."""
        offset = 4 * self.n * int(colony)
        return tuple(int(buffer) + offset for buffer in (self.source, self.source_pos, self.best, self.best_pos))

    def _focus(self, iteration: int = 0) -> bytes:
        f = self.focus
        return pack("4PQiiii", int(self.source), int(self.source_pos), int(self.weights), int(self.source_lengths),
                    f.seed % 2**64, int(iteration), f.moves, f.walk, self.per_colony)      # sizeof(Focus) = 56

    def start(self, tour, length: float, tau: float, colony: int = 0) -> None:
        source, source_pos, best, best_pos = self._tours(colony)
        self._upload(tour, (source, source_pos), (best, best_pos))
        tau = np.full((self.n, self.rules.k), float(tau))
        offset = 8 * self.n * self.rules.k * int(colony)
        cuda.memcpy_htod(int(self.tau) + offset, tau)
        cuda.memcpy_htod(int(self.weights) + offset, tau * self.eta_host)
        self.lengths[colony] = float(length)

    def build(self, iteration: int) -> np.ndarray:
        """Every ant's walk from its colony's source and its descent: the ants' tour lengths."""
        cuda.memcpy_htod(self.source_lengths, self.lengths)
        launch(self._kernel("focused"), "focused ants", (self.rows, 1, 1), self.block,
               self._rows_struct() + self._focus(iteration), self.row_shared)
        synchronize("the focused ants", (self.rows,), (self.block,))
        return self.values()

    def follow(self, k: int, length: float, colony: int = 0) -> None:
        """Ant k's tour (k = -1: the colony's best kept) is the colony's next source."""
        n = self.n
        source, source_pos, best, best_pos = self._tours(colony)
        tour, pos = (best, best_pos) if k < 0 else (int(self.x) + 4 * n * k, int(self.pos) + 4 * n * k)
        cuda.memcpy_dtod(source, tour, 4 * n)
        cuda.memcpy_dtod(source_pos, pos, 4 * n)
        self.lengths[colony] = float(length)

    def adopt_best(self, tour, colony: int = 0) -> None:
        """A tour from elsewhere as the colony's best kept."""
        self._upload(tour, self._tours(colony)[2:])

    def keep_best(self, k: int, colony: int = 0) -> None:
        n = self.n
        _, _, best, best_pos = self._tours(colony)
        cuda.memcpy_dtod(best, int(self.x) + 4 * n * k, 4 * n)
        cuda.memcpy_dtod(best_pos, int(self.pos) + 4 * n * k, 4 * n)

    def deposit(self, keep: float, deposit: float, tau_min: float, tau_max: float, colony: int = 0) -> None:
        threads = 128
        grid = ((self.n + threads - 1) // threads, 1, 1)
        launch(self._kernel("focused_pheromone"), "focused pheromone", grid, threads,
               self._focus() + pack("4Pii4d", int(self.tau), int(self.eta), int(self.weights), int(self.cand), self.n,
                                    int(colony), keep, deposit, tau_min, tau_max))

    def pheromone(self, colony: int = 0) -> np.ndarray:
        """The colony's tau (n, K), read back."""
        return download(int(self.tau) + 8 * self.n * self.rules.k * int(colony), (self.n, self.rules.k), np.float64)

    def memory(self) -> dict:
        """What the ants keep between iterations, read back (as CpuFocusedAnts.memory)."""
        C, n = self.focus.colonies, self.n
        source, best = np.empty((C, n), np.int32), np.empty((C, n), np.int32)
        tau, checks = np.empty((C, n, self.rules.k)), np.empty(self.rows, np.int64)
        synchronize("the focused ants")
        for buffer, out in ((self.source, source), (self.best, best), (self.tau, tau), (self.checks, checks)):
            cuda.memcpy_dtoh(out, buffer)
        return {"source": source, "lengths": self.lengths.copy(), "best": best, "tau": tau, "checks": checks}

    def load_memory(self, memory: dict) -> None:
        """Take back what ``memory()`` wrote (this class's or CpuFocusedAnts')."""
        for colony in range(self.focus.colonies):
            source, source_pos, best, best_pos = self._tours(colony)
            self._upload(memory["source"][colony], (source, source_pos))
            self._upload(memory["best"][colony], (best, best_pos))
        tau = np.ascontiguousarray(memory["tau"], dtype=np.float64)
        cuda.memcpy_htod(self.tau, tau)
        cuda.memcpy_htod(self.weights, tau * self.eta_host)
        cuda.memcpy_htod(self.checks, np.ascontiguousarray(memory["checks"], dtype=np.int64))
        self.lengths[:] = memory["lengths"]

    def checked(self) -> int:
        """Cities the ants' descents have checked."""
        return int(download(self.checks, self.rows, np.int64).sum())

    def tour(self, k: int) -> np.ndarray:
        return download(int(self.x) + 4 * self.n * int(k), self.n, np.int32)

    def best_tour(self, colony: int = 0) -> np.ndarray:
        """The colony's best tour kept, read back."""
        return download(self._tours(colony)[2], self.n, np.int32)
