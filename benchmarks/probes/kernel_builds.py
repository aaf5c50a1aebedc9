"""A first build of the 5-opt chains' kernels, whole and as each GPU class builds it: the descents'
(CudaDontLook), the don't-look ILS chains' (CudaChains) and the focused ants' (CudaFocusedAnts)
``kernels`` of templates/skeleton/dontlook.cu.j2, fully optimised (the options of the builds that
run, BUILD_OPTIONS). Justifies each class building only its own kernels (KERNELS): a first run of
focused ACO builds a descent's source twice and the ants' once inside its budget.

    python -m benchmarks.probes.kernel_builds [REPEATS] [nvcc|nvrtc]

nvrtc (where cuda-bindings is installed; the default there) builds in process, as the runs do;
nvcc runs the compiler on PATH (no GPU needed). Every build is a first one: each repeat's source
differs by a comment, so that no cache (lsmgpu's, or CUDA's compute cache where NVRTC keeps its
builds) holds it.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from lsmgpu.backends.cuda import nvrtc
from lsmgpu.backends.cuda.dontlook import KOPT_CHAIN_BLOCK, CudaChains, CudaDontLook
from lsmgpu.backends.cuda.driver import BUILD_OPTIONS
from lsmgpu.backends.cuda.focused import CudaFocusedAnts
from lsmgpu.backends.dontlook_chains import WALK_TRIES
from lsmgpu.backends.kopt import KOPT_CANDIDATES, STAGE_LEVELS, reversal_table
from lsmgpu.kernels import render_skeleton
from lsmgpu.problems import TSP

#: (label, KERNELS): the whole source (None: every kernel), then each class's build
BUILDS = (("all seven kernels", None), ("CudaDontLook", CudaDontLook.kernels), ("CudaChains", CudaChains.kernels),
          ("CudaFocusedAnts", CudaFocusedAnts.kernels))


def five_opt_source(kernels) -> str:
    """dontlook.cu.j2 as focused ACO's 5-opt default renders it (chains of 100 levels alone over the
    5 α-nearest, rows in shared memory), with ``kernels`` (None: all)."""
    device = TSP.from_file(TSP.shipped("berlin52")).edge_distance().device_source()
    return render_skeleton("dontlook.cu.j2", K=5, S=3, OR3=0, LK=0, LK_DEPTH=100, LK_STAGE=3, LK_MOVE=5,
                           KO_K=KOPT_CANDIDATES, KO_LEVELS=STAGE_LEVELS, KO_TABLE=reversal_table(), KO_ALONE=1,
                           BLOCK=KOPT_CHAIN_BLOCK, DISTANCE=device, SHARED_ROWS=True, WALK_TRIES=WALK_TRIES,
                           SEGMENT_ROWS=0, TABLE_WIDTH=2,
                           **({} if kernels is None else {"KERNELS": kernels}))


def build_seconds(source: str, builder: str) -> float:
    """One build of ``source`` for sm_90 with BUILD_OPTIONS: its seconds."""
    t0 = time.perf_counter()
    if builder == "nvrtc":
        nvrtc.compile_cubin(source, "sm_90", BUILD_OPTIONS)
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "kernel.cu")
            with open(path, "w") as f:
                f.write(source)
            subprocess.run(["nvcc", "-cubin", "-arch=sm_90", *BUILD_OPTIONS, "-o", path + ".cubin", path], check=True)
    return time.perf_counter() - t0


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    builder = sys.argv[2] if len(sys.argv) > 2 else ("nvrtc" if nvrtc.available() else "nvcc")
    print(f"builder {builder}, {repeats} first builds each")
    for label, kernels in BUILDS:
        source = five_opt_source(kernels)
        times = [build_seconds(source + f"\n// repeat {r}\n", builder) for r in range(repeats)]
        print(f"{label:20s} median {statistics.median(times):6.2f} s   " + " ".join(f"{t:.2f}" for t in times),
              flush=True)


if __name__ == "__main__":
    main()
