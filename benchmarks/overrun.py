"""Budget overruns (issue 19): every search asked for ``seconds=S`` on each backend and instance
size, the wall time from the call (the start solution, kernel builds, tuning and a first descent
included), the overrun past S, the time of one iteration (wall over the iterations made: an
upper bound that includes the set-up; the target is an overrun of at most max(2 % of S, one
iteration), and a run that made no iteration is held to 2 % of S), and the bytes its history
kept (``history="improvements"``, the default; ``"all"`` keeps 8 bytes an iteration).

    python -m benchmarks overrun --overrun-instances berlin52,pr1002,rl11849,pla85900 --overrun-seconds 2
"""
from __future__ import annotations

import time
import warnings

from lsmgpu import HillClimbing, IteratedLocalSearch, MultiStart, TabuSearch, candidate_polish
from lsmgpu.errors import BackendFallback
from lsmgpu.problems import TSP

#: the largest n run on each backend where a full neighbourhood per iteration (or a dense tabu
#: matrix) would make the row minutes long or gigabytes large: (cpu, cuda)
LIMITS = {"tabu (swap)": (2392, 20_000), "hill climbing (2-opt, restarts)": (2392, 10**9),
          "ils (candidate 2-opt + polish)": (10**9, 10**9), "multistart tabu x8 (swap)": (2392, 20_000)}
#: (label, what it runs): each builds its search from the instance's path and a backend
SEARCHES = {
    "tabu (swap)": lambda path, backend: TabuSearch(TSP.from_file(path, neighbourhood="swap"), seed=0,
                                                    backend=backend),
    "hill climbing (2-opt, restarts)": lambda path, backend: HillClimbing(
        TSP.from_file(path, neighbourhood="2opt", start="random"), seed=0, backend=backend, restarts=10**6),
    "ils (candidate 2-opt + polish)": lambda path, backend: ils(TSP.from_file(path, neighbourhood="2opt-candidates"),
                                                                backend),
    "multistart tabu x8 (swap)": lambda path, backend: MultiStart(
        TabuSearch, TSP.from_file(path, neighbourhood="swap"), starts=8, seed=0, backend=backend),
}


def ils(tsp, backend):
    return IteratedLocalSearch(tsp, seed=0, backend=backend, polish=candidate_polish(tsp.neighbourhood.candidates))


def overrun_row(label, path, backend, seconds) -> dict:
    """One row: the search built, then run(seconds=S) timed from its call."""
    row = dict(table="overrun", search=label, instance=path.stem, backend=backend, seconds_asked=seconds)
    n = TSP.from_file(path).n
    limit = LIMITS[label][0 if backend == "cpu" else 1]
    if n > limit:
        return {**row, "n": n, "refused": f"not run: n > {limit} on {backend} (one iteration or the tabu matrix too large)"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BackendFallback)
            search = SEARCHES[label](path, backend)
        t0 = time.perf_counter()
        result = search.run(seconds=seconds)
        wall = time.perf_counter() - t0
    except Exception as exc:       # a search that cannot run there (memory, device limits) says why
        return {**row, "n": n, "refused": f"{type(exc).__name__}: {str(exc)[:120]}"}
    best = getattr(result, "best", result)
    iterations = best.iterations if best is not None else 0
    # one iteration's time, set-up excluded: measured by the iterations the run made (None: none made)
    per_iteration = best.seconds / iterations if iterations else None
    overrun = wall - seconds
    allowance = max(0.02 * seconds, per_iteration or 0.0)
    return {**row, "n": search.problem.n, "status": result.status, "wall_seconds": round(wall, 4),
            "overrun_seconds": round(overrun, 4), "one_iteration_seconds": None if per_iteration is None
            else round(per_iteration, 6), "within_target": overrun <= allowance, "iterations": iterations,
            "history_bytes": best.history.nbytes if best is not None else None}


def table_overrun(args, instances, emit):
    rows = []
    backends = ["cpu"] if args.backend == "cpu" else ["cuda", "cpu"]
    for path in instances:
        for label in SEARCHES:
            for backend in backends:
                rows.append(overrun_row(label, path, backend, args.overrun_seconds))
                emit(rows[-1])
    return rows
