"""A first build of the 5-opt chains' kernels, whole and as each GPU class builds it: the descents'
(CudaDontLook), the don't-look ILS chains' (CudaChains) and the focused ants' (CudaFocusedAnts)
``kernels`` of templates/skeleton/dontlook.cu.j2, fully optimised (the options of the builds that
run, BUILD_OPTIONS). Justifies each class building only its own kernels (KERNELS): a first run of
focused ACO builds a descent's source twice and the ants' once inside its budget.

    python -m benchmarks.probes.kernel_builds [REPEATS] [nvcc|nvrtc] [OPTION,...]

OPTION,...: build options added to BUILD_OPTIONS for every build of the run (e.g.
``--Ofast-compile=min``: nvcc's and NVRTC's fast compile).

nvrtc (where cuda-bindings is installed; the default there) builds with NVRTC as the runs do, each
build in a process of its own with an empty CUDA compute cache (``CUDA_CACHE_PATH``: NVRTC keeps its
builds there, keyed on more than the source's text, so a changed comment still hits it); nvcc runs
the compiler on PATH (no GPU needed), each repeat's source differing by a comment. Every build is a
first one. Each class's kernels are checked against the same kernels of the whole build:
their machine code (the cubin's ``.text.NAME`` sections) is the same byte for byte, or DIFFERENT.
"""
from __future__ import annotations

import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsmgpu.backends.cuda import nvrtc
from lsmgpu.backends.cuda.dontlook import KOPT_CHAIN_BLOCK, CudaDontLook
from lsmgpu.backends.cuda.dontlook_chains import CudaChains
from lsmgpu.backends.cuda.driver import BUILD_OPTIONS
from lsmgpu.backends.cuda.focused import CudaFocusedAnts
from lsmgpu.backends.dontlook_chains import WALK_TRIES
from lsmgpu.backends.kopt import kopt_context
from lsmgpu.kernels import render_skeleton
from lsmgpu.problems import TSP

#: (label, KERNELS): the whole source (None: every kernel), then each class's build
BUILDS = (("all seven kernels", None), ("CudaDontLook", CudaDontLook.kernels), ("CudaChains", CudaChains.kernels),
          ("CudaFocusedAnts", CudaFocusedAnts.kernels))


def five_opt_source(kernels, shared: bool = True) -> str:
    """dontlook.cu.j2 as focused ACO's 5-opt default renders it (chains of 100 levels alone over the
    5 α-nearest, rows in shared memory, or in global memory where not ``shared``), with ``kernels``
    (None: all)."""
    device = TSP.from_file(TSP.shipped("berlin52")).edge_distance().device_source()
    return render_skeleton("dontlook.cu.j2", K=5, S=3, OR3=0, LK=0, LK_DEPTH=100, LK_STAGE=3, LK_MOVE=5,
                           **kopt_context(5), KO_ALONE=1,
                           BLOCK=KOPT_CHAIN_BLOCK, DISTANCE=device, SHARED_ROWS=shared, WALK_TRIES=WALK_TRIES,
                           SEGMENT_ROWS=0, TABLE_WIDTH=2,
                           **({} if kernels is None else {"KERNELS": kernels}))


def build(source: str, builder: str, options: tuple[str, ...] = BUILD_OPTIONS) -> tuple[float, bytes]:
    """One build of ``source`` for sm_90 with ``options``: its seconds and its cubin."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "kernel.cu")
        with open(path, "w") as f:
            f.write(source)
        if builder == "nvrtc":
            env = {**os.environ, "CUDA_CACHE_PATH": os.path.join(folder, "compute-cache")}
            done = subprocess.run([sys.executable, "-m", __spec__.name, "--nvrtc-build", path, *options], env=env,
                                  check=True, capture_output=True, text=True)
            return float(done.stdout), Path(path + ".cubin").read_bytes()
        t0 = time.perf_counter()
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", *options, "-o", path + ".cubin", path], check=True)
        return time.perf_counter() - t0, Path(path + ".cubin").read_bytes()


def nvrtc_build(path: str, *options: str) -> None:
    """The child of an NVRTC build: builds the source at ``path`` with ``options`` into ``path``.cubin,
    prints its seconds."""
    source = Path(path).read_text()
    t0 = time.perf_counter()
    cubin = nvrtc.compile_cubin(source, "sm_90", options)
    seconds = time.perf_counter() - t0
    Path(path + ".cubin").write_bytes(cubin)
    print(seconds)


def kernel_code(cubin: bytes) -> dict[str, bytes]:
    """Each kernel's machine code in ``cubin``: its ELF section ``.text.NAME``."""
    (offset,) = struct.unpack_from("<Q", cubin, 0x28)                    # e_shoff
    size, count, names = struct.unpack_from("<HHH", cubin, 0x3A)        # e_shentsize, e_shnum, e_shstrndx
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, offset + i * size) for i in range(count)]
    strings = headers[names][4]

    def name(header) -> str:
        at = strings + header[0]
        return cubin[at:cubin.index(b"\0", at)].decode()
    return {name(h)[len(".text."):]: cubin[h[4]:h[4] + h[5]] for h in headers if name(h).startswith(".text.")}


def main() -> None:
    if sys.argv[1:2] == ["--nvrtc-build"]:
        return nvrtc_build(*sys.argv[2:])
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    builder = sys.argv[2] if len(sys.argv) > 2 else ("nvrtc" if nvrtc.available() else "nvcc")
    options = BUILD_OPTIONS + tuple(o for o in (sys.argv[3] if len(sys.argv) > 3 else "").split(",") if o)
    print(f"builder {builder}, options {' '.join(options)}, {repeats} first builds each")
    whole = None
    for label, kernels in BUILDS:
        source = five_opt_source(kernels)
        builds = [build(source + f"\n// repeat {r}\n", builder, options) for r in range(repeats)]
        code = kernel_code(builds[0][1])
        whole = whole or code
        same = ", ".join(f"{k} {'the same' if code[k] == whole.get(k) else 'DIFFERENT'}" for k in code)
        times = [seconds for seconds, _ in builds]
        print(f"{label:20s} median {statistics.median(times):6.2f} s   " + " ".join(f"{t:.2f}" for t in times)
              + f"   machine code against the whole build's: {same}", flush=True)


if __name__ == "__main__":
    main()
