"""Candidate lists at scale: the GPU's grid against the host's k-d tree (the constant
GPU_NEAREST_FROM of problems/candidates.py, and the issue's "candidate lists in at most 1 s at
1,000,000 cities").

    python -m benchmarks.probes.candidate_lists 100000,200000,1000000,10000000 [repeats]

For each size, on portgen's uniform instance (seed n), the wall time of: the 40 nearest cities
on the GPU and from the k-d tree; the 10 quadrant candidates on the GPU (nearest cities and
quadrant picks there) and on the host (k-d tree, then the threaded selection); the Hilbert
tour (TourSegments' start, on the host). The first of
``repeats`` runs builds the kernels; every run is printed, and the GPU's lists are checked
against the host's (equal rows, ties aside, counted).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks.__main__ import commit
from benchmarks.portgen import portgen
from lsmgpu.backends import cuda_available
from lsmgpu.backends.cuda.nearest import nearest_on_gpu, quadrant_on_gpu
from problems import candidates


def timed(function, *args):
    t0 = time.perf_counter()
    value = function(*args)
    return time.perf_counter() - t0, value


def main(sizes: list[int], repeats: int) -> None:
    print(f"# device: {cuda_available()[1]} · commit: {commit()}", flush=True)
    for n in sizes:
        coords = portgen(n, n).astype(np.float64)
        pool = max(4 * 10, 32)
        for rep in range(repeats):
            gpu_nearest, near = timed(nearest_on_gpu, coords, 40)
            gpu_quadrant, quad = timed(quadrant_on_gpu, coords, 10, pool)
            curve, _ = timed(candidates.hilbert_tour, coords)
            line = (f"n={n} rep={rep} nearest_on_gpu(40)={gpu_nearest:.3f}s "
                    f"quadrant_on_gpu(10)={gpu_quadrant:.3f}s hilbert_tour={curve:.3f}s")
            if n <= 2_000_000:
                host_nearest, tree = timed(candidates._tree_neighbours, coords, 40)
                saved, candidates.GPU_NEAREST_FROM = candidates.GPU_NEAREST_FROM, n + 1
                try:
                    host_quadrant, host_quad = timed(candidates.quadrant_candidates, coords, 10)
                finally:
                    candidates.GPU_NEAREST_FROM = saved
                line += (f" k-d_tree(40)={host_nearest:.3f}s host_quadrant(10)={host_quadrant:.3f}s"
                         f" nearest_rows_equal={np.mean(np.all(near == tree, axis=1)):.4f}"
                         f" quadrant_rows_equal={np.mean(np.all(quad == host_quad, axis=1)):.4f}")
            print(line, flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1].split(",")], int(sys.argv[2]) if len(sys.argv) > 2 else 2)
