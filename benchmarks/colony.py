"""The ant colonies' tables (issue 22), beside the papers' figures (../shared/papers/README.md).

``acs-build`` (Skinderowicz 2016, Tables 3-4): the time to build n solutions (m = n ants,
candidate lists of 32, beta 3, q0 = (n - 20) / n) with ACS-GPU (local update with atomics) and
ACS-GPU-Alt (no atomics), local-update period k = 1 .. 16 for Alt; the construction kernel's time
(CUDA events, median of ``--repeats``), and lsmgpu's CPU backend (the NumPy reference, the same
construction) for the speed-up.

``mmas-build`` (Skinderowicz 2020, Tables 3-6): the construction kernel's time for m = n ants,
the six variants (roulette / reservoir sampling x list compression / bitmask / compact tabu),
without candidate lists and with 32, at each of ``--colony-warps`` warps per ant (the best one
reported, and which it was).

``colony-quality``: MMAS + lsmgpu's local search on every ant (``--colony-local-search``: "auto",
the batched candidate 2-opt + Or-opt + 3-opt descents, and/or "dontlook", don't-look-bit 2-opt +
Or-opt, or "dontlook+auto", those polished by the "auto" chain) with a budget no larger than the MMAS paper's time for each instance (its Tables 9-10,
MMAS + 2-opt on a V100) nor the issue's target time where it sets one; ACS-GPU-Alt against ACS-SPM
at equal time (the ACS paper's Table 9 setting: 256 ants, local-update period 4; time limits the
paper's scaled by ``--colony-acs-scale``, capped at ``--colony-seconds``; the mean and worst gap
of ``--colony-acs-seeds`` runs); QAP (``--colony-qap``): MMAS with a swap descent and with
a short tabu search on every ant beside lsmgpu's island tabu search (256 starts, exchange every
1,000 iterations) at each of ``--colony-qap-seconds``. One run each from seed 0 (ACS: seeds 0, 1, ..).

``faco``: lsmgpu's focused ACO (FocusedACO: MMAS pheromone on the candidate lists, ants moving
``moves`` cities of a source tour, don't-look descents) on the MMAS rows' instances with the
same budgets (the MMAS paper's time, the issue's target time), ``--faco-configs`` ants:moves
("auto": the default), ``--faco-seeds`` runs each (mean and worst gap).

    python -m benchmarks acs-build mmas-build colony-quality --data .data --out $OUT
    python -m benchmarks faco --data .data --out $OUT
"""
from __future__ import annotations

import itertools
import statistics
import time

import numpy as np

from lsmgpu import AntColonySystem, DontLookDescent, FocusedACO, MaxMinAntSystem, MultiStart, TabuSearch
from lsmgpu.backends.colony import Construction, CpuColony, colony_for
from lsmgpu.problems import QAP, TSP

#: ACS paper Table 3: ms to build n solutions on a GK104 (ACS-GPU, ACS-GPU-Alt) and its CPU (ACS-SEQ)
ACS_TABLE3 = {"d198": (15.59, 7.97, 1.22), "a280": (35.85, 6.72, 2.47), "pcb442": (96.00, 14.94, 5.52),
              "rat783": (277.71, 47.80, 17.64), "pr1002": (411.91, 80.56, 26.39), "nrw1379": (832.05, 159.54, 56.77),
              "pr2392": (2413.45, 483.99, 174.51)}
#: MMAS paper, best variant's construction ms on a V100: Table 4 (no candidate list), Table 6 (cl = 32)
MMAS_V100 = {"d198": (0.18, 0.19), "pcb442": (0.50, 0.36), "rat783": (1.26, 0.68), "pr1002": (2.16, 0.92),
             "pcb1173": (3.31, 1.08), "rl1889": (19.12, 2.26), "pr2392": (39.24, 3.26)}
#: MMAS paper Tables 9-10, MMAS + 2-opt on a V100: (mean gap %, seconds)
MMAS_QUALITY = {"d198": (0.0, 0.9), "pcb442": (0.34, 2.0), "rat783": (0.22, 3.1), "pr1002": (0.26, 4.0),
                "pr2392": (0.49, 10.3), "rl5915": (0.38, 49.3), "d15112": (0.86, 404.2), "d18512": (0.96, 335.5)}
#: the issue's MMAS + local search targets: (mean gap %, at most seconds)
MMAS_TARGETS = {"pr2392": (0.3, 10.0), "d15112": (0.47, 60.0), "d18512": (0.8, 120.0)}
#: ACS paper Table 9: time limit s, mean error % of Alt and of SPM (m = 256, k = 4)
ACS_TABLE9 = {"a280": (2.5, 3.77, 1.50), "lin318": (2.84, 1.89, 1.90), "pcb442": (5.52, 2.69, 2.29),
              "rat783": (17.64, 3.20, 2.51), "pr1002": (26.39, 5.31, 3.06), "nrw1379": (56.77, 4.09, 3.17),
              "pr2392": (174.51, 6.05, 4.05)}


def local_search_of(name: str):
    """A benchmark's local-search name as the searches take it ("dontlook+auto": don't-look
    descents polished by the problem's chain)."""
    return DontLookDescent(polish="auto") if name == "dontlook+auto" else name


def _gpu(args) -> None:
    if getattr(args, "backend_choice", "cuda") != "cuda":
        raise SystemExit("benchmarks: the colony construction tables time the GPU's kernels; they need the GPU")


def build_seconds(colony, n: int, ants: int, repeats: int) -> float:
    """Median kernel time of a construction (after a warm-up), checking every tour."""
    rng = np.random.default_rng(0)
    times = []
    for k in range(repeats + 1):
        tours = colony.construct(7, k, rng.integers(0, n, ants))
        assert np.array_equal(np.sort(tours, axis=1)[:3], np.tile(np.arange(n), (3, 1)))
        if k:
            times.append(colony.kernel_seconds)
    return statistics.median(times)


def cpu_build_seconds(model, construction: Construction, n: int, ants: int) -> float:
    """One construction of the NumPy reference (the CPU backend), wall time."""
    colony = CpuColony(model, construction, n)
    t0 = time.perf_counter()
    colony.construct(7, 0, np.random.default_rng(0).integers(0, n, ants))
    return time.perf_counter() - t0


#: the acs-build rows' names: the paper's ACS-GPU (a launch a step), the same updates in one launch
#: with the ants unsynchronised, ACS-GPU-Alt
ACS_VARIANTS = {"step": "ACS-GPU (a launch a step)", "atomic": "ACS-GPU, one launch", "alt": "ACS-GPU-Alt"}


def table_acs_build(args, path_of, emit) -> list[dict]:
    _gpu(args)
    from lsmgpu.backends import resolve
    backend, rows = resolve("cuda"), []
    for name in args.acs_instances.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        n = problem.n
        model = problem.colony_model(32)
        tau0 = 1.0 / (n * problem.evaluate(problem.initial_solution(np.random.default_rng(0))))
        settings = dict(q0=(n - 20) / n, beta=3.0, xi=0.01, tau0=tau0)
        cpu = cpu_build_seconds(model, Construction(local_update="atomic", **settings), n, n) if args.colony_cpu else None
        seq, paper_gpu, paper_alt = ACS_TABLE3.get(problem.name, (None, None, None))
        for update, periods in (("step", [1]), ("atomic", [1]), ("alt", [int(k) for k in args.acs_periods.split(",")])):
            for period in periods:
                colony = colony_for(backend, model, Construction(local_update=update, period=period, **settings), n, n)
                try:
                    seconds = build_seconds(colony, n, n, args.repeats)
                finally:
                    colony.close()
                paper = paper_gpu if update == "step" else paper_alt if update == "alt" and period == 1 else None
                rows.append(dict(table="acs-build", instance=problem.name, n=n, variant=ACS_VARIANTS[update],
                                 period=period, ants=n, warps=colony.threads // 32, ms=round(1000 * seconds, 3),
                                 cpu_ms=None if cpu is None else round(1000 * cpu, 1),
                                 speedup_vs_cpu=None if cpu is None else round(cpu / seconds, 1),
                                 paper_ms=paper, paper_seq_ms=seq,
                                 vs_paper_gpu=None if paper is None else round(paper / (1000 * seconds), 1)))
                emit(rows[-1])
    return rows


def table_mmas_build(args, path_of, emit) -> list[dict]:
    _gpu(args)
    from lsmgpu.backends import resolve
    backend, rows = resolve("cuda"), []
    warps = [int(w) for w in args.colony_warps.split(",")]
    for name in args.mmas_instances.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        n = problem.n
        for cl in (None, 32):
            model = problem.colony_model(cl)
            for selection in ("roulette", "wrs"):
                for tabu in ("lc", "bt", "ct"):
                    timings, shared = {}, {}
                    for w in warps:
                        c = Construction(selection=selection, tabu=tabu, beta=2.0, tau0=1e-4, warps=w)
                        colony = colony_for(backend, model, c, n, n)
                        try:
                            timings[w] = build_seconds(colony, n, n, args.repeats)
                            shared[w] = colony.per_block
                        finally:
                            colony.close()
                    best = min(timings, key=timings.get)
                    paper = MMAS_V100.get(problem.name, (None, None))[0 if cl is None else 1]
                    rows.append(dict(table="mmas-build", instance=problem.name, n=n, candidates=cl or "none",
                                     variant=f"MMAS-{'RWM' if selection == 'roulette' else 'WRS'}-{tabu.upper()}",
                                     ants=n, best_warps=best, ants_per_block=shared[best] or 1,
                                     lists="shared" if shared[best] else "global", ms=round(1000 * timings[best], 3),
                                     ms_by_warps=" / ".join(f"{w}: {1000 * t:.2f}" for w, t in timings.items()),
                                     paper_v100_best_ms=paper,
                                     vs_paper=None if paper is None else round(paper / (1000 * timings[best]), 2)))
                    emit(rows[-1])
    return rows


def mmas_budget(args, problem) -> float:
    """A colony row's seconds: the MMAS paper's time for the instance, at most the issue's target
    time (``--quick``: at most --colony-seconds)."""
    gap, paper_s = MMAS_QUALITY.get(problem.name, (None, args.colony_seconds))
    target_gap, target_s = MMAS_TARGETS.get(problem.name, (None, paper_s))
    return min(paper_s, target_s, args.colony_seconds) if args.quick else min(paper_s, target_s)


def table_faco(args, path_of, emit) -> list[dict]:
    """FocusedACO's mean gap over seeds at the MMAS rows' budgets (see the module docstring)."""
    backend = getattr(args, "backend_choice", "cuda")
    rows = []
    for name in filter(None, args.faco_instances.split(",")):
        problem = TSP.from_file(path_of("tsplib", name))
        budget = mmas_budget(args, problem)
        paper_gap, paper_s = MMAS_QUALITY.get(problem.name, (None, None))
        FocusedACO(problem, ants=64, backend=backend, seed=0).run(iterations=1)                      # the build
        for config in args.faco_configs.split(","):
            ants, moves, or3 = (config.split(":") + ["0"])[:3]
            gaps, iterations, seconds = [], [], []
            for seed in range(args.faco_seeds):
                search = FocusedACO(problem, ants=None if ants == "auto" else int(ants),
                                    moves=None if moves == "auto" else int(moves), or3=bool(int(or3)),
                                    backend=backend, seed=seed)
                result = search.run(seconds=budget, target=problem.best_known)
                assert problem.evaluate(result.solution) == result.fitness
                gaps.append(100 * problem.gap(result.fitness))
                iterations.append(result.iterations)
                seconds.append(result.seconds)
            rows.append(dict(table="faco", instance=problem.name, n=problem.n,
                             strategy=f"FocusedACO, {search.ants} ants, {search.moves} moved cities"
                             + (", Or-3opt" if search.rules.or3 else ""), ants=search.ants,
                             moves=search.moves, backend=backend, budget_s=budget, runs=len(gaps),
                             seconds=round(max(seconds), 2), iterations=round(statistics.mean(iterations)),
                             gap_pct=round(statistics.mean(gaps), 3), worst_gap_pct=round(max(gaps), 3),
                             paper_gap_pct=paper_gap, paper_s=paper_s,
                             target_gap_pct=MMAS_TARGETS.get(problem.name, (None,))[0]))
            emit(rows[-1])
    return rows


def table_colony_quality(args, path_of, emit) -> list[dict]:
    backend = getattr(args, "backend_choice", "cuda")
    rows = []
    for name in filter(None, args.colony_mmas.split(",")):
        problem = TSP.from_file(path_of("tsplib", name))
        gap, paper_s = MMAS_QUALITY.get(problem.name, (None, args.colony_seconds))
        target_gap = MMAS_TARGETS.get(problem.name, (None,))[0]
        budget = mmas_budget(args, problem)
        ants_counts = [int(a) for a in args.colony_mmas_ants.split(",") if a] or [None]    # MMAS Fig. 15
        for local_search, ants in itertools.product(args.colony_local_search.split(","), ants_counts):
            options = {} if ants is None else {"ants": ants}
            MaxMinAntSystem(problem, local_search=local_search_of(local_search), backend=backend,
                            seed=0, **options).run(iterations=1)                                 # kernels built
            mmas = MaxMinAntSystem(problem, local_search=local_search_of(local_search), backend=backend, seed=0,
                                   **options)
            result = mmas.run(seconds=budget, target=problem.best_known)
            rows.append(dict(table="colony-quality", instance=problem.name, n=problem.n,
                             strategy="MMAS + batched LS" if local_search == "auto" else f"MMAS + {local_search} LS",
                             ants=mmas.ants, budget_s=budget,
                             seconds=round(result.seconds, 2), iterations=result.iterations,
                             gap_pct=round(100 * problem.gap(result.fitness), 3), paper_gap_pct=gap, paper_s=paper_s,
                             target_gap_pct=target_gap, status=result.status))
            emit(rows[-1])
    for name in filter(None, args.colony_acs.split(",")):
        problem = TSP.from_file(path_of("tsplib", name))
        limit, alt, spm = ACS_TABLE9.get(problem.name, (args.colony_seconds, None, None))
        budget = min(limit * args.colony_acs_scale, args.colony_seconds)
        shapes = [(int(a), int(k)) for a, k in itertools.product(args.colony_acs_ants.split(","),
                                                                    args.colony_acs_periods.split(","))]
        for (memory, local, paper), (ants, period) in itertools.product((("matrix", "alt", alt), ("spm", "alt", spm)),
                                                                        shapes):
            paper = paper if (ants, period) == (256, 4) else None        # Table 9's setting; Tables 5-8 vary it
            AntColonySystem(problem, ants=ants, period=period, local_update=local, memory=memory, backend=backend,
                            seed=0).run(iterations=1)                                           # kernels built
            results = [AntColonySystem(problem, ants=ants, period=period, local_update=local, memory=memory,
                                       backend=backend, seed=seed).run(seconds=budget, target=problem.best_known)
                       for seed in range(args.colony_acs_seeds)]
            gaps = [100 * problem.gap(result.fitness) for result in results]
            rows.append(dict(table="colony-quality", instance=problem.name, n=problem.n,
                             strategy=f"ACS-{'SPM' if memory == 'spm' else 'GPU-Alt'}, {ants} ants, k = {period}",
                             ants=ants, budget_s=round(budget, 2), runs=len(results),
                             seconds=round(max(r.seconds for r in results), 2),
                             iterations=round(statistics.mean(r.iterations for r in results)),
                             gap_pct=round(statistics.mean(gaps), 3), worst_gap_pct=round(max(gaps), 3),
                             paper_gap_pct=paper, paper_s=limit, status=results[-1].status))
            emit(rows[-1])
    for name in filter(None, args.colony_qap.split(",")):
        problem = QAP.from_file(path_of("qaplib", name))
        for seconds in (min(float(s), 1.0) if args.quick else float(s) for s in args.colony_qap_seconds.split(",")):
            for strategy in ("MMAS + swap descent", "MMAS + short tabu search", "island tabu search"):
                if strategy.startswith("MMAS"):
                    local_search = "tabu" if "tabu" in strategy else "auto"
                    MaxMinAntSystem(problem, local_search=local_search, backend=backend, seed=0).run(iterations=1)
                    result = MaxMinAntSystem(problem, local_search=local_search, backend=backend, seed=0).run(
                        seconds=seconds, target=problem.best_known)
                    iterations = result.iterations
                else:
                    result = MultiStart(TabuSearch, problem, starts=256, seed=0, backend=backend,
                                        exchange_every=1000).run(seconds=seconds, target=problem.best_known)
                    iterations = max(r.iterations for r in result.runs if r is not None)
                rows.append(dict(table="colony-quality", instance=problem.name, n=problem.n, strategy=strategy,
                                 budget_s=seconds, seconds=round(result.seconds, 2), iterations=iterations,
                                 gap_pct=round(100 * problem.gap(result.fitness), 3), status=result.status))
                emit(rows[-1])
    return rows
