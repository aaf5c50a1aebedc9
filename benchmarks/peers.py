"""Peers at equal wall time: what users run instead of lsmgpu.

QAP: ``scipy.optimize.quadratic_assignment`` ("2opt" local search and "faq", the Frank-Wolfe
relaxation of Vogelstein et al.), each restarted from random starts until the time budget is
spent, against lsmgpu's robust tabu search (Taillard's tenure) run for the same budget. Each
row: best fitness found, gap to the QAPLIB best known, seconds used, restarts or iterations.
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np

from lsmgpu import TabuSearch
from lsmgpu.problems import QAP


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
    for path in paths:
        name = Path(path).stem
        problem = QAP.from_file(path)
        TabuSearch(problem, seed=0, backend=backend_factory()).run(iterations=50)   # compile, tune
        for seconds in (float(s) for s in args.peer_seconds.split(",")):
            t0 = time.perf_counter()
            result = TabuSearch(problem, seed=0, backend=backend_factory()).run(seconds=seconds)
            runs = [("lsmgpu tabu search", result.fitness, time.perf_counter() - t0, f"{result.iterations} iterations")]
            for method in ("2opt", "faq"):
                best, used, restarts = scipy_restarts(problem, method, seconds, 0)
                runs.append((f"scipy {method}", best, used, f"{restarts} restarts"))
            for method, fitness, used, work in runs:
                gap = problem.gap(fitness)
                rows.append(dict(table="peers-qap", instance=name, n=problem.n, strategy=method,
                                 budget_s=seconds, seconds=round(used, 2), best_fitness=fitness,
                                 gap_pct=None if gap is None else round(100 * gap, 3), work=work))
                emit(rows[-1])
    return rows
