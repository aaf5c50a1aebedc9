"""Minimum spanning trees on the GPU for the Held-Karp bound (problems/alpha.py).

``GpuSpanningTrees``: the ascent's trees of one sparse graph, its edges kept on the GPU, each
call uploading new weights and getting the tree's edges back, by Borůvka's rounds
(templates/skeleton/boruvka.cu.j2). Ties go to the lower edge index, so the tree is the one
Kruskal's algorithm makes over the edges ordered by (weight, index). At 85,900 cities (298,000
edges) scipy's Kruskal takes 45 ms a tree on the H100 machine's host, most of it sorting the
weights afresh; the GPU's rounds do without a sort.

``prim_length``: the exact bound's tree over every pair of cities, Prim's O(n^2) steps, one
launch a city (templates/skeleton/prim.cu.j2), the host loop's steps in the same order.
"""
from __future__ import annotations

import numpy as np

from ...errors import KernelLaunchError
from ...kernels import render_skeleton
from .driver import DeviceBuffers, context, cuda, download, launch, load_module, pack, synchronize

__all__ = ["GpuSpanningTrees", "prim_length"]

BLOCK = 256
#: prim_length's blocks at most (a step's keys spread over them; the last reduces their minima)
PRIM_BLOCKS = 264


class GpuSpanningTrees:
    """The graph of ``n`` cities and edges (``u``, ``v``) on GPU ``ordinal``; ``tree(weight)`` is
    a minimum spanning forest's edges under ``weight``; ``close()`` frees the GPU's memory."""

    def __init__(self, n: int, u: np.ndarray, v: np.ndarray, ordinal: int = 0):
        if len(u) != len(v) or len(u) >= 2**31 - 1 or n >= 2**31 - 1:
            raise ValueError(f"spanning trees: `u` and `v` must be of one length, and it and `n` below 2^31 - 1 "
                             f"(int32 indices), got {len(u)}, {len(v)} and n = {n}")
        context(ordinal)
        self.n, self.m = int(n), len(u)
        self.module = load_module(render_skeleton("boruvka.cu.j2"),
                                  "sm_%d%d" % cuda.Context.get_device().compute_capability())
        self.buffers = b = DeviceBuffers()
        try:
            ends = (b.upload(np.asarray(u, dtype=np.int32)), b.upload(np.asarray(v, dtype=np.int32)))
            self.weight, self.in_tree, self.added = b.alloc(8 * self.m), b.alloc(self.m), b.alloc(4)
            per_city = [b.alloc(size * self.n) for size in (4, 4, 8, 4, 4)]    # comp, hook, best, best_edge, root
            self.degree, self.best = per_city[1], per_city[2]                 # the hooks' and bests' room, reused
            self.args = pack("PPPPPPPPPPqq", *(int(a) for a in ends), int(self.weight),
                             *(int(a) for a in per_city), int(self.in_tree), int(self.added), self.n, self.m)
        except cuda.Error as exc:                   # out of memory, above all
            self.close()
            raise KernelLaunchError(f"spanning trees of {self.m:,} edges: {exc}") from exc

    def tree(self, weight: np.ndarray) -> np.ndarray:
        """The indices (ascending, int64) of a minimum spanning forest's edges under ``weight``
        (float64, one per edge), ties to the lower index."""
        weight = np.ascontiguousarray(weight, dtype=np.float64)
        if weight.shape != (self.m,):
            raise ValueError(f"spanning trees: `weight` must have shape ({self.m},), got {weight.shape}")
        try:
            cuda.memcpy_htod(self.weight, weight)
            cuda.memset_d8(self.in_tree, 0, self.m)
            self._launch("start", self.n)
            joined, added = 0, np.zeros(1, dtype=np.int32)
            while joined < self.n - 1:
                cuda.memset_d32(self.added, 0, 1)
                for kernel, threads in (("reset", self.n), ("lightest", self.m), ("lowest", self.m),
                                        ("join", self.n), ("jump", self.n), ("relabel", self.n)):
                    self._launch(kernel, threads)
                cuda.memcpy_dtoh(added, self.added)
                if added[0] == 0:                   # the graph's pieces apart: a forest
                    break
                joined += int(added[0])
            synchronize("spanning trees")
            mask = download(self.in_tree, self.m, np.uint8)
        except cuda.Error as exc:
            raise KernelLaunchError(f"spanning trees of {self.m:,} edges: {exc}") from exc
        return np.flatnonzero(mask)

    def ends(self) -> tuple[np.ndarray, np.ndarray]:
        """The last tree's degrees (int64, one per city) and every city's cheapest edge outside
        it (float64, inf where it has none), made on the GPU."""
        try:
            cuda.memset_d32(self.degree, 0, self.n)
            self._launch("reset", self.n)
            self._launch("ends", self.m)
            synchronize("spanning trees (ends)")
            degree, keys = download(self.degree, self.n, np.int32), download(self.best, self.n, np.uint64)
        except cuda.Error as exc:
            raise KernelLaunchError(f"spanning trees of {self.m:,} edges: {exc}") from exc
        return degree.astype(np.int64), _weights(keys)

    def _launch(self, kernel: str, threads: int) -> None:
        launch(self.module.get_function(kernel), f"spanning trees ({kernel})",
               ((threads + BLOCK - 1) // BLOCK, 1, 1), BLOCK, self.args)

    def close(self) -> None:
        self.buffers.close()


def _weights(keys: np.ndarray) -> np.ndarray:
    """The weights whose order-preserving keys (boruvka.cu.j2's ``ordered``) are ``keys``; the
    key of no edge (all ones) is inf."""
    negative = (keys >> np.uint64(63)) == 0
    bits = np.where(negative, ~keys, keys & np.uint64(0x7FFFFFFFFFFFFFFF))
    return np.where(keys == np.uint64(2**64 - 1), np.inf, bits.view(np.float64))


def prim_length(distance, pi: np.ndarray, others: np.ndarray, check=None, ordinal: int = 0) -> float:
    """The length of the minimum spanning tree over the cities ``others`` (int, at least 2) under
    ``distance`` (an EdgeDistance) plus the penalties ``pi`` of both ends, grown from
    ``others[0]``; ``check()`` is called every 4,096 steps (the run's deadline)."""
    context(ordinal)
    others = np.asarray(others, dtype=np.int32)
    count = len(others)
    module = load_module(render_skeleton("prim.cu.j2", distance=distance.device_source()),
                         "sm_%d%d" % cuda.Context.get_device().compute_capability())
    grow = module.get_function("grow")
    outside = others.copy()
    outside[0] = others[-1]                                 # others[0] joined: the last takes its slot
    buffers = DeviceBuffers()
    try:
        total = buffers.upload(np.zeros(1))
        args = pack("PPPPPPPPq", int(buffers.upload(distance.table)),
                    int(buffers.upload(np.asarray(pi, dtype=np.float64))),
                    int(buffers.upload(outside)), int(buffers.upload(np.full(count, np.inf))),
                    int(buffers.alloc(8 * PRIM_BLOCKS)), int(buffers.alloc(4 * PRIM_BLOCKS)),
                    int(buffers.upload(np.array([others[0], count - 1, 0], dtype=np.int32))), int(total),
                    len(pi))
        for left in range(count - 1, 0, -1):
            if check is not None and left % 4096 == 0:
                synchronize("the exact bound's spanning tree")       # nothing queued where check() raises
                check()
            launch(grow, "the exact bound's spanning tree", (min(PRIM_BLOCKS, (left + BLOCK - 1) // BLOCK), 1, 1),
                   BLOCK, args)
        synchronize("the exact bound's spanning tree")
        length = np.zeros(1)
        cuda.memcpy_dtoh(length, total)
        return float(length[0])
    except cuda.Error as exc:
        raise KernelLaunchError(f"the exact bound's spanning tree of {count:,} cities: {exc}") from exc
    finally:
        buffers.close()
