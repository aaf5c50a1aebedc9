"""Peers at equal wall time: what users run instead of lsmgpu.

QAP: ``scipy.optimize.quadratic_assignment`` ("2opt" local search and "faq", the Frank-Wolfe
relaxation of Vogelstein et al.), each restarted from random starts until the time budget is
spent, against lsmgpu's robust tabu search (Taillard's tenure) run for the same budget. Each
row: best fitness found, gap to the QAPLIB best known, seconds used, restarts or iterations.

The CPU peers run in processes of their own, each single-threaded, at the same time as
lsmgpu's run of the same budget (which alone uses the GPU): each method has a core to itself,
as on a user's machine, and a table of budgets 1, 10, 60 s takes 71 s per instance, not 213.
"""
from __future__ import annotations

import multiprocessing
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from lsmgpu import TabuSearch
from lsmgpu.problems import QAP


#: thread-pool sizes the peers' processes inherit (1: one core per method)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def cpu_peers(workers: int):
    """A pool of ``workers`` spawned processes, single-threaded, for the CPU peers to run in
    beside lsmgpu's run of the same budget."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update({name: "1" for name in THREAD_VARIABLES})
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            yield pool
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def scipy_restarts(problem: QAP, method: str, seconds: float, seed: int):
    """Best of ``quadratic_assignment(method)`` restarts from random starts within ``seconds``."""
    from scipy.optimize import quadratic_assignment
    rng = np.random.default_rng(seed)
    options = {"P0": "randomized"} if method == "faq" else {}
    best, restarts, t0 = np.inf, 0, time.perf_counter()
    while restarts == 0 or time.perf_counter() - t0 < seconds:
        options["rng"] = rng
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            result = quadratic_assignment(problem.a, problem.b, method=method, options=options)
        fitness = problem.evaluate(result.col_ind)       # the same objective, checked by lsmgpu
        if not np.isclose(fitness, result.fun):
            raise AssertionError(f"scipy's objective {result.fun} != lsmgpu's {fitness}")
        best = min(best, fitness)
        restarts += 1
    return best, time.perf_counter() - t0, restarts


def table_peers_qap(args, paths, backend_factory, emit):
    """lsmgpu tabu search vs scipy's QAP heuristics at equal time, on the QAPLIB files ``paths``."""
    rows = []
    with cpu_peers(2) as pool:
        for path in paths:
            rows += _peers_qap_instance(args, path, backend_factory, emit, pool)
    return rows


def _peers_qap_instance(args, path, backend_factory, emit, pool):
    rows = []
    name = Path(path).stem
    problem = QAP.from_file(path)
    TabuSearch(problem, seed=0, backend=backend_factory()).run(iterations=50)   # compile, tune
    for seconds in (float(s) for s in args.peer_seconds.split(",")):
        peers = {method: pool.submit(scipy_restarts, problem, method, seconds, 0) for method in ("2opt", "faq")}
        t0 = time.perf_counter()
        result = TabuSearch(problem, seed=0, backend=backend_factory()).run(seconds=seconds)
        runs = [("lsmgpu tabu search", result.fitness, time.perf_counter() - t0, f"{result.iterations} iterations")]
        for method, peer in peers.items():
            best, used, restarts = peer.result()
            runs.append((f"scipy {method}", best, used, f"{restarts} restarts"))
        for method, fitness, used, work in runs:
            gap = problem.gap(fitness)
            rows.append(dict(table="peers-qap", instance=name, n=problem.n, strategy=method,
                             budget_s=seconds, seconds=round(used, 2), best_fitness=fitness,
                             gap_pct=None if gap is None else round(100 * gap, 3), work=work))
            emit(rows[-1])
    return rows


def lsmgpu_ils(problem, seconds: float, polish, backend) -> tuple[float, float, int]:
    """lsmgpu's iterated local search (seed 0) on ``backend`` for ``seconds``: (best length,
    seconds used, kicks). The GPU row runs it in-process, the CPU-backend row in a peer process."""
    from lsmgpu import IteratedLocalSearch
    t0 = time.perf_counter()
    result = IteratedLocalSearch(problem, seed=0, backend=backend, polish=polish).run(seconds=seconds)
    return result.fitness, time.perf_counter() - t0, result.iterations


def ortools_gls(problem, seconds: float) -> tuple[np.ndarray | None, float]:
    """OR-Tools routing (one vehicle) with guided local search for ``seconds``: (tour, seconds
    used); tour None when it found none in time. Arc costs come from the TSP's distance matrix
    (read in C++), or, for instances too large for one (and OR-Tools before 9.10), from
    ``TSP.dist`` through a Python callback (the lengths lsmgpu scores tours with)."""
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2
    n = problem.n
    manager = pywrapcp.RoutingIndexManager(n, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    if problem.matrix is not None and hasattr(routing, "RegisterTransitMatrix"):   # OR-Tools >= 9.10
        transit = routing.RegisterTransitMatrix(problem.matrix.astype(np.int64).tolist())
    else:
        transit = routing.RegisterTransitCallback(
            lambda i, j: int(problem.dist(manager.IndexToNode(i), manager.IndexToNode(j))))
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(int(seconds * 1000))
    t0 = time.perf_counter()
    solution = routing.SolveWithParameters(params)
    used = time.perf_counter() - t0
    if solution is None:
        return None, used
    index, tour = routing.Start(0), []
    while not routing.IsEnd(index):
        tour.append(manager.IndexToNode(index))
        index = solution.Value(routing.NextVar(index))
    return np.array(tour), used


def _lkh_run(problem, answer) -> None:
    """One LKH-3 run through elkai, in a process of its own: the tour goes to ``answer``.
    A distance matrix where the TSP has one, else its coordinates (elkai rounds them as
    EUC_2D; lsmgpu scores the tour with the instance's own rounding)."""
    import elkai
    if problem.matrix is not None:
        tour = elkai.DistanceMatrix(problem.matrix.astype(np.int64).tolist()).solve_tsp(runs=1)
    else:
        tour = [int(c) for c in elkai.Coordinates2D(
            {str(c): (float(x), float(y)) for c, (x, y) in enumerate(problem.coords)}).solve_tsp(runs=1)]
    answer.put(np.array(tour[:-1]))


def lkh(problem, limit: float | None = None) -> tuple[np.ndarray | None, float]:
    """LKH-3 through elkai, one run (it has no time limit of its own; stopped after ``limit``
    seconds when given): (tour or None, seconds)."""
    import queue
    context = multiprocessing.get_context("spawn")
    answer = context.Queue()
    worker = context.Process(target=_lkh_run, args=(problem, answer))
    t0 = time.perf_counter()
    worker.start()
    tour = None
    while limit is None or time.perf_counter() - t0 < limit:
        try:
            tour = answer.get(timeout=0.2)
            break
        except queue.Empty:
            if not worker.is_alive():                    # ended, and its answer (if any) is read above
                try:
                    tour = answer.get(timeout=1.0)
                    break
                except queue.Empty:
                    raise RuntimeError(f"LKH-3 (elkai) ended without a tour (exit code {worker.exitcode}); "
                                       "is elkai installed?") from None
    used = time.perf_counter() - t0
    worker.terminate()
    worker.join()
    return tour, used


def table_lkh(args, paths, emit) -> list[dict]:
    """LKH-3 alone (elkai, one run each, all instances at once in processes of their own, stopped
    after --peer-lkh-limit seconds): its own time to its tour and the tour's gap, or no tour."""
    from concurrent.futures import ThreadPoolExecutor
    from lsmgpu.problems import TSP
    problems = [TSP.from_file(path) for path in paths]
    limit = float(args.peer_lkh_limit)
    with ThreadPoolExecutor(len(problems)) as pool:
        answers = list(pool.map(lambda problem: lkh(problem, limit), problems))
    rows = []
    for problem, (tour, used) in zip(problems, answers):
        length = _length(problem, tour)
        rows.append(dict(table="lkh", instance=problem.name, n=problem.n, strategy="LKH-3 (elkai, 1 run)",
                         limit_s=limit, seconds=round(used, 2), length=length,
                         gap_pct=None if length is None else round(100 * problem.gap(length), 3),
                         outcome="its tour" if length is not None else f"no tour in {limit:g} s",
                         concurrent=len(problems)))
        emit(rows[-1])
    return rows


def _length(problem, tour) -> int | None:
    """A peer's tour length as lsmgpu scores it (None: no tour)."""
    return None if tour is None else problem.evaluate(tour)


def table_peers_tsp(args, paths, backend_factory, emit):
    """lsmgpu iterated local search vs OR-Tools guided local search at equal time (and, when
    lsmgpu runs on the GPU, the same search on lsmgpu's CPU backend beside it), and LKH (elkai,
    one run, its own time up to --peer-lkh-limit), on TSPLIB files: distance matrices where they
    fit, coordinates beyond (pla33810, pla85900). A peer that returns no tour in its time gets a
    row without a length."""
    from lsmgpu import CandidateTwoOpt, IteratedLocalSearch, candidate_polish
    from lsmgpu.problems import TSP
    rows = []
    for path in paths:
        problem = TSP.from_file(path, neighbourhood=args.peer_tsp_neighbourhood)
        # over candidate lists, descents are polished by Or-opt and 3-opt on the same lists
        polish = (candidate_polish(problem.neighbourhood.candidates)
                  if isinstance(problem.neighbourhood, CandidateTwoOpt) else None)
        IteratedLocalSearch(problem, seed=0, backend=backend_factory(), polish=polish).run(iterations=2)  # compile, tune
        runs = []
        on_gpu = getattr(args, "backend", "cuda") != "cpu"
        with cpu_peers(2 if on_gpu else 1) as pool:
            for seconds in (float(s) for s in args.peer_seconds.split(",")):
                peer = pool.submit(ortools_gls, problem, seconds)
                on_cpu = pool.submit(lsmgpu_ils, problem, seconds, polish, "cpu") if on_gpu else None
                fitness, used, kicks = lsmgpu_ils(problem, seconds, polish, backend_factory())
                runs.append((f"lsmgpu ILS ({args.peer_tsp_neighbourhood})", seconds, fitness, used, f"{kicks} kicks"))
                if on_cpu is not None:
                    fitness, used, kicks = on_cpu.result()
                    runs.append((f"lsmgpu ILS ({args.peer_tsp_neighbourhood}), CPU backend", seconds, fitness, used,
                                 f"{kicks} kicks"))
                tour, used = peer.result()
                runs.append(("OR-Tools guided local search", seconds, _length(problem, tour), used, ""))
        tour, used = lkh(problem, getattr(args, "peer_lkh_limit", None))
        runs.append(("LKH-3 (elkai, 1 run)", None, _length(problem, tour), used, ""))
        for method, budget, fitness, used, work in runs:
            gap = None if fitness is None else problem.gap(fitness)
            rows.append(dict(table="peers-tsp", instance=problem.name, n=problem.n, strategy=method, budget_s=budget,
                             seconds=round(used, 2), best_fitness=fitness,
                             gap_pct=None if gap is None else round(100 * gap, 3),
                             work=work if fitness is not None else "no tour in its time"))
            emit(rows[-1])
    return rows


class _OutOfTime(Exception):
    """Raised inside a peer's objective once its time budget is spent."""


def dual_annealing_for(problem, seconds: float, seed: int) -> tuple[float, float, int]:
    """scipy's dual annealing on ``problem.evaluate`` over its box for ``seconds`` (stopped from
    inside the objective: its own callback only runs between annealing steps, which can take
    many seconds): (best value, seconds used, function evaluations)."""
    from scipy.optimize import dual_annealing
    box = problem.encoding
    t0 = time.perf_counter()
    best, calls = [np.inf], [0]

    def f(x):
        if time.perf_counter() - t0 > seconds:
            raise _OutOfTime
        calls[0] += 1
        value = problem.evaluate(np.clip(x, box.low, box.high))
        best[0] = min(best[0], value)
        return value

    try:
        dual_annealing(f, [(box.low, box.high)] * problem.n, seed=seed, maxiter=10**7)
    except _OutOfTime:
        pass
    return best[0], time.perf_counter() - t0, calls[0]


def table_peers_weierstrass(args, backend_factory, emit):
    """lsmgpu crowns hill climbing and iterated local search (kicks redraw one coordinate) vs
    scipy's dual annealing on the shifted (CEC) Weierstrass function, minimum 0: the value
    reached at equal time (dual annealing runs in its own process beside lsmgpu's two runs)."""
    from lsmgpu import HillClimbing, IteratedLocalSearch
    from lsmgpu.problems import Weierstrass
    searches = {f"lsmgpu hill climbing, {args.peer_neighbours} crowns":
                lambda problem: HillClimbing(problem, seed=0, backend=backend_factory(), patience=10**9),
                f"lsmgpu ILS, {args.peer_neighbours} crowns":
                lambda problem: IteratedLocalSearch(problem, seed=0, backend=backend_factory())}
    rows = []
    for n in (int(v) for v in args.peer_dimensions.split(",")):
        problem = Weierstrass(n, form="cec", m=args.peer_neighbours)
        HillClimbing(problem, seed=0, backend=backend_factory(), patience=10**9).run(iterations=2)   # compile
        with cpu_peers(1) as pool:
            for seconds in (float(s) for s in args.peer_seconds.split(",")):
                peer = pool.submit(dual_annealing_for, problem, seconds, 0)
                runs = []
                for method, make in searches.items():
                    t0 = time.perf_counter()
                    result = make(problem).run(seconds=seconds)
                    runs.append((method, result.fitness, time.perf_counter() - t0, f"{result.evaluations} evaluations"))
                value, used, evaluations = peer.result()
                runs.append(("scipy dual_annealing", value, used, f"{evaluations} evaluations"))
                for method, value, used, work in runs:
                    rows.append(dict(table="peers-weierstrass", instance=problem.name, n=n, strategy=method,
                                     budget_s=seconds, seconds=round(used, 2), best_fitness=round(value, 6),
                                     work=work))
                    emit(rows[-1])
    return rows
