"""Run named benchmark tables and write Markdown + CSV (+ JSON, + plots) under --out.

(Long because it holds every table of the harness, one function each, and their shared
command line; the peer tables live in peers.py, the TSP quality runs in tsp_quality.py.)

    python -m benchmarks qap tsp-swap threads selection twoopt-rate overhead --data .data --out docs/bench
    python -m benchmarks qap tsp-swap ppp-h1 weierstrass --quick --backend cpu --out /tmp/smoke

``--quick`` swaps every table's instances for small ones shipped with lsmgpu and cuts the
iterations (a smoke run of minutes, not a measurement); ``--backend cpu`` times the NumPy
backend where the tables would time the GPU (for a machine without one; the tables that
time kernels with CUDA events refuse it).

Every GPU figure is the median of --repeats runs after a warm-up run; kernel-only figures are
timed with CUDA events. CPU times come from the NumPy backend on the same machine; where a
full CPU run would take minutes, the CPU time is the per-iteration time of a shorter run
times the iteration count, and the row says so ("cpu_iterations").
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from lsmgpu import HillClimbing, TabuSearch
from lsmgpu.backends.base import Query
from lsmgpu.problems import PPP, QAP, TSP, Weierstrass

from .bad_inputs import table_bad_inputs
from .defaults import table_cpu_chains, table_defaults
from .fosin import table_fosin_3opt
from .depth import table_alpha, table_depth, table_lk_descent
from .interrupts import table_interrupts
from .overrun import SEARCHES as OVERRUN_SEARCHES, table_overrun
from .colony import table_acs_build, table_colony_quality, table_faco, table_mmas_build
from .genetic import table_ga_convergence, table_ga_generation, table_ga_local_minima, table_ga_million, table_ga_quality
from .population import table_batch_ils, table_descents, table_dontlook_ils, table_ray_islands
from .peers import table_lkh, table_peers_qap, table_peers_tsp, table_peers_weierstrass
from .segments import table_segments
from .startup import table_startup
from .timing import pass_seconds

ROOT = Path(__file__).resolve().parent.parent


def runs_count(text: str) -> int:
    """An argparse type: a number of runs, at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def commit() -> str:
    """The lsmgpu commit: $LSMGPU_COMMIT (set it where the checkout has no .git), else git's."""
    if os.environ.get("LSMGPU_COMMIT"):
        return os.environ["LSMGPU_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


#: --backend cpu: the searches of every table run on the NumPy backend
CPU_ONLY = [False]


def cuda_backend(**options):
    """The backend a table times: CUDA with ``options``, or the CPU under ``--backend cpu``."""
    if CPU_ONLY[0]:
        from lsmgpu.backends.cpu import CpuBackend
        return CpuBackend()
    from lsmgpu.backends.cuda import CudaBackend
    return CudaBackend(**options)


def needs_gpu(table: str) -> None:
    if CPU_ONLY[0]:
        raise SystemExit(f"benchmarks: table {table!r} times kernels with CUDA events; it needs the GPU")


#: the instances --quick uses, all shipped with lsmgpu (a fresh clone has them)
QUICK = {"qaplib": ["tai12a", "nug12"], "tsplib": ["eil51", "berlin52"]}
#: the first three letters of QAPLIB's instance families
QAPLIB_PREFIXES = {"bur", "chr", "els", "esc", "had", "kra", "lip", "nug", "rou", "scr", "sko", "ste", "tai", "tho", "wil"}


def overrun_instances(args) -> list[Path]:
    """The overrun table's instances: TSPLIB or QAPLIB names (a QAPLIB name starts as its families do)."""
    names = args.overrun_instances.split(",")
    if args.quick:
        return instances(args, "tsplib", names[:1]) + instances(args, "qaplib", names[:1])
    return [instances(args, "qaplib" if name[:3] in QAPLIB_PREFIXES else "tsplib", [name])[0] for name in names]


def instances(args, folder: str, names: list[str]) -> list[Path]:
    """Paths of ``names`` in ``--data``/folder, or under --quick the small shipped instances."""
    if args.quick:
        from lsmgpu.problems import shipped
        return [shipped(name) for name in QUICK[folder][:len(names)]]
    ext = "dat" if folder == "qaplib" else "tsp"
    return [Path(args.data) / folder / f"{name}.{ext}" for name in names]


def timed_search(make, iterations, repeats):
    """Median wall seconds of `make().run(iterations)` after one warm-up run, the median
    seconds per iteration of its loop alone (without the search's set-up: allocations,
    uploads, first evaluation), and the last result. ``iterations`` None: until the search
    stops by itself."""
    make().run(50 if iterations is None else min(iterations, 50))
    totals, loops, result = [], [], None
    for _ in range(repeats):
        search = make()
        t0 = time.perf_counter()
        search.start(iterations)
        t1 = time.perf_counter()
        while not search.step():
            pass
        t2 = time.perf_counter()
        result = search.result()
        totals.append(t2 - t0)
        loops.append((t2 - t1) / max(1, result.iterations))
    return statistics.median(totals), statistics.median(loops), result


CPU_SECONDS = [10.0]
#: every row measured so far, written out even when a run is interrupted (timeout -s INT)
COLLECTED: list[dict] = []


def emit(row: dict) -> None:
    """Record and print one row."""
    COLLECTED.append(row)
    print(row, flush=True)


def cpu_time(make, iterations, cpu_iterations, budget=None):
    """CPU seconds for `iterations`, extrapolated from at most `cpu_iterations` iterations or
    `budget` seconds (the row records how many ran); the partial run's result."""
    budget = CPU_SECONDS[0] if budget is None else budget
    search = make()
    search.start(iterations=min(iterations, cpu_iterations))
    t0 = time.perf_counter()
    while not search.step():
        if time.perf_counter() - t0 > budget:
            break
    elapsed = time.perf_counter() - t0
    result = search.result()
    return elapsed * iterations / result.iterations, result.iterations, result


def same_prefix(cpu_history, gpu_history, integer: bool) -> bool:
    """Whether the GPU run's fitness history starts with the CPU run's (exactly for integer
    problems, to 1e-9 relative for real ones)."""
    prefix = gpu_history[:len(cpu_history)]
    if len(prefix) != len(cpu_history):
        return False
    return bool(np.array_equal(cpu_history, prefix) if integer else np.allclose(cpu_history, prefix, rtol=1e-9))


def phases_per_iteration(result) -> str:
    """The backend's time split (generate, kernel, transfer, select, apply, host) of a run, in
    microseconds per iteration: where the paper's Tables 8-9 split transfer from kernel time."""
    its = max(1, result.iterations)
    return ", ".join(f"{phase} {1e6 * seconds / its:.1f}" for phase, seconds in result.timings.items())


def search_rows(table, instances, loader, iterations, repeats, cpu_iterations, backend_options=None,
                strategy="device selection", make_search=None):
    rows = []
    for path in instances:
        problem = loader(path)
        build = make_search or (lambda p, b: TabuSearch(p, seed=0, backend=b, history="all"))
        gpu_s, per_iteration, res = timed_search(lambda: build(problem, cuda_backend(**(backend_options or {}))),
                                                 iterations, repeats)
        iterations_done = iterations or res.iterations
        cpu_s, cpu_it, cpu_res = cpu_time(lambda: build(problem, "cpu"), iterations_done, cpu_iterations)
        same = same_prefix(cpu_res.history, res.history, problem.integer)
        rows.append(dict(table=table, instance=problem.name, n=problem.n, algorithm=res.algorithm, backend=res.backend,
                         strategy=strategy,
                         iterations=res.iterations, seconds=round(gpu_s, 4),
                         us_per_iteration=round(1e6 * per_iteration, 1),
                         moves_per_s=f"{res.evaluations / gpu_s:.3e}", best_fitness=res.fitness,
                         gap_pct=None if problem.gap(res.fitness) is None else round(100 * problem.gap(res.fitness), 3),
                         cpu_seconds=round(cpu_s, 2), cpu_iterations=cpu_it,
                         cpu_moves_per_s=f"{cpu_res.evaluations / (cpu_s * cpu_it / iterations_done):.3e}",
                         speedup=round(cpu_s / gpu_s, 1),
                         same_trajectory_as_cpu=same, phases_us_per_iteration=phases_per_iteration(res)))
        emit(rows[-1])
    return rows


def table_qap(args):
    names = ["tai30a", "tai35a", "tai40a", "tai50a", "tai60a", "tai80a", "tai100a"]
    paths = instances(args, "qaplib", names)
    return search_rows("qap", paths, QAP.from_file, args.iterations, args.repeats, args.cpu_iterations)


def table_tsp_swap(args):
    names = ["eil101", "d198", "pcb442", "rat783", "d1291", "pr2392", "fnl4461", "rl5915"]
    paths = instances(args, "tsplib", names)
    return search_rows("tsp-swap", paths, lambda p: TSP.from_file(p, neighbourhood="swap"), args.iterations,
                       args.repeats, args.cpu_iterations)


def table_threads(args):
    """Thread control on (wave tuner) vs off (one thread per move, 256 per block): tabu search on
    ``--threads-qap`` and, with swap moves, ``--threads-tsp`` (the paper's Table 7: eil101, d198,
    pcb442, rat783, d1291, pr2392, fnl4461, rl5915)."""
    rows = []
    for name in filter(None, args.threads_qap.split(",")):
        path, = instances(args, "qaplib", [name])
        for tune, label in ((True, "wave tuner"), (False, "untuned")):
            rows += search_rows("threads", [path], QAP.from_file, args.iterations, args.repeats, 50,
                                {"tune": tune}, label)
    for name in filter(None, args.threads_tsp.split(",")):
        path, = instances(args, "tsplib", [name])
        for tune, label in ((True, "wave tuner"), (False, "untuned")):
            rows += search_rows("threads", [path], lambda p: TSP.from_file(p, neighbourhood="swap"),
                                args.iterations, args.repeats, 20, {"tune": tune}, label)
    return rows


def table_selection(args):
    """On-GPU reduction vs copying the fitness array back (and host generation)."""
    rows = []
    for name, loader in (("tai100a", lambda p: QAP.from_file(p)),
                         ("pr2392", lambda p: TSP.from_file(p, neighbourhood="swap"))):
        path, = instances(args, "qaplib" if name.startswith("tai") else "tsplib", [name])
        for options, label in (({}, "gpu generation + gpu reduction"),
                               ({"selection": "host"}, "gpu generation + host selection"),
                               ({"generation": "host"}, "cpu generation + gpu reduction")):
            rows += search_rows("selection", [path], loader, args.selection_iterations, args.repeats, 20,
                                options, label)
    return rows


def evaluation_rate(problem, repeats, launches=20, **options):
    """Moves/s of one full-neighbourhood evaluation + reduction (no apply) around a random
    solution, CUDA events, median: (seconds, moves/s, the evaluator)."""
    ev = cuda_backend(**options).evaluator(problem, problem.neighbourhood)
    ev.load(problem.encoding.random(np.random.default_rng(0)))
    t = pass_seconds(ev, repeats, launches)
    return t, problem.neighbourhood.size / t, ev


def table_twoopt_rate(args):
    needs_gpu("twoopt-rate")
    rows = []
    for path in instances(args, "tsplib", args.twoopt_instances.split(",")):
        name = path.stem
        problem = TSP.from_file(path, neighbourhood="2opt", start="random")
        for policy in ("readonly", "texture"):
            memory = {k: policy for k in problem.device_data()}
            t, rate, ev = evaluation_rate(problem, args.repeats, memory=memory)
            # the selected move's delta against the NumPy reference
            x = np.random.default_rng(0).permutation(problem.n)
            ev.load(x)
            gpu_sel = ev.select(Query(rule="best", current=0))
            best_cpu_check = problem.delta(x, problem.neighbourhood.decode(np.array([gpu_sel.index])))[0]
            rows.append(dict(table="twoopt-rate", instance=name, n=problem.n, backend="cuda",
                             strategy=f"{policy}, {'matrix' if problem.gpu_matrix else 'coordinates'}",
                             moves=problem.neighbourhood.size, seconds=f"{t:.3e}", moves_per_s=f"{rate:.3e}",
                             config=ev.config, selected_delta_matches_cpu=bool(best_cpu_check == gpu_sel.delta)))
            emit(rows[-1])
    return rows


def table_multistart(args):
    """QAP tai100a for --multistart-seconds: one tabu search (one launch per iteration), then
    batches of B starts (lsmgpu.parallel.batch: 64 queued iterations between host visits), and the
    largest batch again without Taillard's long-term aspiration: evaluations/s against the
    single search, iterations per start, best and mean gap."""
    from lsmgpu.parallel.multistart import MultiStart
    path, = instances(args, "qaplib", ["tai100a"])
    problem = QAP.from_file(path)
    single = TabuSearch(problem, seed=0, backend=cuda_backend()).run(seconds=args.multistart_seconds)
    single_rate = single.evaluations / single.seconds
    gap = problem.gap(single.fitness)
    rows = [dict(table="multistart", instance=problem.name, n=problem.n, backend=single.backend,
                 strategy="1 search, one launch per iteration", starts=1, seconds=round(single.seconds, 2),
                 iterations_per_start=single.iterations, evaluations_per_s=f"{single_rate:.3e}", x_single_start=1.0,
                 best_fitness=single.fitness, gap_pct=None if gap is None else round(100 * gap, 3),
                 mean_gap_pct=None if gap is None else round(100 * gap, 3))]
    emit(rows[-1])
    sizes = [int(b) for b in args.multistart_starts.split(",")]
    # the batches with Taillard's long-term aspiration (the QAP default), and the largest without
    for starts, forced in [(b, None) for b in sizes] + [(sizes[-1], 0)]:
        result = MultiStart(TabuSearch, problem, starts=starts, seed=0, backend=cuda_backend(),
                            forced_after=forced).run(seconds=args.multistart_seconds)
        rate = result.evaluations / result.seconds
        gap = problem.gap(result.fitness)
        label = f"{starts} starts, batched" + (", no long-term aspiration" if forced == 0 else "")
        rows.append(dict(table="multistart", instance=problem.name, n=problem.n,
                         backend=result.backend, strategy=label, starts=starts,
                         seconds=round(result.seconds, 2), iterations_per_start=max(r.iterations for r in result.runs if r is not None),
                         evaluations_per_s=f"{rate:.3e}",
                         x_single_start=round(rate / single_rate, 1),
                         best_fitness=result.fitness, gap_pct=None if gap is None else round(100 * gap, 3),
                         mean_gap_pct=None if gap is None else round(100 * float(np.mean(
                             [problem.gap(f) for f in result.fitnesses])), 3)))
        emit(rows[-1])
    return rows


def table_islands(args):
    """QAP tai100a, the largest --multistart-starts batch for --multistart-seconds: independent
    starts against islands that exchange their best solutions every K iterations
    (--islands-every; 0: independent) with kicks of --islands-strength moves, for each of
    --islands-seeds: best and mean gap."""
    from lsmgpu.parallel.multistart import MultiStart
    path, = instances(args, "qaplib", ["tai100a"])
    problem = QAP.from_file(path)
    starts = int(args.multistart_starts.split(",")[-1])
    rows = []
    strengths = [int(k) for k in args.islands_strength.split(",")] if args.islands_strength else [None]
    seeds = [int(k) for k in args.islands_seeds.split(",")]
    for seed, every, strength in [(sd, int(k), st) for sd in seeds for k in args.islands_every.split(",")
                                  for st in strengths]:
        if not every and strength != strengths[0]:
            continue
        result = MultiStart(TabuSearch, problem, starts=starts, seed=seed, backend=cuda_backend(),
                            exchange_every=every or None, exchange_strength=strength).run(
                                seconds=args.multistart_seconds)
        gaps = [problem.gap(f) for f in result.fitnesses]
        kick = f", kick {strength or max(1, problem.n // 4)} swaps"
        rows.append(dict(table="islands", instance=problem.name, n=problem.n, backend=result.backend,
                         strategy=f"{starts} starts, " + (f"islands, exchange every {every}{kick}" if every
                                                          else "independent"),
                         starts=starts, seed=seed, seconds=round(result.seconds, 2),
                         iterations_per_start=max(r.iterations for r in result.runs if r is not None),
                         best_fitness=result.fitness, gap_pct=round(100 * problem.gap(result.fitness), 3),
                         mean_gap_pct=round(100 * float(np.mean(gaps)), 3)))
        emit(rows[-1])
    return rows


def table_tsp_quality(args):
    from .tsp_quality import table_tsp_quality as run
    return run(args, cuda_backend, emit)


def table_tsp_large(args):
    needs_gpu("tsp-large")
    from .tsp_quality import table_tsp_large as run
    return run(args, cuda_backend, emit)


def table_ray_gpus(args):
    """QAP tai100a tabu search over Ray actors, one per GPU, each running a batch of
    --multistart-starts' last size: 1 GPU vs every GPU Ray sees, evaluations/s of the search
    loops (sum over actors of evaluations / seconds), and the device of each actor."""
    import ray
    from lsmgpu.parallel.distributed import RayMultiStart
    path, = instances(args, "qaplib", ["tai100a"])
    problem = QAP.from_file(path)
    batch = int(args.multistart_starts.split(",")[-1])
    ray.init(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    rows, one = [], None
    for workers in sorted({1, max(1, gpus)}):
        result = RayMultiStart(TabuSearch, problem, starts=batch * workers, seed=0, workers=workers, batch=batch,
                               backend="cuda" if gpus else "cpu").run(seconds=args.multistart_seconds)
        done = [r for r in result.runs if r is not None]
        rate = sum(r.evaluations / r.seconds for r in done)
        one = one or rate
        rows.append(dict(table="ray-gpus", instance=problem.name, n=problem.n, backend=done[0].backend,
                         strategy=f"{workers} actor(s) x {batch} starts", workers=workers,
                         devices=" | ".join(sorted({r.device for r in result.runs if r is not None})),
                         evaluations_per_s=f"{rate:.3e}", x_one_gpu=round(rate / one, 2),
                         best_fitness=result.fitness, gap_pct=round(100 * problem.gap(result.fitness), 3)))
        emit(rows[-1])
    ray.shutdown()
    return rows


def table_overhead(args):
    """Per-iteration wall time of a tiny neighbourhood (QAP n = 12: 66 moves)."""
    from lsmgpu.problems import shipped
    problem = QAP.from_file(shipped("tai12a"))
    rows = []
    for label, options in (("fused launch", {}), ("fused launch, profile off, 1 block", {"threads": 64, "block": 64})):
        s, per_iteration, res = timed_search(lambda: TabuSearch(problem, seed=0, backend=cuda_backend(**options)),
                                             args.iterations, args.repeats)
        rows.append(dict(table="overhead", instance="tai12a", n=12, backend=res.backend, strategy=label,
                         iterations=res.iterations, seconds=round(s, 4),
                         us_per_iteration=round(1e6 * per_iteration, 2)))
        emit(rows[-1])
    return rows


def table_memory(args):
    """Memory policy of the problems' arrays, one full evaluate + reduce pass each
    (CUDA events, median): the measurement behind each problem's default policy."""
    from lsmgpu.problems import GraphColoring
    from lsmgpu.problems.coloring import random_graph
    needs_gpu("memory")
    qap, = instances(args, "qaplib", ["tai100a"])
    tsp, = instances(args, "tsplib", ["pr2392"])
    problems = [QAP.from_file(qap),
                TSP.from_file(tsp, neighbourhood="swap", start="random"),
                TSP.from_file(tsp, neighbourhood="2opt", start="random"),
                PPP.planted(401, 417, 0, distance=2)[0],
                GraphColoring(2000, random_graph(2000, 0.05, 0), 40, name="coloring-2000-40"),
                Weierstrass(10, m=10_000)]
    rows = []
    for problem in problems:
        state = problem.solution_data(problem.encoding.random(np.random.default_rng(0)))
        for policy in ("global", "readonly", "texture", "shared"):
            # the inputs take every policy; the solution-derived arrays (rewritten on the GPU:
            # global or readonly only) follow where they can (PPP's delta reads only those)
            memory = {name: policy for name in problem.device_data()}
            if policy in ("global", "readonly"):
                memory.update({name: policy for name in state})
            try:
                t, rate, ev = evaluation_rate(problem, args.repeats, memory=memory)
            except ValueError as exc:       # e.g. shared memory too small for the arrays
                rows.append(dict(table="memory", instance=problem.name, n=problem.n, backend="cuda",
                                 strategy=policy, note=str(exc)[:80]))
                emit(rows[-1])
                continue
            x = ev.x
            sel = ev.select(Query(rule="best", current=0))
            moves = problem.neighbourhood.moves(x, np.array([sel.index]), 0)
            cpu_delta = problem.delta(x, moves)[0]
            rows.append(dict(table="memory", instance=problem.name, n=problem.n, backend="cuda", strategy=policy,
                             moves=problem.neighbourhood.size, seconds=f"{t:.3e}", moves_per_s=f"{rate:.3e}",
                             config=ev.config, selected_delta_matches_cpu=bool(np.isclose(cpu_delta, sel.delta,
                                                                                          rtol=1e-9, atol=0))))
            emit(rows[-1])
            ev.close()
    return rows


#: the PPP instance sizes (m, n) of Luong, Melab & Talbi, Tables 3 and 4
PPP_SIZES = [(73, 73), (81, 81), (101, 117), (201, 217), (401, 417), (601, 617), (801, 817), (1001, 1017),
             (1301, 1317)]


def ppp_loader(distance):
    """Planted instance (seed 0) of size "m-n"."""
    def load(size):
        m, n = map(int, size.split("-"))
        return PPP.planted(m, n, 0, distance=distance)[0]
    return load


def ppp_sizes(args, default=PPP_SIZES):
    if args.ppp_sizes:
        return args.ppp_sizes.split(",")
    return ["31-33", "41-43"] if args.quick else [f"{m}-{n}" for m, n in default]


def table_ppp(distance):
    def table(args):
        return search_rows(f"ppp-h{distance}", ppp_sizes(args), ppp_loader(distance), args.iterations,
                           args.repeats, args.cpu_iterations)
    table.__doc__ = (f"PPP, tabu search, Hamming distance {distance}" + (f" (the paper's Table {2 + distance})." if distance < 3
                                                                          else " (beyond the paper's tables)."))
    return table


def table_ppp_generation(args):
    """PPP neighbourhood generated on the GPU (index mappings) vs on the CPU (move list uploaded
    every iteration): the paper's Table 8."""
    rows = []
    for distance in (1, 2):
        for options, label in (({}, "gpu generation"), ({"generation": "host"}, "cpu generation")):
            rows += search_rows("ppp-generation", ppp_sizes(args, [(73, 73), (201, 217), (401, 417), (1301, 1317)]),
                                ppp_loader(distance), args.selection_iterations, args.repeats, 20, options,
                                f"hamming {distance}, {label}")
    return rows


def table_ppp_reduction(args):
    """100 hill climbs (best improvement, 99 restarts) with the on-GPU reduction vs the
    fitness array copied to the host: the paper's Table 9."""
    def climbs(problem, backend):
        return HillClimbing(problem, restarts=99, seed=0, backend=backend, history="all")
    rows = []
    for options, label in (({}, "gpu reduction"), ({"selection": "host"}, "fitness array copied, host selection")):
        rows += search_rows("ppp-reduction", ppp_sizes(args, [(73, 73), (201, 217), (401, 417)]), ppp_loader(2),
                            None, args.repeats, 10**9, options, f"hamming 2, {label}", climbs)
    return rows


def table_weierstrass(args):
    """Weierstrass (Luong's form), crowns of 10,000 neighbours, dimensions 1..10, single vs double
    precision: the paper's Table 5, with ``--weierstrass-search`` hill climbing or tabu search
    (the paper's, with the crowns' (axis, direction) tabu attributes)."""
    def search(problem, backend):
        if args.weierstrass_search == "tabu":
            return TabuSearch(problem, seed=0, backend=backend, history="all")
        return HillClimbing(problem, seed=0, backend=backend, patience=10**9, history="all")
    rows = []
    for precision in ("float32", "float64"):
        rows += search_rows("weierstrass", list(range(1, 4 if args.quick else 11)),
                            lambda n: Weierstrass(n, precision=precision, m=1000 if args.quick else 10_000),
                            args.weierstrass_iterations, args.repeats, args.cpu_iterations,
                            strategy=f"{precision}, {args.weierstrass_search}", make_search=search)
    return rows


TABLES = {"multistart": table_multistart, "islands": table_islands, "tsp-quality": table_tsp_quality, "tsp-large": table_tsp_large, "ray-gpus": table_ray_gpus, "qap": table_qap, "tsp-swap": table_tsp_swap, "threads": table_threads, "selection": table_selection,
          "twoopt-rate": table_twoopt_rate, "overhead": table_overhead, "ppp-h1": table_ppp(1),
          "ppp-h2": table_ppp(2), "ppp-h3": table_ppp(3), "ppp-generation": table_ppp_generation, "ppp-reduction": table_ppp_reduction,
          "weierstrass": table_weierstrass, "memory": table_memory,
          "peers-qap": lambda args: table_peers_qap(args, instances(args, "qaplib", args.peer_qap.split(",")),
                                                    lambda: args.backend_choice, emit),
          "peers-weierstrass": lambda args: table_peers_weierstrass(args, lambda: args.backend_choice, emit),
          "lkh": lambda args: table_lkh(args, instances(args, "tsplib", args.lkh_instances.split(",")), emit),
          "peers-tsp": lambda args: table_peers_tsp(args, instances(args, "tsplib", args.peer_tsp.split(",")),
                                                    lambda: args.backend_choice, emit),
          "bad-inputs": lambda args: table_bad_inputs(args, emit),
          "interrupts": lambda args: table_interrupts(args, emit),
          "overrun": lambda args: table_overrun(args, overrun_instances(args), emit),
          "startup": lambda args: table_startup(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "defaults": lambda args: table_defaults(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "cpu-chains": lambda args: table_cpu_chains(args, lambda folder, name: instances(args, folder, [name])[0],
                                                      emit),
          "descents": lambda args: table_descents(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "batch-ils": lambda args: table_batch_ils(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "dontlook-ils": lambda args: table_dontlook_ils(args, lambda folder, name: instances(args, folder, [name])[0],
                                                          emit),
          "ray-islands": lambda args: table_ray_islands(args, lambda folder, name: instances(args, folder, [name])[0],
                                                        emit),
          "acs-build": lambda args: table_acs_build(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "mmas-build": lambda args: table_mmas_build(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "colony-quality": lambda args: table_colony_quality(args, lambda folder, name: instances(args, folder, [name])[0],
                                                              emit),
          "faco": lambda args: table_faco(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "ga-generation": lambda args: table_ga_generation(args, lambda folder, name: instances(args, folder, [name])[0],
                                                            emit),
          "ga-convergence": lambda args: table_ga_convergence(args, lambda folder, name: instances(args, folder, [name])[0],
                                                              emit),
          "ga-million": lambda args: table_ga_million(args, None, emit),
          "ga-local-minima": lambda args: table_ga_local_minima(
              args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "alpha": lambda args: table_alpha(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "depth": lambda args: table_depth(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "lk-descent": lambda args: table_lk_descent(args, lambda folder, name: instances(args, folder, [name])[0],
                                                      emit),
          "segments": lambda args: table_segments(args, lambda folder, name: instances(args, folder, [name])[0], emit),
          "fosin-3opt": lambda args: table_fosin_3opt(args, emit),
          "ga-quality": lambda args: table_ga_quality(args, lambda folder, name: instances(args, folder, [name])[0], emit)}


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_speedups(table: str, rows: list[dict], out: Path) -> str | None:
    """Speed-up over the CPU backend against n, one line per strategy; the file name, or None
    where the table has no speed-ups (or matplotlib is missing)."""
    points = [r for r in rows if r.get("speedup") not in (None, "") and r.get("n")]
    plt = _pyplot() if points else None
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for strategy in dict.fromkeys(r.get("strategy", table) for r in points):
        mine = sorted((r["n"], float(r["speedup"])) for r in points if r.get("strategy", table) == strategy)
        ax.plot([n for n, _ in mine], [v for _, v in mine], marker="o", label=strategy)
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="speed-up over the CPU backend", title=table)
    return _save(plt, fig, ax, out / f"{table}-speedup.png")


def plot_gaps(table: str, rows: list[dict], out: Path) -> str | None:
    """Gap to the best known against the time budget, one line per (instance, method): the
    peer tables' picture of who is ahead at equal time."""
    points = [r for r in rows if r.get("budget_s") not in (None, "") and r.get("gap_pct") is not None]
    plt = _pyplot() if points else None
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for key in dict.fromkeys((r["instance"], r["strategy"]) for r in points):
        mine = sorted((float(r["budget_s"]), float(r["gap_pct"])) for r in points if (r["instance"], r["strategy"]) == key)
        ax.plot([b for b, _ in mine], [g for _, g in mine], marker="o", label=f"{key[0]}: {key[1]}")
    ax.set(xscale="log", xlabel="time budget (s)", ylabel="gap to best known (%)", title=table)
    return _save(plt, fig, ax, out / f"{table}-gap.png")


def _save(plt, fig, ax, path: Path) -> str:
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


def write(rows, out: Path, meta: dict):
    out.mkdir(parents=True, exist_ok=True)
    by_table: dict[str, list] = {}
    for r in rows:
        by_table.setdefault(r["table"], []).append(r)
    md = ["# lsmgpu benchmarks\n", f"device: {meta['device']} · date: {meta['date']} · commit: {meta['commit']}",
          f"command: `{meta['command']}`\n"]
    for table, trs in by_table.items():
        keys = list(dict.fromkeys(k for r in trs for k in r))
        with open(out / f"{table}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, keys)
            w.writeheader()
            w.writerows(trs)
        md += [f"## {table}\n", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        md += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in trs]
        md.append("")
        for image in (plot_speedups(table, trs, out), plot_gaps(table, trs, out)):
            if image:
                md += [f"![{table}]({image})", ""]
    (out / "results.md").write_text("\n".join(md))
    (out / "results.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1, default=str))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("tables", nargs="+", choices=sorted(TABLES))
    parser.add_argument("--data", default=str(ROOT / ".data"), help="folder holding tsplib/ and qaplib/")
    parser.add_argument("--out", default=str(ROOT / "docs" / "bench"))
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-iterations", type=int, default=200)
    parser.add_argument("--selection-iterations", type=int, default=200,
                        help="iterations of the selection table (host modes move whole arrays each one)")
    parser.add_argument("--cpu-seconds", type=float, default=10.0, help="time box of each CPU baseline run")
    parser.add_argument("--ppp-sizes", default="", help="PPP sizes m-n, comma-separated (default: the paper's)")
    parser.add_argument("--weierstrass-iterations", type=int, default=1000)
    parser.add_argument("--weierstrass-search", choices=["hill", "tabu"], default="hill",
                        help="weierstrass: hill climbing or tabu search (the paper's Table 5: tabu, 10,000 iterations)")
    parser.add_argument("--threads-qap", default="tai100a", help="threads: QAPLIB names")
    parser.add_argument("--threads-tsp", default="pr2392",
                        help="threads: TSPLIB names (Table 7: eil101,d198,pcb442,rat783,d1291,pr2392,fnl4461,rl5915)")
    parser.add_argument("--multistart-starts", default="1,16,64,256", help="batch sizes of the multistart table")
    parser.add_argument("--multistart-seconds", type=float, default=10.0, help="time budget of each multistart row")
    parser.add_argument("--islands-every", default="0,1000,4000,16000",
                        help="exchange periods of the islands table (0: independent starts)")
    parser.add_argument("--islands-seeds", default="0", help="seeds of the islands table, comma-separated")
    parser.add_argument("--quality-max-n", type=int, default=18_512, help="largest TSPLIB instance of tsp-quality")
    parser.add_argument("--quality-min-n", type=int, default=0, help="smallest TSPLIB instance of tsp-quality")
    parser.add_argument("--quality-instances", default="", help="TSPLIB names for tsp-quality (default: all up to max n)")
    parser.add_argument("--quality-kicks", default="0.1,1,10", help="ILS kicks of tsp-quality, in multiples of n")
    parser.add_argument("--quality-seconds", type=float, default=600.0, help="time cap of each tsp-quality ILS run")
    parser.add_argument("--quality-candidates", type=int, default=10,
                        help="tsp-quality: quadrant candidates per city (10; Fosin et al. used 40)")
    parser.add_argument("--fosin-max-n", type=int, default=18_512, help="fosin-3opt: largest EUC_2D TSPLIB instance")
    parser.add_argument("--fosin-candidates", type=int, default=40, help="fosin-3opt: quadrant candidates m (the paper's 40)")
    parser.add_argument("--fosin-reconnections", type=int, default=4, choices=[3, 4],
                        help="fosin-3opt: candidate 3-opt's reconnections (the paper's four)")
    parser.add_argument("--fosin-cpu-moves", type=int, default=4_000_000,
                        help="fosin-3opt: the CPU pass is timed over at most this many moves, scaled to the size")
    parser.add_argument("--large-instances", default="pla33810,pla85900", help="TSPLIB names of tsp-large")
    parser.add_argument("--large-seconds", type=float, default=60.0, help="ILS time of tsp-large")
    parser.add_argument("--islands-strength", default="",
                        help="kicks (random moves) of the islands table, comma-separated (default n / 4)")
    parser.add_argument("--peer-qap", default="tai30a,tai50a,tai100a", help="QAPLIB instances of peers-qap")
    parser.add_argument("--peer-tsp", default="kroA200,u574,pr1002", help="TSPLIB instances of peers-tsp")
    parser.add_argument("--peer-tsp-neighbourhood", default="2opt", help="lsmgpu's ILS neighbourhood in peers-tsp")
    parser.add_argument("--peer-lkh-limit", type=float, default=600.0,
                        help="seconds after which peers-tsp stops LKH's run (it has no time limit of its own)")
    parser.add_argument("--peer-dimensions", default="2,5,10", help="Weierstrass dimensions of peers-weierstrass")
    parser.add_argument("--peer-neighbours", type=int, default=10_000, help="crowns neighbours in peers-weierstrass")
    parser.add_argument("--peer-seconds", default="1,10,60", help="time budgets of the peer tables")
    parser.add_argument("--backend", choices=["cuda", "cpu"], default="cuda",
                        help="backend the tables time (cpu: a machine without a GPU)")
    parser.add_argument("--quick", action="store_true", help="small shipped instances, few iterations (a smoke run)")
    parser.add_argument("--overrun-instances", default="kroA100,pr1002,rl5915,tai50a",
                        help="TSPLIB or QAPLIB names of the overrun table")
    parser.add_argument("--overrun-seconds", default="1,5", help="the budgets S of the overrun table, comma-separated")
    parser.add_argument("--overrun-searches", default=",".join(OVERRUN_SEARCHES),
                        help="the searches of the overrun table, comma-separated")
    parser.add_argument("--overrun-caches", default="cold,warm",
                        help="the overrun table's kernel caches on the GPU: cold (emptied), warm (filled first)")
    parser.add_argument("--overrun-kill", type=float, default=60.0,
                        help="the overrun table kills a run this many seconds past its budget")
    parser.add_argument("--startup-path", default="", help="PYTHONPATH of the startup table's children "
                        "(another lsmgpu installation; default: this one)")
    parser.add_argument("--startup-label", default="", help="the startup rows' tree label (default: the commit)")
    parser.add_argument("--startup-solve", action="store_true", help="also time `lsmgpu solve pla85900 --time 30`")
    parser.add_argument("--descent-waves", default="1", help="threads of the batched descents, in waves (comma-separated)")
    parser.add_argument("--descent-dontlook", action="store_true",
                        help="descents: the TSP rows by don't-look descents too, batched vs one a launch")
    parser.add_argument("--ils-instances", default="pr1002,u1817,pr2392,pcb3038,fnl4461,rl5915,rl11849,d18512",
                        help="TSPLIB names of batch-ils")
    parser.add_argument("--ils-seconds", default="10,60", help="budgets of batch-ils")
    parser.add_argument("--ils-starts", default="1,64", help="chains of batch-ils (1: one ILS chain)")
    parser.add_argument("--ils-every", type=int, default=100, help="iterations between the islands' exchanges")
    parser.add_argument("--lkh-instances", default="pr1002,u1817,pr2392,pcb3038,fnl4461,rl5915,rl11849,d18512",
                        help="lkh: TSPLIB names, run at once (one process each)")
    parser.add_argument("--ils-lkh", action="store_true", help="LKH-3 (elkai) beside each batch-ils instance")
    parser.add_argument("--dlils-instances", default="pr1002,u1817,pr2392,pcb3038,fnl4461,rl5915,rl11849,d18512",
                        help="TSPLIB names of dontlook-ils")
    parser.add_argument("--dlils-seconds", default="10,60", help="budgets of dontlook-ils")
    parser.add_argument("--islands-instances", default="rl11849,d18512,pla85900", help="TSPLIB names of ray-islands")
    parser.add_argument("--islands-gpus", default="1,2", help="ray-islands: GPU counts, comma-separated")
    parser.add_argument("--islands-seconds", default="60", help="ray-islands: the budget")
    parser.add_argument("--islands-method", default="dontlook-ils",
                        help="ray-islands: the islands' search (dontlook-ils, faco, acs, mmas, ga)")
    parser.add_argument("--islands-share", default="1", help="ray-islands: the GPU share of an island (0.5: two a GPU)")
    parser.add_argument("--dlils-seed", default="0", help="dontlook-ils: the searches' seeds, comma-separated")
    parser.add_argument("--dlils-spread", default="default",
                        help="dontlook-ils: kick_spread values (default: DontLookILS's), comma-separated")
    parser.add_argument("--dlils-walk", default="default",
                        help="dontlook-ils: kick_walk values (0: segment kicks; default: DontLookILS's), "
                             "comma-separated")
    parser.add_argument("--dlils-walk-share", default="1",
                        help="dontlook-ils: walk_share values (the share of the chains that walk-kick), "
                             "comma-separated")
    parser.add_argument("--dlils-merge", default="default",
                        help="dontlook-ils: the best chains' tours an exchange merges (0: none; default: "
                             "DontLookILS's), comma-separated")
    parser.add_argument("--dlils-configs", default="256:300:50",
                        help="dontlook-ils runs, chains:kick_segment:exchange_every[:segment] (exchange 0: none; "
                             "segment: the descent's Or-opt, 3 if left out), comma-separated")
    parser.add_argument("--defaults-tsp", default="pr1002,rl5915", help="TSPLIB names of the defaults table")
    parser.add_argument("--defaults-qap", default="tai50a,tai100a", help="QAPLIB names of the defaults table")
    parser.add_argument("--defaults-seconds", type=float, default=10.0, help="budget of each defaults row")
    parser.add_argument("--cpu-chains", default="pr1002:10,pr2392:20",
                        help="cpu-chains: NAME:SECONDS[:SEED] of each instance, its budget and seed (0 if not given)")
    parser.add_argument("--twoopt-instances", default="dsj1000,pr2392,rl5915,rl11849,d18512,pla33810,pla85900")
    parser.add_argument("--acs-instances", default="d198,a280,pcb442,rat783,pr1002,nrw1379,pr2392")
    parser.add_argument("--acs-periods", default="1,2,4,8,16", help="local-update periods of ACS-GPU-Alt in acs-build")
    parser.add_argument("--colony-cpu", action="store_true", help="acs-build: time the CPU backend's construction too")
    parser.add_argument("--mmas-instances", default="d198,pcb442,rat783,pr1002,pcb1173,rl1889,pr2392")
    parser.add_argument("--colony-warps", default="1,2,4,8", help="warps per ant tried in mmas-build")
    parser.add_argument("--colony-mmas", default="d198,pcb442,rat783,pr1002,pr2392",
                        help="TSPLIB names of colony-quality's MMAS + local search rows")
    parser.add_argument("--colony-acs", default="a280,pcb442,rat783", help="TSPLIB names of colony-quality's ACS rows")
    parser.add_argument("--colony-acs-seeds", type=runs_count, default=1, help="colony-quality: runs of each ACS row")
    parser.add_argument("--colony-acs-ants", default="256", help="colony-quality: the ACS rows' ants (Tables 7-8 vary them)")
    parser.add_argument("--colony-acs-periods", default="4",
                        help="colony-quality: the ACS rows' local-update periods (Tables 5, 8: 1,2,4,8,16)")
    parser.add_argument("--colony-mmas-ants", default="",
                        help="colony-quality: the MMAS rows' ants, comma-separated (MMAS Fig. 15; default: the search's)")
    parser.add_argument("--colony-acs-scale", type=float, default=1.0,
                        help="colony-quality: the ACS rows' time limits, the paper's Table 9 ones times this")
    parser.add_argument("--colony-local-search", default="auto",
                        help="colony-quality: the MMAS rows' local searches (auto, dontlook), comma-separated")
    parser.add_argument("--colony-qap", default="", help="colony-quality's QAPLIB names (MMAS + tabu vs islands)")
    parser.add_argument("--colony-qap-seconds", default="10,60", help="colony-quality: the QAP rows' budgets")
    parser.add_argument("--depth-instances", default="pr1002,u1817,pr2392,pcb3038,fnl4461,rl5915,rl11849,d15112,d18512",
                        help="alpha / depth: TSPLIB names")
    parser.add_argument("--depth-seconds", default="60", help="depth: comma-separated budgets (s)")
    parser.add_argument("--depth-configs", default="faco:quadrant,faco:alpha",
                        help="depth: method:candidates runs (faco, dontlook-ils; quadrant, alpha, alphaK)")
    parser.add_argument("--depth-seeds", default="0", help="depth: comma-separated seeds, a run of each config each")
    parser.add_argument("--depth-lkh", default="defaults,popmusic",
                        help="depth: LKH-3's configurations beside (defaults, popmusic; none)")
    parser.add_argument("--depth-lkh-wait", type=float, default=None,
                        help="depth: seconds LKH-3's runs may go on after lsmgpu's rows (default: until they end)")
    parser.add_argument("--depth-tours", default="",
                        help="depth: a .npz file keeping every row's tour (benchmarks/probes/tour_difference.py reads it)")
    parser.add_argument("--descent-instances", default="d18512,pla85900", help="lk-descent: TSPLIB names")
    parser.add_argument("--descent-configs", default="quadrant,quadrant:or3,quadrant:lk,quadrant:or3:lk,alpha:or3:lk",
                        help="lk-descent: candidates[:or3][:lk] descents (quadrant, alpha)")
    parser.add_argument("--alpha-lkh-seconds", type=float, default=60.0,
                        help="alpha: LKH-3's time limit for the reference tours")
    parser.add_argument("--faco-instances", default="pr1002,pr2392,rl5915,d15112,d18512", help="faco's TSPLIB names")
    parser.add_argument("--faco-configs", default="auto:auto",
                        help="faco: ants:moves[:or3] runs (auto: the default; or3 1: Or-3opt)")
    parser.add_argument("--faco-seeds", type=runs_count, default=1, help="faco: runs (seeds 0 ..) per row")
    parser.add_argument("--ga-instances", default="ch130,d2103,rl11849,pla85900", help="ga-generation's TSPLIB names")
    parser.add_argument("--ga-cpu-up-to", type=int, default=12000, help="ga-generation: time the CPU backend up to n")
    parser.add_argument("--ga-convergence", default="ch130,p654", help="ga-convergence's TSPLIB names")
    parser.add_argument("--ga-convergence-generations", type=int, default=300)
    parser.add_argument("--ga-crossovers", default="bcscx,arx,hybrid,scx", help="ga-convergence: the crossovers")
    parser.add_argument("--ga-runs", type=int, default=5, help="ga-convergence: seeds per crossover")
    parser.add_argument("--ga-minima", default="p654", help="ga-local-minima's TSPLIB names (Table 4: rl11849)")
    parser.add_argument("--ga-minima-configs", default="128x1",
                        help="ga-local-minima: genes x groups, comma-separated (Table 4: 128x1,256x1,2048x1,2048x8)")
    parser.add_argument("--ga-minima-crossovers", default="bcscx,arx,hybrid", help="ga-local-minima: the crossovers")
    parser.add_argument("--ga-minima-generations", type=int, default=150, help="ga-local-minima (Table 4: 500)")
    parser.add_argument("--ga-million-cities", type=int, default=1_000_000)
    parser.add_argument("--ga-million-seed", type=int, default=1_000_000, help="portgen's seed")
    parser.add_argument("--ga-generations", default="10,50,200", help="ga-million: the checkpoints")
    parser.add_argument("--ga-million-seconds", type=float, default=540.0,
                        help="ga-million: the run's time limit (with --ga-million-checkpoint: this call's)")
    parser.add_argument("--ga-million-checkpoint", default=None,
                        help="ga-million: the plain GA's checkpoint: resumed where it exists, written at the end of "
                             "each call, so that one run of --ga-generations spans several calls")
    parser.add_argument("--ga-million-memetic", default="", help="ga-million: also the memetic GA with this local search")
    parser.add_argument("--ga-million-memetic-genes", type=int, default=128)
    parser.add_argument("--ga-million-memetic-seconds", type=float, default=600.0)
    parser.add_argument("--ga-tsp", default="pr1002,pr2392", help="ga-quality's TSPLIB names")
    parser.add_argument("--ga-qap", default="tai50a,tai100a", help="ga-quality's QAPLIB names")
    parser.add_argument("--ga-seconds", default="10,60", help="ga-quality: the time budgets")
    parser.add_argument("--ga-memetic-genes", type=int, default=128, help="ga-quality: genes of the memetic GA")
    parser.add_argument("--ga-local-search", default="auto",
                        help="ga-quality: the children's local searches (auto, dontlook for tours, tabu for the QAP)")
    parser.add_argument("--colony-seconds", type=float, default=6.0, help="colony-quality: the most an ACS row runs")
    parser.add_argument("--segments-instances", default="portgen:1000000,pla85900",
                        help="segments: TSPLIB names, portgen:N (N uniform cities, seed N) or portcgen:N (N clustered cities)")
    parser.add_argument("--segments-configs", default="segments:;faco:",
                        help="segments: label:option=value,.. runs joined by ';' (label faco: FocusedACO)")
    parser.add_argument("--segments-seconds", type=float, default=60.0, help="segments: wall seconds, set-up included")
    parser.add_argument("--segments-marks", default="10,30", help="segments: wall seconds to read the gap at")
    parser.add_argument("--segments-folder", default="/tmp", help="segments: where the generated instances are written")
    parser.add_argument("--segments-checkpoint", default="",
                        help="segments: a checkpoint file; the run is resumed from it where it exists (one part a call)")
    parser.add_argument("--segments-checkpoint-every", type=float, default=30.0,
                        help="segments: seconds between checkpoints")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.repeats = min(args.iterations, 200), 1
        args.cpu_iterations, args.cpu_seconds = min(args.cpu_iterations, 20), min(args.cpu_seconds, 0.5)
        args.selection_iterations = min(args.selection_iterations, 20)
        args.weierstrass_iterations = min(args.weierstrass_iterations, 20)
        args.peer_seconds, args.peer_dimensions = "0.2", "2"
        args.peer_neighbours = min(args.peer_neighbours, 1000)
        args.multistart_starts, args.multistart_seconds = "1,4", min(args.multistart_seconds, 0.3)
        args.islands_every = "0,64"
        args.quality_kicks, args.quality_seconds = "0.1,1", min(args.quality_seconds, 5.0)
        args.large_seconds = min(args.large_seconds, 2.0)
        args.defaults_seconds = min(args.defaults_seconds, 0.5)
        args.cpu_chains = "kroA100:0.5"
        args.ils_seconds, args.ils_starts, args.ils_instances = "0.5", "1,4", "pr1002"
        args.colony_mmas, args.colony_acs, args.colony_seconds = "pr1002", "pr1002", 0.5
        args.colony_qap = args.colony_qap and "tai12a"
        args.faco_instances, args.faco_configs = "kroA100", "8:8"
        args.depth_instances, args.depth_seconds, args.alpha_lkh_seconds = "kroA100", "1", 1.0
        args.descent_instances = "kroA100"
        args.segments_instances, args.segments_seconds = "pr1002", 3.0
    args.startup_label = args.startup_label or commit()
    CPU_SECONDS[0] = args.cpu_seconds
    CPU_ONLY[0] = args.backend == "cpu"
    if args.backend == "cuda":
        from lsmgpu.backends.cuda import CudaBackend
        device = CudaBackend.probe()
        args.backend_choice = "cuda"
    else:
        device = f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"
        args.backend_choice = "cpu"
    meta = dict(device=device, date=datetime.date.today().isoformat(), commit=commit(),
                command="python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv),
                python=platform.python_version(), cpu_count=os.cpu_count())
    args.meta = meta
    COLLECTED.clear()                       # a run writes its own rows, not an earlier call's in the same process
    try:
        for table in args.tables:
            TABLES[table](args)
            write(COLLECTED, Path(args.out), meta)
    except KeyboardInterrupt:
        print(f"interrupted: writing the {len(COLLECTED)} rows measured so far", flush=True)
    finally:
        write(COLLECTED, Path(args.out), meta)
    print(Path(args.out, "results.md").read_text())


if __name__ == "__main__":
    main()
