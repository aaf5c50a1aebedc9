"""Budget overruns: every search asked for ``seconds=S``, timed from its constructor's call to
``run()``'s return (the problem's set-up for the search, the start solution, candidate lists,
heuristic tables, pheromone, kernel builds, tuning and a first descent all inside), on each
backend and instance size. The target: an overrun of at most max(0.5 s, 10 % of S).

Each row runs in a child process with a hard limit (``--overrun-kill``, default 60 s past S), so a
search that ignores its budget shows as killed instead of stalling the table; the child reads the
instance first (reading is not part of the search's budget: ``lsmgpu solve --time`` counts it).
A cold row empties the kernel caches first: lsmgpu's (``LSMGPU_CACHE``) and CUDA's compute cache,
where NVRTC keeps its builds (``CUDA_CACHE_PATH``; depth.cold_caches). Every child runs with a
user's environment (depth.user_environment: lsmgpu's quick builds first as a user's run has them).

    python -m benchmarks overrun --overrun-instances kroA100,pr1002,rl5915,tai50a --overrun-seconds 1,5
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .depth import user_environment

#: the searches as the command line builds them by default, by their command-line names
#: (multistart: 8 tabu starts); faco and dontlook-ils improve tours only
SEARCHES = ["tabu", "hc", "ils", "multistart", "acs", "mmas", "ga", "faco", "dontlook-ils"]
TOURS_ONLY = {"faco", "dontlook-ils"}

CHILD = """
import json, sys, time, warnings
from lsmgpu import MultiStart
from lsmgpu.search import search_class
from lsmgpu.errors import BackendFallback
from lsmgpu.problems import load
name, path, backend, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
problem = load(path)
warnings.simplefilter("ignore", BackendFallback)
t0 = time.perf_counter()
if name == "multistart":
    search = MultiStart("tabu", problem, starts=8, seed=0, backend=backend)
else:
    search = search_class(name)(problem, seed=0, backend=backend)
result = search.run(seconds=seconds)
wall = time.perf_counter() - t0
best = getattr(result, "best", result)
print(json.dumps(dict(wall=wall, status=result.status, iterations=best.iterations, fitness=float(best.fitness),
                      n=problem.n)))
"""


def allowance(seconds: float) -> float:
    """The overrun a run of ``seconds`` may have: max(0.5 s, 10 % of it)."""
    return max(0.5, 0.1 * seconds)


def overrun_row(name: str, path: Path, backend: str, seconds: float, kill: float, cache: str | None = None) -> dict:
    """One row: the search built and run in a child process, timed from its constructor's call;
    ``cache`` "cold": empty kernel caches (cold_caches), "warm": the cache a run of the same search filled
    (a folder per search and instance, filled by an untimed run first)."""
    row = dict(table="overrun", search=name, instance=path.stem, backend=backend, cache=cache or "-",
               seconds_asked=seconds)
    env = user_environment(tempfile.mkdtemp(prefix="lsmgpu-cold-") if cache == "cold" else None)
    if cache == "warm":
        env["LSMGPU_CACHE"] = str(Path(tempfile.gettempdir()) / f"lsmgpu-warm-{name}-{path.stem}")
        if not Path(env["LSMGPU_CACHE"]).exists():
            subprocess.run([sys.executable, "-c", CHILD, name, str(path), backend, "5"], capture_output=True,
                           timeout=5 + kill, env=env)
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, name, str(path), backend, str(seconds)],
                              capture_output=True, text=True, timeout=seconds + kill, env=env)
    except subprocess.TimeoutExpired:
        return {**row, "status": f"killed after {seconds + kill:g} s", "within_target": False}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {**row, "status": f"failed: {last[:160]}", "within_target": False,
                "process_seconds": round(time.perf_counter() - started, 2)}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    overrun = out["wall"] - seconds
    return {**row, "n": out["n"], "status": out["status"], "wall_seconds": round(out["wall"], 3),
            "overrun_seconds": round(overrun, 3), "iterations": out["iterations"],
            "within_target": overrun <= allowance(seconds)}


def applies(name: str, path: Path) -> bool:
    return name not in TOURS_ONLY or path.suffix == ".tsp"


def table_overrun(args, instances, emit):
    rows = []
    budgets = [float(s) for s in str(args.overrun_seconds).split(",")]
    if args.backend == "cpu":
        settings = [("cpu", None)]
    else:
        settings = [("cuda", cache) for cache in args.overrun_caches.split(",")]
    for path in instances:
        for name in args.overrun_searches.split(","):
            if not applies(name, path):
                continue
            for backend, cache in settings:
                for seconds in budgets:
                    rows.append(overrun_row(name, path, backend, seconds, args.overrun_kill, cache))
                    emit(rows[-1])
    return rows
