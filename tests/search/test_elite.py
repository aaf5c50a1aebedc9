"""Focused ACO's elite (``elite_depth``): the cities a new colony best changed, found against their
definition; each new colony best descended again by the 5-opt chain alone from those cities,
exactly as the reference descent does, and followed as the next source; its refusals; on the GPU,
the same run as the host's."""
import numpy as np
import pytest

from lsmgpu import FocusedACO
from lsmgpu.backends.dontlook import CpuDontLook
from lsmgpu.problems import TSP
from lsmgpu.search.focused import changed_cities

from .test_dontlook import tsp_of


def test_changed_cities_are_those_whose_tour_neighbours_differ():
    """A 2-opt move changes its four end cities; a rotation, the reversed tour and the same tour
    change none; an Or-opt move of one city changes it and its four old and new neighbours."""
    rng = np.random.default_rng(0)
    tour = rng.permutation(50)
    i, j = 10, 30
    moved = np.r_[tour[:i + 1], tour[i + 1:j + 1][::-1], tour[j + 1:]]
    assert set(changed_cities(tour, moved)) == {tour[i], tour[i + 1], tour[j], tour[j + 1]}
    for same in (tour, np.roll(tour, 7), tour[::-1]):
        assert len(changed_cities(tour, same)) == 0
    city = tour[20]
    lifted = np.delete(tour, 20)
    inserted = np.insert(lifted, 40, city)
    assert set(changed_cities(tour, inserted)) == {tour[19], tour[20], tour[21], lifted[39], lifted[40]}
    assert list(changed_cities(tour, moved)) == [c for c in moved if c in set(changed_cities(tour, moved))]


class Recorded(FocusedACO):
    """FocusedACO that keeps, for every new colony best, the best before, the ant's tour, the best
    after and the length returned."""

    def _keep_colony_best(self, k, length):
        before, ant = self.colony.best_tour(), self.colony.tour(k)
        kept = super()._keep_colony_best(k, length)
        self.kept.append((self.iteration, before, ant, length, self.colony.best_tour(), kept))
        return kept


def test_every_new_colony_best_is_the_elites_descent_and_the_next_source(monkeypatch):
    """Every ant that beats the colony's best is descended by the chain alone from the cities it
    changed, to the reference descent's tour (CpuDontLook over the same rules and cities), never
    longer than the ant, its length the tour's; the colony follows it; the run's best is the
    shortest of them."""
    from lsmgpu.backends.focused import CpuFocusedAnts
    problem = tsp_of("int-coords", 800, seed=5)
    search = Recorded(problem, ants=8, moves=16, backend="cpu", seed=0, lk_depth=0, elite_depth=4)
    search.kept, followed = [], {}
    follow = CpuFocusedAnts.follow
    monkeypatch.setattr(CpuFocusedAnts, "follow", lambda ants, k, length: followed.setdefault(
        search.iteration, (k, length)) and follow(ants, k, length))
    result = search.run(iterations=10)
    assert search.elite_rules.chain_alone and search.elite_rules.lk_depth == 4 and search.elite_rules.k == 5
    assert len(search.kept) >= 2
    improved = 0
    for iteration, before, ant, length, after, kept in search.kept:
        reference = CpuDontLook(search.elite_rules, problem.edge_distance(), 1)
        reference.load(ant[None, :], cities=changed_cities(before, ant))
        reference.descend(np.ones(1, bool))
        assert np.array_equal(reference.solutions()[0], after)
        assert kept == problem.evaluate(after) <= length == problem.evaluate(ant)
        improved += kept < length
        assert followed[iteration] == (-1, kept) or (kept == length and followed[iteration][1] == kept)
    assert improved >= 1                  # the chain finds what the ants' 2-opt + Or-opt descents left
    assert result.fitness == min(kept for *_, kept in search.kept) == problem.evaluate(result.solution)


def test_elite_depth_is_checked_and_off_by_default():
    """elite_depth is 1 .. MAX_KOPT_DEPTH, refused naming it otherwise; without it the elite's rules
    are the ants' own."""
    from lsmgpu.search.dontlook import MAX_KOPT_DEPTH
    problem = TSP.from_file(TSP.shipped("berlin52"))
    for bad in (0, MAX_KOPT_DEPTH + 1):
        with pytest.raises(ValueError, match="elite_depth"):
            FocusedACO(problem, backend="cpu", elite_depth=bad)
    with pytest.raises(TypeError, match="elite_depth"):
        FocusedACO(problem, backend="cpu", elite_depth=2.5)
    search = FocusedACO(problem, backend="cpu")
    assert search.elite_rules is search.rules


@pytest.mark.gpu
def test_gpu_search_with_the_elite_equals_the_cpu_search():
    """The elite's descents on the GPU (a lone tour checked wide) end the run as on the CPU."""
    problem = tsp_of("int-coords", 800, seed=5)
    results = [FocusedACO(problem, ants=8, moves=16, backend=b, seed=0, lk_depth=0, elite_depth=4).run(iterations=10)
               for b in ("cpu", "cuda")]
    assert results[0].fitness == results[1].fitness and np.array_equal(results[0].solution, results[1].solution)
    assert results[0].evaluations == results[1].evaluations
