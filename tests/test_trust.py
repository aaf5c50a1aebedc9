"""What a new user counts on: budgets that end inside long set-up and long iterations, the start
solution returned when the budget ends before anything else, zero iterations meaning none, huge
populations refused before allocation, clear errors at construction, announcements that point at
the user's line, and a command line that names its flags. No clock is asserted: a deadline in the
past (``deadline_scope``) makes every cut deterministic."""
import time
import warnings

import numpy as np
import pytest

from lsmgpu import (AntColonySystem, BackendFallback, CandidateTwoOpt, DontLookILS, FocusedACO, GeneticAlgorithm,
                    HillClimbing, IteratedLocalSearch, MaxMinAntSystem, MultiStart, TabuSearch)
from lsmgpu.backends.colony import Construction, CpuColony
from lsmgpu.backends.cpu import CpuBackend
from lsmgpu.backends.crossover import construct, order_crossover
from lsmgpu.budget import DeadlineReached, deadline_scope
from lsmgpu.cli import main
from lsmgpu.problems import QAP, TSP
from lsmgpu.search import SEARCHES, search_class

EVERY_SEARCH = [TabuSearch, HillClimbing, IteratedLocalSearch, AntColonySystem, MaxMinAntSystem, GeneticAlgorithm,
                FocusedACO, DontLookILS]


@pytest.fixture(scope="module")
def tsp():
    points = np.random.default_rng(3).uniform(0, 10_000, (120, 2)).round()
    return TSP(points, name="random120")


def past():
    """A deadline that has already passed: every deadline check inside it fires."""
    return deadline_scope(time.perf_counter() - 1.0)


@pytest.mark.parametrize("search", EVERY_SEARCH, ids=lambda s: s.__name__)
def test_no_time_returns_the_start_solution(tsp, search):
    """seconds=0: the best solution there is (the start), status "seconds", no iteration, no error."""
    result = search(tsp, seed=0, backend="cpu").run(seconds=0)
    assert result.status == "seconds" and result.iterations == 0
    assert result.fitness == tsp.fitness(result.solution) and sorted(result.solution) == list(range(tsp.n))


@pytest.mark.parametrize("search", EVERY_SEARCH, ids=lambda s: s.__name__)
def test_zero_iterations_mean_none(tsp, search):
    """Zero iterations mean none."""
    result = search(tsp, seed=0, backend="cpu").run(iterations=0)
    assert result.status == "iterations" and result.iterations == 0
    assert len(result.history) == 1                  # the start alone


def test_a_population_search_keeps_its_start_when_the_set_up_runs_out(tsp, monkeypatch):
    """The budget ends inside the set-up (here: building the ants' colony): the start tour comes back."""
    import lsmgpu.search.colony as colony

    def late(*args, **kwargs):
        from lsmgpu.budget import check_deadline
        with past():
            check_deadline("the colony was built")
    monkeypatch.setattr(colony, "colony_for", late)
    result = MaxMinAntSystem(tsp, seed=0, backend="cpu").run(seconds=60)
    assert result.status == "seconds" and result.iterations == 0 and result.fitness == tsp.fitness(result.solution)


def test_the_cpu_neighbourhood_scan_is_cut_by_the_deadline(tsp):
    """The CPU neighbourhood scan is cut by the deadline."""
    evaluator = CpuBackend(chunk=100).evaluator(tsp, tsp.neighbourhood)
    evaluator.load(np.arange(tsp.n))
    with past(), pytest.raises(DeadlineReached):
        evaluator.deltas()
    assert len(evaluator.deltas()) == tsp.neighbourhood.size      # no deadline outside a run


def test_the_ants_and_the_colony_model_are_cut_by_the_deadline(tsp):
    """The ants and the colony model are cut by the deadline."""
    model = tsp.colony_model(8)
    colony = CpuColony(model, Construction(), tsp.n)
    with past(), pytest.raises(DeadlineReached):
        colony.construct(0, 0, np.arange(4))
    with past(), pytest.raises(DeadlineReached):
        tsp.colony_model(8)
    with past(), pytest.raises(DeadlineReached):
        CpuColony(model, Construction(), tsp.n)


def test_the_crossovers_are_cut_by_the_deadline():
    """The crossovers are cut by the deadline."""
    rng = np.random.default_rng(0)
    parents = np.stack([rng.permutation(600) for _ in range(128)])
    with past(), pytest.raises(DeadlineReached):
        order_crossover(parents, parents[::-1], np.zeros(128, int), np.full(128, 10))
    with past(), pytest.raises(DeadlineReached):
        construct(parents[:2], parents[2:4], lambda u, v: np.abs(u - v), np.full((2, 599), 2, dtype=np.int8))


def test_the_focused_ants_are_cut_by_the_deadline(tsp):
    """The focused ants are cut by the deadline."""
    search = FocusedACO(tsp, ants=4, seed=0, backend="cpu")
    result = search.run(iterations=1)
    assert result.iterations == 1
    with past(), pytest.raises(DeadlineReached):
        search.colony.build(1)


def test_a_batch_of_tabu_starts_stops_inside_an_iteration_at_the_deadline(tsp):
    """A batch of tabu starts stops inside an iteration at the deadline."""
    result = MultiStart(TabuSearch, tsp, starts=3, seed=0, backend="cpu").run(seconds=0)
    assert result.solution is not None and result.fitness == tsp.fitness(result.solution)


@pytest.mark.parametrize("make, name", [
    (lambda p: AntColonySystem(p, ants=10**9, backend="cpu"), "`ants`=1,000,000,000"),
    (lambda p: MaxMinAntSystem(p, ants=10**9, backend="cpu"), "`ants`=1,000,000,000"),
    (lambda p: GeneticAlgorithm(p, genes=10**9, backend="cpu"), "`genes`=1,000,000,000")])
def test_a_population_too_large_for_the_host_is_refused_before_allocating(tsp, make, name):
    """A population too large for the host is refused before allocating."""
    with pytest.raises(ValueError, match=name) as error:
        make(tsp)
    assert "GiB" in str(error.value)


@pytest.mark.parametrize("make, error, match", [
    (lambda p: TabuSearch(p, callbacks=42), TypeError, "`callbacks` must be"),
    (lambda p: TabuSearch(p, callbacks=lambda: None), TypeError, "does not take one argument"),
    (lambda p: TabuSearch(p, initial=["a"] * p.n), ValueError, "real numbers"),
    (lambda p: AntColonySystem("berlin52"), TypeError, r"`problem` must be a Problem.*lsmgpu.load\('berlin52'\)"),
    (lambda p: MultiStart(TabuSearch, "berlin52", starts=2), TypeError, "`problem` must be a Problem"),
    (lambda p: MultiStart("dontlook-ils", p, starts=2), ValueError, "population search"),
    (lambda p: MultiStart("tabbu", p, starts=2), ValueError, "did you mean 'tabu'"),
    (lambda p: CandidateTwoOpt(10), ValueError, "row c the k candidate cities"),
    (lambda p: TSP(np.ones((5, 2)) * 1j), ValueError, "`coords` must hold real numbers"),
    (lambda p: TSP(np.ones((5, 2)), weight_type=5), ValueError, "`weight_type` must be one of"),
    (lambda p: TSP(np.ones((5, 2)), best_known="x"), TypeError, "`best_known` must be a number"),
    (lambda p: TSP(np.ones((5, 2)), best_known=-5), ValueError, "`best_known` must be >= 0"),
    (lambda p: QAP(np.ones((4, 4)), np.ones((4, 4)), best_known="x"), TypeError, "`best_known` must be a number"),
])
def test_bad_input_is_refused_at_construction_by_name(tsp, make, error, match):
    """Bad input is refused at construction by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no NumPy warning on the way (complex numbers)
        warnings.simplefilter("ignore", BackendFallback)
        with pytest.raises(error, match=match):
            make(tsp)


def test_the_registry_names_every_search_and_the_nearest_to_a_typo():
    """The registry names every search and the nearest to a typo."""
    assert set(SEARCHES) == {"tabu", "hc", "ils", "vns", "acs", "mmas", "ga", "dontlook-ils", "faco",
                             "segments"}
    assert search_class("faco") is FocusedACO
    with pytest.raises(ValueError, match="did you mean 'mmas'"):
        search_class("mmass")


def test_a_fallback_points_at_the_users_line(tsp, monkeypatch):
    """A fallback points at the users line."""
    import lsmgpu.backends as backends
    monkeypatch.setattr(backends, "cuda_available", lambda: (False, "no GPU in this test"))
    with pytest.warns(BackendFallback, match="runs this search on the CPU") as caught:
        TabuSearch(tsp, backend="auto")
    assert caught[0].filename == __file__


def test_the_command_prints_integer_objectives_exactly(capsys):
    """The command prints integer objectives exactly."""
    assert main(["solve", "tai12a", "--iterations", "50", "--backend", "cpu", "--quiet"]) == 0
    out = capsys.readouterr().out
    best = int(out.split("best fitness: ")[1].split()[0])
    assert best >= 224416 and "e+" not in out and "gap to best known 224416:" in out


def test_the_command_takes_a_shipped_file_name_and_names_its_flags(capsys):
    """A shipped instance by file name runs; a bad flag value is one line naming the flag."""
    assert main(["solve", "berlin52.tsp", "--iterations", "5", "--backend", "cpu", "--quiet"]) == 0
    capsys.readouterr()
    for flags, said in ((["--time", "-1"], "argument --seconds/--time: must be a finite number of seconds >= 0"),
                        (["--seed", "-3"], "argument --seed: must be at least 0"),
                        (["--starts", "0"], "argument --starts: must be at least 1")):
        assert main(["solve", "berlin52", *flags]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"lsmgpu: {said}") and err.count("\n") == 1
    assert main(["solve", "berlin52", "--colors", "3"]) == 2
    err = capsys.readouterr().err
    assert "--colors applies to a DIMACS .col graph" in err and "lsmgpu: lsmgpu" not in err


def test_the_command_help_lists_the_shipped_instances_and_formats(capsys):
    """The command help lists the shipped instances and formats."""
    assert main(["solve", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "berlin52" in out and "tai12a" in out and ".ppp" in out and ".col" in out
    assert "--backend" in out and "where the search runs" in out and "seed of the run" in out


def test_every_algorithm_has_a_default_budget_on_the_command_line(capsys):
    """hc included: with no budget the command stops by the default seconds or the local optimum."""
    assert main(["solve", "kroA100", "--algorithm", "hc", "--backend", "cpu", "--quiet"]) == 0
    assert "stopped by" in capsys.readouterr().out


def test_a_population_run_names_the_host_device(tsp):
    """A population run names the host device."""
    result = AntColonySystem(tsp, ants=4, seed=0, backend="cpu").run(iterations=1)
    assert result.device == CpuBackend().device and result.device


def test_an_interrupt_before_the_search_writes_the_start_solution(tmp_path, monkeypatch, capsys):
    """Ctrl-C (or SIGTERM) while the search is built, before it has a solution: the command still
    writes the start tour (and its figures, status "interrupted") and exits 130."""
    import json

    import lsmgpu.cli as cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "_run", interrupted)
    out, figures = tmp_path / "best.tour", tmp_path / "best.json"
    assert main(["solve", "berlin52", "--backend", "cpu", "--quiet", "--out", str(out), "--json", str(figures)]) == 130
    tsp = TSP.from_file(TSP.shipped("berlin52"))
    tour = tsp.read_solution(out)
    assert sorted(tour) == list(range(52))
    assert f"best fitness: {tsp.fitness(tour)}" in capsys.readouterr().out
    written = json.loads(figures.read_text())
    assert (written["fitness"], written["status"], written["iterations"]) == (tsp.fitness(tour), "interrupted", 0)


@pytest.mark.gpu
@pytest.mark.parametrize("search", EVERY_SEARCH + ["multistart"], ids=lambda s: getattr(s, "__name__", s))
def test_a_cold_kernel_cache_past_the_budget_returns_the_start(tsp, search, tmp_path, monkeypatch, caplog):
    """A first GPU run: no kernel in memory or on disk, every build slower than the budget (here
    each is made to take 2 s more): the run still returns its best solution (the start), status
    "seconds", never a traceback."""
    import logging

    import lsmgpu.backends.cuda.driver as driver
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.setattr(driver, "_cubins", {})
    monkeypatch.setattr(driver, "_modules", {})
    build = driver._build

    def slow_build(*args):
        time.sleep(2.0)
        return build(*args)
    monkeypatch.setattr(driver, "_build", slow_build)
    caplog.set_level(logging.INFO, logger="lsmgpu")
    if search == "multistart":
        result = MultiStart(TabuSearch, tsp, starts=4, seed=0, backend="cuda").run(seconds=0.5)
    else:
        result = search(tsp, seed=0, backend="cuda").run(seconds=0.5)
    assert result.status == "seconds" and result.fitness == tsp.fitness(result.solution)
    assert sorted(result.solution) == list(range(tsp.n))
    assert "built a kernel" in caplog.text


@pytest.mark.parametrize("make, match", [
    (lambda p: MultiStart(TabuSearch, p, starts=2, tenur=3), "TabuSearch takes no option `tenur` .*'tenure'"),
    (lambda p: MultiStart("ils", p, starts=2, polsh=[]), "IteratedLocalSearch takes no option `polsh` .*'polish'"),
])
def test_a_misspelt_option_of_many_starts_is_refused_at_construction(tsp, make, match):
    """A misspelt option of many starts is refused at construction."""
    with pytest.raises(TypeError, match=match):
        make(tsp)
    assert MultiStart(TabuSearch, tsp, starts=2, exchange_every=5, tenure=7, backend="cpu").run(10).solution is not None


def test_the_colonies_take_a_start_solution_and_the_ga_initial_none(tsp):
    """The colonies take a start solution and the GA initial none."""
    start = np.random.default_rng(5).permutation(tsp.n)
    for search in (AntColonySystem, MaxMinAntSystem):
        result = search(tsp, ants=4, initial=start, seed=0, backend="cpu").run(iterations=0)
        assert np.array_equal(result.solution, start) and result.history[0] == tsp.fitness(start)
    with pytest.raises(ValueError, match="not a permutation"):
        AntColonySystem(tsp, initial=np.zeros(tsp.n, int), backend="cpu")
    assert GeneticAlgorithm(tsp, genes=8, initial=None, seed=0, backend="cpu").run(iterations=1).iterations == 1


@pytest.fixture
def broken():
    """A 30-city TSP whose initial_solution() gives no permutation (a user's bug)."""
    problem = TSP(np.random.default_rng(3).uniform(0, 10_000, (30, 2)).round(), name="broken30")
    problem.initial_solution = lambda rng: np.zeros(30, dtype=np.int64)
    return problem


@pytest.mark.parametrize("search", [s for s in EVERY_SEARCH if s is not GeneticAlgorithm] + [MultiStart],
                         ids=lambda s: s.__name__)
def test_a_problem_whose_initial_solution_is_invalid_is_named(broken, search):
    """A user's initial_solution() that gives no solution of the encoding is refused by the
    problem's name and the function's, by every search that starts from it (the GA draws its own)."""
    with pytest.raises(ValueError, match=r"broken30: initial_solution\(\) does not hold a solution .*not a permutation"):
        (MultiStart(TabuSearch, broken, starts=3, seed=0, backend="cpu") if search is MultiStart else
         search(broken, seed=0, backend="cpu")).run(iterations=1)


def test_hill_climbing_checks_each_restart_solution(broken):
    """HillClimbing's restarts draw from initial_solution() too, and refuse a bad one by name."""
    start = np.random.default_rng(0).permutation(30)
    with pytest.raises(ValueError, match=r"broken30: initial_solution\(\)"):
        HillClimbing(broken, initial=start, restarts=1, seed=0, backend="cpu").run(iterations=100_000)
    assert HillClimbing(broken, initial=start, seed=0, backend="cpu").run(iterations=100_000).status == "local_optimum"


def test_every_population_search_is_an_island_method_with_its_exchange_period():
    """Every population search is an island method with its exchange period."""
    from lsmgpu.search import PopulationSearch, searches_of
    assert {name: cls.island_exchange_every for name, cls in searches_of(PopulationSearch).items()} == {
        "acs": 10, "mmas": 10, "ga": 10, "dontlook-ils": 50, "faco": 100, "segments": 1}


@pytest.mark.parametrize("algorithm", ["mmas", "ga"])
def test_the_command_starts_a_colony_or_the_ga_from_a_given_tour(algorithm, tmp_path, capsys):
    """--initial FILE starts a colony (its best so far) or the GA (its first gene) from the tour."""
    tsp = TSP.from_file(TSP.shipped("berlin52"))
    start = np.random.default_rng(2).permutation(52)
    path = tmp_path / "start.tour"
    tsp.write_solution(start, path)
    assert main(["solve", "berlin52", "--algorithm", algorithm, "--initial", str(path), "--iterations", "0",
                 "--backend", "cpu", "--quiet"]) == 0
    assert f"best fitness: {tsp.fitness(start)}" in capsys.readouterr().out
