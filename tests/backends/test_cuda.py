"""The CUDA backend against the NumPy reference (needs a GPU: marked `gpu`)."""
import numpy as np
import pytest

from lsmgpu import (BitFlip, CandidateThreeOpt, HillClimbing, IteratedLocalSearch, OrOpt, TabuSearch, ThreeExchange,
                    TwoOpt)
from lsmgpu.backends.base import Query
from lsmgpu.backends.cpu import CpuBackend
from lsmgpu.backends.tuning import WaveTuner
from lsmgpu.errors import KernelLaunchError
from lsmgpu.problems import PPP, QAP, TSP, GraphColoring, Weierstrass
from lsmgpu.problems.candidates import quadrant_candidates
from lsmgpu.problems.coloring import random_graph

from .linear import LinearBits, ValueTable

pytestmark = pytest.mark.gpu

POLICIES = ["global", "readonly", "texture", "shared"]


def cuda(**options):
    from lsmgpu.backends.cuda import CudaBackend
    return CudaBackend(**options)


def random_qap(n, seed, symmetric, delta_table=None):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 100, (n, n)), rng.integers(0, 100, (n, n))
    if symmetric:
        a, b = a + a.T, b + b.T
        np.fill_diagonal(a, 0), np.fill_diagonal(b, 0)
    table = {None: "", True: "-table", False: "-sum"}[delta_table]
    return QAP(a, b, name=f"qap{n}{'s' if symmetric else 'a'}{table}", delta_table=delta_table)


def tsp_cases():
    rng = np.random.default_rng(4)
    cases = []
    for kind in ["EUC_2D", "CEIL_2D", "ATT", "GEO"]:
        pts = rng.uniform(-80, 80, (60, 2)) if kind == "GEO" else rng.uniform(0, 10_000, (60, 2))
        for nb in ["swap", "2opt"]:
            fly = TSP(pts, weight_type=kind, neighbourhood=nb, name=f"{kind}-{nb}-coords")
            fly.matrix = None
            cases += [TSP(pts, weight_type=kind, neighbourhood=nb, name=f"{kind}-{nb}-matrix"), fly]
    for kind in ["EUC_2D", "GEO"]:      # candidate 2-opt and Or-opt: moves found from the tour (pos state)
        pts = rng.uniform(-80, 80, (60, 2)) if kind == "GEO" else rng.uniform(0, 10_000, (60, 2))
        for nb in ["2opt-candidates", "oropt", "3opt-candidates"]:
            cases.append(TSP(pts, weight_type=kind, neighbourhood=nb, name=f"{kind}-{nb}"))
    for nb in ["oropt", "3opt-candidates", "3opt-four"]:
        pts = np.round(rng.uniform(0, 1e4, (60, 2)))
        if nb == "3opt-four":
            nb = CandidateThreeOpt(quadrant_candidates(pts, 8), reconnections=4)
        cases.append(TSP(pts, neighbourhood=nb, name=f"EUC_2D-int-{nb}"))
    for kind in ["EUC_2D", "CEIL_2D"]:   # integer coordinates: the exact-integer rounding path
        for scale in (1e3, 2e6):
            pts = np.round(rng.uniform(0, scale, (60, 2)))
            pts[:5] = [[0, 0], [3, 4], [0, 0], [1, 1], [scale, scale]]   # ties, zero, perfect squares
            cases.append(TSP(pts, weight_type=kind, neighbourhood="2opt", name=f"{kind}-int{scale:g}"))
    return cases


def problems():
    rng = np.random.default_rng(0)
    out = [random_qap(13, 1, True), random_qap(13, 2, False), QAP.from_file(QAP.shipped("tai12a")),
           random_qap(13, 1, True, True), random_qap(13, 2, False, True),
           *tsp_cases(),
           *(LinearBits(rng.integers(-9, 9, 40), distance=d) for d in (1, 2, 3)),
           ValueTable(rng.integers(0, 50, (30, 5))),
           GraphColoring(50, random_graph(50, 0.2, 3), 4),
           random_qap(14, 6, False).with_neighbourhood(ThreeExchange()),
           *(PPP.planted(m, n, d, distance=d)[0] for d, (m, n) in zip((1, 2, 3), ((73, 73), (101, 117), (41, 57)))),
           *(Weierstrass(n, form=f, precision=p, m=2000, seed=n)
             for n, f, p in ((1, "luong", "float64"), (5, "luong", "float32"), (10, "luong", "float64"),
                             (7, "cec", "float64"), (7, "cec", "float32")))]
    return out


def assert_same_deltas(problem, gpu, cpu):
    """Exactly equal for integer problems; for real ones within the issue's relative tolerance
    (1e-12 double, 1e-5 single) of the function's scale (sum of |weights| per dimension):
    a delta is a difference of two values of that size."""
    if problem.integer:
        assert np.array_equal(gpu, cpu)
        return
    scale = problem.n * np.abs(problem.weights).sum()
    rtol = 1e-5 if problem.precision == "float32" else 1e-12
    assert np.max(np.abs(gpu - cpu)) <= rtol * scale, np.max(np.abs(gpu - cpu)) / scale


def policy_variants(problem):
    """Each policy for every read-only input; the solution-derived arrays in global memory once."""
    names = list(problem.device_data())
    state = list(problem.solution_data(problem.encoding.random(np.random.default_rng(0))))
    variants = [{name: policy for name in names} for policy in POLICIES]
    variants[0].update({name: "global" for name in state})
    return variants


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.name)
def test_fitness_arrays_equal_cpu_for_every_policy(problem):
    """evaluate_all on the GPU == the CPU deltas, exactly, for every memory policy and
    for generation on the device and on the host, on random solutions."""
    rng = np.random.default_rng(9)
    cpu = CpuBackend().evaluator(problem, problem.neighbourhood)
    generations = ("device", "host") if problem.neighbourhood.static else ("device",)
    for memory in policy_variants(problem):
        for generation in generations:
            gpu = cuda(memory=memory, generation=generation, tune=False).evaluator(problem, problem.neighbourhood)
            for step in range(3):
                x = problem.encoding.random(rng)
                cpu.load(x), gpu.load(x)
                assert_same_deltas(problem, gpu.deltas(step), cpu.deltas(step))
            gpu.close()


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.name)
def test_selected_move_matches_cpu(problem):
    """The on-GPU reduction picks the CPU's move (best and first rules, lowest index on ties)."""
    rng = np.random.default_rng(3)
    cpu = CpuBackend().evaluator(problem, problem.neighbourhood)
    gpu = cuda().evaluator(problem, problem.neighbourhood)
    for _ in range(5):
        x = problem.encoding.random(rng)
        cpu.load(x), gpu.load(x)
        for rule in ("best", "first"):
            q = Query(rule=rule, current=problem.fitness(x))
            assert gpu.select(q).index == cpu.select(q).index, rule
            assert np.array_equal(gpu.device_solution(), x)  # select alone must not move


def trajectory_cases():
    berlin = TSP.from_file(TSP.shipped("berlin52"), neighbourhood="2opt")
    kro = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates")
    return [
        ("tabu-qap", lambda b: TabuSearch(QAP.from_file(QAP.shipped("tai12a")), seed=0, history="all", backend=b), 2000),
        ("tabu-qap-asym", lambda b: TabuSearch(random_qap(20, 5, False), seed=1, history="all", backend=b), 2000),
        ("tabu-qap-table", lambda b: TabuSearch(random_qap(20, 5, False, True), seed=1, history="all", backend=b), 2000),
        ("tabu-qap-table-sym", lambda b: TabuSearch(random_qap(60, 8, True), seed=2, history="all", backend=b), 1000),
        ("hc-qap-table", lambda b: HillClimbing(random_qap(50, 9, False), restarts=2, seed=0, history="all", backend=b), None),
        ("tabu-tsp-2opt", lambda b: TabuSearch(berlin, seed=0, history="all", backend=b), 2000),
        ("tabu-tsp-swap", lambda b: TabuSearch(TSP.from_file(TSP.shipped("eil51")), seed=0, history="all", backend=b), 2000),
        ("tabu-flip2", lambda b: TabuSearch(LinearBits(np.arange(-20, 20), distance=2), seed=0, history="all", backend=b), 500),
        # Taillard's long-term aspiration on other move kinds (the QAP has it by default)
        ("tabu-flip2-forced", lambda b: TabuSearch(LinearBits(np.arange(-20, 20), distance=2), seed=0, history="all", backend=b,
                                                   forced_after=15), 500),
        ("tabu-tsp-2opt-forced", lambda b: TabuSearch(berlin, seed=0, history="all", backend=b, forced_after=60), 1000),
        ("tabu-qap-3exchange-forced", lambda b: TabuSearch(random_qap(14, 6, False).with_neighbourhood(ThreeExchange()),
                                                           seed=0, history="all", backend=b, forced_after=40), 300),
        ("tabu-value", lambda b: TabuSearch(ValueTable(np.arange(120).reshape(30, 4) % 7), seed=0, history="all", backend=b), 500),
        ("tabucol", lambda b: TabuSearch(GraphColoring(120, random_graph(120, 0.2, 4), 6), seed=0,
                                         history="all", backend=b), 1000),
        ("hc-first", lambda b: HillClimbing(berlin, rule="first", restarts=3, seed=0, history="all", backend=b), None),
        ("tabu-ppp-1", lambda b: TabuSearch(PPP.planted(73, 73, 0)[0], seed=0, history="all", backend=b), 1000),
        ("tabu-ppp-2", lambda b: TabuSearch(PPP.planted(61, 67, 1, distance=2)[0], seed=0, history="all", backend=b), 300),
        ("tabu-ppp-3", lambda b: TabuSearch(PPP.planted(31, 33, 2, distance=3)[0], seed=0, history="all", backend=b), 100),
        ("ils", lambda b: IteratedLocalSearch(berlin, seed=0, history="all", backend=b), 30),
        ("hc-cand2opt", lambda b: HillClimbing(kro, seed=0, history="all", backend=b), None),
        ("ils-cand2opt", lambda b: IteratedLocalSearch(kro, seed=1, history="all", backend=b), 40),
        ("hc-cand2opt-independent", lambda b: HillClimbing(kro, rule="independent", seed=0, history="all", backend=b), None),
        ("hc-oropt", lambda b: HillClimbing(kro.with_neighbourhood(OrOpt(kro.neighbourhood.candidates)), seed=0,
                                            history="all", backend=b), None),
        ("hc-3opt", lambda b: HillClimbing(kro.with_neighbourhood(CandidateThreeOpt(kro.neighbourhood.candidates)),
                                           seed=0, history="all", backend=b), None),
        ("hc-3opt-four", lambda b: HillClimbing(kro.with_neighbourhood(
            CandidateThreeOpt(kro.neighbourhood.candidates, reconnections=4)), seed=0, history="all", backend=b), None),
        ("ils-oropt-polish", lambda b: IteratedLocalSearch(kro, seed=2, history="all", backend=b,
                                                           polish=OrOpt(kro.neighbourhood.candidates)), 40),
    ]


@pytest.mark.parametrize("name,make,iterations", trajectory_cases(), ids=lambda c: c if isinstance(c, str) else "")
def test_same_trajectory_on_both_backends(name, make, iterations):
    """A search with one seed follows the same trajectory on the CPU and on the GPU, with
    device selection, host selection and host generation; the host mirror equals the GPU copy."""
    reference = make("cpu")
    ref = reference.run(iterations)
    modes = [{}, {"selection": "host"}] + ([{"generation": "host"}] if reference.neighbourhood.static else [])
    for options in modes:
        search = make(cuda(**options))
        res = search.run(iterations)
        assert np.array_equal(res.history, ref.history), options
        assert np.array_equal(res.solution, ref.solution) and res.fitness == ref.fitness
        assert np.array_equal(search.evaluator.device_solution(), search.evaluator.x)


def test_tuner_survives_an_impossible_configuration():
    """A block of 2048 threads cannot launch; the tuner skips it and keeps a valid choice."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    tuner = WaveTuner(blocks=[2048, 64, 128], cache=None)
    res = TabuSearch(problem, seed=0, history="all", backend=cuda(tuner=tuner)).run(50)
    (threads, block), = tuner.memory.values()
    assert block in (64, 128) and threads % block == 0
    assert np.array_equal(res.history, TabuSearch(problem, seed=0, history="all", backend="cpu").run(50).history)


def test_impossible_launch_raises_launch_error():
    """A user-fixed impossible block size gives KernelLaunchError naming grid and block."""
    from lsmgpu.backends.cuda import CudaBackend
    problem = QAP.from_file(QAP.shipped("tai12a"))
    backend = CudaBackend(tune=False)
    ev = backend.evaluator(problem, problem.neighbourhood)
    ev.load(np.arange(12))
    with pytest.raises(KernelLaunchError, match="block"):
        ev._launch_select(4096, 2048, 0, Query(), 0)
    assert ev.select(Query()).found  # the context is still usable


@pytest.mark.parametrize("kind,integer", [("EUC_2D", False), ("EUC_2D", True), ("CEIL_2D", True)])
def test_large_pair_indices_on_the_gpu(kind, integer):
    """2-opt on 6,000 cities (18M moves, past the float-root limit) matches the CPU deltas,
    with real and with integer coordinates up to 2e6 (pla85900's range)."""
    pts = np.random.default_rng(0).uniform(0, 2e6, (6000, 2))
    tsp = TSP(np.round(pts) if integer else pts, weight_type=kind, neighbourhood=TwoOpt(), start="random")
    assert tsp.integer_coords == integer
    cpu, gpu = CpuBackend().evaluator(tsp, tsp.neighbourhood), cuda(tune=False).evaluator(tsp, tsp.neighbourhood)
    x = np.random.default_rng(1).permutation(6000)
    cpu.load(x), gpu.load(x)
    assert np.array_equal(gpu.deltas(), cpu.deltas())


@pytest.mark.parametrize("neighbourhood", ["2opt-candidates", "oropt", "3opt-candidates"])
def test_candidate_moves_on_a_large_tour(neighbourhood):
    """Candidate 2-opt, Or-opt and 3-opt on 20,000 cities (10 quadrant candidates each): the GPU's
    deltas equal the CPU's on a random tour and after 30 improving moves applied on the GPU
    (its pos, edge and coordinate state kept current), and the host mirror equals the device
    tour."""
    pts = np.round(np.random.default_rng(5).uniform(0, 1e6, (20_000, 2)))
    tsp = TSP(pts, neighbourhood=neighbourhood, start="random")
    search = HillClimbing(tsp, seed=0, history="all", backend=cuda(tune=False))
    search.start(iterations=30)
    cpu = CpuBackend().evaluator(tsp, tsp.neighbourhood)
    for _ in range(2):
        cpu.load(search.evaluator.x)
        assert np.array_equal(search.evaluator.deltas(), cpu.deltas())
        for _ in range(30):
            search.step()
    assert np.array_equal(search.evaluator.device_solution(), search.evaluator.x)
    assert search.current == tsp.evaluate(search.evaluator.x)


def test_maxcut_example_on_gpu():
    """The user example runs on the GPU, with fitness changes within 1e-5 of the CPU's."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parents[2] / "examples" / "maxcut.py"
    spec = importlib.util.spec_from_file_location("maxcut_example", path)
    module = importlib.util.module_from_spec(spec)
    import sys
    sys.modules["maxcut_example"] = module
    spec.loader.exec_module(module)
    problem = module.MaxCut(module.random_graph(300, 0.2, 0))
    x = problem.encoding.random(np.random.default_rng(0))
    cpu, gpu = CpuBackend().evaluator(problem, problem.neighbourhood), cuda().evaluator(problem, problem.neighbourhood)
    cpu.load(x), gpu.load(x)
    assert np.allclose(gpu.deltas(), cpu.deltas(), rtol=1e-5, atol=1e-6)
    res = TabuSearch(problem, seed=0, history="all", backend=cuda()).run(300)
    assert np.isclose(res.fitness, problem.evaluate(res.solution)) and res.backend == "cuda"


def test_bitflip_override_on_gpu():
    """A neighbourhood override (Hamming 3 on a 1-flip problem) renders its own kernel."""
    problem = LinearBits(np.arange(-10, 10), distance=1)
    a = TabuSearch(problem, neighbourhood=BitFlip(3), seed=2, history="all", backend="cpu").run(200)
    b = TabuSearch(problem, neighbourhood=BitFlip(3), seed=2, history="all", backend=cuda()).run(200)
    assert np.array_equal(a.history, b.history)


@pytest.mark.parametrize("form", ["luong", "cec"])
def test_weierstrass_hill_climb_follows_the_cpu(form):
    """A double-precision crowns hill climb picks the CPU's neighbour every iteration (the GPU
    draws the same points), with device and host selection; generation on the host is refused."""
    problem = Weierstrass(6, form=form, m=3000)
    ref = HillClimbing(problem, seed=0, history="all", backend="cpu").run(100)
    for options in ({}, {"selection": "host"}):
        search = HillClimbing(problem, seed=0, history="all", backend=cuda(**options))
        res = search.run(100)
        assert res.iterations == ref.iterations
        assert np.allclose(res.history, ref.history, rtol=0, atol=1e-12 * 6 * problem.weights.sum())
        assert np.array_equal(res.solution, ref.solution)
        assert np.array_equal(search.evaluator.device_solution(), search.evaluator.x)
    with pytest.raises(ValueError, match="generation='host'"):
        HillClimbing(problem, seed=0, history="all", backend=cuda(generation="host")).run(1)


def test_weierstrass_tabu_search_follows_the_cpu():
    """A double-precision crowns tabu search (non-improving moves, the (axis, direction) tabu
    attributes marked by the kernel) follows the CPU's trajectory with device and host selection."""
    problem = Weierstrass(6, form="cec", m=3000)
    ref = TabuSearch(problem, seed=0, history="all", backend="cpu").run(150)
    for options in ({}, {"selection": "host"}):
        res = TabuSearch(problem, seed=0, history="all", backend=cuda(**options)).run(150)
        assert res.iterations == ref.iterations == 150
        assert np.allclose(res.history, ref.history, rtol=0, atol=1e-12 * 6 * problem.weights.sum())
        assert np.array_equal(res.solution, ref.solution)


def test_weierstrass_ils_follows_the_cpu():
    """Iterated local search on crowns (kicks redraw coordinates on the host, each descent step
    a fresh draw on the GPU) follows the CPU's trajectory."""
    problem = Weierstrass(6, form="cec", m=3000)
    ref = IteratedLocalSearch(problem, seed=0, history="all", backend="cpu", patience=2).run(20)
    res = IteratedLocalSearch(problem, seed=0, history="all", backend=cuda(), patience=2).run(20)
    assert res.iterations == ref.iterations == 20
    assert np.allclose(res.history, ref.history, rtol=0, atol=1e-12 * 6 * problem.weights.sum())
    assert np.array_equal(res.solution, ref.solution)


def test_ppp_large_instance_deltas():
    """PPP 1301-1317 (the paper's largest), Hamming 2: a sample of the GPU deltas equals the
    CPU's, before and after 20 tabu moves applied on the GPU (the sorted-rows state rebuilt
    each time), and the incremental fitness equals a full evaluation."""
    problem, _ = PPP.planted(1301, 1317, 0, distance=2)
    search = TabuSearch(problem, seed=0, history="all", backend=cuda())
    search.start(iterations=20)
    index = np.arange(0, problem.neighbourhood.size, 997)
    for _ in range(2):
        x = search.evaluator.x
        gpu = search.evaluator.deltas()
        assert np.array_equal(gpu[index], problem.delta(x, problem.neighbourhood.decode(index)))
        while not search.step():
            pass
    assert np.array_equal(search.evaluator.device_solution(), search.evaluator.x)
    assert search.current == problem.evaluate(search.evaluator.x)


def batch_cases():
    """Problems for the batch kernel: one block per start (small) and several (random QAP
    n = 60: 1,770 moves, 8 blocks each, with and without the delta table), state arrays (TSP,
    colouring), the grid-wide refresh (PPP Hamming 2, the QAP's delta table)."""
    pts = np.random.default_rng(1).uniform(0, 100, (40, 2))
    return [(QAP.from_file(QAP.shipped("tai12a")), None), (random_qap(60, 4, False), None),
            (random_qap(60, 4, False, False), None), (random_qap(30, 4, True, True), None),
            (TSP(pts, neighbourhood="swap", name="tsp40-swap"), None),
            (TSP(pts, neighbourhood="2opt", name="tsp40-2opt"), None),
            (PPP.planted(61, 67, 1, distance=2)[0], None),
            (GraphColoring(50, random_graph(50, 0.2, 3), 4), (3, 8))]


@pytest.mark.parametrize("problem, tenure", batch_cases(), ids=lambda c: getattr(c, "name", str(c)))
def test_batched_starts_follow_the_cpu(problem, tenure):
    """Seven starts in one launch per iteration: each start's trajectory, best solution and
    stopping status equal the CPU batch's (itself equal to single runs, tests/search/test_batch.py)."""
    from lsmgpu import TabuSearch
    from lsmgpu.parallel.multistart import MultiStart
    runs = [MultiStart(TabuSearch, problem, starts=7, seed=5, history="all", backend=b, tenure=tenure).run(400, stagnation=150)
            for b in ("cpu", cuda(tune=False))]
    for cpu_run, gpu_run in zip(*(r.runs for r in runs)):
        assert np.array_equal(gpu_run.history, cpu_run.history)
        assert np.array_equal(gpu_run.solution, cpu_run.solution)
        assert (gpu_run.iterations, gpu_run.status) == (cpu_run.iterations, cpu_run.status)


def test_a_full_batch_with_one_lane_per_move_follows_the_cpu():
    """112 starts of a QAP with n = 100 fill the GPU: the batch kernel runs one thread per move
    (instead of the problem's 32 lanes) and still follows the CPU, start by start."""
    from lsmgpu import TabuSearch
    from lsmgpu.backends.cuda.batch import CudaBatchEvaluator
    from lsmgpu.parallel.multistart import MultiStart
    problem = random_qap(100, 7, False)
    runs = [MultiStart(TabuSearch, problem, starts=112, seed=1, history="all", backend=b).run(60) for b in ("cpu", cuda(tune=False))]
    for cpu_run, gpu_run in zip(*(r.runs for r in runs)):
        assert np.array_equal(gpu_run.history, cpu_run.history)
    assert CudaBatchEvaluator(problem, problem.neighbourhood, cuda(tune=False), 112).program.lanes == 1


def test_batched_target_and_stagnation_stops_match_the_cpu():
    """The resident kernel's own stop tests (target, stagnation) stop the same starts at the
    same iterations as the CPU batch."""
    from lsmgpu import TabuSearch
    from lsmgpu.parallel.multistart import MultiStart
    problem = QAP.from_file(QAP.shipped("tai12a"))
    runs = [MultiStart(TabuSearch, problem, starts=40, seed=3, history="all", backend=b).run(3000, target=problem.best_known,
                                                                               stagnation=400)
            for b in ("cpu", cuda(tune=False))]
    assert runs[0].status == runs[1].status
    for cpu_run, gpu_run in zip(*(r.runs for r in runs)):
        assert np.array_equal(gpu_run.history, cpu_run.history)
        assert (gpu_run.iterations, gpu_run.status) == (cpu_run.iterations, cpu_run.status)


@pytest.mark.parametrize("problem", [QAP.from_file(QAP.shipped("tai12a")), random_qap(60, 4, True)],
                         ids=["resident", "queued-table"])
def test_islands_follow_the_cpu(problem):
    """Islands (exchange_every): restarts upload solutions, tabu rows and the solution-derived
    arrays (the QAP's delta table) of the restarted starts; trajectories equal the CPU's."""
    from lsmgpu import TabuSearch
    from lsmgpu.parallel.multistart import MultiStart
    runs = [MultiStart(TabuSearch, problem, starts=6, seed=2, history="all", backend=b, exchange_every=128).run(640)
            for b in ("cpu", cuda(tune=False))]
    for cpu_run, gpu_run in zip(*(r.runs for r in runs)):
        assert np.array_equal(gpu_run.history, cpu_run.history)
        assert np.array_equal(gpu_run.solution, cpu_run.solution)


def test_load_from_copies_a_solution_between_neighbourhoods_on_the_gpu():
    """An Or-opt evaluator takes a candidate 2-opt evaluator's tour and derived arrays by a
    copy on the GPU (as ILS polishing does) after moves applied there: its deltas then equal
    the CPU's for that tour, and the copy back after Or-opt moves gives the 2-opt evaluator the
    CPU's deltas too."""
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates", start="random")
    oropt = tsp.with_neighbourhood(OrOpt(tsp.neighbourhood.candidates))
    search = HillClimbing(tsp, seed=0, history="all", backend=cuda(tune=False))
    search.start(iterations=20)
    for _ in range(20):
        search.step()
    two, polisher = search.evaluator, cuda(tune=False).evaluator(oropt, oropt.neighbourhood)
    polisher.load_from(two)
    assert np.array_equal(polisher.device_solution(), two.x)
    cpu = CpuBackend().evaluator(oropt, oropt.neighbourhood)
    cpu.load(two.x)
    assert np.array_equal(polisher.deltas(), cpu.deltas())
    for _ in range(5):
        polisher.move(Query(rule="best", current=0), improving_only=True)
    two.load_from(polisher)
    cpu_two = CpuBackend().evaluator(tsp, tsp.neighbourhood)
    cpu_two.load(polisher.x)
    assert np.array_equal(two.device_solution(), polisher.x)
    assert np.array_equal(two.deltas(), cpu_two.deltas())


def kick_cases():
    """TSP cases whose neighbourhoods express a double bridge (2-opt reversals, block
    exchanges), and a QAP (moves evaluated by lanes, delta table refreshed after each)."""
    cases = [(p, None) for p in tsp_cases() if p.kick_moves(np.arange(p.n), np.random.default_rng(0), 1) is not None]
    pts = np.round(np.random.default_rng(6).uniform(0, 1e6, (20_000, 2)))
    cases += [(TSP(pts, neighbourhood=nb, start="random"), None) for nb in ("2opt-candidates", "oropt")]
    return cases + [(random_qap(40, 3, False, True), np.array([[3, 17], [0, 39], [5, 6]])),
                    (QAP.from_file(QAP.shipped("tai12a")), np.array([[1, 2], [0, 11]]))]


@pytest.mark.parametrize("problem, moves", kick_cases(), ids=lambda c: getattr(c, "name", ""))
def test_kicks_applied_on_the_gpu_equal_the_cpu(problem, moves):
    """Explicit moves applied on the GPU (apply_moves: an ILS kick, segment-local across the
    tour's end at 20,000 cities) give the CPU's fitness change, equal to the full re-evaluation,
    and leave the tour and its derived arrays as the CPU has them: the deltas that follow
    are the CPU's."""
    rng = np.random.default_rng(1)
    gpu = cuda(tune=False).evaluator(problem, problem.neighbourhood)
    cpu = CpuBackend().evaluator(problem, problem.neighbourhood)
    for _ in range(3):
        x = problem.encoding.random(rng)
        gpu.load(x), cpu.load(x)
        kick = moves if moves is not None else problem.kick_moves(x, rng, 2)
        change = gpu.apply_moves(kick)
        assert change == cpu.apply_moves(kick) == problem.evaluate(cpu.x) - problem.evaluate(x)
        assert np.array_equal(gpu.device_solution(), cpu.x) and np.array_equal(gpu.x, cpu.x)
        assert_same_deltas(problem, gpu.deltas(), cpu.deltas())
    with pytest.raises(ValueError, match="invalid move"):
        gpu.apply_moves(np.full((1, problem.neighbourhood.arity), problem.n))


def test_a_kernel_that_faults_raises_kernel_launch_error_naming_it():
    """A device fault after the selection record is written is raised as KernelLaunchError naming
    the kernels that ran, by the next launch or at the end of the run, never ignored. (In a
    process of its own: a fault leaves the CUDA context unusable.)"""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import numpy as np\n"
            "from lsmgpu import HillClimbing, KernelLaunchError\n"
            "from tests.backends.linear import Faulty\n"
            "problem = Faulty(np.arange(-20, 20) * 3, c=2)\n"
            "try:\n"
            "    HillClimbing(problem, seed=0, backend='cuda').run(5)\n"
            "except KernelLaunchError as exc:\n"
            "    print('RAISED', exc)\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600)
    assert "RAISED" in out.stdout, out.stdout + out.stderr
    assert "evaluate_select" in out.stdout and "illegal" in out.stdout.lower(), out.stdout


@pytest.mark.parametrize("neighbourhood", ["2opt-candidates", "oropt", "2opt"])
def test_instances_of_one_kind_share_one_build_and_each_follow_the_cpu(neighbourhood):
    """Two TSPs of other sizes in one process: one nvcc build (full 2-opt bakes n in: two), one
    module each with its own constants, both evaluating exactly as the CPU (and the first still
    right after the second was loaded)."""
    from lsmgpu.backends.cuda import driver
    rng = np.random.default_rng(11)
    small, large = (TSP(np.round(rng.uniform(0, 1e4, (n, 2))), neighbourhood=neighbourhood) for n in (45, 333))
    builds = len(driver._cubins)
    pairs = []
    for problem in (small, large):
        pairs.append((CpuBackend().evaluator(problem, problem.neighbourhood),
                      cuda(tune=False).evaluator(problem, problem.neighbourhood), problem))
    baked = neighbourhood == "2opt"
    assert (pairs[0][1].program.source == pairs[1][1].program.source) != baked
    assert len(driver._cubins) - builds <= 1 + baked
    assert pairs[0][1].program.module is not pairs[1][1].program.module
    for cpu, gpu, problem in pairs:
        x = problem.encoding.random(rng)
        cpu.load(x), gpu.load(x)
        assert_same_deltas(problem, gpu.deltas(0), cpu.deltas(0))
        q = Query(rule="best", current=problem.fitness(x))
        assert gpu.select(q).index == cpu.select(q).index
        gpu.close()
