"""Solutions from elsewhere (``PopulationSearch.offer``, what islands exchange): every population
search takes a better one into its own place for it, after the running iteration, and counts it;
a worse one is refused; a solution that is not the problem's is named."""
import numpy as np
import pytest

from lsmgpu.callbacks import Callback
from lsmgpu import AntColonySystem, DontLookILS, FocusedACO, GeneticAlgorithm, MaxMinAntSystem
from lsmgpu.problems import QAP, TSP

SEARCHES = {
    "DontLookILS": lambda p, **o: DontLookILS(p, chains=2, round_checks=10, seed=1, **o),
    "FocusedACO": lambda p, **o: FocusedACO(p, ants=2, moves=2, seed=1, lk_depth=0, **o),   # not the optimum at once
    "AntColonySystem": lambda p, **o: AntColonySystem(p, ants=2, seed=1, **o),
    "MaxMinAntSystem": lambda p, **o: MaxMinAntSystem(p, ants=2, seed=1, **o),
    "GeneticAlgorithm": lambda p, **o: GeneticAlgorithm(p, genes=8, seed=1, **o),
}


@pytest.fixture(scope="module")
def berlin52():
    problem = TSP.from_file(TSP.shipped("berlin52"))
    optimum = FocusedACO(problem, ants=8, backend="cpu", seed=0).run(iterations=30)
    assert optimum.fitness == problem.best_known
    return problem, optimum.solution


class Offering(Callback):
    """A callback that offers ``solution`` to ``search`` after its first iteration and records the
    search's best after each."""

    def __init__(self, solution):
        self.solution, self.bests, self.search = solution, [], None

    def on_start(self, search):
        self.search = search

    def on_iteration(self, state):
        self.bests.append(self.search.best)
        if len(self.bests) == 1:
            self.search.offer(self.solution)
        return False


def offered_run(make, problem, solution, backend="cpu", iterations=3):
    offering = Offering(solution)
    search = make(problem, backend=backend, callbacks=[offering])
    return search, search.run(iterations=iterations), offering


@pytest.mark.parametrize("name", list(SEARCHES))
def test_a_better_solution_is_taken_after_the_iteration(name, berlin52):
    """The optimum offered after iteration 1 is the best from iteration 2 on (it was not before),
    counted in ``migrants``, and is the result."""
    problem, optimum = berlin52
    search, result, offering = offered_run(SEARCHES[name], problem, optimum)
    assert offering.bests[0] > problem.best_known and offering.bests[1] == problem.best_known
    assert search.migrants == 1 and result.fitness == problem.best_known
    assert problem.fitness(result.solution) == result.fitness


@pytest.mark.parametrize("name", ["FocusedACO", "AntColonySystem", "MaxMinAntSystem", "DontLookILS"])
def test_a_worse_solution_is_refused(name, berlin52):
    """A worse solution is refused."""
    problem, _ = berlin52
    worse = np.random.default_rng(3).permutation(problem.n)       # a random tour: ~4x the optimum
    search, result, offering = offered_run(SEARCHES[name], problem, worse)
    assert search.migrants == 0 and result.fitness < problem.fitness(worse)


def test_the_genetic_algorithms_worst_gene_gives_way(berlin52):
    """The offered gene replaces the population's worst, value and gene; a gene no better than the
    worst is refused."""
    problem, optimum = berlin52
    search = GeneticAlgorithm(problem, genes=8, backend="cpu", seed=2)
    search.run(iterations=1)                       # the CPU breeder stays readable after the run
    before = search.breeder.value_array()
    worst = int(np.argmax(before))
    assert not search._welcome(before.max(), optimum)
    assert search._welcome(float(problem.best_known), optimum)
    expected = before.copy()
    expected[worst] = problem.best_known
    assert np.array_equal(search.breeder.value_array(), expected)
    assert np.array_equal(search.breeder.rows([worst])[0], optimum)


def test_a_qap_assignment_is_offered_like_a_tour():
    """A QAP assignment is offered like a tour."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    best = MaxMinAntSystem(problem, ants=4, local_search="auto", backend="cpu", seed=0).run(iterations=20)
    search, result, offering = offered_run(lambda p, **o: GeneticAlgorithm(p, genes=8, seed=4, **o), problem,
                                           best.solution)
    assert offering.bests[0] > best.fitness and result.fitness <= best.fitness and search.migrants == 1


def test_offer_names_a_solution_that_is_not_the_problems(berlin52):
    """Offer names a solution that is not the problems."""
    problem, _ = berlin52
    search = MaxMinAntSystem(problem, ants=2, backend="cpu", seed=1)
    with pytest.raises(ValueError, match="permutation"):
        search.offer(np.zeros(problem.n, dtype=int))
    with pytest.raises(ValueError):
        search.offer(np.arange(problem.n - 1))


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(SEARCHES))
def test_gpu_searches_take_an_offered_solution(name, berlin52):
    """GPU searches take an offered solution."""
    problem, optimum = berlin52
    search, result, offering = offered_run(SEARCHES[name], problem, optimum, backend="cuda")
    assert offering.bests[1] == problem.best_known and search.migrants == 1
    assert result.fitness == problem.best_known == problem.fitness(result.solution)


def test_with_colonies_the_worst_colony_takes_the_offered_tour(berlin52):
    """FocusedACO with three colonies: the optimum offered after iteration 1 becomes the best
    tour and the source of the colony whose best was the longest, the other colonies' bests
    unchanged by it."""
    problem, optimum = berlin52
    before = {}

    class Watching(Offering):
        def on_iteration(self, state):
            if not self.bests:
                before["bests"] = list(self.search.colony_best)
            return super().on_iteration(state)

    offering = Watching(optimum)
    search = FocusedACO(problem, ants=2, moves=2, colonies=3, seed=10, lk_depth=0, restart_after=None, backend="cpu",
                        callbacks=[offering])
    search.run(iterations=3)
    worst = int(np.argmax(before["bests"]))
    assert worst == 2 and search.migrants == 1 and search.colony_best[worst] == problem.best_known
    assert np.array_equal(search.colony.best_tour(worst), optimum)
    assert all(search.colony_best[c] <= before["bests"][c] for c in range(3) if c != worst)
