"""Don't-look-bit descents on the GPU: the kernel of ``templates/skeleton/dontlook.cu.j2`` with its
arrays (lsmgpu/backends/dontlook.py holds the rules and the NumPy reference the kernel equals; the ILS
chains built on it: lsmgpu/backends/cuda/dontlook_chains.py).

Each row's tour, positions and queue of cities to check stay on the GPU; a launch runs up to
CHECKS checks of every row (one block a row), and the host looks at the queues between launches
(the deadline, the end)."""
from __future__ import annotations

import time

import numpy as np

from ...errors import KernelCompileError, announce_fallback
from ...kernels import render_skeleton
from ..dontlook import interleaved, wide_checks
from ..dontlook_chains import WALK_TRIES
from ..kopt import STAGE_LEVELS, kopt_context, level_candidates
from ..lk import lk_stage
from .driver import DeviceBuffers, built, cuda, download, launch, load_first_module, load_module, pack, synchronize

__all__ = ["CudaDontLook", "dontlook_bytes", "BLOCK", "CHAIN_BLOCK", "KOPT_CHAIN_BLOCK"]

#: the share of the GPU's free memory the rows may take
MEMORY_SHARE = 0.9
#: threads a row of the descents (measured: docs/benchmarks.md, "Don't-look descents")
BLOCK = 128
#: threads a chain of the ILS and an ant of focused ACO: 10-20 % faster than 128 on 2,392-18,512
#: cities, 512 no better (benchmarks/probes/block_threads.py, docs/bench/issue21/block-threads-4f36e39.csv)
CHAIN_BLOCK = 256
#: the same where its descent makes 5-opt chains (a stage's 10,000 sequences): ants' iterations 1.2-1.3
#: times faster (benchmarks/probes/ant_tail.py; docs/benchmarks/tsp-depth.md, "An ant's threads")
KOPT_CHAIN_BLOCK = 1024
#: checks of every row a launch (a check takes a few microseconds)
CHECKS = 4096
#: threads of the block that applies a wide round's moves (its reversals)
WIDE_APPLY_BLOCK = 1024
#: wide rounds queued between two looks at the queue
WIDE_ROUNDS = 32
#: the most cities a wide round takes (the kernel's MAX_WIDE)
WIDEST = 2048
#: a block's shared memory beside a chain's tour: its Shared struct and the system's reservation,
#: without an LK chain's room (block_shared_bytes adds it)
BLOCK_SHARED = 2048
#: the bridging moves' room in a block's shared memory: a key for each of up to 32 warps
BRIDGE_SHARED = 8 * 32
#: ILS chains and focused ants keep their tours in shared memory during a launch where they fit
#: (tests turn it off)
SHARE_ROWS = True


def chain_room(rules) -> tuple[int, int]:
    """A move's most 2-opt steps and cities to queue under ``rules`` (the GPU kernel's MAX_STEPS
    and TOUCHED): an LK chain of 2-opt moves a step and two cities a level; of 5-opt moves at most
    5 steps and 2 STAGE_LEVELS + 1 cities a stage (kopt.py's reversal_table), besides t1."""
    if rules.lk_move == 5 and rules.lk_depth:
        stages = -(-rules.lk_depth // STAGE_LEVELS)
        return max(5 * stages, 3), max(1 + (2 * STAGE_LEVELS + 1) * stages, 6)
    return max(rules.lk_depth, 3), max(2 + 2 * rules.lk_depth, 6)


def kopt_prefixes(rules) -> int:
    """A 5-opt stage's prefixes in a block's shared memory under ``rules`` (the kernel's KO_PREFIXES):
    the sequences of its first STAGE_LEVELS - 2 levels, each walked once and shared by the sequences
    below it (kopt.cu.j2's ko_prefixes); 0 where the chains are not 5-opt chains."""
    if rules.lk_move != 5 or not rules.lk_depth:
        return 0
    return (2 * level_candidates(rules.k)) ** max(STAGE_LEVELS - 2, 0)


def block_shared_bytes(rules) -> int:
    """A block's shared memory beside a row's tour under ``rules``: BLOCK_SHARED and the LK chain's
    room, 40 bytes a step (its removed edges, a 5-opt chain's undo and added edges, wide_apply's
    undo), 4 a city to queue and 40 a 5-opt stage's prefix (KoPrefix); with bridging moves, a key a
    warp (BRIDGE_SHARED)."""
    steps, touched = chain_room(rules)
    return (BLOCK_SHARED + 40 * steps + 4 * touched + 40 * kopt_prefixes(rules)
            + (BRIDGE_SHARED if rules.bridges else 0))


def keeps_moves(rules) -> bool:
    """Whether a chain under ``rules`` may keep a move and go on (5-opt chains deeper than a stage):
    a wide round's block then makes them on its own copy of the tour (the kernel's Wide.copies)."""
    return rules.lk_move == 5 and rules.lk_depth > STAGE_LEVELS


def wide_city_bytes(rules, n: int) -> int:
    """GPU bytes of a city of a wide round of tours of n cities under ``rules``: its city, move,
    delta and step count, its steps' removed edges, its cities to queue and, where chains keep
    moves, its block's copy of the tour and positions."""
    steps, touched = chain_room(rules)
    return 20 + 16 * steps + 4 * touched + (8 * n if keeps_moves(rules) else 0)


def dontlook_bytes(rows: int, n: int, chains: bool = False, wide: int = 1, city_bytes: int = 0) -> int:
    """GPU memory of ``rows`` tours of n cities: tour, positions, queue (ints), queued flags,
    counters; ILS chains also a best tour, its length, kicks and a flag; rows checked ``wide``
    cities a round also a stamp a city and the round's moves (``city_bytes`` a city, wide_city_bytes)."""
    wide_bytes = 4 * n + 8 + city_bytes * wide if wide > 1 else 0
    return rows * (13 * n + 40 + (4 * n + 16 if chains else 0) + wide_bytes)


def shared_row_bytes(n: int, rows: int, multiprocessors: int, per_block: int, per_multiprocessor: int,
                     beside: int = BLOCK_SHARED, resident_most: int = 2**31) -> int:
    """Shared memory for a chain's (or an ant's) tour and positions (8 n bytes) where every one of ``rows``
    has it at once (as many blocks an SM as spread the rows over the multiprocessors in
    one wave, at most ``resident_most``: the blocks an SM's threads hold; within the block's and the
    SM's shared memory, ``beside`` bytes more a block: block_shared_bytes); 0 where not (global memory)."""
    need, resident = 8 * n, min(-(-rows // multiprocessors), resident_most)
    fits = need + beside <= per_block and resident * (need + beside) <= per_multiprocessor
    return need if SHARE_ROWS and fits else 0


class CudaDontLook:
    """``rows`` tours descended by don't-look bits on the GPU."""

    name = "cuda"
    #: what the memory refusal names
    what = "don't-look descent"
    #: threads a row
    block = BLOCK
    #: threads a row where its descent makes 5-opt chains (None: ``block``)
    kopt_block = None

    def city_array_bytes(self, n: int, k: int) -> int:
        """GPU memory beside the rows' that a subclass adds (its per-city arrays)."""
        return 0

    #: whether every row has its own cities, candidates and table rows (the tour segments: row k's
    #: candidates and table are the k-th n-city block of theirs) rather than sharing the problem's
    per_row_cities = False

    #: whether this class's kernel (the chains', the focused ants') keeps a row's tour and
    #: positions in its block's shared memory during a launch where every row fits (SHARED_ROWS)
    shares_rows = False

    #: whether this class descends with the ``descend`` kernel, a lone row checked wide (the ILS
    #: chains and the focused ants run kernels of their own, one block a row)
    descends_wide = True

    #: the kernels of dontlook.cu.j2 this class launches, the only ones its build compiles (KERNELS)
    kernels = ("descend", "wide_examine", "wide_apply")

    #: those of them that keep the rows in shared memory (:meth:`_kernel`)
    shared_kernels = ()

    @classmethod
    def threads(cls, rules) -> int:
        """Threads a row's block under ``rules``: ``kopt_block`` where the descent makes 5-opt chains
        and the class has one, else ``block``."""
        return cls.kopt_block if cls.kopt_block and rules.lk_move == 5 and rules.lk_depth else cls.block

    def row_shared_bytes(self, device) -> int:
        """Shared memory a row's block keeps its tour in (0: the rows stay in global memory)."""
        if not self.shares_rows:
            return 0
        a = cuda.device_attribute
        return shared_row_bytes(self.n, self.rows, device.get_attribute(a.MULTIPROCESSOR_COUNT),
                                device.get_attribute(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                                device.get_attribute(a.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
                                block_shared_bytes(self.rules),
                                device.get_attribute(a.MAX_THREADS_PER_MULTIPROCESSOR) // self.block)

    def _kernel(self, name: str):
        """The module's kernel ``name``, from a quick build until the full one is made, from it after
        (driver.load_first_module: a first run launches from about a second on, at full speed from
        the full build's end); allowed the rows' shared memory where it keeps them there (its static
        Shared struct and the rows' tours past the default 48 KB together: the opt-in the driver asks
        for above that sum). A full build that fails leaves the quick one running, announced."""
        if self.quick and built(*self.module_build):
            self.quick = False
            try:
                self.module, self.functions = load_module(*self.module_build), {}
            except KernelCompileError as exc:
                reason = " ".join(str(exc).split())[:200]
                announce_fallback(f"{self.what}: the full build of its kernels failed ({reason}); "
                                  "the run goes on with the quick build's, about half as fast")
        if name not in self.functions:
            kernel = self.functions[name] = self.module.get_function(name)
            if name in self.shared_kernels and self.row_shared:
                kernel.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, self.row_shared)
        return self.functions[name]

    def _lay_out(self, rules, distance, rows: int, options, chains: bool = False) -> tuple[str, str]:
        """Sets what the module's source reads (rows, cities, a round's cities, threads, shared memory;
        the GPU memory it needs checked, none taken): the source and arch, for load_module or prebuild."""
        self.rules, self.between, self.rows = rules, distance.between, int(rows)
        self.n = n = len(rules.candidates) // (self.rows if self.per_row_cities else 1)
        #: the cities a row checks at once, one block each (the NumPy reference's ``wide``)
        self.wide = wide_checks(self.rows, n) if self.descends_wide else 1
        if self.wide > WIDEST:
            raise ValueError(f"{self.what}: a round checks at most {WIDEST} cities, not {self.wide}")
        self.device, self.block = options.device, self.threads(rules)
        table = distance.table
        fixed = table.nbytes + rules.candidates.nbytes + self.city_array_bytes(n, rules.k)
        need = dontlook_bytes(self.rows, n, chains, self.wide, wide_city_bytes(rules, n)) + fixed
        free, _ = options.memory_info()
        if need > MEMORY_SHARE * free:
            fit = int((MEMORY_SHARE * free - fixed) // dontlook_bytes(1, n, chains))
            raise ValueError(f"{self.what}: {self.rows:,} tours of {n:,} cities need {need / 2**30:,.2f} GiB "
                             f"of GPU memory; {free / 2**30:,.1f} GiB are free: about {max(fit, 0):,} would fit")
        device = options.context.get_device()
        self.row_shared = self.row_shared_bytes(device)
        source = render_skeleton("dontlook.cu.j2", K=rules.k, S=rules.segment, OR3=int(rules.or3), LK=int(rules.lk),
                                 LK_DEPTH=rules.lk_depth, LK_STAGE=lk_stage(rules.lk_depth), LK_MOVE=rules.lk_move,
                                 **kopt_context(rules.k), KO_ALONE=int(rules.chain_alone), BRIDGES=int(rules.bridges),
                                 BLOCK=self.block, DISTANCE=distance.device_source(), SHARED_ROWS=bool(self.row_shared),
                                 WALK_TRIES=WALK_TRIES, SEGMENT_ROWS=int(self.per_row_cities),
                                 TABLE_WIDTH=table.size // len(rules.candidates), WIDE_APPLY_BLOCK=WIDE_APPLY_BLOCK,
                                 MAX_WIDE=WIDEST, KERNELS=self.kernels)
        return source, "sm_%d%d" % device.compute_capability()

    def __init__(self, rules, distance, rows: int, options, chains: bool = False):
        self.module_build = self._lay_out(rules, distance, rows, options, chains)
        (self.module, self.quick), self.functions = load_first_module(*self.module_build), {}
        self.buffers = DeviceBuffers()
        n, B, table = self.n, self.rows, distance.table
        self.x, self.pos, self.queue = (self.buffers.alloc(B * n * 4) for _ in range(3))
        self.queued = self.buffers.alloc(B * n)
        self.head, self.count = self.buffers.alloc(B * 4), self.buffers.alloc(B * 4)
        self.current, self.made, self.checks = (self.buffers.alloc(B * 8) for _ in range(3))
        self.cand, self.table = self.buffers.upload(rules.candidates), self.buffers.upload(table)
        five = rules.lk_move == 5 and rules.lk_depth and rules.penalties is not None
        self.pi = self.buffers.upload(rules.penalties) if five else 0
        if self.wide > 1:
            W, (steps, touched) = B * self.wide, chain_room(rules)
            self.round_cities, self.chosen, self.nsteps = (self.buffers.alloc(W * 4) for _ in range(3))
            self.deltas = self.buffers.alloc(W * 8)
            self.popped, self.round = self.buffers.alloc(B * 4), self.buffers.alloc(B * 4)
            self.stamp = self.buffers.alloc(B * n * 4)
            self.steps, self.touched = self.buffers.alloc(W * steps * 16), self.buffers.alloc(W * touched * 4)
            self.copies = self.buffers.alloc(W * n * 8) if keeps_moves(rules) else 0

    def _rows_struct(self) -> bytes:
        pointers = (self.x, self.pos, self.queue, self.queued, self.head, self.count, self.current, self.made,
                    self.checks, self.cand, self.table, self.pi)
        return pack("12Pi4x", *(int(p) for p in pointers), self.n)   # sizeof(Rows) = 104

    def load(self, xs, cities=None) -> None:
        """Tours (rows x n); every city queued in tour order, or the ``cities`` given (in that
        order, in every row)."""
        xs = np.ascontiguousarray(xs, dtype=np.int32)
        B, n = xs.shape
        if B != self.rows or n != self.n:
            raise ValueError(f"don't-look descent: expected {self.rows} tours of {self.n} cities, got {xs.shape}")
        pos = np.empty_like(xs)
        np.put_along_axis(pos, xs.astype(np.int64), np.broadcast_to(np.arange(n, dtype=np.int32), xs.shape), axis=1)
        lengths = self._tour_lengths(xs).astype(np.float64)
        queue, queued = xs, np.ones((B, n), np.uint8)
        if cities is not None:
            queue, queued = np.zeros_like(xs), np.zeros((B, n), np.uint8)
            queue[:, :len(cities)] = cities
            queued[:, cities] = 1
        if self.wide > 1:
            size = n if cities is None else len(cities)
            queue = np.stack([np.r_[interleaved(row[:size], self.wide), row[size:]] for row in queue]).astype(np.int32)
        for buffer, array in ((self.x, xs), (self.pos, pos), (self.queue, queue), (self.queued, queued),
                              (self.current, lengths)):
            cuda.memcpy_htod(buffer, array)
        cuda.memset_d32(self.head, 0, B)
        cuda.memcpy_htod(self.count, np.full(B, n if cities is None else len(cities), np.int32))
        for counter in (self.made, self.checks):
            cuda.memset_d32(counter, 0, 2 * B)
        if self.wide > 1:
            for counter in (self.popped, self.round):
                cuda.memset_d32(counter, 0, B)
            cuda.memset_d32(self.stamp, 0xFFFFFFFF, B * n)

    def _tour_lengths(self, xs) -> np.ndarray:
        """The lengths of the tours xs (rows x n)."""
        return self.between(xs, np.roll(xs, -1, axis=1)).sum(axis=1)

    def descend(self, rows, rule: str = "best", deadline: float | None = None):
        """Every row to a local optimum (``rows`` must hold them all; ``rule`` is the chain
        descents'): (moves made per row, moves evaluated per row, whether all finished)."""
        if not np.all(rows):
            raise ValueError("don't-look descent: every row of the population is descended together")
        popped = np.zeros(self.rows, np.int32)
        while True:
            if self.wide > 1:
                self._wide_rounds()
                cuda.memcpy_dtoh(popped, self.popped)
            else:
                launch(self._kernel("descend"), "dontlook descend", (self.rows, 1, 1), self.block,
                       self._rows_struct() + pack("q", CHECKS))
            synchronize("the don't-look descent", (self.rows,), (self.block,))
            count = download(self.count, self.rows, np.int32)
            finished = not count.any() and not popped.any()
            if finished or (deadline is not None and time.perf_counter() >= deadline):
                break
        made, checks = (download(buffer, self.rows, np.int64) for buffer in (self.made, self.checks))
        return made, checks * self.rules.moves, finished

    def _wide_rounds(self) -> None:
        """WIDE_ROUNDS wide rounds queued: the popped cities examined at once, their moves
        applied and the next round's popped (a round with none popped does nothing)."""
        pointers = (self.round_cities, self.popped, self.chosen, self.deltas, self.nsteps, self.steps, self.touched,
                    self.stamp, self.round, self.copies)
        args = self._rows_struct() + pack("10Pi4x", *(int(p) for p in pointers), self.wide)   # sizeof(Wide) = 88
        for _ in range(WIDE_ROUNDS):
            launch(self._kernel("wide_examine"), "dontlook wide_examine", (self.wide, self.rows, 1), self.block, args)
            launch(self._kernel("wide_apply"), "dontlook wide_apply", (self.rows, 1, 1), WIDE_APPLY_BLOCK, args)

    @staticmethod
    def _upload(tour, *places) -> None:
        """``tour`` and its positions into each (tour, positions) pair of device addresses."""
        tour = np.ascontiguousarray(tour, dtype=np.int32)
        pos = np.empty_like(tour)
        pos[tour] = np.arange(len(tour), dtype=np.int32)
        for buffer, positions in places:
            cuda.memcpy_htod(buffer, tour)
            cuda.memcpy_htod(positions, pos)

    def solutions(self) -> np.ndarray:
        return download(self.x, (self.rows, self.n), np.int32)

    def values(self) -> np.ndarray:
        return download(self.current, self.rows, np.float64)

    def close(self) -> None:
        self.buffers.close()

