"""nvcc (a process, through PyCUDA) against NVRTC (in process, lsmgpu.backends.cuda.nvrtc) on
three rendered kernels: the median of 3 builds each. Justifies building with NVRTC where
cuda-bindings is installed.

    python -m benchmarks.probes.nvrtc_probe [--data .data]
"""
from __future__ import annotations

import argparse
import statistics
import time

from pycuda.compiler import compile as nvcc_compile

from lsmgpu.backends.cuda import nvrtc
from lsmgpu.backends.cuda.driver import BUILD_OPTIONS
from lsmgpu.kernels import render
from lsmgpu.problems import QAP, TSP


def median_seconds(build, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        build()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.probes.nvrtc_probe")
    parser.add_argument("--data", default=".data")
    data = parser.parse_args().data
    cases = {"tsp rl5915 cand2opt": TSP.from_file(f"{data}/tsplib/rl5915.tsp", neighbourhood="2opt-candidates"),
             "tsp pr2392 2opt": TSP.from_file(f"{data}/tsplib/pr2392.tsp", neighbourhood="2opt"),
             "qap tai100a swap": QAP.from_file(f"{data}/qaplib/tai100a.dat")}
    for name, problem in cases.items():
        source = render(problem)
        nvcc = median_seconds(lambda: nvcc_compile(source, arch="sm_90", no_extern_c=True, cache_dir=False,
                                                   options=list(BUILD_OPTIONS)))
        row = f"{name}: nvcc {nvcc:.3f} s"
        if nvrtc.available():
            row += f", NVRTC {median_seconds(lambda: nvrtc.compile_cubin(source, 'sm_90', BUILD_OPTIONS)):.3f} s"
        else:
            row += ", NVRTC not installed (pip install cuda-bindings)"
        print(row, flush=True)


if __name__ == "__main__":
    main()
