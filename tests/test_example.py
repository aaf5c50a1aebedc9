"""The shipped example of a user's problem works as documented."""
import runpy
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import pytest

from lsmgpu import HillClimbing, TabuSearch
from lsmgpu.testing import check_delta, check_device

EXAMPLE = Path(__file__).parent.parent / "examples" / "maxcut.py"
maxcut = runpy.run_path(str(EXAMPLE))
MaxCut, random_graph = maxcut["MaxCut"], maxcut["random_graph"]


def test_example_is_short():
    """The whole user problem (class and helper) stays under 60 lines."""
    assert len(EXAMPLE.read_text().splitlines()) < 60


@given(st.integers(4, 30), st.integers(0, 1000))
def test_delta_equals_full_reevaluation(n, seed):
    """The example's delta equals the change of the full cut weight (lsmgpu.testing, as a user
    who adds a problem would check it)."""
    check_delta(MaxCut(random_graph(n, 0.5, seed)), solutions=2, seed=seed)


def test_the_check_names_the_move_that_disagrees():
    """lsmgpu.testing catches a wrong delta and says which move and by how much."""
    class Wrong(MaxCut):
        def delta(self, x, moves):
            d = super().delta(x, moves)
            d[moves[:, 0] == 3] += 1.0             # vertex 3's flip is off by one
            return d
    with pytest.raises(AssertionError, match=r"move 3 \[3\].*full re-evaluation gives"):
        check_delta(Wrong(random_graph(12, 0.5, 0)))


@pytest.mark.gpu
def test_the_example_kernel_agrees_with_its_numpy_delta():
    """lsmgpu.testing.check_device on the example, imported as a module from its file (its
    template is looked up beside that file)."""
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("maxcut_checked", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["maxcut_checked"] = module           # inspect finds the class's file through it
    spec.loader.exec_module(module)
    assert check_device(module.MaxCut(module.random_graph(300, 0.2, 0)), solutions=3)


def test_maximisation_improves_the_cut():
    """Tabu search maximises: the best cut beats the start and a 1-flip local optimum's."""
    problem = MaxCut(random_graph(60, 0.3, 1))
    hc = HillClimbing(problem, seed=0, backend="cpu").run()
    ts = TabuSearch(problem, seed=0, backend="cpu").run(500)
    assert ts.fitness >= hc.fitness > ts.history[0]
    assert np.isclose(ts.fitness, problem.evaluate(ts.solution))
    assert ts.fitness == max(ts.history)


def test_example_runs_as_a_script():
    """`python examples/maxcut.py` runs to the end."""
    import subprocess
    import sys
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "best fitness" in run.stdout


def test_large_tsp_example_reaches_the_optimum_and_writes_the_tour(tmp_path):
    """`python examples/large_tsp.py kroA100.tsp 30` (on the best backend here) stops at the
    optimum (21282), prints each improvement, and writes a TSPLIB tour of that length."""
    import subprocess
    import sys

    from lsmgpu.problems import TSP
    script = EXAMPLE.parent / "large_tsp.py"
    run = subprocess.run([sys.executable, str(script), str(TSP.shipped("kroA100")), "30"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "best fitness: 21,282" in run.stdout and "(target)" in run.stdout
    assert "% above the optimum" in run.stdout
    tour = (tmp_path / "kroA100.tour").read_text().split("TOUR_SECTION\n")[1].split("\n-1")[0].split()
    tsp = TSP.from_file(TSP.shipped("kroA100"))
    assert sorted(int(c) for c in tour) == list(range(1, 101))
    assert tsp.evaluate(np.array([int(c) - 1 for c in tour])) == 21282


def test_scheduling_example_reaches_smiths_optimum_with_the_colonies():
    """The colonies on a user's permutation problem that gives only its heuristic (no CUDA)."""
    from lsmgpu import AntColonySystem, MaxMinAntSystem, Swap
    scheduling = runpy.run_path(str(EXAMPLE.parent / "scheduling.py"))
    rng = np.random.default_rng(1)
    problem = scheduling["Scheduling"](rng.integers(1, 100, 25), rng.integers(1, 20, 25))
    optimum = problem.evaluate(np.argsort(np.argsort(-problem.w / problem.p)))
    for colony in (MaxMinAntSystem, AntColonySystem):
        result = colony(problem, local_search=Swap(), backend="cpu", seed=0).run(seconds=20, target=optimum)
        assert result.fitness == optimum
    plain = MaxMinAntSystem(problem, backend="cpu", seed=0).run(iterations=50)
    assert plain.fitness <= 1.05 * optimum                   # the heuristic alone guides the ants well


def test_the_readmes_python_example_runs_from_the_repository_alone(tmp_path, monkeypatch):
    """The README's Python block reads only shipped instances and runs as written (here on the CPU)."""
    import re
    import warnings
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = re.search(r"## Python API\n\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # backend="auto" without a GPU says so
        exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "kroA100.tour").is_file()
