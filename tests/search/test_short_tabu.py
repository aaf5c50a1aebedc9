"""ShortTabuSearch, a population method's local search: every row equals a single tabu search
from it, the colonies and the GA reach the QAP optimum with it, budgets and errors; on the GPU,
the rows equal the CPU's."""
import numpy as np
import pytest

from lsmgpu import GeneticAlgorithm, MaxMinAntSystem, AntColonySystem, ShortTabuSearch, Swap, TabuSearch
from lsmgpu.backends import resolve
from lsmgpu.problems import QAP, TSP


def tai12a():
    return QAP.from_file(QAP.shipped("tai12a"))


def random_rows(problem, rows, seed):
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(problem.n) for _ in range(rows)]).astype(np.int32)


def short_runs(problem, backend, xs, iterations, tenure=None, seed=0):
    population = ShortTabuSearch(iterations, tenure=tenure).population(
        resolve(backend, problem), problem, len(xs), np.random.default_rng(seed))
    try:
        population.load(xs)
        made, evaluated, finished = population.descend(np.ones(len(xs), bool))
        return population.solutions(), population.values(), made, evaluated, finished
    finally:
        population.close()


def test_every_row_equals_a_single_tabu_search_from_it():
    """With a fixed tenure each row's best is the best of TabuSearch(initial=row) over the same
    iterations (no long-term aspiration), and its value is the row's signed fitness."""
    problem = tai12a()
    xs = random_rows(problem, 5, 1)
    best, values, made, evaluated, finished = short_runs(problem, "cpu", xs, 40, tenure=7)
    assert finished and np.all(made == 40) and np.all(evaluated == 40 * problem.neighbourhood.size)
    for k, x in enumerate(xs):
        single = TabuSearch(problem, tenure=7, forced_after=0, initial=x, backend="cpu").run(40)
        assert values[k] == single.fitness == problem.fitness(best[k])
        assert np.array_equal(best[k], single.solution)


def test_drawn_tenures_make_rows_differ_and_reproduce():
    """A range tenure is drawn per row and iteration from the given generator: the same seed gives
    the same rows, and the rows are no worse than their start."""
    problem = tai12a()
    xs = random_rows(problem, 6, 2)
    first = short_runs(problem, "cpu", xs, 30, seed=5)
    again = short_runs(problem, "cpu", xs, 30, seed=5)
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert np.all(first[1] <= [problem.fitness(x) for x in xs])


@pytest.mark.parametrize("method", [MaxMinAntSystem, AntColonySystem, GeneticAlgorithm])
def test_population_methods_reach_the_qap_optimum_with_it(method):
    """Population methods reach the QAP optimum with it."""
    problem = tai12a()
    options = {"genes": 16} if method is GeneticAlgorithm else {"ants": 8}
    result = method(problem, local_search="tabu", backend="cpu", seed=0, **options).run(
        30, target=problem.best_known)
    assert result.fitness == problem.best_known == 224416
    assert np.array_equal(np.sort(result.solution), np.arange(problem.n))


def test_seconds_cut_a_long_tabu_search_and_seeds_reproduce():
    """Seconds cut a long tabu search and seeds reproduce."""
    problem = tai12a()
    slow = MaxMinAntSystem(problem, ants=4, local_search=ShortTabuSearch(10**6), backend="cpu", seed=1)
    result = slow.run(seconds=0.5)
    assert result.status == "seconds"
    runs = [MaxMinAntSystem(problem, ants=4, local_search=ShortTabuSearch(20), backend="cpu", seed=3).run(4)
            for _ in range(2)]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


def test_bad_short_tabu_searches_are_named():
    """Bad short tabu searches are named."""
    tsp = TSP(np.random.default_rng(0).uniform(0, 100, (20, 2)))
    polish = tsp.default_ils()["polish"][0]
    with pytest.raises(TypeError, match="defines no tabu attributes"):
        MaxMinAntSystem(tsp, local_search=ShortTabuSearch(neighbourhood=polish), backend="cpu")
    with pytest.raises(ValueError, match="`iterations` must be an integer >= 1"):
        ShortTabuSearch(0)
    with pytest.raises(TypeError, match="`tenure` must be an int >= 0, a range"):
        ShortTabuSearch(tenure=lambda f, rng: 3)
    with pytest.raises(TypeError, match="`neighbourhood` must be a Neighbourhood"):
        ShortTabuSearch(neighbourhood="swap")
    with pytest.raises(ValueError, match="'tabu'"):
        MaxMinAntSystem(tai12a(), local_search="tabus", backend="cpu")
    assert "ShortTabuSearch(iterations=5" in repr(ShortTabuSearch(5, neighbourhood=Swap()))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["tai12a", "random30"])
def test_gpu_rows_equal_the_cpu_rows(name):
    """The CUDA batch evaluator's rows equal the CPU's for the same tenure draws (range tenure,
    aspiration)."""
    rng = np.random.default_rng(4)
    problem = tai12a() if name == "tai12a" else QAP(rng.integers(0, 50, (30, 30)), rng.integers(0, 50, (30, 30)))
    xs = random_rows(problem, 24, 3)
    cpu = short_runs(problem, "cpu", xs, 70, seed=9)
    gpu = short_runs(problem, "cuda", xs, 70, seed=9)
    assert np.array_equal(cpu[0], gpu[0]) and np.array_equal(cpu[1], gpu[1]) and np.array_equal(cpu[2], gpu[2])


@pytest.mark.gpu
def test_gpu_mmas_with_a_short_tabu_search_equals_the_cpu_run():
    """GPU MMAS with a short tabu search equals the CPU run."""
    problem = tai12a()
    runs = [MaxMinAntSystem(problem, ants=16, local_search=ShortTabuSearch(24), backend=b, seed=2).run(6)
            for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)
