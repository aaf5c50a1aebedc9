"""The population primitive (lsmgpu.parallel.improve): B solutions to local optima, each equal to
improving it alone with the same rule; chains equal to the ILS's descent; bad input named."""
import numpy as np
import pytest

from lsmgpu import CandidateThreeOpt, HillClimbing, IteratedLocalSearch, OrOpt
from lsmgpu.backends import resolve
from lsmgpu.backends.cpu import CpuBackend
from lsmgpu.errors import BackendFallback
from lsmgpu.parallel import improve
from lsmgpu.problems import PPP, QAP, TSP, GraphColoring
from lsmgpu.problems.coloring import random_graph


def problems():
    pts = np.round(np.random.default_rng(5).uniform(0, 1000, (60, 2)))
    return [TSP(pts, neighbourhood="2opt", name="tsp60-2opt"),
            TSP(pts, neighbourhood="2opt-candidates", name="tsp60-candidates"),
            TSP(pts, neighbourhood="oropt", name="tsp60-oropt"),
            QAP.from_file(QAP.shipped("tai12a")),
            PPP.planted(41, 37, 2, distance=1)[0],
            GraphColoring(40, random_graph(40, 0.2, 3), 4, name="coloring-40")]


def population(problem, size=5, seed=0):
    rng = np.random.default_rng(seed)
    return np.array([problem.encoding.random(rng) for _ in range(size)])


@pytest.mark.parametrize("rule", ["best", "first"])
@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.name)
def test_each_solution_ends_where_a_hill_climb_alone_ends(problem, rule):
    """Solution k of the batch == HillClimbing from it alone (same rule, ties to the lowest
    index): the same local optimum, fitness and number of moves."""
    xs = population(problem)
    got = improve(problem, xs, rule=rule, backend="cpu")
    for k, x in enumerate(xs):
        alone = HillClimbing(problem, rule=rule, patience=1, initial=x, backend="cpu").run()
        assert np.array_equal(got.solutions[k], alone.solution)
        assert got.fitness[k] == alone.fitness == problem.fitness(got.solutions[k])
        assert got.moves[k] == alone.iterations
    assert np.array_equal(xs, population(problem))                 # the input is not changed


def test_a_chain_ends_where_the_ils_descent_ends_and_no_step_of_it_improves():
    """Candidate 2-opt polished by Or-opt and 3-opt: each solution equals IteratedLocalSearch's
    first descent from it, and no move of any neighbourhood of the chain improves it."""
    tsp = problems()[1]
    candidates = tsp.neighbourhood.candidates
    chain = [tsp.neighbourhood, OrOpt(candidates), CandidateThreeOpt(candidates)]
    xs = population(tsp, 4, seed=2)
    got = improve(tsp, xs, chain, backend="cpu")
    for k, x in enumerate(xs):
        ils = IteratedLocalSearch(tsp, neighbourhood=chain[0], polish=chain[1:], initial=x, backend="cpu")
        ils.start(iterations=0)
        assert np.array_equal(got.solutions[k], ils.best_x) and got.fitness[k] == tsp.fitness(ils.best_x)
        for nb in chain:
            over = tsp.with_neighbourhood(nb)
            moves = over.neighbourhood.moves(got.solutions[k], np.arange(over.neighbourhood.size, dtype=np.int64))
            assert over.delta_of(got.solutions[k], moves).min() >= 0
    assert (got.moves > 0).all()


def test_order_in_the_batch_does_not_matter():
    """Order in the batch does not matter."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    xs = population(qap, 6, seed=4)
    forward, backward = improve(qap, xs, backend="cpu"), improve(qap, xs[::-1], backend="cpu")
    assert np.array_equal(forward.solutions, backward.solutions[::-1])
    assert np.array_equal(forward.moves, backward.moves[::-1])


def test_bad_input_is_named():
    """Bad input is named."""
    tsp = problems()[0]
    xs = population(tsp, 3)
    with pytest.raises(ValueError, match=r"shape \(B, 60\)"):
        improve(tsp, xs[:, :10], backend="cpu")
    with pytest.raises(ValueError, match=r"shape \(B, 60\)"):
        improve(tsp, xs[:0], backend="cpu")
    broken = xs.copy()
    broken[1, 0] = broken[1, 1]
    with pytest.raises(ValueError, match="solution 1 is not valid"):
        improve(tsp, broken, backend="cpu")
    with pytest.raises(ValueError, match="rule"):
        improve(tsp, xs, rule="steepest", backend="cpu")
    with pytest.raises(TypeError, match="chain"):
        improve(tsp, xs, ["2opt"], backend="cpu")
    with pytest.raises(TypeError, match="Problem"):
        improve("tsp", xs)


def test_a_backend_that_descends_one_after_another_says_so():
    """A backend without a batched population warns (BackendFallback) and still gives the CPU's
    answer."""
    class Elsewhere(CpuBackend):
        name = "elsewhere"
    qap = QAP.from_file(QAP.shipped("tai12a"))
    xs = population(qap, 3)
    with pytest.warns(BackendFallback, match="one after another"):
        got = improve(qap, xs, backend=Elsewhere())
    assert np.array_equal(got.solutions, improve(qap, xs, backend="cpu").solutions)


@pytest.mark.gpu
@pytest.mark.parametrize("rule", ["best", "first"])
@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.name)
def test_cuda_batch_improves_as_the_cpu(problem, rule):
    """The batched device descents (all rows in one launch a step) equal the CPU reference row by
    row: the same local optima and the same number of moves."""
    xs = population(problem, 24, seed=7)
    gpu = improve(problem, xs, rule=rule, backend="cuda")
    cpu = improve(problem, xs, rule=rule, backend="cpu")
    assert np.array_equal(gpu.solutions, cpu.solutions) and np.array_equal(gpu.moves, cpu.moves)
    assert np.array_equal(gpu.fitness, cpu.fitness)


@pytest.mark.gpu
@pytest.mark.parametrize("main", ["2opt-candidates", "2opt"])
def test_cuda_chain_equals_the_cpu_chain(main):
    """Chains on the GPU: candidate 2-opt + Or-opt + 3-opt share their tour arrays; full 2-opt
    (no position array) + Or-opt keep arrays of their own, brought up to date between levels."""
    pts = np.round(np.random.default_rng(9).uniform(0, 1000, (150, 2)))
    tsp = TSP(pts, neighbourhood=main, name="tsp150")
    candidates = TSP(pts, neighbourhood="2opt-candidates").neighbourhood.candidates
    chain = [tsp.neighbourhood, OrOpt(candidates), CandidateThreeOpt(candidates)]
    xs = population(tsp, 40, seed=3)
    gpu = improve(tsp, xs, chain, backend="cuda")
    cpu = improve(tsp, xs, chain, backend="cpu")
    assert np.array_equal(gpu.solutions, cpu.solutions) and np.array_equal(gpu.moves, cpu.moves)


@pytest.mark.parametrize("rows,lk_depth", [(3, 0), (1, 6)])
def test_improve_takes_a_dontlook_descent(rows, lk_depth):
    """improve(problem, xs, DontLookDescent(lk=True)) gives each row the don't-look rows' local
    optimum, descended again from every city until no city of any row has an improving move
    (check_city finds none; a lone row checked wide), fitness and moves included."""
    from lsmgpu.backends.dontlook import check_city
    from lsmgpu.search import DontLookDescent
    problem = TSP(np.round(np.random.default_rng(4).uniform(0, 1000, (400, 2))), name="uniform400")
    xs = np.stack([np.random.default_rng(k).permutation(problem.n) for k in range(rows)])
    descent = DontLookDescent(candidates="alpha", lk=True, lk_depth=lk_depth)
    got = improve(problem, xs, descent, backend="cpu")
    engine, made, tours = descent.population(resolve("cpu"), problem, rows, None), 0, xs
    for _ in range(20):
        engine.load(tours)
        last = engine.descend(np.ones(rows, bool))[0]
        made, tours = made + last, engine.solutions()
        if not last.any():
            break
    assert np.array_equal(got.solutions, tours) and np.array_equal(got.moves, made)
    assert np.array_equal(got.fitness, [problem.evaluate(x) for x in got.solutions])
    assert np.all(got.fitness < [problem.evaluate(x) for x in xs])
    rules, between = descent.bound(problem), problem.edge_distance().between
    for x in got.solutions.astype(np.int64):
        pos = np.empty(problem.n, np.int64)
        pos[x] = np.arange(problem.n)
        assert all(check_city(c, x, pos, rules, between) is None for c in range(problem.n))


@pytest.mark.gpu
def test_cuda_dontlook_descent_through_improve_equals_the_cpu():
    """improve with DontLookDescent(candidates="alpha", or3=True, lk=True): the GPU rows end where
    the NumPy reference ends, moves included."""
    from lsmgpu.search import DontLookDescent
    problem = TSP.from_file(TSP.shipped("kroA100"))
    xs = np.stack([np.random.default_rng(k).permutation(problem.n) for k in range(8)])
    descent = DontLookDescent(candidates="alpha", or3=True, lk=True)
    gpu, cpu = (improve(problem, xs, descent, backend=b) for b in ("cuda", "cpu"))
    assert np.array_equal(gpu.solutions, cpu.solutions) and np.array_equal(gpu.moves, cpu.moves)
