"""The ant colonies on the GPU: the construction and pheromone kernels of
``templates/skeleton/colony.cu.j2`` with their arrays (lsmgpu/backends/colony.py holds the rules
and the NumPy reference these kernels equal).

One thread block builds one ant's solution; its visited set sits in shared memory where it fits
(opting in to the GPU's large shared memory), else in a global scratch row per ant. One-warp ants
reading precomputed candidate lists share a block instead, the lists copied into its shared
memory where they fit beside the ants' visited sets (``ants_per_block``). The
pheromone (an n x n float32 matrix, or the selective memory's n x slots pairs) and eta^beta stay
on the GPU; the solutions come back to the host for the local search and the bookkeeping. Without
a local update (MMAS) each construction first computes the weights tau^alpha * eta^beta once
(the MMAS paper's choice_info: n x n, and n x k (candidate, weight) pairs), which the ants read.
"""
from __future__ import annotations

import numpy as np

from ...budget import check_deadline
from ...kernels import render_skeleton
from ...problem import ColonyModel
from ..colony import Construction
from ..pheromone import MatrixPheromone, SelectivePheromone
from .driver import DeviceBuffers, cuda, download, launch, load_module, pack, synchronize

__all__ = ["CudaColony", "colony_bytes", "warps_for"]

#: the share of the GPU's free memory a colony may take
MEMORY_SHARE = 0.9
UPDATE_BLOCK = 256
#: the construction kernel's own shared arrays (bytes, rounded up)
KERNEL_SHARED = 2048
#: one-warp ants read the candidate lists from a block's shared copy where it fits (tests turn it off)
SHARE_LISTS = True


def warps_for(construction: Construction, n: int, candidates: bool) -> int:
    """Warps per ant: the setting, else as measured on the H100 (docs/benchmarks.md, mmas-build):
    one with a candidate list (one warp's work; more only wait at each step's barrier), 4 walking
    every item below 1,500 items, 8 from there."""
    if construction.warps is not None:
        return construction.warps
    if candidates:
        return 1
    return 4 if n < 1500 else 8


def tabu_words(construction: Construction, n: int) -> int:
    """32-bit words of one ant's visited set."""
    return {"bt": (n + 31) // 32, "lc": 2 * n, "ct": n}[construction.tabu]


def precomputes_weights(construction: Construction) -> bool:
    """Whether the ants read weights computed once a construction: the pheromone matrix is constant
    while they build (no local update)."""
    return construction.memory == "matrix" and construction.local_update == "none"


def list_item(n: int) -> str:
    """The precomputed candidate lists' item type for n items (2 bytes where they fit)."""
    return "unsigned short" if n <= 65536 else "int"


def shared_list_bytes(n: int, k: int) -> int:
    """Shared memory of a block's copy of the precomputed candidate lists (items, then weights,
    each at a 16-byte boundary, as the kernel lays them out)."""
    def aligned(b):
        return (b + 15) // 16 * 16
    return aligned(n * k * (2 if list_item(n) == "unsigned short" else 4)) + aligned(n * k * 4)


def ants_per_block(ants: int, lists: int, tabu: int, multiprocessors: int, limit: int) -> int:
    """One-warp ants a block with the candidate lists in shared memory (``lists`` bytes, each ant's
    visited set ``tabu`` bytes): as many as spread the ants over the GPU's multiprocessors in one
    wave, at most 32 (1,024 threads); 0 where the lists and those ants' visited sets exceed the
    block's shared memory ``limit`` (the ants then read the lists from global memory, a block each)."""
    a = min(32, -(-ants // multiprocessors))
    return a if lists + a * tabu + KERNEL_SHARED <= limit else 0


def colony_bytes(model: ColonyModel, construction: Construction, n: int, ants: int) -> int:
    """GPU memory of a colony: pheromone, eta^beta, candidates, the precomputed weights, the ants'
    solutions and scratch."""
    pheromone = n * construction.slots * 12 if construction.memory == "spm" else n * n * 4
    eta = 0 if model.heuristic is None else n * n * 4
    cand = 0 if model.candidates is None else model.candidates.size * 4
    weights = n * n * 4 + 2 * cand if precomputes_weights(construction) else 0      # at most 4 + 4 bytes a candidate
    return pheromone + eta + cand + weights + ants * n * 4 * 2 + ants * tabu_words(construction, n) * 4


class CudaColony:
    """B ants building on the GPU; the pheromone memory and its updates there too."""

    name = "cuda"

    def __init__(self, model: ColonyModel, construction: Construction, n: int, ants: int, options):
        self.model, self.c, self.n, self.ants = model, construction, int(n), int(ants)
        self.device = options.device
        need, (free, _) = colony_bytes(model, construction, n, ants), options.memory_info()
        if need > MEMORY_SHARE * free:
            held = "n x n pheromone, heuristic and weight matrices" if construction.memory == "matrix" else "arrays"
            raise ValueError(f"ant colony: {ants:,} ants on {n:,} items need {need / 2**30:,.2f} GiB of GPU memory "
                             f"({held}); {free / 2**30:,.1f} GiB are free")
        device = options.context.get_device()
        self.words = tabu_words(construction, n)
        limit = device.get_attribute(cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        #: ACS-GPU: a launch a construction step, the visited sets kept in global scratch between them
        self.stepwise = construction.local_update == "step"
        self.shared_tabu = self.words * 4 + KERNEL_SHARED <= limit and not self.stepwise
        warps = warps_for(construction, n, model.candidates is not None)
        self.precomputed = precomputes_weights(construction)
        self.k = 0 if model.candidates is None else model.candidates.shape[1]
        #: one-warp ants a block, sharing its copy of the candidate lists (0: an ant a block)
        self.per_block = 0
        if SHARE_LISTS and warps == 1 and self.precomputed and self.k and self.shared_tabu:
            sms = device.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
            self.per_block = ants_per_block(ants, shared_list_bytes(n, self.k), self.words * 4, sms, limit)
        source = render_skeleton(
            "colony.cu.j2", KIND=model.kind, SELECTION=construction.selection, TABU=construction.tabu,
            GREEDY=construction.q0 > 0, LOCAL_UPDATE=construction.local_update, MEMORY=construction.memory,
            HAS_ETA=model.heuristic is not None, HAS_CAND=model.candidates is not None,
            ALPHA_ONE=construction.alpha == 1.0, SHARED_TABU=self.shared_tabu, SLOTS=construction.slots,
            CHOICE=self.precomputed, LIST_ITEM=list_item(n), SHARED_LISTS=bool(self.per_block),
            LOCAL_INSERT=construction.local_insert)
        arch = "sm_%d%d" % device.compute_capability()
        module = load_module(source, arch)
        names = ("construct", "deposit", "evaporate_clamp") + (("choice_info",) if self.precomputed else ()) \
            + (("local_step",) if self.stepwise else ())
        self.functions = {name: module.get_function(name) for name in names}
        if self.per_block:          # no more warps a block than the kernel's registers allow
            most = self.functions["construct"].get_attribute(cuda.function_attribute.MAX_THREADS_PER_BLOCK)
            self.per_block = min(self.per_block, most // 32)
        self.threads = 32 * (self.per_block or warps)
        self.blocks = -(-ants // self.per_block) if self.per_block else ants
        self.shared_bytes = (shared_list_bytes(n, self.k) + self.per_block * self.words * 4 if self.per_block
                             else self.words * 4 if self.shared_tabu else 0)
        if self.shared_bytes > 48 * 1024:
            self.functions["construct"].set_attribute(
                cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, self.shared_bytes)
        self.buffers = DeviceBuffers()
        eta = None if model.heuristic is None else np.power(model.heuristic, construction.beta).astype(np.float32)
        self.eta = self.buffers.upload(eta)
        self.cand = self.buffers.upload(model.candidates)
        if construction.memory == "spm":
            self.tau = 0
            self.spm_items = self.buffers.alloc(n * construction.slots * 4)
            self.spm_taus = self.buffers.alloc(n * construction.slots * 4)
            self.spm_tail = self.buffers.alloc(n * 4)
        else:
            self.tau = self.buffers.alloc(n * n * 4)
            self.spm_items = self.spm_taus = self.spm_tail = 0
        listed = 0 if model.candidates is None else model.candidates.size
        self.choice = self.buffers.alloc(n * n * 4) if self.precomputed else 0
        item_bytes = 2 if list_item(n) == "unsigned short" else 4
        self.cand_items = self.buffers.alloc(listed * item_bytes) if self.precomputed and listed else 0
        self.cand_weights = self.buffers.alloc(listed * 4) if self.precomputed and listed else 0
        self.out = self.buffers.alloc(ants * n * 4)
        self.firsts = self.buffers.alloc(ants * n * 4)
        self.scratch = 0 if self.shared_tabu else self.buffers.alloc(ants * self.words * 4)
        self.solution = self.buffers.alloc(n * 4)
        self.events = (cuda.Event(), cuda.Event())
        #: the last construction's kernel time (CUDA events; the weights' precomputation included), seconds
        self.kernel_seconds = 0.0
        self.fill(construction.tau0)

    # --- kernel arguments --------------------------------------------------------------------
    def _colony(self) -> bytes:
        """The kernels' Colony struct (layout of colony.cu.j2)."""
        return pack("iiPPPPPPffPPP", self.n, self.k, int(self.eta), int(self.cand), int(self.tau),
                    int(self.spm_items), int(self.spm_taus), int(self.spm_tail), self.c.tau0, self.c.alpha,
                    int(self.choice), int(self.cand_items), int(self.cand_weights))

    def close(self) -> None:
        self.buffers.close()

    # --- pheromone ---------------------------------------------------------------------------
    def fill(self, tau: float) -> None:
        """Every tau = ``tau`` (a selective memory forgets its pairs: all read tau_min)."""
        if self.c.memory == "spm":
            cuda.memcpy_htod(self.spm_items, np.full(self.n * self.c.slots, -1, np.int32))
            cuda.memcpy_htod(self.spm_taus, np.full(self.n * self.c.slots, self.c.tau0, np.float32))
            cuda.memcpy_htod(self.spm_tail, np.full(self.n, -1, np.int32))
        else:
            cuda.memset_d32(self.tau, int(np.float32(tau).view(np.int32)), self.n * self.n)

    def deposit(self, solution, keep: float, add: float) -> None:
        cuda.memcpy_htod(self.solution, np.ascontiguousarray(solution, dtype=np.int32))
        blocks = (self.n + UPDATE_BLOCK - 1) // UPDATE_BLOCK
        launch(self.functions["deposit"], "deposit", (blocks, 1, 1), UPDATE_BLOCK,
               self._colony() + pack("Pff", int(self.solution), keep, add))

    def evaporate(self, keep: float) -> None:
        self._matrix_pass(keep, 0.0, 0.0, False)

    def clamp(self, low: float, high: float) -> None:
        self._matrix_pass(1.0, low, high, True)

    def _matrix_pass(self, keep: float, low: float, high: float, clamp: bool) -> None:
        if self.c.memory != "matrix":
            raise ValueError("ant colony: evaporation and bounds apply to the pheromone matrix (memory='matrix')")
        cells = self.n * self.n
        blocks = min(4096, (cells + UPDATE_BLOCK - 1) // UPDATE_BLOCK)
        launch(self.functions["evaporate_clamp"], "evaporate_clamp", (blocks, 1, 1), UPDATE_BLOCK,
               pack("Pqfffi", int(self.tau), cells, keep, low, high, int(clamp)))

    def _host_memory(self):
        """The pheromone memory copied to the host (for reading: tests, the branching factor)."""
        synchronize("the pheromone update")
        if self.c.memory == "spm":
            memory = SelectivePheromone(self.n, self.c.tau0, self.c.slots)
            cuda.memcpy_dtoh(memory.items.reshape(-1), self.spm_items)
            cuda.memcpy_dtoh(memory.taus.reshape(-1), self.spm_taus)
            cuda.memcpy_dtoh(memory.tail, self.spm_tail)
        else:
            memory = MatrixPheromone(self.n, 0.0)
            cuda.memcpy_dtoh(memory.tau.reshape(-1), self.tau)
        return memory

    def memory(self):
        """The pheromone memory copied to the host, for a checkpoint."""
        return self._host_memory()

    def load_memory(self, memory) -> None:
        """Take back a memory written by ``memory()`` (CpuColony's or this class's)."""
        if self.c.memory == "spm":
            cuda.memcpy_htod(self.spm_items, np.ascontiguousarray(memory.items, dtype=np.int32))
            cuda.memcpy_htod(self.spm_taus, np.ascontiguousarray(memory.taus, dtype=np.float32))
            cuda.memcpy_htod(self.spm_tail, np.ascontiguousarray(memory.tail, dtype=np.int32))
        else:
            cuda.memcpy_htod(self.tau, np.ascontiguousarray(memory.tau, dtype=np.float32))

    def values(self, rows, items) -> np.ndarray:
        return self._host_memory().values(rows, items)

    def matrix(self) -> np.ndarray:
        return self._host_memory().matrix()

    # --- construction ------------------------------------------------------------------------
    def construct(self, seed: int, iteration: int, firsts) -> np.ndarray:
        """B solutions built on the GPU (see CpuColony.construct: the same draws, the same rules)."""
        firsts = np.ascontiguousarray(firsts, dtype=np.int32)
        cuda.memcpy_htod(self.firsts, firsts)
        c = self.c
        keep, add = 1.0 - c.xi, c.xi * c.tau0
        args = self._colony() + pack("PPPQifffiii", int(self.firsts), int(self.out), int(self.scratch),
                                     int(seed) % 2**64, int(iteration), c.q0, keep, add, c.period, self.words,
                                     self.ants)
        start, end = self.events
        start.record()
        if self.precomputed:
            blocks = min(4096, (self.n * self.n + UPDATE_BLOCK - 1) // UPDATE_BLOCK)
            launch(self.functions["choice_info"], "choice_info", (blocks, 1, 1), UPDATE_BLOCK,
                   self._colony() + pack("PPP", int(self.choice), int(self.cand_items), int(self.cand_weights)))
        if self.stepwise:
            self._construct_by_steps(args, keep, add)
        else:
            launch(self.functions["construct"], "construct", (self.blocks, 1, 1), self.threads, args,
                   self.shared_bytes)
        end.record()
        synchronize("construct", (self.blocks,), (self.threads,))
        self.kernel_seconds = end.time_since(start) / 1000.0
        return download(self.out, (self.ants, self.n), np.int32)

    def _construct_by_steps(self, args: bytes, keep: float, add: float) -> None:
        """ACS-GPU (Skinderowicz 2016): every construction step one launch of all ants, then one of
        the step's local updates (every ``period``-th edge, as CpuColony.construct), the ants
        synchronised between steps; the run's deadline looked at every 256 steps."""
        n, tour, period = self.n, self.model.kind == "successor", self.c.period
        update = self._colony() + pack("PP", int(self.out), int(self.firsts))
        blocks = (self.ants + UPDATE_BLOCK - 1) // UPDATE_BLOCK
        for t in range(1, n) if tour else range(n):
            if t % 256 == 0:
                check_deadline("the ants finished their solutions")
            launch(self.functions["construct"], "construct", (self.blocks, 1, 1), self.threads,
                   args + pack("ii", t, t + 1), self.shared_bytes)
            if (t if tour else t + 1) % period == 0:
                launch(self.functions["local_step"], "local_step", (blocks, 1, 1), UPDATE_BLOCK,
                       update + pack("iiff", t, self.ants, keep, add))
        if tour and n % period == 0:                # the closing edge
            launch(self.functions["local_step"], "local_step", (blocks, 1, 1), UPDATE_BLOCK,
                   update + pack("iiff", n, self.ants, keep, add))
