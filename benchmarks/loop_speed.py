"""Seconds per run of each kind of search through the run loop, to compare two commits on one
device (the one loop's refactor must leave the searches' speed within noise).

Runs, with seeds and iteration budgets (the same work at every commit): tabu search on tai100a
(10,000 moves), ILS on pr2392 (100 kicks), MMAS with its local search on pr1002 (20 colony
iterations), the GA on pr2392 (2,048 genes, 200 generations), FocusedACO on pr2392 (200
iterations), and a batched tabu multi-start on tai100a (64 starts x 2,000 moves). Each: the
median wall time of ``repeats`` runs after one warm-up run, and the final fitness (equal at two
commits where the trajectory is the same).

    python -m benchmarks.loop_speed --data .data --out DIR [--backend cuda] [--repeats 5] [--runs tabu,ils]

It imports whichever lsmgpu is first on the path, so one copy of this file times two commits.
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import time
from pathlib import Path

import lsmgpu
from lsmgpu import GeneticAlgorithm, IteratedLocalSearch, MaxMinAntSystem, MultiStart, TabuSearch
from lsmgpu.problems import QAP, TSP
from lsmgpu.search import FocusedACO


def runs(data: Path, backend: str) -> dict:
    """name -> (a function making the search, its iterations)."""
    tai100a = QAP.from_file(data / "qaplib" / "tai100a.dat")
    pr2392 = TSP.from_file(data / "tsplib" / "pr2392.tsp")
    pr1002 = TSP.from_file(data / "tsplib" / "pr1002.tsp")
    return {
        "tabu tai100a": (lambda: TabuSearch(tai100a, seed=0, backend=backend), 10_000),
        "ils pr2392": (lambda: IteratedLocalSearch(pr2392, seed=0, backend=backend), 100),
        "mmas+ls pr1002": (lambda: MaxMinAntSystem(pr1002, local_search="auto", seed=0, backend=backend), 20),
        "ga pr2392": (lambda: GeneticAlgorithm(pr2392, genes=2048, seed=0, backend=backend), 200),
        "faco pr2392": (lambda: FocusedACO(pr2392, seed=0, backend=backend), 200),
        "64 tabu starts tai100a": (lambda: MultiStart("tabu", tai100a, starts=64, seed=0, backend=backend), 2_000),
    }


def commit() -> str:
    """$LSMGPU_COMMIT, else git's short hash of the working directory."""
    if os.environ.get("LSMGPU_COMMIT"):
        return os.environ["LSMGPU_COMMIT"]
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.loop_speed")
    parser.add_argument("--data", type=Path, default=Path(".data"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", default="", help="comma-separated names' first words (default: every run)")
    args = parser.parse_args(argv)
    chosen = set(filter(None, args.runs.split(",")))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "loop_speed.csv"
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(["commit", "lsmgpu_file", "run", "iterations", "median_s", "min_s", "max_s", "fitness"])
        for name, (make, iterations) in runs(args.data, args.backend).items():
            if chosen and name.split()[0] not in chosen:
                continue
            result = make().run(iterations)                      # warm-up: kernels built and tuned
            times = []
            for _ in range(args.repeats):
                search = make()
                t0 = time.perf_counter()
                result = search.run(iterations)
                times.append(time.perf_counter() - t0)
            row = [commit(), lsmgpu.__file__, name, iterations, f"{statistics.median(times):.4f}",
                   f"{min(times):.4f}", f"{max(times):.4f}", f"{result.fitness:g}"]
            writer.writerow(row)
            f.flush()
            print(*row, sep=" | ", flush=True)


if __name__ == "__main__":
    main()
