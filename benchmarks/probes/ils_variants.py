"""Probe: ILS kick and polish variants on the same instances and kick budgets (gap % after
each multiple of n kicks, seconds), to choose the TSP ILS defaults.

    python3 -W ignore -m benchmarks.probes.ils_variants --instances pr1002,pcb1173 --kicks 1,2 \
        --variants oropt:random,3opt:window50   # reads .data/tsplib; cuda unless --cpu
"""
import argparse

import numpy as np

import lsmgpu.problems.tsp as tsp_module
from benchmarks.tsp_quality import ils_checkpoints
from lsmgpu import CandidateThreeOpt, OrOpt
from lsmgpu.problems import TSP


def walk_kick(tsp, steps):
    """kick_moves whose three cuts are at a random city and two cities a random walk of
    ``steps`` candidate hops away from it (close in the plane, anywhere in the tour)."""
    cand = tsp.neighbourhood.candidates

    def cuts(tour, rng):
        n = len(tour)
        while True:
            u = int(rng.integers(n))
            picks = {u}
            while len(picks) < 3:
                c = u
                for _ in range(steps):
                    c = int(cand[c, rng.integers(cand.shape[1])])
                picks.add(c)
            pos = sorted(int(np.flatnonzero(tour == c)[0]) or n for c in picks)
            if len(set(pos)) == 3:
                return tuple(pos)

    def kick_moves(tour, rng, strength):
        kicked = np.array(tour)
        return np.concatenate([tsp_module.double_bridge_moves(tsp.neighbourhood, kicked, cuts(kicked, rng))
                               for _ in range(strength)])
    return kick_moves


POLISH = {"oropt": [OrOpt], "3opt": [CandidateThreeOpt], "oropt3opt": [OrOpt, CandidateThreeOpt]}


def run(name, variant, factors, backend):
    """``variant``: POLISH:KICK[:accept], KICK one of auto, random, windowN, walkN."""
    polish_name, kick, *accept = variant.split(":")
    window = int(kick[6:]) if kick.startswith("window") else "auto" if kick == "auto" else None
    tsp = TSP.from_file(f".data/tsplib/{name}.tsp", neighbourhood="2opt-candidates", kick_window=window)
    cand = tsp.neighbourhood.candidates
    if kick.startswith("walk"):
        tsp.kick_moves = walk_kick(tsp, int(kick[4:]))
    runs = ils_checkpoints(tsp, backend, factors, None, polish=[nb(cand) for nb in POLISH[polish_name]],
                           acceptance=1e-5 if accept else "better-equal")
    for f, (_, best, seconds, _) in zip(factors, runs):
        print(f"{name} {variant} {f:g}n gap {100 * tsp.gap(best):.3f} % {seconds:.1f} s", flush=True)
    return [100 * tsp.gap(best) for _, best, _, _ in runs]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", required=True)
    parser.add_argument("--kicks", default="1,2")
    parser.add_argument("--variants", default="oropt:auto,3opt:auto,oropt3opt:auto")
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    if args.cpu:
        from lsmgpu.backends import CpuBackend as backend
    else:
        from lsmgpu.backends.cuda import CudaBackend as backend
    factors = [float(f) for f in args.kicks.split(",")]
    for variant in args.variants.split(","):
        gaps = np.array([run(name, variant, factors, backend) for name in args.instances.split(",")])
        print(f"MEAN {variant}", " ".join(f"{f:g}n {g:.3f}" for f, g in zip(factors, gaps.mean(axis=0))), flush=True)


if __name__ == "__main__":
    main()
