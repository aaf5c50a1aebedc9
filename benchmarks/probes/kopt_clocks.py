"""Where a focused ant's time goes with the 5-opt chains alone: SM clocks read by each block's thread 0.

An iteration of FocusedACO lasts as long as its slowest ant, and an ant's descent is its checks
(docs/benchmarks/tsp-depth.md, "Moved cities and an ant's checks"). The probe builds the ants' kernel
with clock64() read by thread 0 at the block's barriers (text added to the rendered source here, the
kernel's work unchanged): the ant's walk, each check, and inside a check's 5-opt chains the stage's
prefixes (ko_prefixes), its sequences with the two reductions, thread 0's decision, the kept moves
made, the kept moves undone where a chain fails, and the rest of a chain's way (its start). Every
block's sums are added into one array; the probe prints each part's share of the ants' clocks and
microseconds a stage and a check (at the SM clock the device reports), with the stages, kept moves
and improving chains counted. The CLI's 5-opt configuration (the 5 α-nearest, chains of
FIVE_OPT_DEPTH levels alone, no restarts), ``ants`` ants, ``iterations`` counted after WARM_UP.

    python -m benchmarks.probes.kopt_clocks .data/tsplib pcb3038,rl5915 448 10
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from lsmgpu.cli_population import FIVE_OPT_DEPTH
from problems.tsp import TSP

from .watched_colony import WatchedACO

#: iterations before the counted ones
WARM_UP = 3
#: the parts, by their slot in the kernel's array
PARTS = {0: "walk", 1: "check (all)", 2: "prefixes", 3: "sequences + reductions", 4: "thread 0's decision",
         5: "kept moves made", 6: "kept moves undone", 7: "a chain's start"}
COUNTS = {8: "stages", 9: "kept moves", 10: "checks", 11: "improving chains"}

#: (anchor, replacement) pairs of the rendered dontlook.cu.j2 (with kopt.cu.j2 and focused.cu.j2)
EDITS = [
    ("struct Shared {",
     "__device__ unsigned long long ko_clock[16];\nstruct Shared {\n    unsigned long long prof[16];"),
    ("__device__ void kopt_search(const Rows& R, int* tour_x, int* tour_pos, int c, Shared& sh, int* copy) {\n",
     "#define PROF(p) if (threadIdx.x == 0) { long long now_ = clock64(); sh.prof[p] += now_ - PK; PK = now_; }\n"
     "__device__ void kopt_search(const Rows& R, int* tour_x, int* tour_pos, int c, Shared& sh, int* copy) {\n"
     "    long long PK = clock64();\n"),
    ("        while (sh.ko_going) {\n", "        while (sh.ko_going) {\n            PROF(7)\n"),
    ("            ko_prefixes(R, x, pos, c, sh, L, first, first_i);\n",
     "            ko_prefixes(R, x, pos, c, sh, L, first, first_i);\n"
     "            PROF(2) if (threadIdx.x == 0) ++sh.prof[8];\n"),
    ("            least_to_first(most, most_i, sh);\n",
     "            least_to_first(most, most_i, sh);\n            PROF(3)\n"),
    ("                    sh.chosen = MOVES;\n", "                    sh.chosen = MOVES; ++sh.prof[11];\n"),
    ("            __syncthreads();\n            if (!sh.ko_going) break;\n",
     "            __syncthreads();\n            PROF(4)\n            if (!sh.ko_going) break;\n"),
    ("            ko_make_kept(x, pos, n, sh, !copy);\n",
     "            ko_make_kept(x, pos, n, sh, !copy);\n            PROF(5) if (threadIdx.x == 0) ++sh.prof[9];\n"),
    ("            for (int r = sh.ko_nundo - 1; r >= 0; --r) reverse(x, pos, n, sh.ko_rev[r][0], sh.ko_rev[r][1]);\n",
     "            for (int r = sh.ko_nundo - 1; r >= 0; --r) reverse(x, pos, n, sh.ko_rev[r][0], sh.ko_rev[r][1]);\n"
     "        __syncthreads();\n        PROF(6)\n"),
    ("__device__ void check(const Rows& R, int k, int* x, int* pos, int* queue, unsigned char* queued, Shared& sh) {\n"
     "    const int n = R.n;\n",
     "__device__ void check(const Rows& R, int k, int* x, int* pos, int* queue, unsigned char* queued, Shared& sh) {\n"
     "    const int n = R.n;\n    long long PC = clock64();\n"),
    ("        if (threadIdx.x == 0) enqueue(queue, queued, n, sh, touched_count(sh.chosen));\n    }\n"
     "    __syncthreads();\n}\n",
     "        if (threadIdx.x == 0) enqueue(queue, queued, n, sh, touched_count(sh.chosen));\n    }\n"
     "    __syncthreads();\n"
     "    if (threadIdx.x == 0) { sh.prof[1] += clock64() - PC; ++sh.prof[10]; }\n}\n"),
    ("    __shared__ int cur, way, walked, moved, next, after;\n",
     "    __shared__ int cur, way, walked, moved, next, after;\n    if (threadIdx.x < 16) sh.prof[threadIdx.x] = 0;\n"
     "    long long PW = clock64();\n"),
    ("    long long done = 0;\n    while (sh.count > 0) {\n",
     "    if (threadIdx.x == 0) sh.prof[0] += clock64() - PW;\n    long long done = 0;\n    while (sh.count > 0) {\n"),
    ("    if (threadIdx.x == 0) R.checks[k] += done;\n",
     "    __syncthreads();\n    if (threadIdx.x < 16) atomicAdd(&ko_clock[threadIdx.x], sh.prof[threadIdx.x]);\n"
     "    if (threadIdx.x == 0) R.checks[k] += done;\n"),
]


def instrumented(render):
    """``render`` (kernels.render_skeleton) with the clocks added to dontlook.cu.j2's source."""
    def render_clocked(name, **context):
        source = render(name, **context)
        if name != "dontlook.cu.j2" or context.get("LK_MOVE") != 5 or " focused(Rows R, Focus F)" not in source:
            return source                                           # the ants' kernel alone
        for anchor, replacement in EDITS:
            if source.count(anchor) != 1:
                raise RuntimeError(f"kopt_clocks: the anchor {anchor[:60]!r} is in the source "
                                   f"{source.count(anchor)} times")
            source = source.replace(anchor, replacement)
        return source
    return render_clocked


class ClockedACO(WatchedACO):
    """FocusedACO whose ants' clocks are zeroed after ``warm_up`` iterations."""

    warm_up: int

    def _watch(self, build):
        if self.iteration == self.warm_up:
            from lsmgpu.backends.cuda.driver import cuda
            address, size = self.colony.module.get_global("ko_clock")
            cuda.memset_d8(address, 0, size)
        return build(self.iteration)


def probe(problem, ants: int, iterations: int) -> dict:
    """One instance's row: each part's share of the ants' clocks and the counts."""
    import numpy as np
    from lsmgpu.backends.cuda.driver import cuda
    search = ClockedACO(problem, ants=ants, candidates="alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5, chain_alone=True,
                        restart_after=None, backend="cuda", seed=0)
    search.warm_up = WARM_UP
    result = search.run(iterations=WARM_UP + iterations)
    address, size = search.colony.module.get_global("ko_clock")
    clocks = np.zeros(16, dtype=np.uint64)
    cuda.memcpy_dtoh(clocks, address)
    device = cuda.Context.get_device()
    mhz = device.get_attribute(cuda.device_attribute.CLOCK_RATE) / 1000
    ant_clocks = float(clocks[0] + clocks[1])
    row = {"instance": problem.name, "ants": ants, "iterations": iterations, "device": search.device,
           "gap_pct": round(100 * problem.gap(result.fitness), 3), "sm_mhz": mhz}
    row.update({COUNTS[s]: int(clocks[s]) for s in COUNTS})
    row.update({f"{PARTS[p]} %": round(100 * float(clocks[p]) / ant_clocks, 1) for p in PARTS})
    chains = float(sum(clocks[p] for p in range(2, 8)))
    row["check rest %"] = round(100 * (float(clocks[1]) - chains) / ant_clocks, 1)
    row["us a stage (chains' parts)"] = round(chains / max(int(clocks[8]), 1) / mhz, 2)
    row["us a check"] = round(float(clocks[1]) / max(int(clocks[10]), 1) / mhz, 2)
    row["stages a check"] = round(int(clocks[8]) / max(int(clocks[10]), 1), 2)
    return row


def main(folder: str, names: str, ants: int, iterations: int) -> None:
    import lsmgpu.backends.cuda.dontlook as dontlook
    os.environ["LSMGPU_QUICK_BUILDS"] = "0"
    dontlook.render_skeleton = instrumented(dontlook.render_skeleton)
    for name in names.split(","):
        print(probe(TSP.from_file(Path(folder) / f"{name}.tsp"), ants, iterations), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
