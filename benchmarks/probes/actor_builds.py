"""Whether a Ray actor's full kernel builds outlive a short run: two RayIslands runs of focused ACO
with the 5-opt chains, one after the other in one driver process, a machine's first (lsmgpu's and
CUDA's caches empty: depth.user_environment; quick builds first), each actor started before its run
(``start_actors``, timed: the second waits for the first actor's GPU). ``end``: the actors end after
their builds (``ActorBuilds.end_after_builds``, lsmgpu/parallel/distributed.py); ``kill``: killed at the
run's end as before it, the full builds lost. Each way in a process of its own; per run: the seconds
its actor took to start, the cubins in lsmgpu's cache at its end, the seconds it waited for builds,
its iterations.

    python -m benchmarks.probes.actor_builds .data/tsplib pcb3038 5 kill,end
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from ..depth import user_environment


def child(path: str, seconds: float, way: str) -> None:
    """Two runs of one island in this process, the way's end of actors; a JSON line per run."""
    import ray

    from lsmgpu.parallel import ray_islands
    from lsmgpu.problems import TSP
    if way == "kill":
        ray_islands.end_actors = lambda actors: [ray.kill(actor) for actor in actors]
    ray.init(address="local", num_gpus=1, include_dashboard=False, log_to_driver=False)     # a cluster of its own
    problem = TSP.from_file(path)
    options = dict(candidates="alpha", lk_depth=100, lk_move=5, chain_alone=True, restart_after=30)
    for run in (1, 2):
        islands = ray_islands.RayIslands(problem, method="faco", islands=1, seed=0, **options)
        started = time.perf_counter()
        islands.start_actors()
        start_s = time.perf_counter() - started
        result = islands.run(seconds=seconds)
        cubins = os.path.join(os.environ["LSMGPU_CACHE"], "cubin")
        print(json.dumps({"way": way, "run": run, "actor_start_s": round(start_s, 2),
                          "cubins_held": len(os.listdir(cubins)) if os.path.isdir(cubins) else 0,
                          "build_wait_s": round(result.timings.get("build", 0.0), 2), "iterations": result.iterations,
                          "fitness": result.fitness}), flush=True)
    time.sleep(0.5)
    ray.shutdown()


def main(argv: list[str]) -> None:
    if argv[0] == "child":
        child(argv[1], float(argv[2]), argv[3])
        return
    data, instance, seconds, ways = argv[0], argv[1], argv[2], argv[3].split(",")
    path = os.path.join(data, f"{instance}.tsp")
    for way in ways:
        with tempfile.TemporaryDirectory() as folder:
            subprocess.run([sys.executable, "-m", __spec__.name, "child", path, seconds, way],
                           env=user_environment(folder), check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
