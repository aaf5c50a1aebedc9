"""A/B probe of the ILS's solution copies on the GPU: kicks per second with ``load_from``
copying the tour and its derived arrays on the device (what ILS does) against the same search
with ``load_from`` patched to recompute and upload them from the host (the earlier behaviour),
in one process on one machine, alternating.

    python3 -W ignore benchmarks/ils_ab_probe.py dsj1000 pcb3038 d18512     # reads .data/tsplib
"""
import sys

from lsmgpu import IteratedLocalSearch, OrOpt
from lsmgpu.backends.cuda import CudaBackend, CudaEvaluator
from lsmgpu.problems import TSP

SECONDS = 5.0


def main(names):
    copy_on_gpu = CudaEvaluator.load_from
    for name in names:
        tsp = TSP.from_file(f".data/tsplib/{name}.tsp", neighbourhood="2opt-candidates")
        polish = OrOpt(tsp.neighbourhood.candidates)
        start = IteratedLocalSearch(tsp, seed=0, backend=CudaBackend(), polish=polish).run(iterations=0).solution
        for variant in ("gpu copy", "host reload") * 2:
            CudaEvaluator.load_from = copy_on_gpu if variant == "gpu copy" else (lambda self, other: self.load(other.x))
            r = IteratedLocalSearch(tsp, seed=0, backend=CudaBackend(), initial=start, polish=polish).run(seconds=SECONDS)
            print(name, variant, r.iterations, "kicks in", round(r.seconds, 2), "s:",
                  round(1e3 * r.seconds / max(1, r.iterations), 3), "ms/kick", r.fitness, flush=True)
    CudaEvaluator.load_from = copy_on_gpu


if __name__ == "__main__":
    main(sys.argv[1:])
