"""Probe: where a construction step's time goes (MMAS, m = n ants, candidate lists of 32, one warp
an ant): the construction kernel's time with parts of its source changed or left out, to see
which part of a step's dependent chain costs what; then the base kernel under several shared
memory carve-outs (the rest of the unified memory is L1, which caches the candidate lists).
Ablations ("no_*") build wrong tours on purpose (still permutations): timings only.

    python -m benchmarks.probes.colony_step .data/tsplib pr1002,pr2392 [syncwarp+ldg,...] [roulette-ct,wrs-ct]
"""
import statistics
import sys

import numpy as np

from lsmgpu.backends import resolve
from lsmgpu.backends.colony import Construction, colony_for
from lsmgpu.backends.cuda.driver import cuda, load_module
from lsmgpu.kernels import render_skeleton
from lsmgpu.problems import TSP

LIST_READ = "            const int u = listed_u;\n"
#: the first lanes' candidates' rows of items fetched to L1 ahead of the pick
PREFETCH = ("            if (lane < %d) asm volatile(\"prefetch.global.L1 [%%0];\" :: "
            "\"l\"((const unsigned short*)c.cand_items + (unsigned)u * c.k));\n")
#: (name, [(old, new), ...]) applied to the rendered kernel source
VARIANTS = [
    ("base", []),
    ("prefetch2", [(LIST_READ, LIST_READ + PREFETCH % 2)]),
    ("prefetch4", [(LIST_READ, LIST_READ + PREFETCH % 4)]),
    ("syncwarp_end", [("        row = chosen;\n\n        __syncthreads();\n    }",
                       "        row = chosen;\n        if (blockDim.x == 32) __syncwarp();\n"
                       "        else __syncthreads();\n    }")]),
    ("no_scan", [("const float sum = warp_inclusive_scan(w, lane);", "const float sum = w;")]),
    ("no_fallback", [("chosen = choose_listed(c, T, left, row, true,",
                      "chosen = T[0]; if (0) chosen = choose_listed(c, T, left, row, true,"),
                     ("return T[u] > u;", "return T[u] > u;")]),          # list tabus only (CT's T[0] an item)
]


FALLBACK = "            chosen = choose_listed(c, T, left, row, true, seed, iteration, ant, base, s_key, s_item, s_sum);\n"
FALLBACK_LOOP = "    for (int first = threadIdx.x; first < count; first += 4 * blockDim.x) {      // four loads in flight\n"
LISTED = "            us[j] = i < count ? listing(T, c.n, i) : -1;\n"
VARIANTS += [
    # the fallback's search over the unvisited items at every step (its cost; other tours)
    ("every_step_fallback", [(FALLBACK, FALLBACK + "            chosen = min(chosen, choose_listed(c, T, left, row, "
                                                   "true, seed, iteration, ant, base, s_key, s_item, s_sum));\n")]),
    # the fallback over the items in index order (coalesced rows, the visited set asked per item)
    ("index_fallback", [(FALLBACK_LOOP, FALLBACK_LOOP.replace("first < count", "first < c.n")),
                        (LISTED, "            us[j] = i < c.n && !visited(T, c.n, left, i) ? i : -1;\n")]),
]
#: variants that must build the base kernel's tours
SAME_TOURS = ("base", "index_fallback")

#: shared-memory carve-outs tried on the base kernel (percent of the unified L1 / shared memory)
CARVEOUTS = (100, 25)


def source_of(selection: str, tabu: str, shared_lists: bool) -> str:
    """The colony's construction kernel as CudaColony renders it (``shared_lists``: its ``per_block``)."""
    return render_skeleton("colony.cu.j2", KIND="successor", SELECTION=selection, TABU=tabu, GREEDY=False,
                           LOCAL_UPDATE="none", MEMORY="matrix", HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=True,
                           SHARED_TABU=True, SLOTS=8, CHOICE=True, LIST_ITEM="unsigned short",
                           SHARED_LISTS=shared_lists)


def timed(colony, n: int, repeats: int = 5) -> tuple[float, np.ndarray]:
    """The construction's median seconds and the last tours."""
    rng, times = np.random.default_rng(0), []
    for k in range(repeats + 1):
        tours = colony.construct(7, k, rng.integers(0, n, n))
        assert np.array_equal(np.sort(tours[:3], axis=1), np.tile(np.arange(n), (3, 1)))
        times.append(colony.kernel_seconds)
    return statistics.median(times[1:]), tours


if __name__ == "__main__":
    folder, names = sys.argv[1], sys.argv[2].split(",")
    combos = [v.split("+") for v in (sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] else [])]
    backend = resolve("cuda")
    table = dict(VARIANTS)
    for name in names:
        problem = TSP.from_file(f"{folder}/{name}.tsp")
        n, model = problem.n, problem.colony_model(32)
        kinds = sys.argv[4].split(",") if len(sys.argv) > 4 else ["roulette-ct", "wrs-ct", "roulette-bt"]
        for selection, tabu in (kind.split("-") for kind in kinds):
            c = Construction(selection=selection, tabu=tabu, beta=2.0, tau0=1e-4, warps=1)
            colony = colony_for(backend, model, c, n, n)
            arch = "sm_%d%d" % cuda.Context.get_device().compute_capability()
            try:
                for variant in [[v] for v, _ in VARIANTS] + combos:
                    source = source_of(selection, tabu, bool(colony.per_block))
                    changes = [change for part in variant for change in table[part]]
                    if not all(old in source for old, _ in changes):
                        continue                # a part this kernel does not have
                    for old, new in changes:
                        source = source.replace(old, new)
                    module = load_module(source, arch)
                    for function in ("construct", "choice_info"):
                        colony.functions[function] = module.get_function(function)
                    seconds, tours = timed(colony, n)
                    label = "+".join(variant)
                    if label == "base":
                        base_tours = tours
                    same = f", same tours as base: {np.array_equal(tours, base_tours)}" if label in SAME_TOURS else ""
                    print(f"{name} {selection}-{tabu} {label}: {1000 * seconds:.3f} ms{same}", flush=True)
                module = load_module(source_of(selection, tabu, bool(colony.per_block)), arch)
                base = colony.functions["construct"] = module.get_function("construct")
                colony.functions["choice_info"] = module.get_function("choice_info")
                for carveout in CARVEOUTS:       # the share of L1 / shared memory kept as shared, %
                    base.set_attribute(cuda.function_attribute.PREFERRED_SHARED_MEMORY_CARVEOUT, carveout)
                    print(f"{name} {selection}-{tabu} carveout {carveout}: {1000 * timed(colony, n)[0]:.3f} ms",
                          flush=True)
                base.set_attribute(cuda.function_attribute.PREFERRED_SHARED_MEMORY_CARVEOUT, -1)   # the driver's again
            finally:
                colony.close()
