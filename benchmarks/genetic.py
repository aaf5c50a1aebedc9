"""The genetic algorithm's tables (issue 23), beside Kang et al. 2016's figures
(../shared/papers/README.md, section 5; GTX 980). TSPLIB stand-ins for the paper's Waterloo
instances: ch130 for xqf131, p654 for xql662, d2103 for the 2,071-city one, rl11849 for
xmc10150, pla85900 for the 100,000-city one; the 1,000,000-city instance is portgen's
(benchmarks/portgen.py).

``ga-generation`` (Table 5): milliseconds per generation (compete, crossover, mutation and the
children's lengths, then the m values read by the host: a generation as the search runs it
without local search), 128 and 2,048 genes in 1 and 8 groups, the hybrid crossover, a thread a
child (the paper's layout) and a warp a child; median of ``--repeats`` after a warm-up; lsmgpu's
CPU backend (the NumPy reference) up to ``--ga-cpu-up-to`` cities.

``ga-convergence`` (Table 2 in shape): 2,048 random genes, per crossover: the generations until
the best is within 10 % of the optimum, and the error after 100 generations, mean of
``--ga-runs`` seeds.

``ga-local-minima`` (Tables 3 and 4 in shape): genes that start as 2-opt local minima
(``initial="2opt"``, the paper's preprocessing), per crossover the first genes' error and the
error after ``--ga-minima-generations``, mean of ``--ga-runs`` seeds, for each of
``--ga-minima-configs`` (genes x groups: Table 3 used 128 x 1 on xql662, Table 4 128 x 1,
256 x 1, 2,048 x 1 and 2,048 x 8 on xmc10150).

``ga-million``: 1,000,000 cities, 2,048 genes in 8 groups, random genes: the error after each of
``--ga-generations`` checkpoints and the wall time (the paper: 0.1608 after 200, 0.0655 after
5,000 generations).

    python -m benchmarks ga-generation ga-convergence ga-million --data .data --out $OUT
"""
from __future__ import annotations

import itertools
import json
import statistics
import time
from pathlib import Path

import numpy as np

from lsmgpu import GeneticAlgorithm
from lsmgpu.backends.genetic import Breeding, CpuGenetic, genetic_for
from lsmgpu.problems import TSP

from .colony import local_search_of
from .portgen import portgen, uniform_reference

#: Table 5: ms per generation on the GTX 980 (GPU, CPU) by (stand-in, genes, groups)
TABLE5 = {("ch130", 128, 1): (2.85, 3.22), ("ch130", 128, 8): (4.17, 5.32), ("ch130", 2048, 1): (15.22, 19.15),
          ("ch130", 2048, 8): (15.90, 20.33), ("d2103", 128, 1): (26.12, 31.29), ("d2103", 128, 8): (29.01, 108.71),
          ("d2103", 2048, 1): (63.25, 326.35), ("d2103", 2048, 8): (66.10, 397.50),
          ("rl11849", 128, 1): (115.33, 208.25), ("rl11849", 128, 8): (127.85, 976.27),
          ("rl11849", 2048, 1): (288.95, 1632.42), ("rl11849", 2048, 8): (340.51, 2397.90),
          ("pla85900", 128, 1): (1160.29, 5160.38), ("pla85900", 128, 8): (1315.88, 29093.50),
          ("pla85900", 2048, 1): (5514.09, 25905.06), ("pla85900", 2048, 8): (5569.41, 50387.65)}
#: Table 2: (generations to 10 %, error after 100 generations) by (stand-in, crossover)
TABLE2 = {("ch130", "bcscx"): (35.54, 0.041), ("ch130", "arx"): (67.45, 0.008), ("ch130", "hybrid"): (26.40, 0.019),
          ("p654", "bcscx"): (71.21, 0.057), ("p654", "arx"): (532.42, 0.058), ("p654", "hybrid"): (54.23, 0.021)}
CONFIGS = [(128, 1), (128, 8), (2048, 1), (2048, 8)]


def _backend(args):
    if getattr(args, "backend_choice", "cuda") != "cuda":
        raise SystemExit("benchmarks: ga-generation and ga-million time the GPU's kernels; they need the GPU")
    from lsmgpu.backends import resolve
    return resolve("cuda")


def generation_ms(breeder, n: int, genes: int, repeats: int) -> tuple[float, float]:
    """Median wall and kernel milliseconds of a generation, every child checked a permutation."""
    rng = np.random.default_rng(0)
    breeder.load(rng.permuted(np.tile(np.arange(n, dtype=np.int32), (genes, 1)), axis=1))
    walls, kernels = [], []
    for k in range(repeats + 1):
        t0 = time.perf_counter()
        slots = breeder.breed(7, k)
        breeder.value_array()
        walls.append(time.perf_counter() - t0)
        kernels.append(getattr(breeder, "kernel_seconds", walls[-1]))
        if k == 0:
            sample = breeder.rows(slots[:4])
            assert np.array_equal(np.sort(sample, axis=1), np.tile(np.arange(n), (len(sample), 1)))
    return 1000 * statistics.median(walls[1:]), 1000 * statistics.median(kernels[1:])


def table_ga_generation(args, path_of, emit) -> list[dict]:
    backend, rows = _backend(args), []
    for name in args.ga_instances.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        n, distance = problem.n, problem.edge_distance()
        for genes, groups in CONFIGS:
            timings = {}
            for lanes in (1, 32):
                breeder = genetic_for(backend, Breeding("hybrid", 0.1, genes, groups, lanes), n, distance)
                try:
                    timings[lanes] = generation_ms(breeder, n, genes, args.repeats)
                finally:
                    breeder.close()
            cpu = None
            if n <= args.ga_cpu_up_to:
                cpu = generation_ms(CpuGenetic(Breeding("hybrid", 0.1, genes, groups), n, distance.between), n,
                                    genes, 1)[0]
            best = min(timings, key=lambda k: timings[k][0])
            paper_gpu, paper_cpu = TABLE5.get((name, genes, groups), (None, None))
            rows.append(dict(table="ga-generation", instance=name, n=n, genes=genes, groups=groups,
                             ms_thread=round(timings[1][0], 3), ms_warp=round(timings[32][0], 3), best_lanes=best,
                             kernel_ms=round(timings[best][1], 3), cpu_ms=None if cpu is None else round(cpu, 1),
                             speedup_vs_cpu=None if cpu is None else round(cpu / timings[best][0], 1),
                             paper_gpu_ms=paper_gpu, paper_cpu_ms=paper_cpu,
                             vs_paper_gpu=None if paper_gpu is None else round(paper_gpu / timings[best][0], 1)))
            emit(rows[-1])
    return rows


def table_ga_convergence(args, path_of, emit) -> list[dict]:
    backend, rows = getattr(args, "backend_choice", "cuda"), []
    for name in args.ga_convergence.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        optimum = problem.best_known
        runs, generations = (1, 10) if args.quick else (args.ga_runs, args.ga_convergence_generations)
        for crossover in args.ga_crossovers.split(","):
            to_ten, after_100, seconds = [], [], []
            for seed in range(runs):
                errors = []

                def track(state, errors=errors):
                    errors.append((state.best - optimum) / optimum)

                ga = GeneticAlgorithm(problem, genes=2048, crossover=crossover, backend=backend, seed=seed,
                                      callbacks=track)
                result = ga.run(generations)
                seconds.append(result.seconds)
                reached = [g + 1 for g, e in enumerate(errors) if e <= 0.1]
                to_ten.append(reached[0] if reached else np.nan)
                after_100.append(errors[min(99, len(errors) - 1)])
            paper = TABLE2.get((name, crossover), (None, None))
            rows.append(dict(table="ga-convergence", instance=problem.name, n=problem.n, crossover=crossover, genes=2048,
                             runs=runs, generations_to_10pct=round(float(np.nanmean(to_ten)), 2),
                             runs_reaching_10pct=int(np.sum(~np.isnan(to_ten))),
                             error_after_100=round(float(np.mean(after_100)), 4),
                             seconds_per_run=round(statistics.median(seconds), 2),
                             paper_generations_to_10pct=paper[0], paper_error_after_100=paper[1]))
            emit(rows[-1])
    return rows


#: Tables 3-4: the error after the run by (stand-in, genes, groups, crossover); the first genes' errors
#: were 0.0915 (xql662) and 0.1841 (xmc10150)
TABLE34 = {("p654", 128, 1, "bcscx"): 0.052, ("p654", 128, 1, "arx"): 0.024, ("p654", 128, 1, "hybrid"): 0.043,
           **{("rl11849", g, G, c): e for c, errors in (("bcscx", (0.1077, 0.1102, 0.1107, 0.0860)),
                                                         ("arx", (0.1036, 0.1100, 0.1019, 0.0824)),
                                                         ("hybrid", (0.1038, 0.1039, 0.1030, 0.0839)))
              for (g, G), e in zip(((128, 1), (256, 1), (2048, 1), (2048, 8)), errors)}}


def table_ga_local_minima(args, path_of, emit) -> list[dict]:
    """Kang et al.'s Tables 3 and 4 in shape: a GA whose first genes are 2-opt local minima."""
    backend, rows = getattr(args, "backend_choice", "cuda"), []
    configs = [tuple(int(v) for v in c.split("x")) for c in args.ga_minima_configs.split(",")]
    runs, generations = (1, 2) if args.quick else (args.ga_runs, args.ga_minima_generations)
    for name in args.ga_minima.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        optimum = problem.best_known
        for (genes, groups), crossover in itertools.product(configs, args.ga_minima_crossovers.split(",")):
            first, last, seconds = [], [], []
            for seed in range(runs):
                result = GeneticAlgorithm(problem, genes=genes, groups=groups, crossover=crossover, initial="2opt",
                                          backend=backend, seed=seed).run(generations)
                first.append(result.history[0] / optimum - 1)
                last.append(result.fitness / optimum - 1)
                seconds.append(result.seconds)
            rows.append(dict(table="ga-local-minima", instance=problem.name, n=problem.n, genes=genes, groups=groups,
                             crossover=crossover, runs=runs, generations=generations,
                             first_error=round(float(np.mean(first)), 4), error=round(float(np.mean(last)), 4),
                             seconds_per_run=round(statistics.median(seconds), 2),
                             paper_error=TABLE34.get((problem.name, genes, groups, crossover))))
            emit(rows[-1])
    return rows


def table_ga_million(args, path_of, emit) -> list[dict]:
    _backend(args)
    n = args.ga_million_cities
    coords = portgen(n, args.ga_million_seed)
    problem = TSP(coords, name=f"portgen{n}-{args.ga_million_seed}")
    reference = uniform_reference(n)
    rows = []
    if args.ga_million_seconds > 0:             # the plain GA (0: only the memetic run)
        rows += _million_plain(args, problem, reference, emit)
    if args.ga_million_memetic:
        rows += _million_memetic(args, problem, reference, emit)
    return rows


def _million_plain(args, problem, reference, emit) -> list[dict]:
    """The plain GA (2,048 genes, 8 groups, hybrid) at the checkpoints ``--ga-generations``. With
    ``--ga-million-checkpoint PATH`` one run spans several calls: each call resumes PATH where it
    exists, runs for ``--ga-million-seconds`` and writes PATH again (the generations' bests seen so
    far and the calls made are kept beside it, PATH.json)."""
    n = problem.n
    checkpoints = sorted(int(g) for g in args.ga_generations.split(","))
    saved = None if args.ga_million_checkpoint is None else Path(args.ga_million_checkpoint)
    notes = saved.with_name(saved.name + ".json") if saved else None
    kept = json.loads(notes.read_text()) if notes and notes.exists() and saved.exists() else {"seen": {}, "calls": 0}
    seen = {int(g): tuple(v) for g, v in kept["seen"].items()}
    call_t0 = time.perf_counter()

    def track(state):
        if state.iteration in checkpoints:
            seen[state.iteration] = (state.best, state.seconds)
        return saved is not None and time.perf_counter() - call_t0 > args.ga_million_seconds   # this call's end

    ga = GeneticAlgorithm(problem, genes=2048, groups=8, crossover="hybrid", backend="cuda", seed=0, callbacks=track)
    if saved is None:
        result = ga.run(checkpoints[-1], seconds=args.ga_million_seconds)
    elif saved.exists():
        result = ga.resume(saved, checkpoint=saved, checkpoint_every=10**6)
    else:
        result = ga.run(checkpoints[-1], checkpoint=saved, checkpoint_every=10**6)
    wall = time.perf_counter() - call_t0
    assert np.array_equal(np.sort(result.solution), np.arange(n))
    if saved is not None:
        notes.write_text(json.dumps({"seen": seen, "calls": kept["calls"] + 1}))
    paper = {200: 0.1608, 5000: 0.0655}
    rows = []
    for g in checkpoints:
        best, at = seen.get(g, (None, None))
        rows.append(dict(table="ga-million", instance=problem.name, n=n, genes=2048, groups=8, variant="plain hybrid",
                         generation=g, reached=best is not None,
                         error=None if best is None else round((best - reference) / reference, 4),
                         seconds=None if at is None else round(at, 1), paper_error=paper.get(g),
                         reference=f"0.7124 sqrt(n A) = {reference:,.0f}", run_wall_s=round(wall, 1),
                         status=result.status, generations_run=result.iterations, calls=kept["calls"] + 1,
                         checkpoint_gb=round(saved.stat().st_size / 1e9, 2) if saved is not None else None))
        emit(rows[-1])
    return rows


def _million_memetic(args, problem, reference, emit) -> list[dict]:
    """The memetic GA on the 10^6 cities: ``--ga-million-memetic-genes`` genes in 8 groups from the
    problem's start (greedy) kicked by one double bridge each, every gene and child descended by
    ``--ga-million-memetic``, for ``--ga-million-memetic-seconds`` (set-up included): the error of
    the first descended genes, when the best went below the paper's 5,000-generation error, the end."""
    paper, below, first = 0.0655, [], []

    def track(state):
        error = (state.best - reference) / reference
        if not first:
            first.append((error, state.seconds))
        if error < paper and not below:
            below.append((state.iteration, state.seconds, error))

    ga = GeneticAlgorithm(problem, genes=args.ga_million_memetic_genes, groups=8, initial="problem",
                          local_search=local_search_of(args.ga_million_memetic), backend="cuda", seed=0, callbacks=track)
    result = ga.run(seconds=args.ga_million_memetic_seconds)
    assert np.array_equal(np.sort(result.solution), np.arange(problem.n))
    improvement = repr(ga.improvement) if ga.improvement else " + ".join(repr(nb) for nb in ga.chain)
    row = dict(table="ga-million", instance=problem.name, n=problem.n, genes=ga.genes, groups=8,
               variant=f"memetic, {improvement}, initial greedy", generation=result.iterations, reached=True,
               error=round((result.fitness - reference) / reference, 4), seconds=round(result.seconds, 1),
               paper_error=paper, first_generation_error=round(first[0][0], 4) if first else None,
               first_generation_s=round(first[0][1], 1) if first else None,
               below_paper_at_s=round(below[0][1], 1) if below else None,
               below_paper_generation=below[0][0] if below else None, status=result.status)
    emit(row)
    return [row]


def table_ga_quality(args, path_of, emit) -> list[dict]:
    """The memetic GA (every child descended by the problem's chain through the batched local
    search) at ``--ga-seconds`` on TSPLIB (``--ga-tsp``) and QAPLIB (``--ga-qap``) instances, one
    run from seed 0: the gap to the optimum or best known."""
    from lsmgpu.problems import QAP
    backend, rows = getattr(args, "backend_choice", "cuda"), []
    jobs = [("tsplib", TSP, name) for name in filter(None, args.ga_tsp.split(","))]
    jobs += [("qaplib", QAP, name) for name in filter(None, args.ga_qap.split(","))]
    for (folder, kind, name), local_search in itertools.product(jobs, args.ga_local_search.split(",")):
        if (local_search.startswith("dontlook") and kind is QAP) or (local_search == "tabu" and kind is TSP):
            continue                              # don't-look descents are for tours, the short tabu search for the QAP
        problem = kind.from_file(path_of(folder, name))
        for seconds in (min(float(s), 1.0) if args.quick else float(s) for s in args.ga_seconds.split(",")):
            ga = GeneticAlgorithm(problem, genes=args.ga_memetic_genes, local_search=local_search_of(local_search),
                                  backend=backend, seed=0)
            result = ga.run(seconds=seconds, target=problem.best_known)
            improvement = repr(ga.improvement) if ga.improvement else " + ".join(repr(nb) for nb in ga.chain)
            rows.append(dict(table="ga-quality", instance=problem.name, n=problem.n, genes=ga.genes,
                             crossover=ga.breeding.crossover, local_search=improvement, seconds=seconds,
                             generations=result.iterations, gap_pct=round(100 * problem.gap(result.fitness), 3),
                             ran_s=round(result.seconds, 1), status=result.status))
            emit(rows[-1])
    return rows
