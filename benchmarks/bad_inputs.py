"""Bad inputs tried as a new user would (issue 19): API parameters, malformed instance files and
command-line flags, each classified by what lsmgpu did with it:

* ``clear error``: an exception of lsmgpu's (ValueError, TypeError, OSError, BackendUnavailable)
  whose message names the argument, the file or the rule broken, or exit status 2 with one
  ``lsmgpu: ...`` line and no traceback;
* ``traceback``: any other exception, or a CLI run that printed a traceback;
* ``accepted``: no error (a silent acceptance of something wrong);
* ``hang``: no answer within the time limit.

    python -m benchmarks bad-inputs --backend cpu
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from lsmgpu import (BackendUnavailable, HillClimbing, IteratedLocalSearch, MultiStart, TabuSearch)
from lsmgpu.problems import QAP, TSP, load

ROOT = Path(__file__).resolve().parent.parent
CLEAR = (ValueError, TypeError, OSError, BackendUnavailable)


def qap():
    return QAP.from_file(QAP.shipped("tai12a"))


def berlin():
    return TSP.from_file(TSP.shipped("berlin52"))


#: (what was tried, the call, a word its message must hold)
API = [
    ("iterations=True", lambda: TabuSearch(qap(), backend="cpu").run(True), "iterations"),
    ("iterations=-5", lambda: TabuSearch(qap(), backend="cpu").run(-5), "iterations"),
    ("iterations=1.5", lambda: TabuSearch(qap(), backend="cpu").run(1.5), "iterations"),
    ("seconds='5'", lambda: TabuSearch(qap(), backend="cpu").run(seconds="5"), "seconds"),
    ("seconds=nan", lambda: TabuSearch(qap(), backend="cpu").run(seconds=float("nan")), "seconds"),
    ("seconds=-1", lambda: TabuSearch(qap(), backend="cpu").run(seconds=-1), "seconds"),
    ("target='x'", lambda: TabuSearch(qap(), backend="cpu").run(10, target="x"), "target"),
    ("target=nan", lambda: TabuSearch(qap(), backend="cpu").run(10, target=float("nan")), "target"),
    ("stagnation=-1", lambda: TabuSearch(qap(), backend="cpu").run(10, stagnation=-1), "stagnation"),
    ("evaluations=-1", lambda: TabuSearch(qap(), backend="cpu").run(evaluations=-1), "evaluations"),
    ("no budget (tabu)", lambda: TabuSearch(qap(), backend="cpu").run(), "budget"),
    ("no budget (ILS)", lambda: IteratedLocalSearch(qap(), backend="cpu").run(), "budget"),
    ("tenure=True", lambda: TabuSearch(qap(), tenure=True, backend="cpu"), "tenure"),
    ("tenure=-1", lambda: TabuSearch(qap(), tenure=-1, backend="cpu"), "tenure"),
    ("tenure=2**70", lambda: TabuSearch(qap(), tenure=2**70, backend="cpu"), "tenure"),
    ("tenure=(5, 2)", lambda: TabuSearch(qap(), tenure=(5, 2), backend="cpu"), "tenure"),
    ("tenure='5'", lambda: TabuSearch(qap(), tenure="5", backend="cpu"), "tenure"),
    ("aspiration='no'", lambda: TabuSearch(qap(), aspiration="no", backend="cpu"), "aspiration"),
    ("forced_after=-1", lambda: TabuSearch(qap(), forced_after=-1, backend="cpu"), "forced_after"),
    ("seed=-1", lambda: TabuSearch(qap(), seed=-1, backend="cpu"), "seed"),
    ("seed='x'", lambda: TabuSearch(qap(), seed="x", backend="cpu"), "seed"),
    ("seed=1.5", lambda: TabuSearch(qap(), seed=1.5, backend="cpu"), "seed"),
    ("backend='tpu'", lambda: TabuSearch(qap(), backend="tpu"), "backend"),
    ("initial of the wrong shape", lambda: TabuSearch(qap(), initial=[0, 1, 2], backend="cpu"), "shape"),
    ("initial not a permutation", lambda: TabuSearch(qap(), initial=[0] * 12, backend="cpu"), "permutation"),
    ("history='every'", lambda: TabuSearch(qap(), history="every", backend="cpu"), "history"),
    ("rule='steepest'", lambda: HillClimbing(qap(), rule="steepest", backend="cpu"), "rule"),
    ("restarts=-2", lambda: HillClimbing(qap(), restarts=-2, backend="cpu"), "restarts"),
    ("patience=0", lambda: HillClimbing(qap(), patience=0, backend="cpu"), "patience"),
    ("ILS strength=10**9", lambda: IteratedLocalSearch(qap(), strength=10**9, backend="cpu"), "strength"),
    ("ILS strength=0", lambda: IteratedLocalSearch(qap(), strength=0, backend="cpu"), "strength"),
    ("ILS acceptance='sometimes'", lambda: IteratedLocalSearch(qap(), acceptance="sometimes", backend="cpu"),
     "acceptance"),
    ("tabu over Or-opt", lambda: TabuSearch(TSP.from_file(TSP.shipped("berlin52"), neighbourhood="oropt"),
                                            backend="cpu"), "tabu"),
    ("backend='cuda' for TSP 3-exchange",
     lambda: TabuSearch(TSP.from_file(TSP.shipped("berlin52"), neighbourhood="3exchange"), backend="cuda"), "three"),
    ("MultiStart starts=0", lambda: MultiStart(TabuSearch, qap(), starts=0, backend="cpu"), "starts"),
    ("MultiStart starts=10**12", lambda: MultiStart(TabuSearch, qap(), starts=10**12, backend="cpu"), "starts"),
    ("MultiStart iterations=-1", lambda: MultiStart(TabuSearch, qap(), starts=2, backend="cpu").run(-1), "iterations"),
    ("MultiStart stagnation=-1",
     lambda: MultiStart(TabuSearch, qap(), starts=2, backend="cpu").run(10, stagnation=-1), "stagnation"),
    ("MultiStart target=nan",
     lambda: MultiStart(TabuSearch, qap(), starts=2, backend="cpu").run(10, target=float("nan")), "target"),
    ("MultiStart seconds=nan",
     lambda: MultiStart(TabuSearch, qap(), starts=2, backend="cpu").run(seconds=float("nan")), "seconds"),
    ("MultiStart no budget", lambda: MultiStart(TabuSearch, qap(), starts=2, backend="cpu").run(), "budget"),
    ("MultiStart seed='x'", lambda: MultiStart(TabuSearch, qap(), starts=2, seed="x", backend="cpu"), "seed"),
    ("MultiStart exchange_every=0",
     lambda: MultiStart(TabuSearch, qap(), starts=2, exchange_every=0, backend="cpu"), "exchange_every"),
    ("MultiStart unknown search", lambda: MultiStart("annealing", qap(), starts=2), "search"),
    ("QAP of strings", lambda: QAP(np.full((4, 4), "a"), np.ones((4, 4))), "numbers"),
    ("QAP entries of 2^64", lambda: QAP(np.full((4, 4), 2**64 - 1, dtype=np.uint64), np.ones((4, 4))), "2^63"),
    ("QAP with NaN", lambda: QAP(np.full((4, 4), np.nan), np.ones((4, 4))), "NaN"),
    ("QAP of two shapes", lambda: QAP(np.ones((4, 4)), np.ones((5, 5))), "shape"),
    ("TSP coordinates 3e9 apart", lambda: TSP(np.array([[0, 0], [3e9, 0], [0, 1], [1, 1]])), "2^31"),
    ("TSP world lon/lat x 1e7", lambda: TSP(np.random.default_rng(0).uniform(-180, 180, (50, 2)) * 1e7), "2^31"),
    ("TSP matrix of 2^40", lambda: TSP(matrix=np.full((4, 4), 2**40) - np.diag(np.full(4, 2**40))), "2^31"),
    ("TSP matrix not symmetric", lambda: TSP(matrix=np.arange(16).reshape(4, 4)), "symmetric"),
    ("TSP coordinates with NaN", lambda: TSP(np.array([[0, 0], [np.nan, 0], [0, 1], [1, 1]])), "NaN"),
    ("TSP of 3 cities", lambda: TSP(np.zeros((3, 2))), "n must be"),
    ("TSP start='spiral'", lambda: TSP(np.random.default_rng(0).uniform(0, 9, (9, 2)), start="spiral"), "start"),
    ("TSP neighbourhood='4opt'", lambda: TSP(np.random.default_rng(0).uniform(0, 9, (9, 2)), neighbourhood="4opt"),
     "neighbourhood"),
]

#: (file name, its text, a word the message must hold)
FILES = [
    ("empty.tsp", "", "DIMENSION"),
    ("nodim.tsp", "NAME: x\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\nEOF\n", "DIMENSION"),
    ("shortcoords.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                        "1 0 0\n2 1 1\nEOF\n", "NODE_COORD_SECTION"),
    ("badnumber.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                      "1 0 0\n2 1 x\n3 2 2\n4 3 3\nEOF\n", "not a number"),
    ("repeatedid.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                       "1 0 0\n2 5 5\n2 9 9\n4 1 1\nEOF\n", "twice"),
    ("idbeyond.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                     "1 0 0\n2 5 5\n3 9 9\n9 1 1\nEOF\n", "1..4"),
    ("nancoord.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                     "1 0 0\n2 nan 5\n3 9 9\n4 1 1\nEOF\n", "NaN"),
    ("hugecoord.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                      "1 0 0\n2 3e9 5\n3 9 9\n4 1 1\nEOF\n", "2^31"),
    ("atsp.tsp", "NAME: x\nTYPE: ATSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\n", "ATSP"),
    ("unknownweight.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: MAN_3D\n", "MAN_3D"),
    ("explicit-short.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                           "EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\nEOF\n", "EDGE_WEIGHT_SECTION"),
    ("explicit-asym.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                          "EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2 3\n9 0 1 2\n2 1 0 1\n3 2 1 0\nEOF\n",
     "symmetric"),
    ("explicit-huge.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                          "EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n"
                          "0 1099511627776 2 3\n1099511627776 0 1 2\n2 1 0 1\n3 2 1 0\nEOF\n", "2^31"),
    ("header.tsp", "NAME: x\nTYPE: TSP\nDIMENSION: 4\ngarbage line here\n", "header"),
    ("empty.dat", "", "empty"),
    ("truncated.dat", "4\n1 2 3 4\n", "truncated"),
    ("letters.dat", "2\n1 2 x 4 1 2 3 4", "not a QAPLIB"),
    ("negative-n.dat", "-3\n", "n ="),
    ("overflow.dat", "4\n" + "1 2 3 4\n" * 3 + "1 2 3 99999999999999999999999\n" + "1 1 1 1\n" * 4, "64 bits"),
    ("big-costs.dat", "4\n" + "4000000000 1 1 1\n" * 4 + "4000000000 1 1 1\n" * 4, "64-bit"),
    ("float.dat", "4\n" + "1.5 2 3 4\n" * 4 + "1 1 1 1\n" * 4, "not a QAPLIB"),
    ("unknown.xyz", "1 2 3", "cannot tell"),
]

#: (flags after `lsmgpu solve`, a word the error must hold: the flag, not the Python argument)
CLI = [
    (["berlin52", "--iterations", "-1"], "--iterations"),
    (["berlin52", "--time", "nan"], "--time"),
    (["berlin52", "--time", "-3"], "--time"),
    (["berlin52", "--seed", "-1"], "--seed"),
    (["berlin52", "--starts", "0"], "--starts"),
    (["berlin52", "--algorithm", "tabu", "--neighbourhood", "oropt"], "tabu"),
    (["berlin52", "--algorithm", "tabu", "--neighbourhood", "2opt-candidates"], "tabu"),
    (["berlin52", "--algorithm", "tabu", "--polish", "oropt"], "polish"),
    (["tai12a", "--neighbourhood", "2opt"], "QAP"),
    (["berlin52", "--out", "/nonexistent/folder/best.tour"], "--out"),
    (["berlin52", "--out", "."], "--out"),
    (["no-such-instance"], "shipped"),
    (["."], "folder"),
    (["tai12a", "--exchange-every", "0", "--starts", "4"], "--exchange-every"),
    (["berlin52", "--colors", "3"], "--colors"),
    (["berlin52", "--ants", "0", "--algorithm", "faco"], "--ants"),
]


def classify_call(call, word: str) -> tuple[str, str]:
    try:
        call()
    except CLEAR as exc:
        message = str(exc)
        return ("clear error" if word.lower() in message.lower() else "error without the name"), message
    except Exception as exc:       # noqa: BLE001 - this is what the table counts
        return "traceback", f"{type(exc).__name__}: {exc}"
    return "accepted", ""


def classify_cli(flags, word: str, timeout: float) -> tuple[str, str]:
    try:
        budget = [] if "--iterations" in flags or "--time" in flags else ["--iterations", "10"]
        out = subprocess.run([sys.executable, "-m", "lsmgpu.cli", "solve", *flags, "--backend", "cpu", "--quiet",
                              *budget], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    if "Traceback" in out.stderr:
        return "traceback", out.stderr.strip().splitlines()[-1]
    if out.returncode == 0:
        return "accepted", ""
    line = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""
    ok = out.returncode == 2 and line.startswith("lsmgpu: ") and word.lower() in out.stderr.lower()
    return ("clear error" if ok else f"exit {out.returncode}, unclear"), line


def table_bad_inputs(args, emit):
    rows = []
    for label, call, word in API:
        outcome, message = classify_call(call, word)
        rows.append(dict(table="bad-inputs", kind="API parameter", input=label, outcome=outcome, message=message[:140]))
        emit(rows[-1])
    with tempfile.TemporaryDirectory() as folder:
        for name, text, word in FILES:
            path = Path(folder) / name
            path.write_text(text)
            outcome, message = classify_call(lambda: load(path), word)
            rows.append(dict(table="bad-inputs", kind="file", input=name, outcome=outcome, message=message[:140]))
            emit(rows[-1])
    for flags, word in CLI:
        outcome, message = classify_cli(flags, word, timeout=120)
        rows.append(dict(table="bad-inputs", kind="CLI flags", input=" ".join(flags), outcome=outcome,
                         message=message[:140]))
        emit(rows[-1])
    return rows
