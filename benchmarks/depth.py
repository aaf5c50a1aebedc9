"""TSP depth beside LKH-3: α-nearness candidates and the Held-Karp bound, and lsmgpu's TSP searches
at equal wall time with LKH-3 on one core of the same machine.

``alpha``: for each of ``--depth-instances``, the α-lists' ascent (its seconds and iterations,
the bound over its sparse graph), ``TSP.lower_bound`` (held_karp_bound: its own ascent over a
denser graph and the exact 1-tree over all pairs, O(n^2), and its seconds) and their gaps below
the optimum; and how many edges of a reference tour lie in each
city's 5 α-nearest, against its 5 and 10 quadrant neighbours. The reference tour is LKH-3's
(POPMUSIC configuration, ``--alpha-lkh-seconds``), one process per instance on a core of its own,
its gap in the row.

``depth``: at each of ``--depth-seconds``, every ``--depth-configs`` entry
(method:candidates[:lk][:chainD][:move5][:alone][:name=value ...], method faco or dontlook-ils, candidates
"quadrant" (the default lists), "alpha", "alphaK" or "alpha+quadrant", lk: the descents' LK3 moves too, chainD: their
LK chain of up to D levels, ``lk_depth``, of 2-opt moves or with move5 of LKH's 5-opt basis
moves (``lk_move=5``), with alone that chain alone (``chain_alone``); name=value: any other
option of the search, e.g.
moves=32, but ascent=P the instance's ``ascent_period``, P an integer or half, and ties=T its
``alpha_ties``, T length or penalised) on
the GPU, once for each of ``--depth-seeds``, one after another from a freshly read instance (the
ascent inside the budget), kernels built before; the entries "command" and "command:cold": ``lsmgpu
solve`` itself with the command's defaults, in a process of its own, its wall time from the
process's start (the second with an empty kernel cache; ``command_row``, its figures from the
command's --json file); LKH-3 in the configurations of ``--depth-lkh`` (defaults: its defaults; popmusic:
CANDIDATE_SET_TYPE = POPMUSIC with INITIAL_PERIOD = 100; none: no LKH rows), each ``RUNS = 1``,
``TOTAL_TIME_LIMIT`` the budget, once for each of ``--depth-seeds`` too (``SEED`` = seed + 1: seed 0
is LKH's default), each in a process of its own on one core, all running while the GPU rows run
(``--depth-configs none``: LKH's rows alone), each row written as its run ends. LKH's ascent cannot
be interrupted: its wall time is reported as measured, and a run without a tour ``--depth-lkh-wait`` seconds after
the GPU rows end is stopped and reported as such.
Then a "depth-summary" row per budget and lsmgpu strategy (``depth_summary``): the mean over the
instances of each one's gap averaged over the seeds, LKH-3's beside, and whether the depth issue's
60 s target holds.
``--depth-tours FILE.npz`` keeps every row's tour in one file, keyed "instance|strategy|seed|budget"
(benchmarks/probes/tour_difference.py compares lsmgpu's with LKH-3's).

``lk-descent``: one descent of the greedy tour (its own seconds and gap) for each of
``--descent-configs`` (candidates[:or3][:lk][:chainD][:move5][:alone][:wideW]: "quadrant" (10
quadrant neighbours) or "alpha" (the 5 α-nearest, the 5-opt chain's gain criterion over the
ascent's penalties, as in the searches), with the Or-3opt and LK3 moves, the LK chain of up to D levels (of
5-opt moves with move5, alone with alone), the tour checked up to W
cities a round, lsmgpu.backends.dontlook.WIDE, 1: one after another), lsmgpu.parallel.improve with
a DontLookDescent on the backend (descents again from every city until one makes no move): the
descent's wall seconds after a warm-up descent (kernels built; the α-lists made, their seconds
apart) and the local optimum's gap; or, for segmentsM[xR]:quadrant[:lk][:chainD][:wideW], the
segmented descent of TourSegments without kicks (``_segmented_descent``).

    python -m benchmarks alpha --data .data --out $OUT
    python -m benchmarks depth --depth-seconds 15 --data .data --out $OUT
    python -m benchmarks lk-descent --descent-instances d18512,pla85900 --data .data --out $OUT
"""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor, TimeoutError, as_completed

import numpy as np

from lsmgpu.backends import dontlook
from lsmgpu.problems import TSP
from lsmgpu.problems.held_karp import held_karp_bound
from lsmgpu.parallel import improve
from lsmgpu.problems.candidates import greedy_tour, merged_candidates, quadrant_candidates
from lsmgpu.search import SEARCHES, DontLookDescent, TourSegments

from .segments import option_value

#: LKH-3's two configurations: its defaults, and POPMUSIC candidates with a short first period
LKH_CONFIGS = {"LKH-3 defaults": "", "LKH-3 POPMUSIC": "CANDIDATE_SET_TYPE = POPMUSIC\nINITIAL_PERIOD = 100\n"}
#: --depth-lkh's names of LKH_CONFIGS
LKH_NAMES = {"defaults": "LKH-3 defaults", "popmusic": "LKH-3 POPMUSIC"}
#: decimals of a depth row's gap in %: near the optimum a run is a few units off, a unit 0.0001-0.0006 %
#: on 1,000-20,000 cities (rl5915: 0.00018), so three decimals could not tell 1 unit from 2 (nor the
#: mean of four seeds from LKH-3's); each row carries its tour's length too
GAP_DECIMALS = 4


def lkh_run(path: str, extra: str, seconds: float, seed: int = 0) -> tuple[np.ndarray, float]:
    """One LKH-3 run (elkai's LKH with its own parameter text), single-threaded, its random numbers
    from ``SEED = seed + 1`` (seed 0: LKH's default seed): (tour, wall seconds)."""
    import elkai._elkai as lkh
    params = (f"PROBLEM_FILE = :stdin:\nRUNS = 1\nTOTAL_TIME_LIMIT = {seconds}\nTRACE_LEVEL = 0\n"
              f"SEED = {seed + 1}\n{extra}")
    t0 = time.perf_counter()
    tour = lkh.solve_problem(params, open(path).read())
    return np.array(tour, dtype=np.int64) - 1, time.perf_counter() - t0


def start_lkh(jobs) -> tuple[ProcessPoolExecutor, dict]:
    """LKH-3 runs for ``jobs`` [(path, extra, seconds, seed)] in single-threaded processes, at most
    one per core but one (left to the GPU's process); {(path, extra, seed): future}."""
    pool = ProcessPoolExecutor(min(len(jobs), os.cpu_count() - 1), mp_context=multiprocessing.get_context("spawn"))
    return pool, {(str(path), extra, seed): pool.submit(lkh_run, str(path), extra, seconds, seed)
                  for path, extra, seconds, seed in jobs}


def collect_lkh(pool, futures, wait: float | None = None):
    """((path, extra, seed), (tour, seconds) or None) for each run as it ends, so that a caller
    can write its row at once; None for a run still going ``wait`` seconds from now (its process
    is then ended)."""
    keys = {future: key for key, future in futures.items()}
    try:
        for future in as_completed(keys, timeout=wait):
            yield keys.pop(future), future.result()
    except TimeoutError:
        yield from ((key, None) for key in keys.values())
    finally:
        for process in list(getattr(pool, "_processes", {}).values()):     # runs LKH cannot stop itself
            process.terminate()
        pool.shutdown(cancel_futures=True)


def coverage(tour: np.ndarray, table: np.ndarray) -> float:
    """The share of the tour's edges (a, b) with b among a's candidates or a among b's."""
    a, b = tour, np.roll(tour, -1)
    inside = (table[a] == b[:, None]).any(axis=1) | (table[b] == a[:, None]).any(axis=1)
    return float(inside.mean())


def table_alpha(args, path_of, emit) -> list[dict]:
    """α-candidates and bounds against LKH-3's tours (see the module docstring)."""
    names = [name for name in args.depth_instances.split(",") if name]
    paths = [path_of("tsplib", name) for name in names]
    pool, futures = start_lkh([(p, LKH_CONFIGS["LKH-3 POPMUSIC"], args.alpha_lkh_seconds, 0) for p in paths])
    measured = []
    for path in paths:                               # the ascents meanwhile (one core)
        problem = TSP.from_file(path)
        t0 = time.perf_counter()
        table = problem.candidate_lists(5, "alpha")
        seconds = time.perf_counter() - t0
        ascent = problem._ascent
        t0 = time.perf_counter()
        exact = held_karp_bound(problem)
        measured.append((path, problem, table, ascent, seconds, exact, time.perf_counter() - t0))
    tours = dict(collect_lkh(pool, futures))
    rows = []
    for path, problem, table, ascent, seconds, exact, exact_s in measured:
        tour, _ = tours[str(path), LKH_CONFIGS["LKH-3 POPMUSIC"], 0]
        optimum = problem.best_known
        rows.append(dict(table="alpha", instance=problem.name, n=problem.n, device=args.meta["device"],
                         commit=args.meta["commit"], ascent_s=round(ascent.seconds, 2),
                         alpha_lists_s=round(seconds, 2), ascent_iterations=ascent.iterations,
                         sparse_bound_gap_pct=round(100 * (optimum - ascent.bound) / optimum, 3),
                         bound=int(np.ceil(exact - 1e-6)), bound_gap_pct=round(100 * (optimum - exact) / optimum, 3),
                         bound_s=round(exact_s, 2),
                         reference_gap_pct=round(100 * problem.gap(problem.evaluate(tour)), 4),
                         alpha5_pct=round(100 * coverage(tour, table), 2),
                         quadrant5_pct=round(100 * coverage(tour, quadrant_candidates(problem.coords, 5)), 2),
                         quadrant10_pct=round(100 * coverage(tour, quadrant_candidates(problem.coords, 10)), 2)))
        emit(rows[-1])
    return rows


def _candidates(text: str, problem: TSP):
    """A --depth-configs candidates entry: None (the default lists), "alpha" (the search's 5
    α-nearest), alphaK's table (the problem's K α-nearest), or "alpha+quadrant" (the 5 α-nearest
    and then the 10 quadrant neighbours not among them, 10 a city: merged_candidates)."""
    if text == "quadrant":
        return None
    if text == "alpha":
        return "alpha"
    if text == "alpha+quadrant":
        return merged_candidates(problem.candidate_lists(5, "alpha"), problem.candidate_lists(10))
    return problem.candidate_lists(int(text[len("alpha"):]), "alpha")


def _moves(tokens) -> dict:
    """A config's move tokens ("lk", "or3", "chainD", "move5", "alone") as the descent's options lk,
    or3, lk_depth and lk_move (move5: the chain's levels LKH's 5-opt basis moves) and, with alone,
    chain_alone (that chain alone, no other move first)."""
    depth = [int(t[len("chain"):]) for t in tokens if t.startswith("chain")]
    return dict(lk="lk" in tokens, or3="or3" in tokens, lk_depth=depth[0] if depth else 0,
                lk_move=5 if "move5" in tokens else 2) | ({"chain_alone": True} if "alone" in tokens else {})


#: a depth config's name=value entries that are the instance's options (TSP(...)), not the search's
INSTANCE_OPTIONS = {"ascent": "ascent_period", "ties": "alpha_ties"}


def _search_options(tokens) -> dict:
    """A depth config's tokens as the search's options: the descent's lk and lk_depth (``_moves``)
    and every name=value (``option_value``: None, a bool or a number where it reads as one)."""
    options = _moves([t for t in tokens if "=" not in t])
    options.pop("or3")
    for name, value in (t.split("=", 1) for t in tokens if "=" in t):
        options[name] = option_value(value)
    return options


def _label(options: dict) -> str:
    given = [f"{name}={value}" for name, value in options.items()
             if name not in ("lk", "lk_depth", "lk_move", "chain_alone")]
    return ((", LK3" if options["lk"] else "") + (f", LK chain {options['lk_depth']}" if options["lk_depth"] else "")
            + (" of 5-opt moves" if options["lk_move"] == 5 else "") + (" alone" if options.get("chain_alone") else "")
            + "".join(f", {text}" for text in given))


def table_depth(args, path_of, emit) -> list[dict]:
    """lsmgpu's TSP searches beside LKH-3 at equal wall time (see the module docstring)."""
    names = [name for name in args.depth_instances.split(",") if name]
    paths = [path_of("tsplib", name) for name in names]
    configs = [(entry.split(":") + [""])[:2] + [entry.split(":")[2:]] for entry in args.depth_configs.split(",")
               if entry != "none"]
    seeds = [int(seed) for seed in args.depth_seeds.split(",")]
    peers = {LKH_NAMES[name]: LKH_CONFIGS[LKH_NAMES[name]] for name in args.depth_lkh.split(",") if name != "none"}
    rows, tours = [], {}
    for seconds in (float(s) for s in args.depth_seconds.split(",")):
        jobs = [(p, extra, seconds, seed) for p in paths for extra in peers.values() for seed in seeds]
        pool, futures = start_lkh(jobs) if jobs else (None, {})
        for path in paths:
            for method, candidates, moves in configs:
                if method == "command":                    # `lsmgpu solve` itself, its own defaults
                    for seed in seeds:
                        row, tour = command_row(args, path, seconds, seed, cold=candidates == "cold")
                        rows.append(row)
                        tours[f"{row['instance']}|{row['strategy']}|{seed}|{seconds:g}"] = tour
                        emit(row)
                    continue
                search, chosen = SEARCHES[method], _search_options(moves)
                instance = {key: chosen.pop(name) for name, key in INSTANCE_OPTIONS.items() if name in chosen}
                warm = TSP.from_file(path, **instance)
                search(warm, backend=args.backend_choice, seed=0, candidates=_candidates(candidates, warm),
                       **chosen).run(iterations=1)
                for seed in seeds:
                    problem = TSP.from_file(path, **instance)       # fresh: its ascent runs inside the budget
                    t0 = time.perf_counter()
                    made = search(problem, backend=args.backend_choice, seed=seed,
                                  candidates=_candidates(candidates, problem), **chosen)
                    result = made.run(seconds=seconds - (time.perf_counter() - t0), target=problem.best_known)
                    wall = time.perf_counter() - t0
                    assert problem.evaluate(result.solution) == result.fitness
                    rows.append(dict(table="depth", instance=problem.name, n=problem.n, device=args.meta["device"],
                                     commit=args.meta["commit"],
                                     strategy=f"{made.algorithm} ({candidates}{_label(chosen | instance)})", seed=seed,
                                     budget_s=seconds, seconds=round(wall, 2), iterations=result.iterations,
                                     length=int(result.fitness), gap_pct=_gap(problem, result.fitness),
                                     status=result.status,
                                     restarts=getattr(made, "restarts", None),
                                     kernel_build_s=round(result.timings["build"], 2) if "build" in result.timings
                                     else None))
                    tours[f"{problem.name}|{rows[-1]['strategy']}|{seed}|{seconds:g}"] = result.solution
                    emit(rows[-1])
        problems = {str(path): TSP.from_file(path) for path in paths} if jobs else {}
        labels = {extra: label for label, extra in peers.items()}
        for (path, extra, seed), answer in collect_lkh(pool, futures, args.depth_lkh_wait) if jobs else ():
            problem, label = problems[path], labels[extra]
            tour, wall = answer if answer is not None else (None, None)
            if tour is not None and not np.array_equal(np.sort(tour), np.arange(problem.n)):
                tour, status = None, f"no tour: LKH answered {len(tour)} cities"
            else:
                status = "its time limit" if tour is not None else f"no tour {args.depth_lkh_wait:g} s after lsmgpu's rows"
            length = None if tour is None else int(problem.evaluate(tour))
            rows.append(dict(table="depth", instance=problem.name, n=problem.n, device=args.meta["device"],
                             commit=args.meta["commit"], strategy=f"{label} (1 core)", seed=seed, budget_s=seconds,
                             seconds=None if wall is None else round(wall, 2), iterations=None,
                             length=length, gap_pct=None if length is None else _gap(problem, length),
                             status=status, restarts=None))
            if tour is not None:
                tours[f"{problem.name}|{label}|{seed}|{seconds:g}"] = tour
            emit(rows[-1])
    for summary in depth_summary(rows):
        rows.append(summary)
        emit(summary)
    if args.depth_tours:
        np.savez_compressed(args.depth_tours, **tours)
    return rows


def user_environment(cold_folder: str | None = None) -> dict:
    """The environment of a run as a user's: this process's without the harness's
    ``LSMGPU_QUICK_BUILDS=0`` (benchmarks/__init__.py), with ``cold_folder`` the empty caches of
    ``cold_caches`` under it."""
    env = {name: value for name, value in os.environ.items() if name != "LSMGPU_QUICK_BUILDS"}
    return env if cold_folder is None else dict(env, **cold_caches(cold_folder))


def cold_caches(folder: str) -> dict:
    """The environment of a run that finds no kernel built before: lsmgpu's cache and CUDA's compute
    cache (``CUDA_CACHE_PATH``, ~/.nv/ComputeCache by default: on the H200 machine the one cache
    written outside lsmgpu's, and a second process with an empty lsmgpu cache built the 5-opt chains'
    kernels in 0.16 s instead of 35-43 s, so NVRTC keeps its builds there by all signs; tsp-depth.md,
    "The command's first minute"), each an empty folder under ``folder``."""
    return {"LSMGPU_CACHE": os.path.join(folder, "cache"), "CUDA_CACHE_PATH": os.path.join(folder, "cuda-cache")}


def command_row(args, path, seconds: float, seed: int, cold: bool) -> tuple[dict, np.ndarray]:
    """One run of ``lsmgpu solve PATH --seconds S --seed SEED`` in a process of its own, as a user
    runs it (the interpreter's start, the instance's reading, the method the command picks, kernel
    builds: all inside its wall time; ``cold``: ``cold_caches``), its figures read from its --json
    file (``kernel_build_s``: the seconds its run waited for builds, None where it waited for none)
    and its tour (written with --out, checked against the fitness in the figures)."""
    problem = TSP.from_file(path)
    with tempfile.TemporaryDirectory() as folder:
        out, figures = os.path.join(folder, "tour"), os.path.join(folder, "figures.json")
        env = user_environment(folder if cold else None)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", "import sys; from lsmgpu.cli import main; sys.exit(main())",
                               "solve", str(path), "--seconds", f"{seconds:g}", "--seed", str(seed), "--out", out,
                               "--json", figures, "--backend", args.backend_choice, "--quiet"],
                              capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(f"lsmgpu solve {path} exited {done.returncode}: {done.stderr.strip()[-500:]}")
        tour = problem.read_solution(out)
        with open(figures) as file:
            run = json.load(file)
    assert run["fitness"] == problem.evaluate(tour), run
    return (dict(table="depth", instance=problem.name, n=problem.n, device=args.meta["device"],
                 commit=args.meta["commit"], strategy=f"lsmgpu solve ({run['algorithm']}"
                 + (", cold cache)" if cold else ")"), seed=seed, budget_s=seconds, seconds=round(wall, 2),
                 iterations=run["iterations"], length=int(run["fitness"]), gap_pct=_gap(problem, run["fitness"]),
                 status=run["status"], restarts=None,
                 kernel_build_s=round(run["timings"]["build"], 2) if "build" in run["timings"] else None), tour)


def _gap(problem, length) -> float:
    """A depth row's gap: ``length`` above the problem's optimum, in %, to GAP_DECIMALS."""
    return round(100 * problem.gap(length), GAP_DECIMALS)


def depth_summary(rows) -> list[dict]:
    """The depth issue's 60 s target, read off ``rows`` (table "depth"): per budget and lsmgpu
    strategy, its gap averaged over the seeds on each instance, the mean of those over the
    instances, LKH-3's (the better of its configurations on each instance, each averaged over its
    seeds, where every instance has one), on how many instances lsmgpu's mean is at most LKH's, and
    whether the target holds (at most LKH's on every instance, the mean at most half of LKH's)."""
    summaries = []
    for budget in dict.fromkeys(row["budget_s"] for row in rows):
        measured = [row for row in rows if row["budget_s"] == budget and row["gap_pct"] is not None]
        runs: dict[tuple, list] = {}
        for row in measured:
            if row["strategy"].startswith("LKH-3"):
                runs.setdefault((row["instance"], row["strategy"]), []).append(row["gap_pct"])
        lkh = {}
        for (instance, _), values in runs.items():
            lkh[instance] = min(lkh.get(instance, np.inf), float(np.mean(values)))
        for strategy in dict.fromkeys(row["strategy"] for row in measured if not row["strategy"].startswith("LKH-3")):
            gaps: dict[str, list] = {}
            for row in measured:
                if row["strategy"] == strategy:
                    gaps.setdefault(row["instance"], []).append(row["gap_pct"])
            means = {name: float(np.mean(values)) for name, values in gaps.items()}
            mean = float(np.mean(list(means.values())))
            beside = all(name in lkh for name in means)
            lkh_mean = float(np.mean([lkh[name] for name in means])) if beside else None
            under = sum(means[name] <= lkh[name] for name in means if name in lkh)
            summaries.append(dict(table="depth-summary", strategy=strategy, budget_s=budget, instances=len(means),
                                  seeds=min(len(values) for values in gaps.values()),
                                  mean_gap_pct=round(mean, GAP_DECIMALS),
                                  lkh_mean_gap_pct=None if lkh_mean is None else round(lkh_mean, GAP_DECIMALS),
                                  at_most_lkh=f"{under} of {sum(name in lkh for name in means)}",
                                  target_met=None if lkh_mean is None else bool(under == len(means) and mean <= lkh_mean / 2)))
    return summaries


def table_lk_descent(args, path_of, emit) -> list[dict]:
    """One descent of the greedy tour per configuration (see the module docstring)."""
    rows = []
    for name in filter(None, args.descent_instances.split(",")):
        problem = TSP.from_file(path_of("tsplib", name))
        t0 = time.perf_counter()
        start = greedy_tour(problem.coords)
        greedy_s = time.perf_counter() - t0
        for config in args.descent_configs.split(","):
            wide = [int(t[len("wide"):]) for t in config.split(":") if t.startswith("wide")]
            with checked_wide(wide[0] if wide else dontlook.WIDE):
                rows.append(_descent(args, problem, start, greedy_s, config))
            emit(rows[-1])
    return rows


@contextmanager
def checked_wide(wide: int):
    """A lone tour's descents check up to ``wide`` cities a round within the ``with``
    statement (lsmgpu.backends.dontlook.WIDE; 1: one after another), as before after it."""
    given, dontlook.WIDE = dontlook.WIDE, wide
    try:
        yield
    finally:
        dontlook.WIDE = given


def _descent(args, problem, start, greedy_s, config) -> dict:
    """One lk-descent row: the greedy tour's don't-look descent, or the segmented descent."""
    candidates, *moves = config.split(":")
    if candidates.startswith("segments"):
        return _segmented_descent(args, problem, start, greedy_s, config)
    t0 = time.perf_counter()
    if candidates == "alpha":
        problem.candidate_lists(5, "alpha")         # the ascent, once per instance: "alpha" reads it again
    lists_s = time.perf_counter() - t0
    descent = DontLookDescent("alpha" if candidates == "alpha" else None, **_moves(moves))
    improve(problem, start[None], descent, backend=args.backend_choice)           # kernels built
    t0 = time.perf_counter()
    done = improve(problem, start[None], descent, backend=args.backend_choice)
    seconds = time.perf_counter() - t0
    assert problem.evaluate(done.solutions[0]) == done.fitness[0]
    return dict(table="lk-descent", instance=problem.name, n=problem.n, device=args.meta["device"],
                commit=args.meta["commit"], strategy=f"greedy + don't-look descent ({config})",
                greedy_s=round(greedy_s, 3), greedy_gap_pct=round(100 * problem.gap(problem.evaluate(start)), 2),
                lists_s=round(lists_s, 2), descent_s=round(seconds, 3), moves=int(done.moves[0]),
                gap_pct=round(100 * problem.gap(done.fitness[0]), 3))


def _segmented_descent(args, problem, start, greedy_s, config) -> dict:
    """``segmentsM[xR]:quadrant[:lk][:chainD][:name=value ...]``: the greedy tour descended by
    TourSegments without kicks (segments of M cities, every segment's descent at once, then the
    whole tour's descent from the crossing cities every ``descent_every`` rounds, default 1; any
    other option of TourSegments as name=value) for up to R rounds (default 4) or until a round
    gains nothing; its
    quadrant lists built inside the seconds, after a warm-up run (kernels built)."""
    head, _, *moves = config.split(":")
    size, _, rounds = head[len("segments"):].partition("x")
    options = dict(descent_every=1, segment_cities=int(size) if size else None) | _search_options(moves)
    make = lambda: TourSegments(problem, backend=args.backend_choice, seed=0, initial=start, round_kicks=0,  # noqa: E731
                                **options)
    make().run(iterations=1)
    t0 = time.perf_counter()
    search = make()
    result = search.run(iterations=int(rounds) if rounds else 4, stagnation=1)
    seconds = time.perf_counter() - t0
    assert problem.evaluate(result.solution) == result.fitness
    return dict(table="lk-descent", instance=problem.name, n=problem.n, device=args.meta["device"],
                commit=args.meta["commit"], strategy=f"greedy + segmented descent ({config}, {result.iterations} rounds)",
                greedy_s=round(greedy_s, 3), greedy_gap_pct=round(100 * problem.gap(problem.evaluate(start)), 2),
                lists_s=None, descent_s=round(seconds, 3), whole_s=round(search.descent_seconds, 3), moves=None,
                gap_pct=round(100 * problem.gap(result.fitness), 3))
