"""Interrupts at every phase (issue 19): Ctrl-C delivered inside each phase of each search (the
start solution's set-up, the first descent, a polish, a kick, an iteration, a batch's set-up and
its chunks), and SIGINT / SIGTERM sent to ``lsmgpu solve``; each row says whether the run returned
a valid best-so-far solution (and, for the command, wrote it and exited 130 / 143). A signal that
arrives while Python is still importing (the first few tenths of a second, before lsmgpu's handler
exists) ends the process by its default action: nothing exists yet to write.

    python -m benchmarks interrupts --backend cpu
"""
from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from lsmgpu import IteratedLocalSearch, MultiStart, TabuSearch, candidate_polish
from lsmgpu.backends.cpu import CpuBatchEvaluator, CpuEvaluator
from lsmgpu.problems import QAP, TSP

ROOT = Path(__file__).resolve().parent.parent


def tsp(n=300, neighbourhood="2opt"):
    points = np.random.default_rng(0).uniform(0, 10_000, (n, 2)).round()
    return TSP(points, neighbourhood=neighbourhood, start="random", name=f"random{n}")


class Interrupt:
    """Patch ``cls.name`` to raise KeyboardInterrupt at its ``at``-th call (then restore it)."""

    def __init__(self, cls, name, at):
        self.cls, self.name, self.at, self.calls = cls, name, at, 0

    def __enter__(self):
        self.original = getattr(self.cls, self.name)

        def patched(obj, *args, **kwargs):
            self.calls += 1
            if self.calls == self.at:
                raise KeyboardInterrupt
            return self.original(obj, *args, **kwargs)
        setattr(self.cls, self.name, patched)
        return self

    def __exit__(self, *exc):
        setattr(self.cls, self.name, self.original)


def ils_interrupted_in_its_polish():
    """An ILS over candidate lists whose first polish step gets Ctrl-C (the first evaluator call
    made while polishing)."""
    problem = tsp(300, "2opt-candidates")
    ils = IteratedLocalSearch(problem, seed=0, backend="cpu", polish=candidate_polish(problem.neighbourhood.candidates))
    polished = ils._polished

    def interrupted_polish(k):
        with Interrupt(CpuEvaluator, "select", 1):
            return polished(k)
    ils._polished = interrupted_polish
    return problem, ils


#: (phase, how the run is made, the method interrupted and at which call, or None where the run
#: interrupts itself)
PHASES = [
    ("tabu: set-up (building the evaluator)", lambda: (q := QAP.from_file(QAP.shipped("tai12a")),
                                                       TabuSearch(q, seed=0, backend="cpu")), (CpuEvaluator, "load", 1)),
    ("tabu: an iteration", lambda: (q := QAP.from_file(QAP.shipped("tai12a")), TabuSearch(q, seed=0, backend="cpu")),
     (CpuEvaluator, "select", 50)),
    ("ILS: first descent", lambda: (p := tsp(), IteratedLocalSearch(p, seed=0, backend="cpu")),
     (CpuEvaluator, "select", 40)),
    ("ILS: polish (Or-opt, 3-opt)", ils_interrupted_in_its_polish, None),
    ("ILS: a kick", lambda: (p := tsp(), IteratedLocalSearch(p, seed=0, backend="cpu")),
     (CpuEvaluator, "apply_moves", 3)),
    ("MultiStart ILS (one after the other)", lambda: (p := tsp(200), MultiStart(IteratedLocalSearch, p, starts=3,
                                                                               seed=0, backend="cpu")),
     (CpuEvaluator, "select", 30)),
    ("batched tabu: set-up", lambda: (q := QAP.from_file(QAP.shipped("tai12a")),
                                      MultiStart(TabuSearch, q, starts=4, seed=0, backend="cpu")),
     (CpuBatchEvaluator, "load", 1)),
    ("batched tabu: inside a chunk", lambda: (q := QAP.from_file(QAP.shipped("tai12a")),
                                              MultiStart(TabuSearch, q, starts=4, seed=0, backend="cpu")),
     (CpuBatchEvaluator, "iterate", 70)),
]


def phase_row(label, make, patch) -> dict:
    problem, runner = make()
    with Interrupt(*patch) if patch else nullcontext():
        t0 = time.perf_counter()
        result = runner.run(10_000, seconds=60)
    solution = result.solution
    valid = solution is not None and problem.fitness(solution) == result.fitness
    return dict(table="interrupts", phase=label, how="Ctrl-C (KeyboardInterrupt)", status=result.status,
                best_so_far_returned=bool(valid), fitness=result.fitness, seconds=round(time.perf_counter() - t0, 3))


def signal_row(sig, after: float, folder: Path) -> dict:
    points = np.random.default_rng(1).uniform(0, 10_000, (800, 2)).round()
    instance = folder / "random800.tsp"
    instance.write_text("\n".join(["NAME : random800", "TYPE : TSP", "DIMENSION : 800", "EDGE_WEIGHT_TYPE : EUC_2D",
                                   "NODE_COORD_SECTION", *(f"{k + 1} {x:.0f} {y:.0f}" for k, (x, y) in enumerate(points)),
                                   "EOF"]) + "\n")
    out = folder / f"best-{sig.name}-{after}.tour"
    process = subprocess.Popen([sys.executable, "-m", "lsmgpu.cli", "solve", str(instance), "--algorithm", "ils",
                                "--time", "60", "--backend", "cpu", "--quiet", "--out", str(out)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=120)
    written = out.is_file() and "TOUR_SECTION" in out.read_text()
    return dict(table="interrupts", phase=f"lsmgpu solve, ILS, {after:g} s in", how=sig.name,
                status=f"exit {process.returncode}", best_so_far_returned=bool(written and "best fitness" in stdout),
                fitness=next((line.split(": ")[1] for line in stdout.splitlines() if line.startswith("best fitness")),
                             None), seconds=None, traceback="Traceback" in stderr)


def table_interrupts(args, emit):
    rows = []
    for label, make, patch in PHASES:
        rows.append(phase_row(label, make, patch))
        emit(rows[-1])
    with tempfile.TemporaryDirectory() as folder:
        for sig in (signal.SIGINT, signal.SIGTERM):
            for after in (0.3, 4.0):          # while Python imports, and inside the search
                rows.append(signal_row(sig, after, Path(folder)))
                emit(rows[-1])
    return rows
