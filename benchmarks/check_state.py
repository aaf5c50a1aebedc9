"""Check, iteration by iteration, that the GPU's solution and solution-derived arrays stay equal
to what the host recomputes from its mirror (the first place a state bug shows). State whose
layout the GPU fixes with atomics differs legitimately: PPP's rows inside one bin (`order`,
`words`) and its scratch counters (`cursor`). State the GPU completes itself differs too: the
QAP's delta table is uploaded empty and built by the refresh (compare it with
`QAP.swap_delta_table(x)` instead). On the GPU machine:
    python -m benchmarks.check_state [instance] [--iterations N]"""
import argparse

import numpy as np
import pycuda.driver as cuda

from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.problems import load


def first_mismatch(search):
    """(iteration, what) of the first divergence between device and host, or None."""
    ev, problem = search.evaluator, search.problem
    while not search.step():
        if not np.array_equal(ev.device_solution(), ev.x):
            return search.iteration, "x"
        want = problem.solution_data(ev.x)
        for name, (buf, dtype, shape) in ev.state_buffers.items():
            got = np.empty(shape, dtype)
            cuda.memcpy_dtoh(got, buf)
            if not np.array_equal(got, want[name]):
                return search.iteration, name
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("instance", nargs="?", default="eil51")
    parser.add_argument("--neighbourhood", default="swap")
    parser.add_argument("--iterations", type=int, default=2000)
    args = parser.parse_args()
    for options in ({}, {"selection": "host"}, {"generation": "host"}):
        problem = load(args.instance, neighbourhood=args.neighbourhood)
        search = TabuSearch(problem, seed=0, backend=CudaBackend(**options))
        search.start(iterations=args.iterations)
        print(options, "first mismatch:", first_mismatch(search))


if __name__ == "__main__":
    main()
