"""Defaults by measurement (issue 20): each default of lsmgpu beside its alternatives, at the
default budget of ``lsmgpu solve`` (10 s), seed 0, gap to the best known value.

- TSP: ``IteratedLocalSearch(TSP.from_file(path))`` (the TSP's default_ils: candidate 2-opt,
  Or-opt + 3-opt polish, double-bridge kicks) against an ILS over full 2-opt, an ILS over swap
  (the TSP's default neighbourhood before issue 20), a tabu search over 2-opt, the ILS over the
  α-lists, DontLookILS and FocusedACO (the GPU's default; on the CPU their NumPy reference).
- QAP: 256 tabu starts as islands (``lsmgpu solve``'s default on a GPU) against 256 independent
  starts, one tabu search and an ILS; on the CPU backend, one tabu search (its default there)
  against 256 island starts.

    python -m benchmarks defaults --data .data --out docs/bench/issue20

``cpu-chains``: the don't-look ILS chain on the CPU (``lsmgpu solve``'s TSP default there) with its
two kinds of checks, 2-opt + Or-opt and the 5-opt chains of 100 levels alone over the α-nearest, at
each instance's budget and seed (``--cpu-chains pr1002:10,pr2392:20:1``, seed 0 where none is given);
``five_opt_chosen``: whether the command takes the 5-opt chains there (``cpu_five_opt``).

    python -m benchmarks cpu-chains --backend cpu --cpu-chains pr1002:5,pr1002:10 --data .data
"""
from __future__ import annotations

import time
from pathlib import Path

from lsmgpu import DontLookILS, FocusedACO, IteratedLocalSearch, MultiStart, TabuSearch
from lsmgpu.cli_population import FIVE_OPT_DEPTH, cpu_five_opt
from lsmgpu.problems import QAP, TSP

from .tsp_quality import dimension

TSP_METHODS = {
    "ILS, default (candidate 2-opt + Or-opt + 3-opt polish)": lambda p, b: IteratedLocalSearch(
        TSP.from_file(p), seed=0, backend=b),
    "ILS, full 2-opt": lambda p, b: IteratedLocalSearch(TSP.from_file(p, neighbourhood="2opt"), seed=0, backend=b),
    "ILS, swap (the default neighbourhood before)": lambda p, b: IteratedLocalSearch(
        TSP.from_file(p, neighbourhood="swap"), seed=0, backend=b),
    "tabu, full 2-opt": lambda p, b: TabuSearch(TSP.from_file(p, neighbourhood="2opt"), seed=0, backend=b),
    "ILS over the 5 α-nearest (candidates=alpha)": lambda p, b: IteratedLocalSearch(
        TSP.from_file(p), candidates="alpha", seed=0, backend=b),
    "DontLookILS (one chain on the CPU)": lambda p, b: DontLookILS(TSP.from_file(p), seed=0, backend=b),
    "DontLookILS + LK3 moves": lambda p, b: DontLookILS(TSP.from_file(p), lk=True, seed=0, backend=b),
    "FocusedACO": lambda p, b: FocusedACO(TSP.from_file(p), seed=0, backend=b),
}
QAP_METHODS = {
    "256 tabu island starts, exchange every 1000 (default on a GPU)": lambda p, b: MultiStart(
        TabuSearch, QAP.from_file(p), starts=256, exchange_every=1000, seed=0, backend=b),
    "256 independent tabu starts": lambda p, b: MultiStart(TabuSearch, QAP.from_file(p), starts=256, seed=0,
                                                           backend=b),
    "one tabu search (default on a CPU)": lambda p, b: TabuSearch(QAP.from_file(p), seed=0, backend=b),
    "ILS, swap": lambda p, b: IteratedLocalSearch(QAP.from_file(p), seed=0, backend=b),
}
#: the methods also run on the CPU backend (the rest would only repeat the GPU's ranking slower)
CPU_METHODS = ("one tabu search (default on a CPU)", "256 tabu island starts, exchange every 1000 (default on a GPU)")
#: (problem, method, backend) of ``lsmgpu solve``'s defaults at its 10 s (on the CPU with the 5-opt checks up to
#: 10,000 cities: the cpu-chains table)
DEFAULTS = {("TSP", "FocusedACO", "cuda"), ("TSP", "DontLookILS (one chain on the CPU)", "cpu"),
            ("QAP", CPU_METHODS[1], "cuda"), ("QAP", CPU_METHODS[0], "cpu")}


def defaults_row(kind: str, label: str, make, path: Path, backend: str, seconds: float) -> dict:
    """One method's best after ``seconds`` (wall time from the call), and its gap."""
    row = dict(table="defaults", problem=kind, instance=path.stem, method=label, backend=backend,
               default=(kind, label, backend) in DEFAULTS)
    try:
        search = make(path, backend)
        t0 = time.perf_counter()
        result = search.run(seconds=seconds)
        wall = time.perf_counter() - t0
    except Exception as exc:             # a method that cannot run there says why
        return {**row, "refused": f"{type(exc).__name__}: {str(exc)[:120]}"}
    best = getattr(result, "best", result)
    gap = search.problem.gap(best.fitness)
    return {**row, "seconds": seconds, "wall_s": round(wall, 2), "best": best.fitness,
            "best_known": search.problem.best_known, "gap_percent": None if gap is None else round(100 * gap, 3)}


#: the CPU chain's two kinds of checks (cpu-chains)
CPU_CHAINS = {"2-opt + Or-opt": {},
              "5-opt chains of 100 alone, α-nearest": dict(candidates="alpha", lk_depth=FIVE_OPT_DEPTH, lk_move=5,
                                                           chain_alone=True)}


def table_cpu_chains(args, path_of, emit) -> list[dict]:
    """Each ``name:seconds[:seed]`` of --cpu-chains: the CPU chain with each kind of checks (seed 0
    where none is given)."""
    rows = []
    for spec in filter(None, args.cpu_chains.split(",")):
        name, seconds, *seed = spec.split(":")
        seed = int(seed[0]) if seed else 0
        path = path_of("tsplib", name)
        n = dimension(path)
        for label, options in CPU_CHAINS.items():
            row = defaults_row("TSP", label, lambda p, b, options=options: DontLookILS(
                TSP.from_file(p), seed=seed, backend=b, **options), path, "cpu", float(seconds))
            row.pop("default")
            rows.append({**row, "table": "cpu-chains", "n": n, "seed": seed,
                         "five_opt_chosen": cpu_five_opt(n, float(seconds))})
            emit(rows[-1])
    return rows


def table_defaults(args, path_of, emit) -> list[dict]:
    rows = []
    cases = [("TSP", name, TSP_METHODS) for name in filter(None, args.defaults_tsp.split(","))] + \
            [("QAP", name, QAP_METHODS) for name in filter(None, args.defaults_qap.split(","))]
    for kind, name, methods in cases:
        path = path_of("tsplib" if kind == "TSP" else "qaplib", name)
        for label, make in methods.items():
            backends = ["cpu"] if args.backend == "cpu" else ["cuda"] + (["cpu"] if label in CPU_METHODS else [])
            for backend in backends:
                rows.append(defaults_row(kind, label, make, path, backend, args.defaults_seconds))
                emit(rows[-1])
    return rows
