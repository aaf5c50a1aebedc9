"""The don't-look ILS chains on the GPU: the ``chains`` and ``adopt`` kernels of
``templates/skeleton/dontlook.cu.j2`` (dontlook_chains.cu.j2 included) over the don't-look rows (lsmgpu/backends/cuda/dontlook.py),
one block a chain; lsmgpu/backends/dontlook_chains.py holds the rules and the NumPy reference."""
from __future__ import annotations

import numpy as np

from .dontlook import CHAIN_BLOCK, KOPT_CHAIN_BLOCK, CudaDontLook
from .driver import cuda, download, launch, pack, synchronize

__all__ = ["CudaChains"]


class CudaChains(CudaDontLook):
    """``rows`` iterated local search chains of don't-look descents on the GPU, one block a chain
    (lsmgpu/backends/dontlook_chains.py holds the rules and the reference)."""

    what = "don't-look ILS"
    block = CHAIN_BLOCK
    kopt_block = KOPT_CHAIN_BLOCK
    shares_rows = True
    descends_wide = False
    kernels = ("descend", "chains", "adopt")
    shared_kernels = ("chains",)

    def __init__(self, rules, kicks, distance, rows: int, options):
        super().__init__(rules, distance, rows, options, chains=True)
        self.kick_rules = kicks
        B, n = self.rows, self.n
        self.best_x = self.buffers.alloc(B * n * 4)
        self.best, self.kicks, self.idle = self.buffers.alloc(B * 8), self.buffers.alloc(B * 4), self.buffers.alloc(B * 4)
        self.sources = self.buffers.alloc(B * 4)
        self.spans, self.walks = (self.buffers.upload(v) for v in kicks.for_rows(B))

    def _chains_struct(self) -> bytes:
        k = self.kick_rules
        pointers = (self.best_x, self.best, self.kicks, self.idle, self.spans, self.walks)
        return pack("6PQi4x", *(int(p) for p in pointers), k.seed % 2**64, k.limit)   # sizeof(Chains) = 64

    def load(self, xs, at_optimum: bool = False) -> None:
        """Start tours (rows x n), every city queued and no best yet; ``at_optimum``: none, each its best."""
        super().load(xs, np.empty(0, np.int32) if at_optimum else None)
        cuda.memcpy_dtod(self.best_x, self.x, self.rows * self.n * 4)                  # the start
        cuda.memcpy_htod(self.best, self.values() if at_optimum else np.full(self.rows, np.inf))
        cuda.memset_d32(self.kicks, 0, self.rows)
        cuda.memset_d32(self.idle, 0, self.rows)

    def advance(self, budget: int, deadline: float | None = None) -> bool:
        """Up to ``budget`` checks of every chain (a launch of milliseconds: the ``deadline`` is
        the caller's to look at between launches); whether every chain has ended."""
        launch(self._kernel("chains"), "don't-look ILS chains", (self.rows, 1, 1), self.block,
               self._rows_struct() + self._chains_struct() + pack("q", int(budget)), self.row_shared)
        synchronize("the don't-look ILS chains", (self.rows,), (self.block,))
        return bool(download(self.idle, self.rows, np.int32).all())

    def adopt(self, sources) -> None:
        """Chain k goes on from chain sources[k]'s best tour where sources[k] >= 0 (no source adopts)."""
        cuda.memcpy_htod(self.sources, np.ascontiguousarray(sources, dtype=np.int32))
        launch(self._kernel("adopt"), "don't-look ILS adopt", (self.rows, 1, 1), self.block,
               self._rows_struct() + self._chains_struct() + pack("P", int(self.sources)))
        synchronize("the don't-look ILS islands", (self.rows,), (self.block,))

    def adopt_tour(self, k: int, tour, length: float) -> None:
        """Chain k goes on from ``tour`` (of that ``length``) as its best and its tour."""
        n, k = self.n, int(k)
        row = int(self.x) + 4 * n * k
        self._upload(tour, (row, int(self.pos) + 4 * n * k))
        cuda.memcpy_dtod(int(self.best_x) + 4 * n * k, row, 4 * n)
        for buffer in (self.current, self.best):
            cuda.memcpy_htod(int(buffer) + 8 * k, np.array([length], np.float64))
        cuda.memset_d8(int(self.queued) + n * k, 0, n)
        cuda.memset_d32(int(self.head) + 4 * k, 0, 1)
        cuda.memset_d32(int(self.count) + 4 * k, 0, 1)
        kicks = download(int(self.kicks) + 4 * k, 1, np.int32)
        cuda.memset_d32(int(self.idle) + 4 * k, int(kicks[0] >= self.kick_rules.limit), 1)

    def bests(self) -> np.ndarray:
        return download(self.best, self.rows, np.float64)

    def best_solution(self, k: int) -> np.ndarray:
        return download(int(self.best_x) + 4 * self.n * int(k), self.n, np.int32)

    def best_solutions(self, rows) -> np.ndarray:
        """The best tours of the chains ``rows``, in that order."""
        return np.stack([self.best_solution(k) for k in rows]) if len(rows) else np.empty((0, self.n), np.int32)

    def _state_buffers(self) -> dict:
        """The device buffers a chain's state lives in between rounds: name -> (buffer, bytes a row)."""
        n = self.n
        return {"x": (self.x, 4 * n), "pos": (self.pos, 4 * n), "queue": (self.queue, 4 * n), "queued": (self.queued, n),
                "head": (self.head, 4), "count": (self.count, 4), "current": (self.current, 8), "made": (self.made, 8),
                "checks": (self.checks, 8), "best_x": (self.best_x, 4 * n), "best": (self.best, 8),
                "kicks": (self.kicks, 4), "idle": (self.idle, 4)}

    def memory(self) -> dict:
        """Every chain's state between rounds, the device buffers read back as bytes (a checkpoint
        of these chains, read back into chains of the same shape on a GPU)."""
        synchronize("the don't-look ILS chains")
        buffers = self._state_buffers().items()
        return {name: download(buffer, self.rows * row, np.uint8) for name, (buffer, row) in buffers}

    def load_memory(self, memory: dict) -> None:
        """Take back what ``memory()`` wrote; a chain is idle where it has made this run's kicks
        (a resumed run may allow more than the checkpointed one did)."""
        kicks = np.ascontiguousarray(memory["kicks"], dtype=np.uint8).view(np.int32)
        memory = {**memory, "idle": (kicks >= self.kick_rules.limit).astype(np.int32).view(np.uint8)}
        for name, (buffer, row) in self._state_buffers().items():
            data = np.ascontiguousarray(memory[name], dtype=np.uint8)
            if data.size != self.rows * row:
                raise ValueError(f"don't-look ILS chains: a checkpoint's `{name}` holds {data.size} bytes, "
                                 f"these chains {self.rows * row}")
            cuda.memcpy_htod(buffer, data)

    def counters(self) -> dict:
        """Per chain: kicks made, cities checked, improving moves applied."""
        return {"kicks": download(self.kicks, self.rows, np.int32).astype(np.int64),
                "checks": download(self.checks, self.rows, np.int64), "moves": download(self.made, self.rows, np.int64)}
