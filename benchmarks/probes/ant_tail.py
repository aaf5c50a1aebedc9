"""What an iteration of focused ants costs with their number, and how long its slowest ants run.

Every ant of a FocusedACO iteration is one launch (lsmgpu/backends/cuda/focused.py), so the
iteration ends when its slowest ant ends. Three colonies side by side, three times the ants, cost
only 1.45-2 times one colony's iteration at 60 s (docs/benchmarks/tsp-depth.md, "Colonies side by
side"): the GPU waits on a few long ants. For each entry of ``configs`` (A: one colony of A ants,
CxA: C colonies of A ants) the probe runs the CLI's 5-opt configuration (the 5 α-nearest, chains
of FIVE_OPT_DEPTH 5-opt levels alone, no restarts) for ``warm_up`` iterations, then times
``iterations`` more, each ant build with CUDA events on a GPU (the host's clock on the CPU), and
reads every ant's checks in each: the median and the 90th percentile of an iteration's
milliseconds; over every timed ant, the median, the 99th percentile and the most of its checks.
On the H200 the slowest ant checks 3.4 times the median, and 192 ants cost what 448 cost; stopping
the last ants early buys 1.5 times the iterations on rl11849 but loses the gap at 60 s (the ants that
descend longest find the better tours: docs/benchmarks/tsp-depth.md, "Moved cities and an ant's
checks at 60 s").

    python -m benchmarks.probes.ant_tail .data/tsplib rl11849,u1817 192,448,3x448 20
    python -m benchmarks.probes.ant_tail .data/tsplib rl11849,rl5915 448 20 256,512,1024

The optional fifth argument lists the threads of an ant's block (``CudaFocusedAnts.kopt_block``, the
5-opt ants') to time each configuration at (the ants are the same at every size: ties go to the
lowest sequence).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from lsmgpu.cli_population import FIVE_OPT_DEPTH
from problems.tsp import TSP

from .watched_colony import WatchedACO

#: iterations run before the timed ones (the start's descent, the colony's first steps)
WARM_UP = 5


def parse_config(text: str) -> tuple[int, int]:
    """(colonies, ants a colony) from "A" or "CxA"."""
    colonies, _, ants = text.rpartition("x")
    return int(colonies or 1), int(ants)


class TimedACO(WatchedACO):
    """FocusedACO that keeps, from iteration ``warm_up`` on, each build's milliseconds in
    ``took`` and each ant's checks in that build in ``checks``."""

    warm_up: int

    def _set_up(self) -> None:
        super()._set_up()
        self.took, self.checks = [], []

    def _watch(self, build) -> np.ndarray:
        if self.iteration < self.warm_up:
            return build(self.iteration)
        before = np.array(self.colony.memory()["checks"])
        lengths, ms = timed(self.backend.name, lambda: build(self.iteration))
        self.took.append(ms)
        self.checks.append(np.array(self.colony.memory()["checks"]) - before)
        return lengths


def timed(backend: str, work):
    """``work()``'s result and its milliseconds: CUDA events around it on a GPU, else the clock."""
    if backend == "cuda":
        from lsmgpu.backends.cuda.driver import cuda
        start, end = cuda.Event(), cuda.Event()
        start.record()
        out = work()
        end.record()
        end.synchronize()
        return out, end.time_since(start)
    started = time.perf_counter()
    out = work()
    return out, 1000 * (time.perf_counter() - started)


def probe(problem, colonies: int, ants: int, iterations: int, backend: str = "cuda", warm_up: int = WARM_UP,
          depth: int = FIVE_OPT_DEPTH) -> dict:
    """One configuration's row (chains of ``depth`` levels): the timed iterations' milliseconds and
    their ants' checks."""
    search = TimedACO(problem, ants=ants, colonies=colonies, candidates="alpha", lk_depth=depth, lk_move=5,
                      chain_alone=True, restart_after=None, backend=backend, seed=0)
    search.warm_up = warm_up
    result = search.run(iterations=warm_up + iterations)
    took, checks = np.array(search.took), np.concatenate(search.checks)
    return {"instance": problem.name, "colonies": colonies, "ants": ants, "timed": len(took),
            "ms_median": float(np.median(took)), "ms_p90": float(np.percentile(took, 90)),
            "checks_median": float(np.median(checks)), "checks_p99": float(np.percentile(checks, 99)),
            "checks_most": int(checks.max()), "gap_pct": round(100 * problem.gap(result.fitness), 3),
            "device": search.device}


def main(folder: str, names: str, configs: str, iterations: int, blocks: str | None = None) -> None:
    from lsmgpu.backends.cuda.focused import CudaFocusedAnts
    for name in names.split(","):
        problem = TSP.from_file(Path(folder) / f"{name}.tsp")
        for config in configs.split(","):
            for block in (int(b) for b in blocks.split(",")) if blocks else (CudaFocusedAnts.kopt_block,):
                CudaFocusedAnts.kopt_block = block
                print({"block": block, **probe(problem, *parse_config(config), iterations)}, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), *sys.argv[5:6])
