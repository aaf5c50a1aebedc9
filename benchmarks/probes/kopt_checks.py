"""What a 5-opt chain's check costs the host: the NumPy reference (lsmgpu/backends/kopt.py), which is
also the CPU's don't-look descents and chains with ``lk_move=5``.

From every other city of three tours of an instance (two local optima of 2-opt + Or-opt from random
tours, one random tour), over its 5 quadrant neighbours and random penalties in [-20, 20), with
chains of ``depth`` levels, ``kopt_check`` is timed alone; the median of ``repeats`` passes is
printed with the chains found and a digest of every check's result (delta, 2-opt steps, queued
cities), so that two commits' runs show the same moves. With ``iterations``, a whole run of the
command's CPU chain with these checks follows (DontLookILS, seed 0, the 5-opt chains of 100 alone over
the α-nearest, ``iterations`` rounds, the α-ascent and the first descent included): its seconds, its
length and its tour's digest. It needs no GPU.

    python -m benchmarks.probes.kopt_checks .data/tsplib pr1002 100 3
    python -m benchmarks.probes.kopt_checks .data/tsplib d657 100 1 60
"""
from __future__ import annotations

import hashlib
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from lsmgpu import DontLookILS
from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules
from lsmgpu.backends.kopt import kopt_check
from lsmgpu.problems import TSP
from problems.candidates import quadrant_candidates


def tours(problem: TSP, candidates: np.ndarray, rng) -> list[np.ndarray]:
    """Two local optima of 2-opt + Or-opt from random tours, then a random tour."""
    descent = CpuDontLook(DontLookRules(candidates, 3), problem.edge_distance(), 2)
    descent.load(np.stack([rng.permutation(problem.n) for _ in range(2)]))
    descent.descend(np.ones(2, bool))
    return [np.array(x, dtype=np.int64) for x in descent.solutions()] + [rng.permutation(problem.n)]


def one_pass(problem: TSP, rules: DontLookRules, xs) -> tuple[float, list]:
    """kopt_check from every other city of each tour: (seconds in the checks, their results)."""
    between, seconds, results = problem.edge_distance().between, 0.0, []
    for x in xs:
        pos = np.empty_like(x)
        pos[x] = np.arange(len(x))
        for c in range(0, problem.n, 2):
            started = time.perf_counter()
            found = kopt_check(c, x, pos, rules, between)
            seconds += time.perf_counter() - started
            results.append(None if found is None else (round(float(found[0]), 6), found[1],
                                                       [tuple(map(tuple, np.asarray(step).tolist())) for step in found[2]],
                                                       [int(city) for city in found[3]]))
    return seconds, results


def whole_run(problem: TSP, iterations: int) -> str:
    """The CPU chain's run of ``iterations`` rounds: its seconds, length and tour digest."""
    result = DontLookILS(problem, backend="cpu", seed=0, candidates="alpha", lk_depth=100, lk_move=5,
                         chain_alone=True).run(iterations=iterations)
    digest = hashlib.sha1(np.asarray(result.solution, dtype=np.int64).tobytes()).hexdigest()[:12]
    return f"{result.seconds:.2f} s, length {result.fitness:g}, tour {digest}"


def main(data: str, instance: str, depth: str = "100", repeats: str = "3", iterations: str = "") -> None:
    problem = TSP.from_file(Path(data) / f"{instance}.tsp")
    rng = np.random.default_rng(problem.n)
    candidates = quadrant_candidates(problem.coords, 5)
    rules = DontLookRules(candidates, 3, lk_depth=int(depth), lk_move=5, penalties=rng.uniform(-20, 20, problem.n))
    xs = tours(problem, candidates, rng)
    commit = os.environ.get("LSMGPU_COMMIT") or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                                               capture_output=True, text=True).stdout.strip()
    print(f"device: CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores) · commit: {commit}")
    passes = [one_pass(problem, rules, xs) for _ in range(int(repeats))]
    results = passes[0][1]
    digest = hashlib.sha1(repr(results).encode()).hexdigest()[:12]
    print(f"{instance}, chains of {depth}: {len(results)} checks, {sum(r is not None for r in results)} chains found, "
          f"median {statistics.median(s for s, _ in passes):.2f} s of {repeats} "
          f"({', '.join(f'{s:.2f}' for s, _ in passes)}), results {digest}", flush=True)
    if iterations:
        print(f"{instance}, the CPU chain's run of {iterations} rounds: {whole_run(problem, int(iterations))}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
