"""Whether DontLookILS's descents of its start pay on a backend (``DontLookILS._descended_starts``):
the 5-opt chains alone (chains of FIVE_OPT_DEPTH levels of LKH's 5-opt basis moves over the 5
α-nearest, the command's CPU checks) from the problem's start tour, with each way of VARIANTS:
"pre" the 2-opt + Or-opt descent of the start first (``pre_descent``), "start" the chains' own
descent of it, wide on a GPU, the chains loaded at its local optimum (``start_descent``),
"pre+start" both, "none" neither (every chain's first 5-opt descent from the start itself).

    python -m benchmarks.probes.pre_descent .data pr2392:10,rl5915:20,d18512:30 0,1 cuda [pre,none [CHAINS]]

For each NAME:SECONDS and seed, after a warm-up run (the kernels built), one run each way with the
budget SECONDS counted from the search's making (the α-ascent inside it): its gap to the optimum,
wall seconds, the chains and their kicks, how the run ended, the start's descents' own seconds,
and the best's gap at a quarter and at half the budget (the run's improvements).
"""
from __future__ import annotations

import sys
import time

from benchmarks.__main__ import commit
from lsmgpu import DontLookILS
from lsmgpu.backends import cuda_available
from lsmgpu.cli_population import FIVE_OPT_DEPTH
from lsmgpu.problems import TSP

CHAINS_ALONE = dict(candidates="alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5, chain_alone=True)


def run(path: str, seconds: float, seed: int, backend: str, variant: str, chains: int | None = None) -> dict:
    """One run of ``chains`` (None: the search's default) 5-opt chains alone, the start's descents of
    ``variant`` (the module's docstring)."""
    problem = TSP.from_file(path)
    t0 = time.perf_counter()
    ways = variant.split("+")
    search = DontLookILS(problem, seed=seed, backend=backend, pre_descent="pre" in ways,
                         start_descent="start" in ways, chains=chains, **CHAINS_ALONE)
    spent, descend = [], search._descended_starts

    def timed(xs):
        started = time.perf_counter()
        try:
            return descend(xs)
        finally:
            spent.append(time.perf_counter() - started)
    search._descended_starts = timed
    result = search.run(seconds=seconds - (time.perf_counter() - t0), target=problem.best_known)
    wall = time.perf_counter() - t0
    assert problem.evaluate(result.solution) == result.fitness
    kicks, _ = search.work
    at = {share: min([value for _, t, value in result.improvements if t <= share * seconds], default=float("nan"))
          for share in (0.25, 0.5)}
    return dict(gap=100 * problem.gap(result.fitness), wall=wall, kicks=kicks, chains=search.chains,
                status=result.status, descent_s=sum(spent), **{f"gap_at_{share}": 100 * problem.gap(value)
                                                               for share, value in at.items()})


def main(data: str, specs: str, seeds: str, backend: str, variants: str = "pre,none", chains: str = "") -> None:
    device = cuda_available()[1] if backend != "cpu" else "CPU"
    print(f"# device: {device} · backend: {backend} · commit: {commit()}", flush=True)
    print("instance | seconds | seed | start's descents | gap % | wall s | chains | kicks | status | descents s | "
          "gap % at a quarter | at half")
    for spec in specs.split(","):
        name, seconds = spec.split(":")
        path = f"{data}/tsplib/{name}.tsp"
        DontLookILS(TSP.from_file(path), seed=0, backend=backend, pre_descent=True,
                    **CHAINS_ALONE).run(iterations=1)                                       # the builds
        for seed in (int(s) for s in seeds.split(",")):
            for variant in variants.split(","):
                row = run(path, float(seconds), seed, backend, variant, int(chains) if chains else None)
                print(f"{name} | {seconds} | {seed} | {variant} | {row['gap']:.3f} | "
                      f"{row['wall']:.2f} | {row['chains']} | {row['kicks']} | {row['status']} | "
                      f"{row['descent_s']:.2f} | {row['gap_at_0.25']:.3f} | {row['gap_at_0.5']:.3f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:7])
