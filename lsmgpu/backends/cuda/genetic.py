"""The genetic algorithm's generation on the GPU: the kernels of ``templates/skeleton/genetic.cu.j2``
with their arrays (lsmgpu/backends/genetic.py holds the rules and the NumPy reference these
kernels equal).

The genes (m x n int32), their values and every child's scratch (its parents' jump indices as
links between items, 4n ints) stay on the GPU; the host reads the m values after a generation, and rows
only where it needs them (the best gene, the children for a local search or a host fitness).
"""
from __future__ import annotations

import numpy as np

from ...kernels import render_skeleton
from ..genetic import Breeding, children_of
from .driver import DeviceBuffers, cuda, download, launch, load_module, pack, synchronize

__all__ = ["CudaGenetic", "genetic_bytes", "lanes_for"]

#: the share of the GPU's free memory a population may take
MEMORY_SHARE = 0.9
BLOCK = 128


def lanes_for(breeding: Breeding) -> int:
    """Threads a child: the setting, else a warp (measured faster than the paper's thread a
    child from 130 to 85,900 cities: docs/benchmarks.md, "Genetic algorithm")."""
    return 32 if breeding.lanes is None else breeding.lanes


def genetic_bytes(breeding: Breeding, n: int, table_bytes: int) -> int:
    """GPU memory of a population: genes, values, the children's scratch and the distance table."""
    children = breeding.groups * breeding.children_per_group
    return breeding.genes * (n * 4 + 8) + children * 4 * n * 4 + table_bytes


class CudaGenetic:
    """m genes breeding on the GPU."""

    name = "cuda"

    def __init__(self, breeding: Breeding, n: int, distance, options):
        self.b, self.n = breeding, int(n)
        self.device = options.device
        table = None if distance is None else distance.table
        need, (free, _) = genetic_bytes(breeding, n, 0 if table is None else table.nbytes), options.memory_info()
        if need > MEMORY_SHARE * free:
            per_gene = max(1, (need - (0 if table is None else table.nbytes)) // breeding.genes)
            fit = int(MEMORY_SHARE * free // per_gene) // (4 * breeding.groups) * 4 * breeding.groups
            raise ValueError(f"genetic algorithm: {breeding.genes:,} genes of {n:,} items need "
                             f"{need / 2**30:,.2f} GiB of GPU memory (genes and the children's jump indices); "
                             f"{free / 2**30:,.1f} GiB are free: about {fit:,} genes would fit")
        self.lanes = lanes_for(breeding)
        source = render_skeleton("genetic.cu.j2", CROSSOVER=breeding.crossover, LANES=self.lanes,
                                 DISTANCE=None if distance is None else distance.device_source())
        device = options.context.get_device()
        module = load_module(source, "sm_%d%d" % device.compute_capability())
        names = ["compete", "breed"] + (["lengths"] if distance is not None else [])
        self.functions = {name: module.get_function(name) for name in names}
        self.buffers = DeviceBuffers()
        self.slots, _, _ = children_of(breeding)
        self.children = len(self.slots)
        self.genes = self.buffers.alloc(breeding.genes * self.n * 4)
        self.values = self.buffers.alloc(breeding.genes * 8)
        self.scratch = self.buffers.alloc(self.children * 4 * self.n * 4)
        self.table = 0 if table is None else self.buffers.upload(table)
        self.events = (cuda.Event(), cuda.Event())
        #: the last generation's kernel time (CUDA events), seconds
        self.kernel_seconds = 0.0

    # --- kernel arguments --------------------------------------------------------------------
    def _population(self) -> bytes:
        """The kernels' Population struct (layout of genetic.cu.j2)."""
        return pack("PPPPqii", int(self.genes), int(self.values), int(self.scratch), int(self.table), self.n,
                    self.b.group_size, self.b.groups)

    def close(self) -> None:
        self.buffers.close()

    # --- the population ----------------------------------------------------------------------
    def load(self, genes: np.ndarray, values: np.ndarray | None = None) -> None:
        """The genes, with their values (None: their lengths, computed here)."""
        cuda.memcpy_htod(self.genes, np.ascontiguousarray(genes, dtype=np.int32))
        if values is None:
            blocks = (self.b.genes * self.lanes + BLOCK - 1) // BLOCK
            launch(self.functions["lengths"], "lengths", (blocks, 1, 1), BLOCK,
                   self._population() + pack("i", self.b.genes))
        else:
            cuda.memcpy_htod(self.values, np.ascontiguousarray(values, dtype=np.float64))

    def rows(self, slots) -> np.ndarray:
        slots = np.asarray(slots, dtype=np.int64)
        out = np.empty((len(slots), self.n), dtype=np.int32)
        synchronize("the generation")
        if len(slots) and np.array_equal(slots, np.arange(slots[0], slots[0] + len(slots))):
            cuda.memcpy_dtoh(out, int(self.genes) + int(slots[0]) * self.n * 4)
            return out
        for k, slot in enumerate(slots):
            cuda.memcpy_dtoh(out[k], int(self.genes) + int(slot) * self.n * 4)
        return out

    def set_rows(self, slots, genes: np.ndarray | None, values: np.ndarray) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        host_values = self.value_array()
        host_values[slots] = values
        if genes is not None:
            genes = np.ascontiguousarray(genes, dtype=np.int32)
            for k, slot in enumerate(slots):
                cuda.memcpy_htod(int(self.genes) + int(slot) * self.n * 4, genes[k])
        cuda.memcpy_htod(self.values, host_values)

    def value_array(self) -> np.ndarray:
        synchronize("the generation")
        return download(self.values, self.b.genes, np.float64)

    def copy_rows(self, dst, src) -> None:
        """Row src[k] copied to dst[k], in order (as CpuGenetic.copy_rows)."""
        row = self.n * 4
        for d, s in zip(np.asarray(dst), np.asarray(src)):
            cuda.memcpy_dtod(int(self.genes) + int(d) * row, int(self.genes) + int(s) * row, row)
            cuda.memcpy_dtod(int(self.values) + int(d) * 8, int(self.values) + int(s) * 8, 8)

    # --- a generation ------------------------------------------------------------------------
    def compete(self) -> None:
        launch(self.functions["compete"], "compete", (self.b.genes // 2, 1, 1), BLOCK, self._population())

    def breed(self, seed: int, generation: int) -> np.ndarray:
        """Compete, make every child and mutate it (CpuGenetic.breed); the children's slots."""
        start, end = self.events
        start.record()
        self.compete()
        blocks = (self.children * self.lanes + BLOCK - 1) // BLOCK
        launch(self.functions["breed"], "breed", (blocks, 1, 1), BLOCK,
               self._population() + pack("qdQi", self.children, float(self.b.mutation), int(seed) % 2**64,
                                         int(generation)))
        end.record()
        synchronize("breed", (blocks,), (BLOCK,))
        self.kernel_seconds = end.time_since(start) / 1000.0
        return self.slots.copy()
