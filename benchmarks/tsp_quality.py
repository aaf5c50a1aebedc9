"""The TSP quality table: candidate-list local search and iterated local search on TSPLIB,
next to the GPU ILS of Fosin, Davidovic & Caric (2013), whose mean gaps to the optimum over
TSPLIB instances up to 18,512 cities were: 2-opt search 5.19 %, 3-opt search 4.52 %, ILS with
0.1 n kicks 2.00 %, n kicks 0.78 %, 10 n kicks 0.32 % (GTX 470)."""
from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

#: Fosin et al.'s mean gaps (%) by method of this table
FOSIN = {"2-opt": 5.19, "2-opt + 3-opt": 4.52, "ILS 0.1n": 2.00, "ILS 1n": 0.78, "ILS 10n": 0.32}
#: Fosin et al.'s count of instances at the optimum (the text of their section 5)
FOSIN_AT_OPTIMUM = {"ILS 10n": "26 of 78"}


def dimension(path: Path) -> int | None:
    """DIMENSION of a TSPLIB file, read from its header (None if absent)."""
    with open(path) as f:
        for line in f:
            if line.strip().upper().startswith("DIMENSION"):
                return int(line.split(":")[-1])
            if line.strip().upper().startswith("NODE_COORD_SECTION"):
                return None
    return None


def fixes_edges(path: Path) -> bool:
    """Whether the file's FIXED_EDGES_SECTION holds an edge (linhp318): the reader refuses such a
    file, so the benchmarks' instance lists leave it out."""
    lines = [line.strip() for line in Path(path).read_text(errors="replace").splitlines()]
    return any(line.upper() == "FIXED_EDGES_SECTION" and i + 1 < len(lines) and lines[i + 1] != "-1"
               for i, line in enumerate(lines))


def quality_instances(folder: Path, max_n: int, names: str = "", min_n: int = 0) -> list[Path]:
    """The .tsp files of ``folder`` of ``min_n`` to ``max_n`` cities, by size (or the named ones)."""
    if names:
        return [folder / f"{name}.tsp" for name in names.split(",")]
    paths = [(dimension(p), p) for p in sorted(folder.glob("*.tsp")) if not fixes_edges(p)]
    return [p for n, p in sorted((n, p) for n, p in paths if n is not None and min_n <= n <= max_n)]


def local_optima(problem, backend):
    """(candidate 2-opt local optimum from the problem's start tour, then the Or-opt local
    optimum and the candidate 3-opt local optimum from there over the same candidate lists),
    each a SearchResult."""
    from lsmgpu import CandidateThreeOpt, HillClimbing, OrOpt
    two = HillClimbing(problem, seed=0, backend=backend()).run()
    cand = problem.neighbourhood.candidates
    more = [HillClimbing(problem.with_neighbourhood(nb), seed=0, backend=backend(), initial=two.solution).run()
            for nb in (OrOpt(cand), CandidateThreeOpt(cand))]
    return two, *more


def ils_checkpoints(problem, backend, factors: list[float], seconds: float, **options) -> list[tuple]:
    """One ILS run (candidate 2-opt descents polished by Or-opt then 3-opt unless ``options``
    say otherwise, double-bridge kicks, seed 0) to the largest of ``factors`` x n kicks, capped
    at ``seconds``: a ("ILS {f}n", best length, seconds, kicks) run for each factor, read as the
    run passes f x n kicks - the same numbers as separate runs stopped there, since a run with
    the same seed takes the same path (a factor beyond the cap gets the run's end)."""
    from lsmgpu import IteratedLocalSearch, candidate_polish
    options.setdefault("polish", candidate_polish(problem.neighbourhood.candidates))
    kicks = {f: max(1, int(round(f * problem.n))) for f in factors}
    seen = {}

    def checkpoint(state):
        for f, k in kicks.items():
            if state.iteration == k:
                seen[f] = (state.best, state.seconds, k)
    result = IteratedLocalSearch(problem, seed=0, backend=backend(), callbacks=checkpoint, **options).run(
        iterations=max(kicks.values()), seconds=seconds)
    end = (result.fitness, result.seconds, result.iterations)
    return [(f"ILS {f:g}n", *seen.get(f, end)) for f in factors]


def table_tsp_quality(args, backend, emit):
    """For every TSPLIB instance with coordinates up to --quality-max-n cities: candidate 2-opt
    local search, then Or-opt and candidate 3-opt from its optimum, and ILS (ils_checkpoints)
    at --quality-kicks x n kicks, capped at --quality-seconds: length, gap to the optimum,
    seconds; then the mean gap of each method beside Fosin et al.'s."""
    from lsmgpu import CandidateTwoOpt
    from lsmgpu.problems import TSP
    from lsmgpu.problems.candidates import quadrant_candidates
    if args.quick:
        from lsmgpu.problems import shipped
        paths = [shipped(f"{name}.tsp") for name in ("eil51", "berlin52")]
    else:
        paths = quality_instances(Path(args.data) / "tsplib", args.quality_max_n, args.quality_instances,
                                  args.quality_min_n)
    rows = []
    for path in paths:
        try:
            problem = TSP.from_file(path, neighbourhood="2opt-candidates")
        except (ValueError, TypeError) as exc:      # explicit matrices: no candidate lists
            print(f"tsp-quality: skipping {path.stem}: {exc}", flush=True)
            continue
        if args.quality_candidates != problem.neighbourhood.candidates.shape[1]:
            lists = quadrant_candidates(problem.coords, min(args.quality_candidates, problem.n - 1))
            problem = problem.with_neighbourhood(CandidateTwoOpt(lists))
        if problem.best_known is None:
            continue
        runs = []
        two, oropt, three = local_optima(problem, backend)
        runs.append(("2-opt", two.fitness, two.seconds, two.iterations))
        runs.append(("2-opt + Or-opt", oropt.fitness, two.seconds + oropt.seconds, oropt.iterations))
        runs.append(("2-opt + 3-opt", three.fitness, two.seconds + three.seconds, three.iterations))
        runs += ils_checkpoints(problem, backend, [float(f) for f in args.quality_kicks.split(",") if f],
                                args.quality_seconds)
        for method, fitness, seconds, work in runs:
            gap = 100 * problem.gap(fitness)
            rows.append(dict(table="tsp-quality", instance=problem.name, n=problem.n, backend=two.backend,
                             candidates=problem.neighbourhood.candidates.shape[1], method=method, iterations=work, seconds=round(seconds, 3), length=fitness,
                             optimum=problem.best_known, gap_pct=round(gap, 3), fosin_mean_gap_pct=None))
            emit(rows[-1])
    for row in mean_rows(rows):
        rows.append(row)
        emit(row)
    return rows


def table_tsp_large(args, backend, emit):
    """The issue's large instances (--large-instances, default pla33810 and pla85900) on the
    GPU: the greedy start's construction time; one pass of candidate 2-opt, Or-opt and
    candidate 3-opt (CUDA events, median of --repeats); the time from the greedy tour to a 2-opt + Or-opt local
    optimum (descents of independent moves: every improving move that overlaps no better one,
    per step); then --large-seconds of ILS (segment-local double bridges, best-improvement
    descents polished by Or-opt then 3-opt) from that optimum. Each tour is checked by a full
    evaluation."""
    from lsmgpu import CandidateThreeOpt, IteratedLocalSearch, OrOpt, candidate_polish
    from lsmgpu.backends.cuda import CudaBackend
    from lsmgpu.problems import TSP
    from lsmgpu.problems.candidates import greedy_tour

    from .timing import pass_seconds
    if args.quick:
        from lsmgpu.problems import shipped
        paths = [shipped("kroA100.tsp")]
    else:
        paths = [Path(args.data) / "tsplib" / f"{name}.tsp" for name in args.large_instances.split(",")]
    rows = []
    for path in paths:
        problem = TSP.from_file(path, neighbourhood="2opt-candidates")
        polish = OrOpt(problem.neighbourhood.candidates)
        oropt = problem.with_neighbourhood(polish)
        t0 = time.perf_counter()
        start = greedy_tour(problem.coords)
        greedy_s = time.perf_counter() - t0

        def row(method, seconds, length, iterations=None, **extra):
            rows.append(dict(table="tsp-large", instance=problem.name, n=problem.n, backend="cuda", method=method,
                             iterations=iterations, seconds=float(f"{seconds:.4g}"), length=length,
                             optimum=problem.best_known,
                             gap_pct=None if length is None else round(100 * problem.gap(length), 3), **extra))
            emit(rows[-1])

        row("greedy start (construction)", greedy_s, problem.evaluate(start))
        three = problem.with_neighbourhood(CandidateThreeOpt(problem.neighbourhood.candidates))
        for name, p in (("2-opt candidates", problem), ("Or-opt", oropt), ("3-opt candidates", three)):
            ev = CudaBackend().evaluator(p, p.neighbourhood)
            ev.load(start)
            seconds = pass_seconds(ev, args.repeats)
            ev.close()
            row(f"one {name} pass ({p.neighbourhood.size} moves)", seconds, None, moves_per_s=f"{p.neighbourhood.size / seconds:.3e}")

        def descent():
            return IteratedLocalSearch(problem, rule="independent", seed=0, backend=backend(),
                                       initial=start, polish=polish)
        descent().run(iterations=0, seconds=5)          # warm-up: compiles and tunes both kernels
        search = descent()
        local = search.run(iterations=0)
        assert local.fitness == problem.evaluate(local.solution)
        row("2-opt + Or-opt local optimum from greedy (independent moves)", local.seconds, local.fitness,
            steps=search.evaluations // problem.neighbourhood.size)
        ils = IteratedLocalSearch(problem, seed=0, backend=backend(), initial=local.solution,
                                  polish=candidate_polish(problem.neighbourhood.candidates)).run(
            seconds=args.large_seconds)
        row(f"ILS {args.large_seconds:g} s from that optimum", ils.seconds, ils.fitness, ils.iterations)
    return rows


def mean_rows(rows: list[dict]) -> list[dict]:
    """One "mean of K" row per method over the instance rows of tsp-quality ``rows`` (of one run
    or of several split by size; earlier mean rows are left out), beside Fosin et al.'s."""
    gaps: dict[str, list[float]] = {}
    for row in rows:
        if not str(row["instance"]).startswith("mean of"):
            gaps.setdefault(row["method"], []).append(float(row["gap_pct"]))
    return [dict(table="tsp-quality", instance=f"mean of {len(values)}", n=None, backend=None, method=method,
                 iterations=None, seconds=None, length=None, optimum=None, gap_pct=round(float(np.mean(values)), 3),
                 fosin_mean_gap_pct=FOSIN.get(method), at_optimum=f"{sum(v == 0 for v in values)} of {len(values)}",
                 fosin_at_optimum=FOSIN_AT_OPTIMUM.get(method)) for method, values in gaps.items()]


def print_means(paths: list[str]) -> None:
    """The mean rows over the instance rows of tsp-quality CSVs (runs split by size, one table)."""
    rows = [row for path in paths for row in csv.DictReader(open(path)) if row["gap_pct"]]
    for row in mean_rows(rows):
        print(f"{row['method']:<16} {row['instance']:<11} mean gap {row['gap_pct']:.3f} % "
              f"(Fosin {row['fosin_mean_gap_pct']}), at the optimum {row['at_optimum']}"
              + (f" (Fosin {row['fosin_at_optimum']})" if row["fosin_at_optimum"] else ""))


if __name__ == "__main__":
    print_means(sys.argv[1:])
