"""`candidates="alpha"` in the searches that take candidate lists, and the command's lower bound:
the α-lists reach the descents and the ants, the ascent runs inside the run's time budget, and
the CLI prints the gap to the Held-Karp bound where no optimum is known."""
import numpy as np
import pytest

from lsmgpu.cli import main
from lsmgpu.problems import QAP, TSP
from lsmgpu.search import AntColonySystem, DontLookILS, FocusedACO, MaxMinAntSystem


def kroA100() -> TSP:
    return TSP.from_file(TSP.shipped("kroA100"))


@pytest.mark.parametrize("search, options, iterations",
                         [(DontLookILS, {}, 50), (FocusedACO, {"ants": 8}, 20)])
def test_descents_use_the_alpha_lists(search, options, iterations):
    """The descent's rules hold the problem's 5 α-nearest, and a seeded run on them reaches a
    tour at most 1 % above kroA100's optimum (50 kicks of the chain: after 20, one seed in ten
    still sits at 1.08 %)."""
    problem = kroA100()
    s = search(problem, candidates="alpha", backend="cpu", seed=3, **options)
    result = s.run(iterations)
    assert np.array_equal(s.rules.candidates, problem.candidate_lists(5, "alpha"))
    assert sorted(result.solution) == list(range(problem.n))
    assert result.fitness == problem.evaluate(result.solution) <= 1.01 * problem.best_known


@pytest.mark.parametrize("colony", [AntColonySystem, MaxMinAntSystem])
def test_colonies_build_from_the_alpha_lists(colony):
    """A colony given candidates="alpha" builds its tours over the 5 α-nearest."""
    problem = kroA100()
    s = colony(problem, candidates="alpha", backend="cpu", seed=0, local_search=None)
    result = s.run(3)
    assert np.array_equal(s.model.candidates, problem.candidate_lists(5, "alpha"))
    assert result.fitness == problem.evaluate(result.solution)


def test_the_ascent_counts_inside_the_seconds(monkeypatch):
    """Making the search does not run the ascent; the run does, inside its budget's deadline
    scope; a budget that ends inside the ascent (made to end at its third iteration, whatever
    the machine's speed) returns the start tour with status "seconds", not a traceback."""
    import lsmgpu.problems.alpha as alpha
    from lsmgpu.budget import DeadlineReached, time_left
    rng = np.random.default_rng(0)
    problem = TSP(rng.integers(0, 10**6, size=(6000, 2)).astype(float), name="uniform6000")
    search = DontLookILS(problem, candidates="alpha", backend="cpu", seed=0)
    assert problem._ascent is None
    looks = []

    def deadline_at_the_third_look(before):
        looks.append(time_left())
        if len(looks) == 3:
            raise DeadlineReached(f"the time budget ended before {before}")

    monkeypatch.setattr(alpha, "check_deadline", deadline_at_the_third_look)
    result = search.run(seconds=3600)
    assert len(looks) == 3 and all(left is not None and 0 < left <= 3600 for left in looks)
    assert problem._ascent is None                   # cut inside the ascent
    assert result.status == "seconds" and sorted(result.solution) == list(range(problem.n))
    assert result.fitness == problem.evaluate(result.solution)


def test_bad_candidates_are_refused_at_construction():
    """A misspelt candidates kind is refused when the search is made; a QAP refuses "alpha"."""
    with pytest.raises(ValueError, match="alpha"):
        FocusedACO(kroA100(), candidates="alfa", backend="cpu")
    with pytest.raises(ValueError, match="'alpha'"):
        MaxMinAntSystem(kroA100(), candidates="nearest", backend="cpu")
    with pytest.raises(ValueError, match="α-nearness"):
        QAP.from_file(QAP.shipped("nug12")).candidate_lists(5, "alpha")


def test_cli_prints_the_gap_to_the_lower_bound_without_an_optimum(tmp_path, capsys):
    """An instance without a known optimum gets the gap to its Held-Karp bound; one with an
    optimum gets the gap to it; --candidates alpha runs the don't-look ILS over the α-lists."""
    text = TSP.shipped("kroA100").read_text().replace("NAME: kroA100", "NAME: mine")
    path = tmp_path / "mine.tsp"
    path.write_text(text)
    assert main(["solve", str(path), "--algorithm", "dontlook-ils", "--candidates", "alpha", "--iterations", "5",
                 "--backend", "cpu", "--quiet"]) == 0
    printed = capsys.readouterr()
    bound = TSP.from_file(path).lower_bound()
    assert f"gap to lower bound {bound}:" in printed.out and "gap to best known" not in printed.out
    assert "candidates alpha" in printed.err
    assert main(["solve", "kroA100", "--iterations", "5", "--backend", "cpu", "--quiet"]) == 0
    assert "gap to lower bound" not in capsys.readouterr().out


def test_the_cli_bounds_more_cities_where_a_gpu_answers(tmp_path, capsys, monkeypatch):
    """The report's lower bound is left out above BOUND_CITIES cities without a GPU, and given up
    to BOUND_CITIES_GPU where one answers (its spanning trees there)."""
    import lsmgpu.cli as cli
    path = tmp_path / "mine.tsp"
    path.write_text(TSP.shipped("kroA100").read_text().replace("NAME: kroA100", "NAME: mine"))
    monkeypatch.setattr(cli, "BOUND_CITIES", 99)
    monkeypatch.setattr(cli, "BOUND_CITIES_GPU", 100)
    for gpu, printed in ((False, False), (True, True)):
        monkeypatch.setattr(cli, "cuda_available", lambda gpu=gpu: (gpu, "a test GPU" if gpu else "no GPU"))
        assert main(["solve", str(path), "--iterations", "2", "--backend", "cpu", "--quiet"]) == 0
        assert ("gap to lower bound" in capsys.readouterr().out) == printed


def test_cli_refuses_candidates_for_the_engine_searches(capsys):
    """--candidates goes with the colonies and the don't-look searches only."""
    assert main(["solve", "kroA100", "--algorithm", "tabu", "--candidates", "alpha", "--iterations", "5"]) == 2
    assert "--candidates applies to" in capsys.readouterr().err
