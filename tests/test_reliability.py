"""Reliability (issue 19): budgets honoured with set-up inside, the best so far kept through every
interruption, bad input refused by name, fallbacks said aloud. Timing checks have wide margins:
each asks for S seconds and fails only past several times S (never a speed claim)."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from benchmarks.interrupts import Interrupt
from lsmgpu import (BackendFallback, HillClimbing, IteratedLocalSearch, MultiStart, Neighbourhood, Permutation,
                    TabuSearch)
from lsmgpu.backends import CpuBackend, evaluator_for
from lsmgpu.cli import main
from lsmgpu.problems import QAP, TSP
from lsmgpu.problems.tsplib import read_tsplib
from tests.checks import assert_file_rejected

ROOT = Path(__file__).resolve().parent.parent


def random_tsp(n, seed=0, neighbourhood="2opt", **options):
    points = np.random.default_rng(seed).uniform(0, 10_000, (n, 2)).round()
    return TSP(points, neighbourhood=neighbourhood, name=f"random{n}", **options)


def write_tsp(path: Path, n: int, seed=0) -> Path:
    points = np.random.default_rng(seed).uniform(0, 10_000, (n, 2)).round()
    lines = [f"NAME : random{n}", "TYPE : TSP", f"DIMENSION : {n}", "EDGE_WEIGHT_TYPE : EUC_2D", "NODE_COORD_SECTION"]
    lines += [f"{k + 1} {x:.0f} {y:.0f}" for k, (x, y) in enumerate(points)] + ["EOF"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def qap():
    return QAP.from_file(QAP.shipped("tai12a"))


# --- budgets -------------------------------------------------------------------------------

def test_a_batched_multistart_honours_seconds():
    """8 batched tabu starts whose iteration costs a 600-city 2-opt scan each: 0.5 s returns near
    0.5 s (the chunk is sized from the measured iteration), not after a 64-iteration chunk."""
    tsp = random_tsp(600)
    result = MultiStart(TabuSearch, tsp, starts=8, seed=0, backend="cpu").run(seconds=0.5)
    assert result.status == "seconds" and all(r.status == "seconds" for r in result.runs)
    assert all(r.fitness == tsp.evaluate(r.solution) for r in result.runs)


class SlowBackend(CpuBackend):
    """The CPU backend with a slow set-up, as a kernel build or a tuner would be."""

    def evaluator(self, problem, neighbourhood):
        time.sleep(0.6)
        return super().evaluator(problem, neighbourhood)


def test_seconds_count_from_the_call_with_the_set_up_inside(qap):
    """run(seconds=0.5) whose set-up takes 0.6 s returns at once after it, with the start solution."""
    result = TabuSearch(qap, seed=0, backend=SlowBackend()).run(seconds=0.5)
    assert result.status == "seconds" and result.iterations == 0
    assert result.fitness == qap.evaluate(result.solution)


def test_ils_kicks_are_capped_by_n_and_timed():
    """ILS kicks are capped by n and timed."""
    tsp = random_tsp(2000, start="random")
    with pytest.raises(ValueError, match="strength"):
        IteratedLocalSearch(tsp, strength=2001, backend="cpu")
    result = IteratedLocalSearch(tsp, strength=2000, seed=0, backend="cpu").run(seconds=0.5)
    assert result.status == "seconds"


def test_searches_that_never_stop_need_a_budget(qap):
    """Searches that never stop need a budget."""
    with pytest.raises(ValueError, match="budget"):
        TabuSearch(qap, backend="cpu").run()
    with pytest.raises(ValueError, match="budget"):
        IteratedLocalSearch(qap, backend="cpu").run(target=0)
    with pytest.raises(ValueError, match="budget"):
        MultiStart(TabuSearch, qap, starts=2, backend="cpu").run()
    assert HillClimbing(qap, seed=0, backend="cpu").run().status == "local_optimum"


# --- interrupts ------------------------------------------------------------------------------

def test_ctrl_c_in_the_first_descent_of_an_ils_keeps_its_progress():
    """Ctrl-C while ILS descends from its start (before any iteration) returns the descent's
    best tour so far, not an exception and not the start."""
    from lsmgpu.backends.cpu import CpuEvaluator
    tsp = random_tsp(300, start="random")
    start = tsp.evaluate(tsp.initial_solution(np.random.default_rng(0)))
    with Interrupt(CpuEvaluator, "select", 40):
        result = IteratedLocalSearch(tsp, seed=0, backend="cpu").run(seconds=60)
    assert result.status == "interrupted" and result.iterations == 0
    assert result.fitness == tsp.evaluate(result.solution) < start


def test_ctrl_c_in_a_multistart_of_ils_returns_the_best_so_far():
    """Ctrl c in a multistart of ILS returns the best so far."""
    from lsmgpu.backends.cpu import CpuEvaluator
    tsp = random_tsp(200, start="random")
    with Interrupt(CpuEvaluator, "select", 30):
        result = MultiStart(IteratedLocalSearch, tsp, starts=3, seed=0, backend="cpu").run(seconds=60)
    assert result.status == "interrupted" and np.isfinite(result.fitness)
    assert result.fitness == tsp.evaluate(result.solution)


def test_ctrl_c_while_a_batch_is_set_up_returns_the_start_solutions(qap):
    """Ctrl c while a batch is set up returns the start solutions."""
    from lsmgpu.backends.cpu import CpuBatchEvaluator
    with Interrupt(CpuBatchEvaluator, "load", 1):
        result = MultiStart(TabuSearch, qap, starts=3, seed=0, backend="cpu").run(100)
    assert result.status == "interrupted"
    assert all(r.iterations == 0 and r.fitness == qap.evaluate(r.solution) for r in result.runs)


def run_cli(args, **kwargs):
    return subprocess.run([sys.executable, "-m", "lsmgpu.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kwargs)


def test_sigterm_writes_the_best_so_far_and_exits_143(tmp_path):
    """SIGTERM writes the best so far and exits 143."""
    instance, out = write_tsp(tmp_path / "r800.tsp", 800), tmp_path / "best.tour"
    process = subprocess.Popen([sys.executable, "-m", "lsmgpu.cli", "solve", str(instance), "--algorithm", "ils",
                                "--time", "60", "--backend", "cpu", "--quiet", "--out", str(out)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4.0)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    assert "interrupted (SIGTERM)" in stderr and "Traceback" not in stderr
    lines = out.read_text().split("\n")
    tour = np.array([int(v) - 1 for v in lines[lines.index("TOUR_SECTION") + 1:lines.index("-1")]])
    assert sorted(tour) == list(range(800))
    assert f"best fitness: {TSP.from_file(instance).evaluate(tour)}" in stdout


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("args,message", [
    (["--iterations", "-1"], "iterations"), (["--time", "nan"], "seconds"), (["--seed", "-1"], "seed"),
    (["--algorithm", "tabu", "--neighbourhood", "oropt"], "no tabu attributes"),
    (["--algorithm", "tabu", "--neighbourhood", "2opt-candidates"], "no tabu attributes"),
    (["--starts", "0"], "starts"),
])
def test_cli_bad_flags_are_one_line_errors(args, message):
    """CLI bad flags are one line errors."""
    out = run_cli(["solve", "berlin52", "--backend", "cpu", "--quiet", *args])
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("lsmgpu: ") and message in out.stderr


def test_cli_backend_cuda_without_a_gpu_is_a_one_line_error():
    """CLI backend CUDA without a GPU is a one line error."""
    from lsmgpu.backends import cuda_available
    if cuda_available()[0]:
        pytest.skip("a GPU is present")
    out = run_cli(["solve", "tai12a", "--backend", "cuda", "--quiet"])
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.startswith("lsmgpu: ")


@pytest.mark.parametrize("where", ["missing/best.sln", "."])
def test_cli_checks_out_before_the_search(tmp_path, where, capsys):
    """CLI checks out before the search."""
    assert main(["solve", "tai12a", "--backend", "cpu", "--iterations", "100000", "--quiet",
                 "--out", str(tmp_path / where)]) == 2
    out, err = capsys.readouterr()
    assert "--out" in err and "best fitness" not in out          # refused before the search ran


@pytest.mark.parametrize("flags,message", [
    (["--checkpoint", "missing/run.ckpt"], "--checkpoint .*missing/run.ckpt: folder .*missing does not exist"),
    (["--resume", "missing.ckpt"], "--resume: no checkpoint at .*missing.ckpt"),
    (["--resume", "text.ckpt"], "--resume: .*text.ckpt' is not an lsmgpu checkpoint"),
])
def test_cli_checks_checkpoint_files_before_the_search(tmp_path, flags, message, capsys):
    """A checkpoint in a folder that does not exist, or a checkpoint to resume that does not exist
    or is no checkpoint, is refused in one line (exit 2) before the search, not by a traceback from
    inside it."""
    (tmp_path / "text.ckpt").write_text("not a checkpoint")
    flags = [flags[0], str(tmp_path / flags[1])]
    assert main(["solve", "tai12a", "--backend", "cpu", "--iterations", "100000", "--quiet", *flags]) == 2
    out, err = capsys.readouterr()
    assert re.search(message, err) and "Traceback" not in err and "best fitness" not in out


def test_cli_names_a_folder_given_as_the_instance(tmp_path, capsys):
    """CLI names a folder given as the instance."""
    assert main(["solve", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


@pytest.mark.parametrize("make,error,message", [
    (lambda p: TabuSearch(p).run(iterations=True), TypeError, "iterations"),
    (lambda p: TabuSearch(p, tenure=True), TypeError, "tenure"),
    (lambda p: TabuSearch(p, tenure=2**70), ValueError, "tenure"),
    (lambda p: TabuSearch(p, aspiration="no"), TypeError, "aspiration"),
    (lambda p: TabuSearch(p).run(seconds="5"), TypeError, "seconds"),
    (lambda p: TabuSearch(p).run(100, target="x"), TypeError, "target"),
    (lambda p: TabuSearch(p, seed=-1), ValueError, "seed"),
    (lambda p: TabuSearch(p, seed="x"), TypeError, "seed"),
    (lambda p: TabuSearch(p, seed=1.5), TypeError, "seed"),
    (lambda p: MultiStart(TabuSearch, p, starts=2).run(-1), ValueError, "iterations"),
    (lambda p: MultiStart(TabuSearch, p, starts=2).run(10, stagnation=-1), ValueError, "stagnation"),
    (lambda p: MultiStart(TabuSearch, p, starts=2).run(10, target=float("nan")), ValueError, "target"),
    (lambda p: MultiStart(TabuSearch, p, starts=2).run(seconds=float("nan")), ValueError, "seconds"),
    (lambda p: MultiStart(TabuSearch, p, starts=2, seed="x"), TypeError, "seed"),
])
def test_bad_parameters_name_the_argument(qap, make, error, message):
    """Bad parameters name the argument."""
    with pytest.raises(error, match=message):
        make(qap.with_neighbourhood(qap.neighbourhood))


def test_numpy_integers_and_generators_are_accepted(qap):
    """NumPy integers and generators are accepted."""
    assert TabuSearch(qap, tenure=np.int64(5), backend="cpu").tenure == (5, 5)
    runs = [MultiStart(TabuSearch, qap, starts=3, seed=np.random.default_rng(7), backend="cpu").run(50)
            for _ in range(2)]
    assert np.array_equal(runs[0].fitnesses, runs[1].fitnesses)


def test_too_many_starts_fail_fast(qap):
    """Too many starts fail fast."""
    with pytest.raises(ValueError, match="fit"):
        MultiStart(TabuSearch, qap, starts=10**12, backend="cpu")


def test_tsp_distances_never_wrap():
    """TSP distances never wrap."""
    with pytest.raises(ValueError, match="2\\^31"):
        TSP(np.array([[0, 0], [3e9, 0], [0, 1], [1, 1]]))
    with pytest.raises(ValueError, match="2\\^31"):
        TSP(matrix=np.full((4, 4), 2**40) - np.diag(np.full(4, 2**40)))
    lonlat = np.random.default_rng(0).uniform(-180, 180, (50, 2)) * 1e7      # world-wide lon/lat x 1e7
    with pytest.raises(ValueError, match="coords"):
        TSP(lonlat)


@pytest.mark.parametrize("body,message", [
    ("1 0 0\n2 5 5\n2 9 9\n4 1 1\n", "line 3: node id 2 appears twice"),
    ("1 0 0\n2 5 5\n3 9 9\n7 1 1\n", "line 4: node id 7 is not an integer in 1..4"),
])
def test_tsplib_node_ids_are_checked(tmp_path, body, message):
    """TSPLIB node ids are checked."""
    path = tmp_path / "ids.tsp"
    path.write_text("NAME: ids\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n" + body + "EOF\n")
    with pytest.raises(ValueError, match=message):
        read_tsplib(path)


def test_tsplib_node_order_follows_the_ids(tmp_path):
    """TSPLIB node order follows the ids."""
    path = tmp_path / "order.tsp"
    path.write_text("NAME: o\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                    "2 10 0\n1 0 0\n4 0 10\n3 10 10\nEOF\n")
    assert read_tsplib(path).coords.tolist() == [[0, 0], [10, 0], [10, 10], [0, 10]]


def test_a_qaplib_entry_beyond_64_bits_names_the_line(tmp_path):
    """A QAPLIB entry beyond 64 bits names the line."""
    path = tmp_path / "big.dat"
    path.write_text("4\n" + "1 2 3 4\n" * 3 + "1 2 3 99999999999999999999999\n" + "1 1 1 1\n" * 4)
    with pytest.raises(ValueError, match="big.dat line 5: the entry 99999999999999999999999 does not fit"):
        QAP.from_file(path)
    with pytest.raises(ValueError, match="numbers"):
        QAP(np.full((4, 4), "a"), np.ones((4, 4)))
    with pytest.raises(ValueError, match="2\\^63"):
        QAP(np.full((4, 4), 2**64 - 1, dtype=np.uint64), np.ones((4, 4)))


# --- nothing silent --------------------------------------------------------------------------

def test_a_multistart_that_cannot_batch_says_so(qap):
    """A multistart that cannot batch says so."""
    with pytest.warns(UserWarning, match="one after the other.*callbacks|one after the other.*per-search"):
        MultiStart(TabuSearch, qap, starts=2, backend="cpu", callbacks=print)


def test_a_polish_without_device_code_is_announced(qap):
    """A polish without device code is announced."""
    class Insertion(Neighbourhood):
        arity, encodings, move_kind, static = 2, (Permutation,), "swap", False
        size = property(lambda self: self.n * (self.n - 1))

    class Gpu(CpuBackend):
        name = "cuda"          # stands for a GPU backend: the capability query is what decides

    problem = qap.with_neighbourhood(Insertion())
    with pytest.warns(BackendFallback, match="no CUDA move code"):
        evaluator = evaluator_for(Gpu(), problem)
    assert evaluator.backend == "cpu"


def test_history_memory_is_bounded_by_default(qap):
    """History memory is bounded by default."""
    result = TabuSearch(qap, seed=0, backend="cpu").run(3000)
    assert len(result.history) == len(result.improvements) + 1 < 3000 / 10


def test_the_tuning_cache_is_replaced_whole(tmp_path):
    """The tuning cache is replaced whole."""
    import json
    from lsmgpu.backends.tuning import WaveTuner
    cache = tmp_path / "tuning.json"
    tuner = WaveTuner(cache=str(cache))
    tuner.memory["k"] = (256, 128)
    tuner._save()
    assert json.loads(cache.read_text()) == {"k": [256, 128]} and os.listdir(tmp_path) == ["tuning.json"]


class OutOfTimeBackend(CpuBackend):
    """A backend whose set-up outlasts the budget where it cannot be cut (a kernel build)."""

    def evaluator(self, problem, neighbourhood):
        from lsmgpu.budget import DeadlineReached
        raise DeadlineReached("the time budget ran out while nvcc built a kernel")


def test_a_set_up_past_the_deadline_returns_the_start_solution(qap):
    """A set up past the deadline returns the start solution."""
    result = TabuSearch(qap, seed=0, backend=OutOfTimeBackend()).run(seconds=0.1)
    assert result.status == "seconds" and result.iterations == 0
    assert result.fitness == qap.evaluate(result.solution)


def test_a_start_tour_past_the_deadline_is_still_a_tour():
    """A start tour past the deadline is still a tour."""
    from lsmgpu.budget import deadline_scope
    from lsmgpu.problems.tsp import nearest_neighbour_tour
    tsp = random_tsp(3000)
    with deadline_scope(time.perf_counter() - 1):
        tour = nearest_neighbour_tour(tsp, 0)
    assert sorted(tour.tolist()) == list(range(3000)) and tour[:15].tolist() != list(range(15))


# --- warm starts (issue 20) --------------------------------------------------------------------

def test_a_tour_round_trips_and_continues_a_run(tmp_path):
    """A tour round trips and continues a run."""
    berlin = TSP.from_file(TSP.shipped("berlin52"), neighbourhood="2opt")
    first = IteratedLocalSearch(berlin, seed=0, backend="cpu").run(5)
    berlin.write_solution(first.solution, tmp_path / "b.tour")
    tour = berlin.read_solution(tmp_path / "b.tour")
    assert np.array_equal(tour, first.solution)
    again = TabuSearch(berlin, seed=1, backend="cpu", initial=tour).run(1)
    assert again.history[0] == first.fitness
    multi = MultiStart(TabuSearch, berlin, starts=3, seed=0, backend="cpu", initial=tour, history="all").run(1)
    assert all(r.history[0] == first.fitness for r in multi.runs)


def test_an_assignment_round_trips(tmp_path, qap):
    """An assignment round trips."""
    result = TabuSearch(qap, seed=0, backend="cpu").run(200)
    qap.write_solution(result.solution, tmp_path / "t.sln")
    assert np.array_equal(qap.read_solution(tmp_path / "t.sln"), result.solution)


@pytest.mark.parametrize("text,message", [
    ("NAME: x\nTYPE: TOUR\nDIMENSION: 10\nTOUR_SECTION\n1\n2\n-1\n", "10 cities"),
    ("NAME: x\nTYPE: TOUR\nTOUR_SECTION\n1\n2\n2\n-1\n", "does not hold a solution"),
    ("NAME: x\nTYPE: TOUR\nTOUR_SECTION\n1\nx\n-1\n", "line 5"),
    ("1\n2\n3\n", "TOUR_SECTION"),
])
def test_bad_tour_files_name_the_problem(tmp_path, text, message):
    """Bad tour files name the problem."""
    assert_file_rejected(tmp_path, TSP.from_file(TSP.shipped("berlin52")).read_solution, "bad.tour", text, message)


def test_binary_files_are_named_not_decoded(tmp_path):
    """A binary file given as an instance, a tour or an assignment is refused naming the reader and
    the file (its first byte that is no UTF-8), not by the decoder's traceback."""
    from lsmgpu.problems.coloring import read_dimacs
    from lsmgpu.problems.ppp import PPP
    binary = bytes(range(256)) * 4
    readers = [(TSP.from_file, "TSP", "x.tsp"), (QAP.from_file, "QAP", "x.dat"), (PPP.from_file, "PPP", "x.ppp"),
               (read_dimacs, "GraphColoring", "x.col"),
               (TSP.from_file(TSP.shipped("berlin52")).read_solution, "TSP", "x.tour"),
               (QAP.from_file(QAP.shipped("tai12a")).read_solution, "QAP", "x.sln")]
    for read, owner, name in readers:
        (tmp_path / name).write_bytes(binary)
        with pytest.raises(ValueError, match=f"^{owner}: {name} is not a text file \\(byte 128 is not UTF-8\\)$"):
            read(tmp_path / name)


def test_the_command_continues_from_its_own_output(tmp_path, capsys):
    """The command continues from its own output."""
    out = tmp_path / "best.sln"
    assert main(["solve", "tai12a", "--backend", "cpu", "--iterations", "300", "--quiet", "--out", str(out)]) == 0
    first = int(capsys.readouterr().out.split("best fitness: ")[1].split()[0])
    assert main(["solve", "tai12a", "--backend", "cpu", "--iterations", "1", "--quiet", "--initial", str(out)]) == 0
    assert int(capsys.readouterr().out.split("best fitness: ")[1].split()[0]) <= first
    assert main(["solve", "tai12a", "--backend", "cpu", "--quiet", "--initial", str(tmp_path / "none.sln")]) == 2


def test_the_command_draws_the_tour_and_the_curve(tmp_path, capsys):
    """The command draws the tour and the curve."""
    pytest.importorskip("matplotlib")
    picture = tmp_path / "b.png"
    assert main(["solve", "berlin52", "--algorithm", "ils", "--backend", "cpu", "--iterations", "20", "--quiet",
                 "--plot", str(picture)]) == 0
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000
    assert "picture written" in capsys.readouterr().out
    assert main(["solve", "tai12a", "--backend", "cpu", "--iterations", "20", "--quiet",
                 "--plot", str(tmp_path / "missing" / "q.png")]) == 2
