"""Starts over Ray actors on this machine (declared GPUs, CPU backend: CI has no GPU)."""
import os
import signal
import threading
from pathlib import Path

import numpy as np
import pytest

from lsmgpu import FocusedACO, HillClimbing, TabuSearch
from lsmgpu.parallel.multistart import MultiStart
from lsmgpu.problems import QAP, TSP

ray = pytest.importorskip("ray")
from lsmgpu.parallel.distributed import RayMultiStart  # noqa: E402
from lsmgpu.parallel.board import Board  # noqa: E402
from lsmgpu.parallel.ray_islands import RayIslands  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: every test here on one xdist worker (setup.cfg's --dist loadgroup): one Ray on the machine at a
#: time, started once; two (one a worker) ran these tests no sooner than one
pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """Ray on this machine, its workers finding the tests' classes through PYTHONPATH inherited
    from this process (a runtime_env's env_vars would keep actors off Ray's pre-started workers:
    1.5-2.5 s more an islands run)."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), before]))
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    if before is None:
        os.environ.pop("PYTHONPATH")
    else:
        os.environ["PYTHONPATH"] = before


@pytest.fixture
def qap():
    return QAP.from_file(QAP.shipped("tai12a"))


class CrashingFirst:
    """A problem whose first start kills its worker process (a stand-in for a lost machine)."""

    marker = ""

    def initial_solution(self, rng):
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))   # the first start only
        except FileExistsError:
            return super().initial_solution(rng)
        os._exit(1)


class CrashOnce(CrashingFirst, QAP):
    """A QAP whose first start kills its worker."""


class CrashOnceTour(CrashingFirst, TSP):
    """A TSP whose first island kills its worker."""


def test_same_starts_as_the_sequential_run(qap):
    """Two actors (one per declared GPU) give every start the trajectory of the sequential run."""
    ray_result = RayMultiStart(TabuSearch, qap, starts=4, seed=3, backend="cpu").run(200)
    local = MultiStart(TabuSearch, qap, starts=4, seed=3, backend="cpu").run(200)
    assert ray_result.status == "done" and not ray_result.lost
    assert ray_result.fitness == local.fitness
    for mine, theirs in zip(ray_result.runs, local.runs):
        assert np.array_equal(mine.history, theirs.history)
    devices = {r.device for r in ray_result.runs}
    assert len(devices) == 2 and all(d.startswith("cpu:") and "CUDA_VISIBLE_DEVICES" in d for d in devices)


def test_starts_over_ray_that_would_all_begin_from_one_tour_are_announced():
    """RayMultiStart warns, as MultiStart does, where the problem's start is one solution whatever
    the seed (TSP's greedy tour): its starts would begin from one solution."""
    greedy = TSP(TSP.from_file(TSP.shipped("kroA100")).coords, start="greedy")
    with pytest.warns(UserWarning, match="RayMultiStart: .* the 4 HillClimbing starts begin from one solution"):
        RayMultiStart(HillClimbing, greedy, starts=4, seed=0, backend="cpu")


def test_a_dead_actor_start_is_rerun(qap, tmp_path):
    """The start whose worker dies is rerun on the other actor; no start is dropped."""
    problem = CrashOnce(qap.a, qap.b, name="crash-once")
    problem.marker = str(tmp_path / "crashed")
    result = RayMultiStart(TabuSearch, problem, starts=3, seed=1, backend="cpu").run(100)
    assert Path(problem.marker).exists()
    assert not result.lost and all(r is not None for r in result.runs)
    local = MultiStart(TabuSearch, qap, starts=3, seed=1, backend="cpu").run(100)
    assert np.array_equal(result.fitnesses, local.fitnesses)


def test_time_limit_returns_the_best_so_far(qap):
    """Searches that would run forever are stopped at the deadline with their best so far."""
    runner = RayMultiStart(HillClimbing, qap, starts=6, seed=0, backend="cpu", restarts=10**9)
    runner.start_actors()                  # a loaded machine's slow actor start-up is not the budget's
    result = runner.run(seconds=6)
    assert result.status == "seconds" and result.solution is not None
    assert result.fitness == qap.evaluate(result.solution)
    assert {r.status for r in result.runs if r is not None} <= {"seconds"}      # the driver's deadline


class MarkRunning:
    """A callback that leaves a file once its search has made an iteration (in the actor's process)."""

    def __init__(self, folder):
        self.folder = str(folder)

    def __call__(self, state):
        Path(self.folder, f"{os.getpid()}-{id(self)}").touch()


#: seconds after which interrupt_when sends its signal even if the searches have not marked
INTERRUPT_LIMIT = 300.0


def interrupt_when(folder, count, limit=INTERRUPT_LIMIT):
    """A thread that sends this process SIGINT once ``count`` searches have marked ``folder``
    (whatever the machine's speed: the signal waits for the searches, not for a clock)."""
    def wait():
        for _ in range(int(limit / 0.05)):
            if len(list(Path(folder).iterdir())) >= count:
                break
            threading.Event().wait(0.05)
        os.kill(os.getpid(), signal.SIGINT)
    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


def test_ctrl_c_returns_the_best_so_far(qap, tmp_path):
    """Ctrl-C in the driver, once both actors' searches run, stops every actor and returns what they
    had. Python's own Ctrl-C handler is set for the test (a shell's background job inherits SIGINT
    ignored), and the run has a budget past the signal's, so that a signal not delivered fails the
    test instead of hanging it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    runner = RayMultiStart(HillClimbing, qap, starts=2, seed=0, backend="cpu", restarts=10**9,
                           callbacks=[MarkRunning(tmp_path)])
    try:
        interrupt_when(tmp_path, 2)
        result = runner.run(seconds=INTERRUPT_LIMIT + 120)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.status == "interrupted" and result.solution is not None
    assert all(r is not None and r.status == "interrupted" for r in result.runs)   # said why, not "callback"


def test_actors_run_their_starts_as_batches(qap):
    """Tabu starts reach an actor in batches (here 3 per actor, run together) and still equal
    the sequential run; a time limit stops every batch with its best so far."""
    result = RayMultiStart(TabuSearch, qap, starts=6, seed=4, backend="cpu", batch=3).run(150)
    local = MultiStart(TabuSearch, qap, starts=6, seed=4, backend="cpu", batch=False).run(150)
    for mine, theirs in zip(result.runs, local.runs):
        assert np.array_equal(mine.history, theirs.history)
    runner = RayMultiStart(TabuSearch, qap, starts=4, seed=0, backend="cpu")
    runner.start_actors()                  # their start-up is not the budget's: every actor runs its batch
    timed = runner.run(seconds=3)
    ran = [r for r in timed.runs if r is not None]
    assert timed.status == "seconds" and ran
    assert {r.status for r in ran} == {"seconds"} and timed.fitness == qap.evaluate(timed.solution)
    with pytest.raises(ValueError, match="batch"):
        RayMultiStart(TabuSearch, qap, starts=2, batch=0)


def test_starts_over_ray_resume_from_a_checkpoint_to_the_uninterrupted_results(qap, tmp_path):
    """Ctrl-C after two of six tabu starts (one a batch): the checkpoint written before it keeps
    the results gathered; resume runs the other starts from their seeds and every start's
    trajectory equals the uninterrupted run's."""
    whole = RayMultiStart(TabuSearch, qap, starts=6, seed=5, backend="cpu", batch=1).run(150)
    path, arrived = tmp_path / "starts.ckpt", []

    def interrupt(k, result):
        arrived.append(k)
        if len(arrived) == 3:
            raise KeyboardInterrupt

    cut = RayMultiStart(TabuSearch, qap, starts=6, seed=5, backend="cpu", batch=1)
    assert cut.run(150, progress=interrupt, checkpoint=path, checkpoint_every=0).status == "interrupted"
    resumed_runner = RayMultiStart(TabuSearch, qap, starts=6, seed=5, backend="cpu", batch=1)
    ran_again = []
    resumed = resumed_runner.resume(path, progress=lambda k, r: ran_again.append(k))
    assert resumed.status == "done" and 1 <= len(ran_again) <= 4
    assert resumed.fitness == whole.fitness and np.array_equal(resumed.solution, whole.solution)
    for mine, theirs in zip(resumed.runs, whole.runs):
        assert np.array_equal(mine.history, theirs.history)


def test_the_command_checkpoints_starts_over_ray(tmp_path, capsys):
    """`lsmgpu solve --gpus 2 --starts 4 --checkpoint` then `--resume` writes the same best as
    one run."""
    from lsmgpu.cli import main
    ckpt, half, whole = tmp_path / "run.ckpt", tmp_path / "half.sol", tmp_path / "whole.sol"
    common = ["solve", "tai12a", "--backend", "cpu", "--gpus", "2", "--starts", "4", "--seed", "2", "--quiet",
              "--target", "0"]
    assert main(common + ["--iterations", "80", "--out", str(whole)]) in (0, 1)
    assert main(common + ["--iterations", "80", "--checkpoint", str(ckpt)]) in (0, 1)
    assert main(common + ["--iterations", "80", "--resume", str(ckpt), "--out", str(half)]) in (0, 1)
    assert half.read_text() == whole.read_text()


def test_islands_post_and_take_best_tours():
    """Two DontLookILS islands (CPU actors) exchanging every round: both run their kicks, the
    board holds the best tour any posted, which is the result's."""
    problem = TSP(np.round(np.random.default_rng(4).uniform(0, 1000, (150, 2))), name="rand150")
    islands = RayIslands(problem, islands=2, exchange_every=1, seed=0, backend="cpu", chains=2, round_checks=40)
    result = islands.run(iterations=60)
    assert result.status == "done" and not result.lost and all(r.status == "iterations" for r in result.runs)
    assert [r.work for r in result.runs] == [(120, "kicks")] * 2 and result.work == (240, "kicks")
    assert islands.posts >= 4
    assert islands.board_value == result.fitness == problem.fitness(result.solution)
    assert np.array_equal(islands.board_tour, result.solution) or problem.fitness(islands.board_tour) == result.fitness


@pytest.mark.parametrize("method, options, unit", [
    ("faco", dict(ants=2), "ant tours"), ("acs", dict(ants=2), "ant tours"), ("mmas", dict(ants=2), "ant tours"),
    ("ga", dict(genes=8), "children"), ("dontlook-ils", dict(chains=2, round_checks=20), "kicks")])
def test_synchronous_islands_of_every_method_are_reproducible(method, options, unit):
    """Two islands of each population search exchanging every iteration, synchronously: the same
    seed gives the same islands (results and migrants); the board's best is the result."""
    problem = TSP(np.round(np.random.default_rng(5).uniform(0, 1000, (60, 2))), name="rand60")
    runs = []
    for _ in range(2):
        islands = RayIslands(problem, method=method, islands=2, exchange_every=1, synchronous=True, seed=7,
                             backend="cpu", **options)
        result = islands.run(iterations=6)
        assert result.status == "done" and not result.lost and islands.board_value == result.fitness
        assert [r.work[1] for r in result.runs] == [unit] * 2 and all(r.work[0] > 0 for r in result.runs)
        runs.append((islands.migrants, [(r.fitness, r.solution.tolist(), r.iterations) for r in result.runs]))
    assert runs[0] == runs[1] and sum(runs[0][0]) >= 1
    assert problem.fitness(result.solution) == result.fitness


def test_actors_end_themselves_after_their_kernel_builds(qap):
    """At a run's end the islands' and the starts' actors are asked to end after their kernel builds
    (ActorBuilds.end_after_builds: none on the CPU) and kill themselves: the driver kills only the
    islands' board, and every actor's GPU is free again after."""
    import time
    killed, kill = [], ray.kill

    def gpus_free() -> bool:
        until = time.monotonic() + 30
        while ray.available_resources().get("GPU", 0) < 2 and time.monotonic() < until:
            time.sleep(0.05)
        return ray.available_resources().get("GPU", 0) == 2
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray, "kill", lambda actor, **options: killed.append(actor) or kill(actor, **options))
        problem = TSP(np.round(np.random.default_rng(5).uniform(0, 1000, (60, 2))), name="rand60")
        islands = RayIslands(problem, method="faco", islands=2, exchange_every=1, seed=7, backend="cpu", ants=2)
        assert islands.run(iterations=3).status == "done" and gpus_free() and len(killed) == 1
        starts = RayMultiStart(HillClimbing, qap, starts=4, seed=0, backend="cpu")
        assert starts.run(iterations=5).status == "done" and gpus_free() and len(killed) == 1


def test_an_actor_kills_itself_only_after_its_kernel_builds(monkeypatch):
    """``end_after_builds`` waits for the builds of its process (lsmgpu's CUDA driver where loaded,
    with ACTOR_BUILDS_WAIT as the limit) and then kills its own actor; where the driver was never
    loaded it kills it at once."""
    import sys

    from lsmgpu.parallel import distributed
    events = []

    class FakeDriver:
        @staticmethod
        def finish_builds(limit):
            events.append(("builds", limit))
            return 0

    class FakeRay:
        @staticmethod
        def get_runtime_context():
            return type("Context", (), {"current_actor": "this actor"})()

        @staticmethod
        def kill(actor):
            events.append(("killed", actor))
    monkeypatch.setattr(distributed, "ray_module", lambda: FakeRay)
    monkeypatch.setitem(sys.modules, "lsmgpu.backends.cuda.driver", FakeDriver)
    distributed.ActorBuilds().end_after_builds()
    assert events == [("builds", distributed.ACTOR_BUILDS_WAIT), ("killed", "this actor")]
    events.clear()
    monkeypatch.delitem(sys.modules, "lsmgpu.backends.cuda.driver")
    distributed.ActorBuilds().end_after_builds()
    assert events == [("killed", "this actor")]


def test_the_board_waits_for_every_running_island():
    """A synchronous exchange is gathered once every running island posted it, the best of the
    posts (ties to the lower island); a retired island is not waited for; old exchanges go."""
    board = Board(3)
    tours = [np.arange(5) + k for k in range(3)]
    assert board.post(10.0, tours[2], island=2, exchange=1) is None and board.gather(1) is None
    board.post(10.0, tours[1], island=1, exchange=1)
    assert board.gather(1) is None
    board.retire(0)
    value, tour, save = board.gather(1)
    assert value == 10.0 and np.array_equal(tour, tours[1]) and save is False
    board.post(4.0, tours[2], island=2, exchange=2)
    board.post(9.0, tours[1], island=1, exchange=2)
    assert board.gather(2)[0] == 4.0 and 1 not in board.exchanges
    assert board.best()[:2][0] == 4.0 and board.post(5.0, tours[0]) == (4.0, board.tour)


def test_a_lost_island_is_reported_and_the_other_returns(tmp_path):
    """A lost island is reported and the other returns."""
    base = TSP.from_file(TSP.shipped("berlin52"))
    problem = CrashOnceTour(base.coords, name="crash-once")
    problem.marker = str(tmp_path / "crashed")
    islands = RayIslands(problem, islands=2, seed=1, backend="cpu", chains=2)
    result = islands.run(iterations=30)
    assert Path(problem.marker).exists() and len(result.lost) == 1
    survivor = 1 - result.lost[0]
    assert result.runs[result.lost[0]] is None and result.runs[survivor].status == "iterations"
    assert result.fitness == problem.fitness(result.solution) == islands.board_value


def test_a_synchronous_exchange_does_not_wait_for_a_lost_island(tmp_path):
    """A synchronous exchange does not wait for a lost island."""
    base = TSP.from_file(TSP.shipped("berlin52"))
    problem = CrashOnceTour(base.coords, name="crash-once")
    problem.marker = str(tmp_path / "crashed")
    islands = RayIslands(problem, method="mmas", islands=2, exchange_every=1, synchronous=True, seed=1,
                         backend="cpu", ants=2)
    islands.start_actors()
    result = islands.run(iterations=5, seconds=60)     # the seconds: a safety net, never reached
    assert len(result.lost) == 1 and result.status == "done"
    assert result.runs[1 - result.lost[0]].status == "iterations"


def test_solve_spreads_dontlook_islands_over_gpus(capsys):
    """Solve spreads dontlook islands over gpus."""
    from lsmgpu.cli import main
    assert main(["solve", "berlin52", "--algorithm", "dontlook-ils", "--gpus", "2", "--chains", "2",
                 "--iterations", "100", "--backend", "cpu", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "DontLookILS islands on berlin52 (n = 52, 2 GPU(s)" in captured.err and "best fitness: 7542" in captured.out
    assert "2 of 2 ran" in captured.err


@pytest.mark.parametrize("algorithm, flags", [("faco", ["--ants", "2"]), ("ga", ["--genes", "8"]),
                                              ("mmas", ["--ants", "2"])])
def test_solve_spreads_population_islands_over_gpus(algorithm, flags, capsys):
    """Solve spreads population islands over gpus."""
    from lsmgpu.cli import main
    assert main(["solve", "berlin52", "--algorithm", algorithm, "--gpus", "2", *flags, "--iterations", "3",
                 "--backend", "cpu", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "islands on berlin52 (n = 52, 2 GPU(s)" in captured.err and "2 of 2 ran" in captured.err
    assert "best fitness:" in captured.out


@pytest.mark.parametrize("runner", ["starts", "islands"])
def test_ctrl_c_while_the_actors_start_returns_nothing_ran(runner, qap, monkeypatch):
    """Ctrl-C before any actor answered: an "interrupted" result with no start run, not a traceback."""
    def interrupted(self, ray):
        raise KeyboardInterrupt

    if runner == "starts":
        monkeypatch.setattr(RayMultiStart, "_start_actors", interrupted)
        result = RayMultiStart(TabuSearch, qap, starts=3, seed=1, backend="cpu").run(100)
    else:
        monkeypatch.setattr(RayIslands, "_start_actors", interrupted)
        result = RayIslands(TSP.from_file(TSP.shipped("berlin52")), islands=2, backend="cpu").run(10)
    assert result.status == "interrupted" and result.solution is None and all(r is None for r in result.runs)


def test_islands_name_a_bad_option_with_the_islands_own_error():
    """Islands name a bad option with the islands own error."""
    with pytest.raises(ValueError, match="`chains` must be an integer"):
        RayIslands(TSP.from_file(TSP.shipped("berlin52")), islands=2, backend="cpu", chains=0).run(10)


def test_the_ray_islands_benchmark_counts_every_islands_work():
    """The Ray islands benchmark counts every islands work."""
    import argparse
    from benchmarks.population import table_ray_islands
    # the don't-look chains count their work a round of milliseconds at a time (a CPU colony
    # iteration takes seconds): 1.5 s is work for every island whatever the machine's load
    args = argparse.Namespace(islands_seconds="1.5", islands_method="dontlook-ils", islands_share="0.5",
                              islands_gpus="1,2", islands_instances="berlin52", backend_choice="cpu")
    rows = []
    table_ray_islands(args, lambda folder, name: TSP.shipped(name), rows.append)
    assert [(r["islands"], r["unit"], r["method"]) for r in rows] == [(1, "kicks", "DontLookILS"),
                                                                      (2, "kicks", "DontLookILS")]
    assert all(r["work"] > 0 and r["per_s"] > 0 for r in rows) and rows[1]["vs_one"] > 0 and rows[0]["vs_one"] == 1.0


@pytest.mark.parametrize("option, match", [(dict(method="sa"), "unknown search 'sa'"),
                                           (dict(gpus_per_island=0), "`gpus_per_island` must be in"),
                                           (dict(gpus_per_island=1.5), "`gpus_per_island` must be in"),
                                           (dict(exchange_every=0), "`exchange_every` must be"),
                                           (dict(islands=0), "`islands` must be")])
def test_islands_name_a_bad_setting_before_any_actor_starts(option, match):
    """Islands name a bad setting before any actor starts."""
    with pytest.raises(ValueError, match=match):
        RayIslands(TSP.from_file(TSP.shipped("berlin52")), backend="cpu", **option)


def test_one_tours_segments_over_two_actors():
    """RayTourSegments: the driver cuts and splices, two actors (one declared GPU each, the CPU
    backend) run the segments' chains; the tour improves round after round, is a tour of its
    exact length, and the same seed gives the same tour."""
    from lsmgpu import RayTourSegments
    problem = TSP(np.round(np.random.default_rng(3).uniform(0, 10_000, (400, 2))), name="uniform400")
    runs = [RayTourSegments(problem, seed=4, segment_cities=100, round_kicks=10, backend="cpu").run(iterations=3)
            for _ in range(2)]
    result = runs[0]
    assert result.status == "iterations" and result.iterations == 3 and result.work[0] > 0
    assert np.array_equal(np.sort(result.solution), np.arange(problem.n))
    assert result.fitness == problem.evaluate(result.solution) < result.history[0]
    assert np.all(np.diff(result.history) < 0) and np.array_equal(runs[1].solution, result.solution)


def test_one_tours_segments_over_two_actors_resume_from_a_checkpoint(tmp_path):
    """RayTourSegments checkpointed after 2 of 4 rounds (the tour and the round counters live on
    the driver; the actors hold a round's chains only) and resumed ends with the uninterrupted
    run's tour."""
    from lsmgpu import RayTourSegments
    problem = TSP(np.round(np.random.default_rng(3).uniform(0, 10_000, (400, 2))), name="uniform400")
    make = lambda: RayTourSegments(problem, seed=4, segment_cities=100, round_kicks=10, backend="cpu")  # noqa: E731
    whole = make().run(iterations=4)
    path = tmp_path / "segments.ckpt"
    assert make().run(iterations=2, checkpoint=path).iterations == 2
    resumed = make().resume(path, iterations=4)
    assert resumed.iterations == 4 and resumed.fitness == whole.fitness
    assert np.array_equal(resumed.solution, whole.solution)


def test_asynchronous_islands_go_on_from_their_checkpoints(tmp_path):
    """Two FocusedACO islands run 3 iterations with a checkpoint (each island its own file, the
    driver the board's best); resumed to 6, every island goes on from its third iteration (its
    history keeps the first three's improvements) and none is worse. A checkpoint of 2 islands
    is refused by a run of 3; a bad checkpoint_every is refused, naming it."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    make = lambda islands=2, **o: RayIslands(problem, method="faco", islands=islands, exchange_every=2,  # noqa: E731
                                             backend="cpu", seed=3, ants=4, moves=4, lk_depth=0, **o)
    path = tmp_path / "islands.ckpt"
    first = make().run(3, checkpoint=path, checkpoint_every=0)
    assert path.is_file() and all((tmp_path / f"islands.ckpt.island{a}").is_file() for a in range(2))
    resumed = make().resume(path, iterations=6)
    assert [r.iterations for r in first.runs] == [3, 3] and [r.iterations for r in resumed.runs] == [6, 6]
    for before, after in zip(first.runs, resumed.runs):
        assert after.fitness <= before.fitness
        assert [i for i, _, _ in after.improvements if i <= 3] == [i for i, _, _ in before.improvements]
    assert resumed.fitness == problem.evaluate(resumed.solution)
    with pytest.raises(ValueError, match="the checkpoint holds 2 islands, this run has 3"):
        make(islands=3).resume(path, iterations=6)
    for every in (-1, "often"):
        with pytest.raises((TypeError, ValueError), match="RayIslands: `checkpoint_every`"):
            make().run(3, checkpoint=tmp_path / "bad.ckpt", checkpoint_every=every)



def test_the_board_decides_once_at_which_exchanges_synchronous_islands_save():
    """Every island gathering an exchange is told the same: save where ``every`` seconds have
    passed since the last saved exchange (0: every exchange; None: never)."""
    board = Board(2)
    for exchange, every, saves in ((1, 0.0, True), (2, 3600.0, False), (3, None, False)):
        for island in (0, 1):
            board.post(5.0, np.arange(4), island=island, exchange=exchange)
        assert board.gather(exchange, every)[2] is saves
        assert board.gather(exchange, 0.0 if every is None else None)[2] is saves      # decided by the first


def test_synchronous_islands_resume_from_the_latest_exchange_all_wrote(tmp_path):
    """The cut: each island's two last files; the latest iteration every island wrote; afresh where
    an island wrote none; an island lacking the cut is named."""
    from lsmgpu.checkpoint import write_checkpoint
    from lsmgpu.parallel.board import PREVIOUS, synchronous_cut
    problem = TSP.from_file(TSP.shipped("berlin52"))
    search = FocusedACO(problem, ants=4, backend="cpu")
    files = [str(tmp_path / f"run.island{a}") for a in range(3)]

    def wrote(path, iteration):
        search.iteration = iteration
        write_checkpoint(path, search, {"iteration": iteration}, search.budget, 0.0)

    search.run(iterations=1)
    assert synchronous_cut(files, "FocusedACO") == [None] * 3
    wrote(files[0], 4), wrote(files[0] + PREVIOUS, 2), wrote(files[1], 2), wrote(files[1] + PREVIOUS, 0)
    assert synchronous_cut(files, "FocusedACO") == [None] * 3            # island 2 wrote none
    wrote(files[2], 4), wrote(files[2] + PREVIOUS, 2)
    assert synchronous_cut(files, "FocusedACO") == [files[0] + PREVIOUS, files[1], files[2] + PREVIOUS]
    wrote(files[1], 6), wrote(files[1] + PREVIOUS, 4)
    assert synchronous_cut(files, "FocusedACO") == [files[0], files[1] + PREVIOUS, files[2]]
    wrote(files[2], 8), wrote(files[2] + PREVIOUS, 6)
    with pytest.raises(ValueError, match=r"island\(s\) \[2\] kept no checkpoint of iteration 4"):
        synchronous_cut(files, "FocusedACO")


@pytest.mark.parametrize("method, options", [("faco", dict(ants=4, moves=4, lk_depth=0)),
                                             ("dontlook-ils", dict(chains=2, round_checks=20, start_descent=False))])
def test_synchronous_islands_resume_to_the_uninterrupted_run(tmp_path, method, options):
    """Two synchronous islands exchanging every iteration, checkpointed at each exchange and stopped
    after the first iteration whose exchange left one island's file holding the solution offered
    to it (2 to 4), then resumed to 6: every island's solution, fitness, iterations, improvements
    (iteration and fitness) and migrants equal those of one run of 6 (the chains each make their
    first descent: from a shared local optimum no exchange of iterations 2 to 4 carries a migrant)."""
    import pickle
    problem = TSP(np.round(np.random.default_rng(5).uniform(0, 1000, (200, 2))), name="rand200")
    make = lambda: RayIslands(problem, method=method, islands=2, exchange_every=1, synchronous=True,  # noqa: E731
                              backend="cpu", seed=5, **options)
    alone = make()
    whole = alone.run(6)
    path = tmp_path / "sync.ckpt"
    files = [tmp_path / f"sync.ckpt.island{a}" for a in range(2)]
    for cut in (2, 3, 4):
        make().run(cut, checkpoint=path, checkpoint_every=0)
        assert all(file.is_file() and Path(f"{file}.previous").is_file() for file in files)
        states = [pickle.loads(file.read_bytes())["state"] for file in files]
        assert [state["iteration"] for state in states] == [cut, cut]
        if any(state["migrant"] is not None for state in states):      # taken in on resume
            break
    else:
        pytest.fail("no exchange of iterations 2 to 4 left a migrant in an island's file")
    again = make()
    resumed = again.resume(path, iterations=6)
    assert again.migrants == alone.migrants and sum(alone.migrants) >= 1
    for a, b in zip(resumed.runs, whole.runs):
        assert (a.fitness, a.iterations, a.solution.tolist()) == (b.fitness, b.iterations, b.solution.tolist())
        assert [(i, f) for i, _, f in a.improvements] == [(i, f) for i, _, f in b.improvements]


def test_the_command_checkpoints_islands_over_ray(tmp_path, capsys):
    """`lsmgpu solve --gpus 2 --algorithm faco --checkpoint` writes the driver's file and one per
    island; `--resume` goes on from them to the larger iteration budget."""
    from lsmgpu.cli import main
    ckpt = tmp_path / "islands.ckpt"
    common = ["solve", "kroA100", "--backend", "cpu", "--gpus", "2", "--algorithm", "faco", "--ants", "4",
              "--lk-depth", "0", "--seed", "2", "--quiet", "--target", "0"]
    assert main(common + ["--iterations", "2", "--checkpoint", str(ckpt), "--checkpoint-every", "0"]) in (0, 1)
    assert ckpt.is_file() and all((tmp_path / f"islands.ckpt.island{a}").is_file() for a in range(2))
    capsys.readouterr()
    assert main(common + ["--iterations", "4", "--resume", str(ckpt)]) in (0, 1)
    assert "8 iterations" in capsys.readouterr().out          # two islands' 4 each
