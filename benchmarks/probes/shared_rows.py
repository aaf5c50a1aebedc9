"""Probe: the don't-look ILS (256 chains, defaults) or focused ACO (defaults, Or-3opt) with each
chain's / ant's tour in global memory against its block's shared memory during a launch,
alternating: the ILS's kicks and checks a second over all chains, FACO's iterations a second, and
the gap at the end of ``seconds`` (the first pair's seconds include the kernels' builds).

    python -m benchmarks.probes.shared_rows .data/tsplib pr2392,rl11849 10 [ils|faco]
"""
import sys

from lsmgpu import DontLookILS, FocusedACO
from lsmgpu.backends.cuda import dontlook as cuda_dontlook
from lsmgpu.problems import TSP

if __name__ == "__main__":
    folder, names, seconds = sys.argv[1], sys.argv[2].split(","), float(sys.argv[3])
    method = sys.argv[4] if len(sys.argv) > 4 else "ils"
    for name in names:
        problem = TSP.from_file(f"{folder}/{name}.tsp")
        for share in (False, True, False, True):
            cuda_dontlook.SHARE_ROWS = share
            search = (DontLookILS if method == "ils" else FocusedACO)(problem, backend="cuda", seed=0)
            result = search.run(seconds=seconds)
            rates = f"{result.iterations / result.seconds:,.1f} iterations/s"
            if method == "ils":
                kicks, checks = int(search.counters["kicks"].sum()), int(search.counters["checks"].sum())
                rates = f"{kicks / result.seconds:,.0f} kicks/s, {checks / result.seconds:,.0f} checks/s"
            print(f"{name} {method} {'shared' if share else 'global'}: gap {100 * problem.gap(result.fitness):.3f} %, "
                  f"{rates}", flush=True)
