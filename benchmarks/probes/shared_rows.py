"""Probe: the don't-look ILS (256 chains, defaults) with each chain's tour in global memory against
a block's shared memory during a launch, alternating: kicks and checks a second over all chains,
and the gap at the end of ``seconds``.

    python -m benchmarks.probes.shared_rows .data/tsplib pr2392,rl11849 10
"""
import sys

from lsmgpu import DontLookILS
from lsmgpu.backends.cuda import dontlook as cuda_dontlook
from lsmgpu.problems import TSP

if __name__ == "__main__":
    folder, names, seconds = sys.argv[1], sys.argv[2].split(","), float(sys.argv[3])
    for name in names:
        problem = TSP.from_file(f"{folder}/{name}.tsp")
        for share in (False, True, False, True):
            cuda_dontlook.SHARE_ROWS = share
            search = DontLookILS(problem, backend="cuda", seed=0)
            result = search.run(seconds=seconds)
            kicks, checks = int(search.counters["kicks"].sum()), int(search.counters["checks"].sum())
            print(f"{name} {'shared' if share else 'global'}: gap {100 * problem.gap(result.fitness):.3f} %, "
                  f"{kicks / result.seconds:,.0f} kicks/s, {checks / result.seconds:,.0f} checks/s", flush=True)
