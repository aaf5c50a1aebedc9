"""Fosin et al.'s Table 1 in shape: one pass of candidate 3-opt (every (city, candidate,
candidate) triple evaluated and the best move found, no move applied) on the CPU and on the GPU
over the Euclidean TSPLIB instances of 70 to 18,512 cities, in the paper's three size groups.

The paper's pass: m = 40 quadrant neighbours, four pure reconnections, the tour the
nearest-neighbour start; times averaged over 10 runs on a GTX 470 (GPU) and one core of a
Core i7 (CPU). Here: ``CandidateThreeOpt(quadrant_candidates(coords, m), reconnections)``, the
GPU pass timed by CUDA events (benchmarks.timing.pass_seconds), the CPU pass (the NumPy
reference's moves and deltas, one core) by the wall clock over at most --fosin-cpu-moves moves,
scaled to the neighbourhood's size; medians of --repeats. The CPU side is vectorised NumPy, not
the paper's C loop: its speed-ups say how far the GPU is from our own host reference."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

#: Fosin et al.'s Table 1: group -> (instances, mean CPU ms, mean GPU ms, speed-up min, mean, max)
FOSIN_TABLE_1 = {"70-400": (37, 0.4371, 0.2670, 0.50, 1.64, 3.40), "400-2000": (25, 2.6222, 0.3561, 3.49, 7.36, 13.15),
                 "2000-18512": (22, 17.1551, 1.6981, 7.46, 10.10, 21.07)}
GROUPS = ((70, 400, "70-400"), (400, 2000, "400-2000"), (2000, 18_512, "2000-18512"))


def group_of(n: int) -> str | None:
    return next((name for lo, hi, name in GROUPS if lo <= n < hi or (name == "2000-18512" and lo <= n <= hi)), None)


def euclidean_instances(folder: Path, min_n: int, max_n: int) -> list[Path]:
    """The EUC_2D .tsp files of ``folder`` of ``min_n`` to ``max_n`` cities, by size."""
    from .tsp_quality import dimension, fixes_edges
    found = []
    for path in sorted(folder.glob("*.tsp")):
        with open(path, errors="replace") as f:
            head = f.read(2000).upper().replace(" ", "")
        n = dimension(path)
        if "EDGE_WEIGHT_TYPE:EUC_2D" in head and n is not None and min_n <= n <= max_n and not fixes_edges(path):
            found.append((n, path))
    return [p for _, p in sorted(found)]


def cpu_pass_seconds(problem, tour, limit: int, chunk: int = 1 << 20) -> float:
    """Wall seconds of one best-move pass on the host, as the CPU evaluator makes it (the moves
    of a chunk of indices, their deltas, the chunk's best): over the whole neighbourhood where it
    has at most ``limit`` moves, else over its first ``limit`` moves scaled to its size (every
    move costs the same)."""
    nb = problem.neighbourhood
    timed = min(nb.size, limit)
    t0 = time.perf_counter()
    best = None
    for start in range(0, timed, chunk):
        index = np.arange(start, min(start + chunk, timed), dtype=np.int64)
        deltas = problem.delta(tour, nb.moves(tour, index))
        low = int(np.argmin(deltas))
        best = deltas[low] if best is None else min(best, deltas[low])
    return (time.perf_counter() - t0) * nb.size / timed


def table_fosin_3opt(args, emit) -> list[dict]:
    """One candidate 3-opt pass per instance on both backends, then a row per size group (mean
    times, min / mean / max speed-up) beside the paper's."""
    from lsmgpu import CandidateThreeOpt
    from lsmgpu.backends.cuda import CudaBackend
    from lsmgpu.problems import TSP
    from lsmgpu.problems.candidates import quadrant_candidates
    from .timing import pass_seconds
    if getattr(args, "backend_choice", "cuda") != "cuda":
        raise SystemExit("benchmarks: fosin-3opt compares the CPU's pass with the GPU's; it needs the GPU")
    if args.quick:
        from lsmgpu.problems import shipped
        paths = [shipped(f"{name}.tsp") for name in ("eil51", "kroA100")]
    else:
        paths = euclidean_instances(Path(args.data) / "tsplib", 70, args.fosin_max_n)
    m, reconnections = args.fosin_candidates, args.fosin_reconnections
    rows = []
    for path in paths:
        base = TSP.from_file(path, start="nearest")
        nb = CandidateThreeOpt(quadrant_candidates(base.coords, min(m, base.n - 1)), reconnections)
        problem = base.with_neighbourhood(nb)
        tour = problem.initial_solution(np.random.default_rng(0))
        gpu = CudaBackend(tune=False).evaluator(problem, problem.neighbourhood)
        gpu.load(tour)
        gpu_s = pass_seconds(gpu, args.repeats)
        gpu.close()
        cpu_s = statistics.median(cpu_pass_seconds(problem, tour, args.fosin_cpu_moves) for _ in range(args.repeats))
        rows.append(dict(table="fosin-3opt", instance=problem.name, n=problem.n, group=group_of(problem.n),
                         moves=problem.neighbourhood.size, cpu_ms=round(1e3 * cpu_s, 4), gpu_ms=round(1e3 * gpu_s, 4),
                         speedup=round(cpu_s / gpu_s, 2)))
        emit(rows[-1])
    for _, _, name in GROUPS:
        mine = [r for r in rows if r["group"] == name]
        if not mine:
            continue
        speedups = [r["speedup"] for r in mine]
        paper = FOSIN_TABLE_1[name]
        rows.append(dict(table="fosin-3opt", instance=f"group {name} ({len(mine)} instances)", n=None, group=name,
                         moves=None, cpu_ms=round(float(np.mean([r["cpu_ms"] for r in mine])), 4),
                         gpu_ms=round(float(np.mean([r["gpu_ms"] for r in mine])), 4),
                         speedup=f"{min(speedups):.2f} / {np.mean(speedups):.2f} / {max(speedups):.2f}",
                         paper=f"{paper[0]} instances, CPU {paper[1]} ms, GPU {paper[2]} ms, speed-up "
                               f"{paper[3]} / {paper[4]} / {paper[5]}"))
        emit(rows[-1])
    return rows
