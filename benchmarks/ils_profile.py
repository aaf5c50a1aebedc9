"""Where an ILS kick's time goes on the GPU: cProfile of a few seconds of ILS (candidate 2-opt,
Or-opt polish) from the 2-opt + Or-opt local optimum, and the calls per kick of the engine's
entry points (descent steps, solution loads, GPU copies).

    python3 -W ignore benchmarks/ils_profile.py dsj1000 pcb3038 d18512     # reads .data/tsplib
"""
import collections
import cProfile
import pstats
import sys

from lsmgpu import IteratedLocalSearch, OrOpt
from lsmgpu.backends.cuda import CudaBackend, CudaEvaluator
from lsmgpu.problems import TSP

SECONDS = 3.0
COUNTED = ("_fused", "load", "load_from", "deltas", "apply")


def count_calls(counts):
    """Wrap CudaEvaluator's entry points so that each call is counted."""
    for name in COUNTED:
        original = getattr(CudaEvaluator, name)

        def counted(self, *a, _original=original, _name=name, **k):
            counts[_name] += 1
            return _original(self, *a, **k)
        setattr(CudaEvaluator, name, counted)


def main(names, local_search="best"):
    counts = collections.Counter()
    count_calls(counts)
    for name in names:
        tsp = TSP.from_file(f".data/tsplib/{name}.tsp", neighbourhood="2opt-candidates")
        polish = OrOpt(tsp.neighbourhood.candidates)
        start = IteratedLocalSearch(tsp, seed=0, backend=CudaBackend(), polish=polish).run(iterations=0).solution
        IteratedLocalSearch(tsp, seed=0, backend=CudaBackend(), initial=start, polish=polish).run(seconds=1.0)
        counts.clear()
        profile = cProfile.Profile()
        search = IteratedLocalSearch(tsp, seed=0, backend=CudaBackend(), initial=start, polish=polish,
                                     local_search=local_search)
        profile.enable()
        r = search.run(seconds=SECONDS)
        profile.disable()
        kicks = max(1, r.iterations)
        print(f"== {name} ({local_search}): {r.iterations} kicks in {r.seconds:.2f} s, "
              f"{1e3 * r.seconds / kicks:.3f} ms/kick (under cProfile); calls per kick:",
              {k: round(v / kicks, 2) for k, v in counts.items()}, flush=True)
        pstats.Stats(profile).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main(sys.argv[1:])
