"""Graph colouring: DIMACS files, TabuCol's delta, the reactive tenure."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsmgpu import TabuSearch
from lsmgpu.problems import GraphColoring
from lsmgpu.problems.coloring import random_graph, read_dimacs
from tests.checks import assert_delta_is_reevaluation, assert_file_rejected


@given(st.integers(2, 25), st.integers(2, 5), st.floats(0.05, 0.9), st.integers(0, 10_000))
def test_delta_equals_full_reevaluation(n, k, density, seed):
    """gamma[v, c'] - gamma[v, c] == conflicts(after) - conflicts(before) for every recolouring."""
    problem = GraphColoring(n, random_graph(n, density, seed), k)
    assert_delta_is_reevaluation(problem, problem.encoding.random(np.random.default_rng(seed)))


def test_tabucol_colours_a_planted_graph():
    """Tabu search with TabuCol's tenure finds a proper 4-colouring of a planted 4-colourable graph."""
    problem = GraphColoring(80, random_graph(80, 0.3, 0, planted_colors=4), 4)
    result = TabuSearch(problem, seed=0, backend="cpu").run(5000, target=0)
    assert result.fitness == 0 and problem.evaluate(result.solution) == 0
    e = problem.edges
    assert np.all(result.solution[e[:, 0]] != result.solution[e[:, 1]])


def test_dimacs_reader(tmp_path):
    """A DIMACS file gives 0-based edges; loops and repeated edges are dropped by the problem."""
    path = tmp_path / "g.col"
    path.write_text("c a triangle and a pendant\np edge 4 5\ne 1 2\ne 2 3\ne 3 1\ne 3 4\ne 2 1\n")
    n, edges = read_dimacs(path)
    assert n == 4 and edges.tolist() == [[0, 1], [1, 2], [2, 0], [2, 3], [1, 0]]
    problem = GraphColoring.from_file(path, k=3)
    assert len(problem.edges) == 4 and problem.name == "g"
    assert problem.evaluate(np.array([0, 1, 2, 0])) == 0


@pytest.mark.parametrize("text,message", [
    ("e 1 2\n", "no 'p edge"),
    ("p edge 3 1\ne 1 x\n", "line 2"),
    ("p edge 3 1\ne 1 4\n", "outside vertices"),
    ("p edge 3\n", "line 1"),
])
def test_bad_dimacs_files(tmp_path, text, message):
    """Malformed DIMACS files raise ValueError naming the line or the fault."""
    assert_file_rejected(tmp_path, read_dimacs, "bad.col", text, message)


def test_bad_arguments():
    """Fewer than two colours and an edge to a vertex that does not exist are refused, naming them."""
    with pytest.raises(ValueError, match="`k`"):
        GraphColoring(5, [(0, 1)], 1)
    with pytest.raises(ValueError, match="vertices 0..4"):
        GraphColoring(5, [(0, 7)], 3)


def test_tenure_function_is_checked():
    """A tenure function returning a negative value is an error naming it."""
    problem = GraphColoring(10, random_graph(10, 0.5, 1), 3)
    with pytest.raises(ValueError, match="tenure function"):
        TabuSearch(problem, tenure=lambda fitness, rng: -1, backend="cpu").run(3)


def test_gamma_state_matches_definition(rng):
    """solution_data's gamma counts, for each vertex and colour, the neighbours of that colour."""
    problem = GraphColoring(30, random_graph(30, 0.3, 2), 4)
    x = problem.encoding.random(rng)
    gamma = problem.solution_data(x)["gamma"].reshape(30, 4)
    for v in range(30):
        nbrs = problem.neighbours[problem.offsets[v]:problem.offsets[v + 1]]
        assert np.array_equal(gamma[v], np.bincount(x[nbrs], minlength=4))
