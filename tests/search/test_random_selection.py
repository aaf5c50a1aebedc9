"""Luong et al.'s random selection (rule="random"): every step an improving move drawn uniformly
from the search's generator, on every backend the same draw."""
import numpy as np
import pytest

from lsmgpu import HillClimbing, IteratedLocalSearch
from lsmgpu.problems import QAP, TSP


def test_a_random_step_draws_each_improving_move_equally_often():
    """From one start, the first step over 2,000 seeds: only improving swaps, every one of them,
    each about equally often (chi-square against the uniform law, 0.1 % level)."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    start = np.random.default_rng(0).permutation(problem.n)
    base = problem.fitness(start)
    improving = set()
    for i in range(problem.n):
        for j in range(i + 1, problem.n):
            x = start.copy()
            x[[i, j]] = x[[j, i]]
            if problem.fitness(x) < base:
                improving.add((i, j))
    counts = dict.fromkeys(improving, 0)
    for seed in range(2000):
        x = HillClimbing(problem, rule="random", seed=seed, initial=start, backend="cpu").run(iterations=1).solution
        moved = tuple(np.flatnonzero(x != start).tolist())
        counts[moved] += 1                       # a KeyError: a move that is not improving
    observed = np.array(list(counts.values()))
    expected = 2000 / len(improving)
    chi2 = ((observed - expected) ** 2 / expected).sum()
    from scipy.stats import chi2 as law
    assert len(improving) > 5 and observed.min() > 0 and chi2 < law.ppf(0.999, len(improving) - 1)


def test_random_descents_end_at_local_optima_with_their_fitness():
    """Hill climbing and ILS with random selection: every step improves, the descent ends at a
    local optimum of the neighbourhood (best selection finds nothing), the fitness is exact."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    result = HillClimbing(problem, rule="random", seed=3, backend="cpu").run()
    assert result.status == "local_optimum" and np.all(np.diff(result.history) < 0)
    assert result.fitness == problem.evaluate(result.solution)
    again = HillClimbing(problem, rule="best", initial=result.solution, backend="cpu").run()
    assert again.fitness == result.fitness
    ils = IteratedLocalSearch(problem, rule="random", seed=1, backend="cpu").run(iterations=5)
    assert ils.fitness == problem.evaluate(ils.solution) <= result.fitness * 1.2


@pytest.mark.gpu
@pytest.mark.parametrize("problem", [lambda: QAP.from_file(QAP.shipped("tai12a")),
                                     lambda: TSP.from_file(TSP.shipped("kroA100"))])
def test_gpu_random_selection_equals_the_cpus(problem):
    """The same seed, the same moves on the GPU as on the CPU (the deltas read back, the draw on the
    host)."""
    problem = problem()
    runs = [HillClimbing(problem, rule="random", seed=5, backend=b, history="all").run(iterations=200)
            for b in ("cpu", "cuda")]
    assert np.array_equal(runs[0].history, runs[1].history) and np.array_equal(runs[0].solution, runs[1].solution)
