"""Checkpoints and resume: a resumed seeded run equals the uninterrupted one exactly (every search,
both backends), the file is written atomically, and a checkpoint of another search, problem or
version is refused naming the mismatch."""
import pickle
import re

import numpy as np
import pytest

from lsmgpu import (AntColonySystem, FocusedACO, GeneticAlgorithm, HillClimbing, IteratedLocalSearch,
                    MaxMinAntSystem, MultiStart, ShortTabuSearch, TabuSearch, VariableNeighbourhoodSearch)
from lsmgpu.checkpoint import VERSION, read_checkpoint
from lsmgpu.problems import QAP, TSP


def tsp(n=40, seed=5):
    return TSP(np.round(np.random.default_rng(seed).uniform(0, 1000, (n, 2))), name=f"tsp{n}")


#: (name, a function of (backend, options) building the search, the iteration budget)
SEARCHES = [
    ("tabu-qap", lambda backend, **o: TabuSearch(QAP.from_file(QAP.shipped("tai12a")), seed=3, backend=backend,
                                                tenure=(4, 9), **o), 120),
    ("hc-restarts", lambda backend, **o: HillClimbing(tsp(), rule="first",
                                                     restarts=30, seed=4, backend=backend, **o), 160),
    ("ils-tsp", lambda backend, **o: IteratedLocalSearch(tsp(), seed=5, backend=backend, strength=2, **o), 24),
    ("vns-qap", lambda backend, **o: VariableNeighbourhoodSearch(QAP.from_file(QAP.shipped("nug12")), seed=11, k_max=4,
                                                                 backend=backend, **o), 40),
    ("mmas", lambda backend, **o: MaxMinAntSystem(tsp(), ants=8, seed=6, backend=backend, local_search="auto", **o),
     10),
    ("acs", lambda backend, **o: AntColonySystem(tsp(), ants=8, seed=7, backend=backend, local_update="none", **o), 10),
    ("ga", lambda backend, **o: GeneticAlgorithm(tsp(), genes=32, groups=2, exchange_every=3, seed=8,
                                                 backend=backend, **o), 12),
    ("faco", lambda backend, **o: FocusedACO(tsp(), ants=6, seed=10, backend=backend, **o), 12),
    ("faco-restarts", lambda backend, **o: FocusedACO(tsp(), ants=6, seed=10, restart_after=2, backend=backend, **o),
     16),
    ("faco-colonies", lambda backend, **o: FocusedACO(tsp(), ants=3, colonies=2, seed=10, restart_after=2,
                                                      backend=backend, **o), 16),
    ("faco-ant-lists", lambda backend, **o: FocusedACO(tsp(), ants=6, seed=10, ant_lists=3, backend=backend, **o), 12),
    ("faco-ant-lists-late", lambda backend, **o: FocusedACO(tsp(), ants=6, seed=10, ant_lists=9, backend=backend, **o),
     12),
    ("ga-short-tabu", lambda backend, **o: GeneticAlgorithm(tsp(), genes=16, seed=9, backend=backend,
                                                            local_search=ShortTabuSearch(20, tenure=(2, 6)), **o), 5),
]
IDS = [name for name, _, _ in SEARCHES]


def same_run(a, b):
    """Two results of the same trajectory: solution, fitness, counters, history, improvements."""
    assert np.array_equal(a.solution, b.solution)
    assert a.fitness == b.fitness
    assert (a.iterations, a.evaluations, a.status) == (b.iterations, b.evaluations, b.status)
    assert np.array_equal(a.history, b.history)
    assert [(i, f) for i, _, f in a.improvements] == [(i, f) for i, _, f in b.improvements]


def check_resume_equals(build, iterations, backend, tmp_path):
    whole = build(backend).run(iterations)
    path = tmp_path / "run.ckpt"
    half = build(backend).run(iterations // 2, checkpoint=path)
    assert half.iterations == iterations // 2 and read_checkpoint(path, build(backend))["state"]["iteration"] == \
        iterations // 2
    same_run(build(backend).resume(path, iterations=iterations), whole)


@pytest.mark.parametrize("name, build, iterations", SEARCHES, ids=IDS)
def test_resume_equals_the_uninterrupted_run(name, build, iterations, tmp_path):
    """Half the iterations, a checkpoint, a fresh search resumed to the whole budget: the same
    solution, fitness, counters and history as one run of the whole budget."""
    check_resume_equals(build, iterations, "cpu", tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("name, build, iterations", SEARCHES, ids=IDS)
def test_resume_equals_the_uninterrupted_run_on_the_gpu(name, build, iterations, tmp_path):
    """As on the CPU, with the tabu matrix, pheromone and population read back from the GPU."""
    check_resume_equals(build, iterations, "cuda", tmp_path)


def test_resume_keeps_the_checkpointed_budget(tmp_path):
    """A run stopped by its callback resumes under its own iteration budget, to the same end."""
    build = SEARCHES[0][1]
    whole = build("cpu").run(120)
    path = tmp_path / "run.ckpt"
    stopped = build("cpu", callbacks=lambda state: state.iteration >= 50).run(120, checkpoint=path)
    assert stopped.status == "callback" and stopped.iterations == 50
    same_run(build("cpu").resume(path), whole)


def test_an_interrupted_run_keeps_its_last_checkpoint(tmp_path):
    """Ctrl-C inside an iteration leaves the checkpoint written after the iteration before it, and the
    run resumed from there ends as the uninterrupted one."""
    build = SEARCHES[0][1]
    whole = build("cpu").run(120)

    def interrupt(state):
        if state.iteration == 40:
            raise KeyboardInterrupt

    path = tmp_path / "run.ckpt"
    cut = build("cpu", callbacks=interrupt).run(120, checkpoint=path, checkpoint_every=0)
    assert cut.status == "interrupted"
    assert read_checkpoint(path, build("cpu"))["state"]["iteration"] == 39
    same_run(build("cpu").resume(path), whole)


def test_checkpoints_are_written_every_period(tmp_path):
    """``checkpoint_every=0``: a checkpoint after every iteration (read back by a callback)."""
    path = tmp_path / "run.ckpt"
    seen = []

    def look(state):
        if path.exists():
            seen.append(read_checkpoint(path, SEARCHES[0][1]("cpu"))["state"]["iteration"])

    SEARCHES[0][1]("cpu", callbacks=look).run(10, checkpoint=path, checkpoint_every=0)
    assert seen == list(range(1, 10))


def test_a_crash_while_writing_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    """The file is written beside the target and moved over it: a failure while writing leaves
    the previous checkpoint whole and no temporary file behind."""
    path = tmp_path / "run.ckpt"
    SEARCHES[0][1]("cpu").run(20, checkpoint=path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pickle, "dump", broken)
    with pytest.raises(OSError, match="disk full"):
        SEARCHES[0][1]("cpu").run(30, checkpoint=path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.ckpt"]


def test_a_checkpoint_of_another_search_problem_or_version_is_refused(tmp_path):
    """Resume names the mismatch: the algorithm, the problem, the file's version, not a checkpoint."""
    path = tmp_path / "run.ckpt"
    SEARCHES[0][1]("cpu").run(10, checkpoint=path)
    with pytest.raises(ValueError, match="checkpoint of TabuSearch, not of HillClimbing"):
        HillClimbing(QAP.from_file(QAP.shipped("tai12a"))).resume(path)
    with pytest.raises(ValueError, match="checkpoint of problem 'tai12a', not of 'nug12'"):
        TabuSearch(QAP.from_file(QAP.shipped("nug12"))).resume(path)
    payload = pickle.loads(path.read_bytes())
    payload["version"] = VERSION + 1
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(ValueError, match=f"version {VERSION + 1} checkpoint"):
        TabuSearch(QAP.from_file(QAP.shipped("tai12a"))).resume(path)
    path.write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="is not an lsmgpu checkpoint"):
        TabuSearch(QAP.from_file(QAP.shipped("tai12a"))).resume(path)
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        TabuSearch(QAP.from_file(QAP.shipped("tai12a"))).resume(tmp_path / "missing.ckpt")


def test_a_checkpoint_without_a_field_of_the_search_is_refused_by_name(tmp_path):
    """A checkpoint of this algorithm that lacks one of its state's fields (one written by another
    version of lsmgpu) is refused, naming the field, not with a KeyError from inside."""
    path = tmp_path / "run.ckpt"
    FocusedACO(tsp(), ants=3, seed=1, backend="cpu").run(3, checkpoint=path)
    payload = pickle.loads(path.read_bytes())
    del payload["state"]["ant_lists_made"]
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(ValueError, match="FocusedACO: the checkpoint holds no ant_lists_made"):
        FocusedACO(tsp(), ants=3, seed=1, backend="cpu").resume(path, iterations=6)


def test_focused_aco_refuses_a_checkpoint_of_other_colonies_or_ants(tmp_path):
    """A FocusedACO checkpoint resumed by a search of other colonies or ants is refused, naming
    both: by the options the checkpoint keeps, and in a checkpoint without them (an older
    lsmgpu's) by the colonies' arrays."""
    path = tmp_path / "run.ckpt"
    FocusedACO(tsp(), ants=3, colonies=2, seed=1, backend="cpu").run(3, checkpoint=path)
    for options, named in ((dict(ants=3), "with colonies=2; this search has colonies=1"),
                           (dict(ants=2, colonies=3), "with ants=3, colonies=2; this search has ants=2, colonies=3")):
        with pytest.raises(ValueError, match=named):
            FocusedACO(tsp(), seed=1, backend="cpu", **options).resume(path, iterations=6)
    payload = pickle.loads(path.read_bytes())
    del payload["options"]
    path.write_bytes(pickle.dumps(payload))
    for options in (dict(ants=3), dict(ants=2, colonies=3)):
        with pytest.raises(ValueError, match="holds 2 colonies of 3 ants; this search has"):
            FocusedACO(tsp(), seed=1, backend="cpu", **options).resume(path, iterations=6)


def test_a_checkpoint_resumed_by_a_search_of_other_options_is_refused(tmp_path):
    """Every search's checkpoint keeps its plain options: a resume by a search built with other
    values (where they would fail deep inside, as the genetic algorithm's population or the
    chains' count, or go on silently with other settings) names each one; the same options
    resume."""
    path = tmp_path / "run.ckpt"
    qap = QAP.from_file(QAP.shipped("tai12a"))
    for make, own, other, named in (
            (lambda **o: GeneticAlgorithm(tsp(), seed=8, backend="cpu", **o), dict(genes=16), dict(genes=32),
             "genes=16; this search has genes=32"),
            (lambda **o: TabuSearch(qap, seed=3, backend="cpu", **o), {}, dict(tenure=(4, 9)),
             "tenure=None; this search has tenure=(4, 9)"),
            (lambda **o: FocusedACO(tsp(), ants=4, seed=1, backend="cpu", **o), {}, dict(moves=12),
             "moves=None; this search has moves=12")):
        make(**own).run(2, checkpoint=path)
        with pytest.raises(ValueError, match=f"was written by a run with {re.escape(named)}"):
            make(**other).resume(path, iterations=4)
        assert make(**own).resume(path, iterations=4).iterations == 4


def test_bad_checkpoint_options_are_refused(tmp_path):
    """``checkpoint_every`` without a file, a negative period, a directory that does not exist."""
    search = SEARCHES[0][1]("cpu")
    with pytest.raises(ValueError, match="`checkpoint_every` needs `checkpoint`"):
        search.run(5, checkpoint_every=1)
    with pytest.raises(ValueError, match="`checkpoint_every` must be >= 0"):
        search.run(5, checkpoint=tmp_path / "a.ckpt", checkpoint_every=-1)
    with pytest.raises(FileNotFoundError, match="no directory"):
        search.run(5, checkpoint=tmp_path / "nowhere" / "a.ckpt")


def check_dontlook_ils_resume(backend, tmp_path, merge=0):
    """A DontLookILS run stopped after its third round (a callback), checkpointed and resumed under
    its own budget, equals the uninterrupted run: tours, queues, don't-look bits and kick counters
    are read back from the backend; with ``merge`` > 1 the merge running in its thread at the
    checkpoint starts again from its tours."""
    from lsmgpu import DontLookILS

    def build(**options):
        return DontLookILS(tsp(60), chains=8 if merge else 3, round_checks=25, exchange_every=2, merge=merge,
                           seed=11, backend=backend, **options)

    alone = build()
    whole = alone.run(12)
    path = tmp_path / "chains.ckpt"
    stopped = build(callbacks=lambda state: state.iteration >= 4 or None).run(12, checkpoint=path)
    assert stopped.status == "callback"
    again = build()
    resumed = again.resume(path)
    same_run(resumed, whole)
    # the chains went on from the checkpoint: the rounds together are the uninterrupted run's (a
    # restart from the start tours, the same kicks drawn again, would end alike after more rounds)
    assert resumed.work == whole.work and again.rounds == alone.rounds


@pytest.mark.parametrize("merge", [0, 3])
def test_dontlook_ils_resumes_where_it_stopped(tmp_path, merge):
    """On the CPU (the chains' state copied), with and without background merges."""
    check_dontlook_ils_resume("cpu", tmp_path, merge)


@pytest.mark.gpu
def test_dontlook_ils_resumes_where_it_stopped_on_the_gpu(tmp_path):
    """On the GPU (the chains' device buffers read back and written again)."""
    check_dontlook_ils_resume("cuda", tmp_path)


def test_starts_one_after_the_other_resume_from_the_start_cut_short(tmp_path):
    """MultiStart with batch=False writes its checkpoint between starts: a run whose third start
    is interrupted resumes from that start (run again from its seed) and ends as the uninterrupted
    multi-start; batched starts refuse a checkpoint, naming the way out."""
    from lsmgpu import MultiStart
    problem = QAP.from_file(QAP.shipped("tai12a"))
    build = lambda **o: MultiStart("tabu", problem, starts=4, seed=3, batch=False, tenure=(4, 9),  # noqa: E731
                                  backend="cpu", **o)
    whole = build().run(60)
    seen = {"iterations": 0}

    def interrupt(state):
        seen["iterations"] += 1
        if seen["iterations"] == 2 * 60 + 10:        # the third start's tenth iteration
            raise KeyboardInterrupt

    path = tmp_path / "multi.ckpt"
    cut = build(callbacks=interrupt).run(60, checkpoint=path)
    assert cut.status == "interrupted"
    state = read_checkpoint(path, build())["state"]
    assert state["_next"] == 2 and all(r is not None for r in state["results"][:2])
    resumed = build().resume(path)
    assert (resumed.status, resumed.fitness) == (whole.status, whole.fitness)
    assert np.array_equal(resumed.solution, whole.solution)
    assert [r.fitness for r in resumed.runs] == [r.fitness for r in whole.runs]
    assert [r.iterations for r in resumed.runs] == [60] * 4


#: batched starts: (name, a function of the backend building them, their count, the iteration budget)
BATCHES = [
    ("tabu", lambda backend: MultiStart(TabuSearch, QAP.from_file(QAP.shipped("tai12a")), starts=6, seed=12,
                                        backend=backend, tenure=(3, 9), exchange_every=40, history="all"), 6, 1100),
    ("ils", lambda backend: MultiStart(IteratedLocalSearch, tsp(60), starts=4, seed=13, backend=backend, strength=2,
                                       exchange_every=5, history="all"), 4, 24),
]


def check_batch_resume_equals(build, starts, iterations, backend, tmp_path):
    """Half the iterations (for the tabu searches past a block of 1,024 tenures: their generators
    go on from the file), a checkpoint, the rest resumed: the same starts' results as one
    uninterrupted run."""
    whole = build(backend).run(iterations)
    path = tmp_path / "batch.ckpt"
    half = build(backend).run(iterations // 2, checkpoint=path)
    assert half.iterations == starts * (iterations // 2)
    assert read_checkpoint(path, build(backend))["state"]["iteration"] == iterations // 2
    resumed = build(backend).resume(path, iterations=iterations)
    same_run(resumed, whole)
    for a, b in zip(resumed.runs, whole.runs):
        same_run(a, b)


@pytest.mark.parametrize("name, build, starts, iterations", BATCHES, ids=[b[0] for b in BATCHES])
def test_batched_starts_resume_to_the_uninterrupted_run(name, build, starts, iterations, tmp_path):
    """Batched tabu searches and ILS chains (islands exchanging solutions) resume exactly on the CPU."""
    check_batch_resume_equals(build, starts, iterations, "cpu", tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("name, build, starts, iterations", BATCHES, ids=[b[0] for b in BATCHES])
def test_batched_starts_resume_to_the_uninterrupted_run_on_the_gpu(name, build, starts, iterations, tmp_path):
    """As on the CPU: the tabu starts' solutions, tabu memories, tenures and counters, the ILS
    chains' accepted and best rows, read back from the GPU and written to fresh device memory."""
    check_batch_resume_equals(build, starts, iterations, "cuda", tmp_path)


def test_batched_starts_refuse_a_checkpoint_of_starts_run_one_after_the_other(tmp_path):
    """MultiStart writes a different state for batched starts and for starts run in turn: resuming
    the one from the other is refused, naming it, not a KeyError from inside."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    path = tmp_path / "turns.ckpt"
    MultiStart(TabuSearch, problem, starts=3, seed=1, backend="cpu", batch=False).run(20, checkpoint=path)
    with pytest.raises(ValueError, match="not of 3 batched starts"):
        MultiStart(TabuSearch, problem, starts=3, seed=1, backend="cpu").resume(path, iterations=40)


def test_ctrl_c_while_batched_starts_are_restored_returns_a_result(tmp_path, monkeypatch):
    """Ctrl-C after the checkpoint was read but before the batch evaluator holds it: the resume
    returns the starts' solutions with status "interrupted", not a traceback."""
    from lsmgpu.backends.cpu import CpuBatchEvaluator
    build = BATCHES[0][1]
    path = tmp_path / "batch.ckpt"
    build("cpu").run(50, checkpoint=path)

    def interrupted(self, snapshot):
        raise KeyboardInterrupt
    monkeypatch.setattr(CpuBatchEvaluator, "restore", interrupted)
    result = build("cpu").resume(path, iterations=100)
    assert result.status == "interrupted" and len(result.runs) == 6
