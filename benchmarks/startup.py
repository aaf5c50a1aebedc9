"""Start-up (issue 20): how long a fresh Python process takes from its data being ready to its
first GPU iteration done (a CUDA context, kernels from nvcc or the cache, tuning, the start
solution uploaded, one move), for three states of lsmgpu's kernel cache:

- ``cold``: an empty cache (nvcc builds every kernel, the tuner times every one);
- ``known kind``: a cache warmed by another instance of the same kind (the target: <= 0.3 s);
- ``same instance``: a cache warmed by this instance.

Each row is a child process (``python -c CHILD``), which starts the GPU's context in the
background while it reads the data where lsmgpu has ``warm_up`` (as ``lsmgpu solve`` does);
``--startup-path`` runs the children against
another lsmgpu installation (PYTHONPATH), which is how the rows before the change were taken.
Beside them, ``lsmgpu solve INSTANCE --time 30`` timed from the process's spawn to its exit.

    python -m benchmarks startup --data .data --out docs/bench/issue20
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .depth import user_environment

#: (label, instance, sibling of the same kind, neighbourhood or "-", algorithm)
#: (a kind is also a size class where the source says so: up to 8,192 cities the tour is staged in
#: shared memory, so rl5915's sibling is fnl4461; full 2-opt bakes n in, so pr2392's is another build)
CASES = [("TSP candidate 2-opt", "rl5915", "fnl4461", "2opt-candidates", "hc"),
         ("TSP candidate 2-opt", "pla85900", "pla33810", "2opt-candidates", "hc"),
         ("TSP 2-opt", "pr2392", "pcb3038", "2opt", "hc"),
         ("QAP swap, tabu", "tai100a", "tai80a", "-", "tabu")]

#: what a child runs: read the instance, then time one iteration of a fresh search on CUDA
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from lsmgpu import Callback, HillClimbing, TabuSearch
from lsmgpu.problems import load
imported = time.perf_counter()
path, neighbourhood, algorithm = sys.argv[1:4]
try:                       # the GPU's context starts while the data is read (as lsmgpu solve does)
    from lsmgpu.backends.cuda.driver import warm_up
    warm_up()
except ImportError:        # a tree without it
    pass
problem = load(path, **({} if neighbourhood == "-" else {"neighbourhood": neighbourhood}))
start = problem.encoding.random(np.random.default_rng(0))
ready = time.perf_counter()
first = []

class First(Callback):
    def on_iteration(self, state):
        if not first:
            first.append(time.perf_counter())

search = (HillClimbing if algorithm == "hc" else TabuSearch)(problem, backend="cuda", seed=0, initial=start,
                                                             callbacks=[First()])
search.run(iterations=1)
print(json.dumps({"import_s": imported - t0, "data_s": ready - imported, "first_iteration_s": first[0] - ready}))
"""


def child(path: Path, neighbourhood: str, algorithm: str, cache: str, python_path: str | None) -> dict:
    """One child process's timings (or its error's last line)."""
    env = {**user_environment(), "LSMGPU_CACHE": cache}
    if python_path:
        env["PYTHONPATH"] = python_path
    run = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD, str(path), neighbourhood, algorithm],
                         capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if run.returncode != 0:
        return {"error": (run.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def solve_wall(path: Path, flags: list[str], python_path: str | None, cache: str) -> dict:
    """`lsmgpu solve PATH FLAGS` timed from spawn to exit, with its last lines."""
    env = {**user_environment(), "LSMGPU_CACHE": cache}
    if python_path:
        env["PYTHONPATH"] = python_path
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-W", "ignore", "-m", "lsmgpu.cli", "solve", str(path), *flags, "--quiet"],
                         capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    gap = [line for line in run.stdout.splitlines() if line.startswith("gap")]
    return {"wall_s": round(wall, 3), "exit": run.returncode, "gap": gap[-1] if gap else run.stderr[-160:]}


def table_startup(args, path_of, emit) -> list[dict]:
    """The rows above, for --startup-label (e.g. the commit or "before")."""
    rows, python_path = [], args.startup_path or None
    for label, name, sibling, neighbourhood, algorithm in CASES:
        folder = "tsplib" if neighbourhood != "-" else "qaplib"
        path, other = path_of(folder, name).resolve(), path_of(folder, sibling).resolve()
        with tempfile.TemporaryDirectory() as cold, tempfile.TemporaryDirectory() as kind:
            cold_row = child(path, neighbourhood, algorithm, cold, python_path)
            again_row = child(path, neighbourhood, algorithm, cold, python_path)
            child(other, neighbourhood, algorithm, kind, python_path)          # warms the kind
            kind_row = child(path, neighbourhood, algorithm, kind, python_path)
        for state, timing in (("cold", cold_row), ("known kind", kind_row), ("same instance", again_row)):
            rows.append(dict(table="startup", tree=args.startup_label, kind=label, instance=name,
                             warmed_by=sibling if state == "known kind" else name if state == "same instance" else "",
                             cache=state, **{k: round(v, 3) if isinstance(v, float) else v for k, v in timing.items()}))
            emit(rows[-1])
    if args.startup_solve:
        path = path_of("tsplib", "pla85900").resolve()
        with tempfile.TemporaryDirectory() as cache:
            for flags in (["--time", "30"], ["--algorithm", "ils", "--neighbourhood", "2opt-candidates", "--time", "30"]):
                solve_wall(path, ["--time", "1"], python_path, cache)               # builds the kernels once
                rows.append(dict(table="startup", tree=args.startup_label, kind="lsmgpu solve " + " ".join(flags),
                                 instance="pla85900", cache="warm", **solve_wall(path, flags, python_path, cache)))
                emit(rows[-1])
    return rows
