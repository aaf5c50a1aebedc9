"""Variable neighbourhood search against its definition: the shake of the k-th neighbourhood is k
kick units, k goes back to 1 on an accepted (strictly better) local optimum and on to k + 1
otherwise, wrapping after k_max; the run loop's budget, registry and GPU = CPU."""
import numpy as np
import pytest

from lsmgpu import VariableNeighbourhoodSearch
from lsmgpu.problems import QAP, TSP
from lsmgpu.search import SEARCHES


def trace(search, iterations):
    """(k before, the shake's size, the accepted fitness before, after) of each iteration."""
    sizes = []
    perturb, kick_moves = search.problem.perturb, search.problem.kick_moves

    def recorded_perturb(x, rng, strength):
        sizes.append(strength)
        return perturb(x, rng, strength)

    def recorded_kick(x, rng, strength):
        moves = kick_moves(x, rng, strength)
        if moves is not None:                  # None: the problem kicks through perturb instead
            sizes.append(strength)
        return moves

    search.problem.perturb, search.problem.kick_moves = recorded_perturb, recorded_kick
    search.start(iterations)
    steps = []
    while search.iteration < iterations:
        k, home, first = search.k, search.home, len(sizes)
        search.step()
        steps.append((k, sizes[first:], home, search.home))
    return steps


@pytest.mark.parametrize("problem", [QAP.from_file(QAP.shipped("nug12")),
                                     TSP(np.round(np.random.default_rng(2).uniform(0, 1000, (60, 2))), name="tsp60")],
                         ids=["qap-perturb", "tsp-kick-moves"])
def test_k_follows_the_definition(problem):
    """Each shake is k units (one perturb of strength k, or k kick units of 1); k resets to 1
    after a strictly better local optimum, else steps on, back to 1 after k_max."""
    search = VariableNeighbourhoodSearch(problem, seed=3, k_max=3, backend="cpu")
    steps = trace(search, 60)
    assert len(steps) == 60
    seen = set()
    for (k, sizes, before, after), following in zip(steps, steps[1:] + [(search.k,)]):
        assert sizes in ([k], [1] * k)
        improved = after < before
        assert following[0] == (1 if improved else k % 3 + 1)
        assert after <= before
        seen.add(k)
    assert seen == {1, 2, 3}


def test_vns_is_registered_and_needs_a_budget():
    """"vns" names it in the one registry; like the ILS it needs a budget."""
    assert SEARCHES["vns"] is VariableNeighbourhoodSearch
    with pytest.raises(ValueError, match="budget"):
        VariableNeighbourhoodSearch(QAP.from_file(QAP.shipped("nug12")), backend="cpu").run()


def test_k_max_is_checked():
    """k_max below 1 or above n, or a strength, is refused naming it."""
    qap = QAP.from_file(QAP.shipped("nug12"))
    with pytest.raises(ValueError, match="k_max"):
        VariableNeighbourhoodSearch(qap, k_max=0)
    with pytest.raises(ValueError, match="k_max"):
        VariableNeighbourhoodSearch(qap, k_max=13)
    with pytest.raises(ValueError, match="strength"):
        VariableNeighbourhoodSearch(qap, strength=2)


@pytest.mark.gpu
def test_gpu_run_equals_the_cpu_run():
    """A seeded VNS on the GPU follows the CPU's trajectory (QAP: perturb on the host; TSP: kicks
    applied on the GPU as moves)."""
    for problem in (QAP.from_file(QAP.shipped("tai12a")), TSP.from_file(TSP.shipped("kroA100"))):
        runs = [VariableNeighbourhoodSearch(problem, seed=4, k_max=3, backend=b).run(30) for b in ("cpu", "cuda")]
        assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)
        assert np.array_equal(runs[0].history, runs[1].history)
