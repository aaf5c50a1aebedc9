"""The ILS's candidate lists sized by `candidates` (Fosin et al.'s GPU 2-opt/3-opt ILS used 40 per
city, lsmgpu's default 10): the neighbourhood and its polish over the same K quadrant neighbours."""
import numpy as np
import pytest

from lsmgpu import CandidateThreeOpt, IteratedLocalSearch, MultiStart, OrOpt
from lsmgpu.cli import main
from lsmgpu.problems import QAP, TSP
from lsmgpu.problems.candidates import quadrant_candidates


def test_candidates_size_the_default_ils_lists():
    """candidates=40: candidate 2-opt, Or-opt and candidate 3-opt over each city's 40 quadrant
    neighbours; the run improves its start; the default stays 10."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    search = IteratedLocalSearch(problem, candidates=40, seed=0, backend="cpu")
    table = quadrant_candidates(problem.coords, 40)
    assert np.array_equal(search.problem.neighbourhood.candidates, table)
    assert [type(step.neighbourhood) for step in search.polish] == [OrOpt, CandidateThreeOpt]
    assert all(np.array_equal(step.neighbourhood.candidates, table) for step in search.polish)
    result = search.run(iterations=20)
    assert result.fitness == problem.evaluate(result.solution) and problem.gap(result.fitness) < 0.02
    default = IteratedLocalSearch(problem, backend="cpu")
    assert default.problem.neighbourhood.candidates.shape == (100, 10)
    batched = MultiStart("ils", problem, starts=2, candidates=40, seed=0, backend="cpu").run(iterations=5)
    assert batched.fitness == problem.evaluate(batched.solution)


def test_candidates_are_refused_where_they_size_nothing():
    """With one's own neighbourhood, on a problem without candidate lists, or not a count: errors
    naming `candidates`."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    with pytest.raises(ValueError, match="`candidates` sizes the problem's default ILS lists"):
        IteratedLocalSearch(problem, candidates=20, polish=OrOpt(quadrant_candidates(problem.coords, 8)))
    with pytest.raises(ValueError, match="`candidates` applies to a problem whose default ILS"):
        IteratedLocalSearch(QAP.from_file(QAP.shipped("tai12a")), candidates=20, backend="cpu")
    with pytest.raises(ValueError, match="candidates"):
        IteratedLocalSearch(problem, candidates=0)


def test_the_command_sizes_the_ils_lists(capsys):
    """`lsmgpu solve --algorithm ils --candidates 40` runs the ILS over 40 candidates a city; with
    --polish too it is refused, naming `candidates` (not run with the polish silently dropped)."""
    assert main(["solve", "kroA100", "--algorithm", "ils", "--candidates", "40", "--iterations", "10",
                 "--backend", "cpu", "--quiet"]) == 0
    assert "best fitness:" in capsys.readouterr().out
    assert main(["solve", "kroA100", "--algorithm", "ils", "--candidates", "40", "--polish", "oropt",
                 "--iterations", "10", "--backend", "cpu", "--quiet"]) == 2
    assert "`candidates` sizes the problem's default ILS lists" in capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_ils_over_40_candidates_equals_the_cpus():
    """The ILS over 40 candidates a city follows the same trajectory on the GPU as on the CPU."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [IteratedLocalSearch(problem, candidates=40, seed=2, backend=b, history="all").run(iterations=30)
            for b in ("cpu", "cuda")]
    assert np.array_equal(runs[0].history, runs[1].history) and np.array_equal(runs[0].solution, runs[1].solution)
