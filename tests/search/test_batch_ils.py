"""The batched ILS (lsmgpu.parallel.batch_ils): B chains stepped together, each equal to the single
IteratedLocalSearch with its spawned seed; islands reproducible; budgets per chain; CUDA equal to the CPU."""
import numpy as np
import pytest

from lsmgpu import IteratedLocalSearch, MultiStart, OrOpt
from lsmgpu.parallel.batch_ils import BatchIteratedLocalSearch
from lsmgpu.parallel.seeds import spawn_seeds
from lsmgpu.problems import PPP, QAP, TSP


def tsp(neighbourhood="2opt-candidates", n=80, seed=5):
    pts = np.round(np.random.default_rng(seed).uniform(0, 1000, (n, 2)))
    return TSP(pts, neighbourhood=neighbourhood, name=f"tsp{n}-{neighbourhood}", start="random")


def cases():
    """(problem, ILS options): the TSP's default chain (device double bridges as 2-opt moves),
    full 2-opt, Or-opt (a block-exchange kick), QAP and PPP (kicks through perturb)."""
    return [(tsp(), {}), (tsp("2opt"), {"strength": 2}), (tsp("oropt"), {"acceptance": 0.01}),
            (QAP.from_file(QAP.shipped("tai12a")), {"rule": "first"}),
            (PPP.planted(31, 27, 2, distance=1)[0], {"acceptance": "always"})]


@pytest.mark.parametrize("problem,options", cases(), ids=lambda c: getattr(c, "name", "options"))
def test_each_chain_equals_the_single_ils_with_its_seed(problem, options):
    """Each chain equals the single ILS with its seed."""
    batch = MultiStart(IteratedLocalSearch, problem, starts=4, seed=11, backend="cpu", **options)
    assert batch.batched
    got = batch.run(8)
    for k, seed in enumerate(spawn_seeds(11, 4)):
        alone = IteratedLocalSearch(problem, seed=seed, backend="cpu", **options).run(8)
        mine = got.runs[k]
        assert mine.fitness == alone.fitness and np.array_equal(mine.solution, alone.solution)
        assert np.array_equal(mine.history, alone.history) and mine.iterations == alone.iterations == 8
        assert [i for i, _, f in mine.improvements] == [i for i, _, f in alone.improvements]
        assert mine.status == "iterations"


def test_every_iteration_history_equals_the_single_search():
    """Every iteration history equals the single search."""
    problem = tsp()
    got = MultiStart(IteratedLocalSearch, problem, starts=2, seed=3, backend="cpu", history="all").run(6)
    for k, seed in enumerate(spawn_seeds(3, 2)):
        alone = IteratedLocalSearch(problem, seed=seed, backend="cpu", history="all").run(6)
        assert np.array_equal(got.runs[k].history, alone.history)


def test_islands_are_reproducible_and_exchange():
    """Islands are reproducible and exchange."""
    problem = tsp(n=120)
    runs = [MultiStart(IteratedLocalSearch, problem, starts=6, seed=2, backend="cpu", exchange_every=3).run(9)
            for _ in range(2)]
    assert [r.fitness for r in runs[0].runs] == [r.fitness for r in runs[1].runs]
    independent = MultiStart(IteratedLocalSearch, problem, starts=6, seed=2, backend="cpu").run(9)
    assert [r.fitness for r in runs[0].runs] != [r.fitness for r in independent.runs]
    assert all(r.fitness == problem.fitness(r.solution) for r in runs[0].runs)


def test_target_stops_the_batch_and_stagnation_each_chain():
    """Target stops the batch and stagnation each chain."""
    problem = tsp()
    free = MultiStart(IteratedLocalSearch, problem, starts=3, seed=1, backend="cpu").run(6)
    goal = max(r.fitness for r in free.runs)
    hit = MultiStart(IteratedLocalSearch, problem, starts=3, seed=1, backend="cpu").run(50, target=goal)
    assert hit.status == "target" and "target" in [r.status for r in hit.runs]
    assert {r.status for r in hit.runs} <= {"target", "stopped"}
    stale = MultiStart(IteratedLocalSearch, problem, starts=3, seed=1, backend="cpu").run(200, stagnation=3)
    for k, seed in enumerate(spawn_seeds(1, 3)):
        alone = IteratedLocalSearch(problem, seed=seed, backend="cpu").run(200, stagnation=3)
        assert stale.runs[k].status == alone.status == "stagnation"
        assert stale.runs[k].iterations == alone.iterations and stale.runs[k].fitness == alone.fitness


def test_seconds_is_the_batch_wall_time():
    """Seconds is the batch wall time."""
    problem = tsp(n=200)
    result = MultiStart(IteratedLocalSearch, problem, starts=3, seed=0, backend="cpu").run(seconds=0.5)
    assert result.status == "seconds" and all(r.fitness == problem.fitness(r.solution) for r in result.runs)


def test_per_search_options_run_one_after_the_other_and_say_so():
    """Per search options run one after the other and say so."""
    with pytest.warns(UserWarning, match="one after the other.*independent"):
        starts = MultiStart(IteratedLocalSearch, tsp(), starts=2, seed=0, backend="cpu", rule="independent")
    assert not starts.batched
    with pytest.raises(ValueError, match="exchange_every"):
        MultiStart(IteratedLocalSearch, tsp(), starts=2, backend="cpu", rule="independent", exchange_every=2)


def test_a_polish_chain_is_batched():
    """A polish chain is batched."""
    problem = tsp()
    chain = {"polish": [OrOpt(problem.neighbourhood.candidates)]}
    got = BatchIteratedLocalSearch(problem, spawn_seeds(4, 2), backend="cpu", **chain).run(5)
    for k, seed in enumerate(spawn_seeds(4, 2)):
        assert got.runs[k].fitness == IteratedLocalSearch(problem, seed=seed, backend="cpu", **chain).run(5).fitness


@pytest.mark.gpu
@pytest.mark.parametrize("problem,options", cases(), ids=lambda c: getattr(c, "name", "options"))
def test_cuda_batched_ils_equals_the_cpu(problem, options):
    """The chains on the GPU (kicks, descents, acceptance on the device) follow the CPU's chains."""
    cpu = MultiStart(IteratedLocalSearch, problem, starts=16, seed=7, backend="cpu", **options).run(6)
    gpu = MultiStart(IteratedLocalSearch, problem, starts=16, seed=7, backend="cuda", **options).run(6)
    for mine, want in zip(gpu.runs, cpu.runs):
        assert mine.fitness == want.fitness and np.array_equal(mine.solution, want.solution)
        assert np.array_equal(mine.history, want.history)
    islands = [MultiStart(IteratedLocalSearch, problem, starts=16, seed=7, backend=b, exchange_every=2, **options).run(6)
               for b in ("cpu", "cuda")]
    assert [r.fitness for r in islands[0].runs] == [r.fitness for r in islands[1].runs]


@pytest.mark.gpu
def test_cuda_refuses_a_population_that_does_not_fit():
    """CUDA refuses a population that does not fit."""
    from lsmgpu.backends.cuda import CudaBackend
    big = tsp("2opt-candidates", n=2000)
    with pytest.raises(ValueError, match="room for about"):
        CudaBackend().population([big], 10**7)
