"""Every city's nearest other cities on the GPU: the k-d tree query of problems/candidates.py for
large planar instances, over a uniform grid (templates/skeleton/nearest.cu.j2).

The host puts the cities in square cells of about two cities each (a counting sort by cell), the
GPU takes a thread a city: the rings of cells around its own, each city's list kept sorted by
(squared distance, index), until the next ring lies beyond the list's last. The lists equal the
k-d tree's up to the order of cities at equal distances (here: the lower index first). The
quadrant lists are then picked from them on the GPU too, a thread a city.
"""
from __future__ import annotations

import numpy as np

from ...errors import KernelLaunchError
from ...kernels import render_skeleton
from .driver import DeviceBuffers, context, cuda, download, launch, load_module, pack, synchronize

__all__ = ["nearest_on_gpu", "quadrant_on_gpu", "CITIES_A_CELL", "MAX_COUNT"]

#: cities a grid cell holds on average
CITIES_A_CELL = 2.0
#: the longest list a thread keeps (in its local memory)
MAX_COUNT = 256
BLOCK = 128


def grid_of(coords: np.ndarray) -> tuple[float, float, float, int, int]:
    """(x0, y0, side, gx, gy): the corner and the side of square cells of about CITIES_A_CELL
    cities each over the coordinates' bounding box."""
    low, high = coords.min(axis=0), coords.max(axis=0)
    span = np.maximum(high - low, 1e-9)
    side = float(np.sqrt(span[0] * span[1] * CITIES_A_CELL / len(coords))) or float(span.max())
    side = max(side, float(span.max()) / 2**15)                       # at most 2^15 cells a side
    gx, gy = (int(v) for v in np.floor(span / side).astype(np.int64) + 1)
    return float(low[0]), float(low[1]), side, gx, gy


def nearest_on_gpu(coords, count: int, ordinal: int = 0) -> np.ndarray:
    """(n, count) int32: each city's ``count`` nearest other cities, nearest first (ties: the lower
    index), computed on GPU ``ordinal``."""
    return _lists_on_gpu(coords, count, 0, ordinal)


def quadrant_on_gpu(coords, k: int, pool: int, ordinal: int = 0) -> np.ndarray:
    """(n, k) int32: problems/candidates.quadrant_candidates's lists, picked on the GPU from each
    city's ``pool`` nearest cities."""
    if not 1 <= k <= pool:
        raise ValueError(f"quadrant lists: `k` must be in [1, pool = {pool}], got {k}")
    return _lists_on_gpu(coords, pool, k, ordinal)


def _lists_on_gpu(coords, count: int, k: int, ordinal: int) -> np.ndarray:
    """The nearest cities (and where k > 0 the quadrant lists picked from them) on the GPU."""
    coords = np.ascontiguousarray(coords, dtype=np.float64)
    n = len(coords)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise ValueError(f"nearest cities: `coords` must have shape (n, 2), got {coords.shape}")
    if not 1 <= count <= min(n - 1, MAX_COUNT):
        raise ValueError(f"nearest cities: `count` must be in [1, {min(n - 1, MAX_COUNT)}] (n - 1, and a "
                         f"thread's list at most {MAX_COUNT}), got {count}")
    context(ordinal)
    x0, y0, side, gx, gy = grid_of(coords)
    cx = np.clip(((coords[:, 0] - x0) / side).astype(np.int64), 0, gx - 1)
    cy = np.clip(((coords[:, 1] - y0) / side).astype(np.int64), 0, gy - 1)
    cell = cy * gx + cx
    order = np.argsort(cell, kind="stable")
    first = np.zeros(gx * gy + 1, dtype=np.int32)
    np.cumsum(np.bincount(cell, minlength=gx * gy), out=first[1:])
    module = load_module(render_skeleton("nearest.cu.j2", POOL=int(count), K=int(k), PER=max(1, int(k) // 4)),
                         "sm_%d%d" % cuda.Context.get_device().compute_capability())
    buffers = DeviceBuffers()
    try:
        return _run(buffers, module, coords, order, first, count, k, (x0, y0, side, gx, gy))
    except cuda.Error as exc:                   # out of memory, above all
        raise KernelLaunchError(f"nearest cities of {n:,} cities: {exc}") from exc
    finally:
        buffers.close()


def _run(buffers, module, coords, order, first, count, k, grid) -> np.ndarray:
    """The kernels on the sorted cities: the lists by the cities' own indices."""
    n = len(coords)
    x0, y0, side, gx, gy = grid
    blocks = ((n + BLOCK - 1) // BLOCK, 1, 1)
    xy, ids = buffers.upload(coords[order]), buffers.upload(order.astype(np.int32))
    firsts, out = buffers.upload(first), buffers.alloc(n * count * 4)
    args = pack("PPPPdddqii", int(xy), int(ids), int(firsts), int(out), x0, y0, side, n, gx, gy)
    launch(module.get_function("nearest"), "nearest cities", blocks, BLOCK, args)
    width, result = count, out
    if k:
        width, result = k, buffers.alloc(n * k * 4)
        launch(module.get_function("quadrants"), "quadrant lists", blocks, BLOCK,
               pack("PPPq", int(buffers.upload(coords)), int(out), int(result), n))
    synchronize("nearest cities")
    return download(result, (n, width), np.int32)
