"""Weierstrass: both forms, both precisions, the crowns search."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmgpu import HillClimbing
from lsmgpu.problems import Weierstrass


def textbook(x, form, shift, terms):
    """W of one point written out term by term, in float64, independently of the problem's code:
    Luong: sum_k sum_{i=1..terms} 2^(-i/4) sin(2^i x_k); CEC 2005 (F11): with z = x - shift,
    sum_k sum_{i=0..terms-1} 0.5^i cos(2 pi 3^i (z_k + 0.5)) - n sum_i 0.5^i cos(pi 3^i)."""
    if form == "luong":
        return sum(2.0 ** (-0.25 * i) * math.sin(2.0 ** i * v) for v in x for i in range(1, terms + 1))
    z = np.asarray(x) - shift
    value = sum(0.5 ** i * math.cos(2 * math.pi * 3.0 ** i * (v + 0.5)) for v in z for i in range(terms))
    return value - len(z) * sum(0.5 ** i * math.cos(math.pi * 3.0 ** i) for i in range(terms))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.sampled_from(["luong", "cec"]), st.sampled_from(["float32", "float64"]),
       st.integers(0, 1000))
def test_delta_equals_the_textbook_difference(n, form, precision, seed):
    """The delta of every crowns neighbour equals W(neighbour) - W(x) with W written out in the
    test: to rounding in float64; to 1e-3 per coordinate in float32 (12 terms: single precision
    rounds each argument, see test_float32_is_single_precision)."""
    terms = 12 if precision == "float32" else (100 if form == "luong" else 21)
    problem = Weierstrass(n, form=form, precision=precision, m=50, seed=seed, terms=terms)
    x = problem.encoding.random(np.random.default_rng(seed))
    points = problem.neighbourhood.moves(x, np.arange(50), step=seed)
    deltas = problem.delta(x, points)
    expected = np.array([textbook(p, form, problem.shift, terms) - textbook(x, form, problem.shift, terms)
                         for p in points])
    tolerance = 1e-9 if precision == "float64" else 1e-3 * n
    assert np.allclose(deltas, expected, rtol=0, atol=tolerance)


def test_the_formulas():
    """W written out term by term (Luong: sum b^-ih sin(b^i x)); the CEC form is 0 at its shift
    and positive elsewhere."""
    problem = Weierstrass(2, h=0.25, b=2.0, terms=100)
    x = np.array([0.3, -0.7])
    i = np.arange(1, 101)
    expected = sum(np.sum(2.0 ** (-i * 0.25) * np.sin(2.0 ** i * v)) for v in x)
    assert np.isclose(problem.evaluate(x), expected, rtol=1e-12)
    cec = Weierstrass(5, form="cec", shift_seed=3)
    assert abs(cec.evaluate(cec.shift)) < 1e-12 and cec.best_known == 0
    assert cec.evaluate(cec.shift + 0.01) > 0
    assert np.all(np.abs(cec.shift) <= 0.8)


@pytest.mark.parametrize("form", ["luong", "cec"])
def test_hill_climbing_improves_and_stays_in_the_box(form):
    """A crowns hill climb improves on its random start and never leaves [-1, 1]^n."""
    problem = Weierstrass(4, form=form, m=500)
    search = HillClimbing(problem, seed=1, backend="cpu")
    result = search.run(60)
    assert result.fitness < result.history[0]
    assert np.all(np.abs(result.solution) <= 1.0)
    assert np.isclose(result.fitness, result.history.min())


def test_float32_is_single_precision():
    """float32 evaluates in single precision: with frequencies up to 2^12, rounding x to a
    float moves each argument by less than 2^-12, so the two agree to about 1e-3, not exactly.
    (With the paper's 100 terms the high-frequency terms differ wholesale in single precision.)"""
    x = np.random.default_rng(0).uniform(-1, 1, 5)
    single, double = (Weierstrass(5, precision=p, terms=12) for p in ("float32", "float64"))
    assert single.evaluate(x) != double.evaluate(x)
    assert abs(single.evaluate(x) - double.evaluate(x)) < 1e-3


@pytest.mark.parametrize("options,message", [
    ({"h": 1.0}, "`h`"), ({"h": 0.0}, "`h`"), ({"b": 1.0}, "`b`"), ({"terms": 0}, "`terms`"),
    ({"m": 3}, "`m`"), ({"precision": "half"}, "`precision`"), ({"form": "cec", "a": 1.5}, "`a`"),
    ({"form": "rastrigin"}, "`form`"), ({"b": 10.0, "terms": 400}, "overflows"),
])
def test_bad_parameters(options, message):
    """Each bad parameter of the Weierstrass function is refused with a message naming it."""
    with pytest.raises(ValueError, match=message):
        Weierstrass(5, **options)


def test_crowns_tabu_attributes_are_the_largest_step():
    """A crowns move adds (axis, direction) of its largest change from x, and forbids the step
    back along that axis: attributes recomputed here from their definition."""
    problem = Weierstrass(5, m=200)
    crowns = problem.neighbourhood
    rng = np.random.default_rng(4)
    x = rng.uniform(-0.5, 0.5, 5)
    points = crowns.moves(x, np.arange(200), step=3)
    added = crowns.added(x, points)
    assert added.shape == (200, 1, 2)
    for point, (axis, up) in zip(points, added[:, 0]):
        change = point - x
        assert abs(change[axis]) == np.abs(change).max()
        assert abs(change[:axis]).max(initial=-1) < abs(change[axis])     # the lowest axis on a tie
        assert up == (change[axis] > 0)
        assert crowns.removed(x, point).tolist() == [[axis, 1 - up]]
    assert crowns.tabu_shape() == (5, 2)


def test_tabu_search_on_crowns_never_steps_back_while_tabu():
    """Without aspiration, no move of a crowns tabu search adds an attribute that one of the
    moves of the last `tenure` iterations removed (the step back along its main axis)."""
    from lsmgpu import TabuSearch
    problem = Weierstrass(3, m=40)
    crowns = problem.neighbourhood
    points = []
    search = TabuSearch(problem, seed=1, backend="cpu", tenure=2, aspiration=False,
                        callbacks=[lambda state: points.append(np.array(state.move))])
    result = search.run(300)
    assert result.iterations == len(points) == 300
    removed = [None] + [crowns.removed(points[t - 1], points[t])[0].tolist() for t in range(1, 300)]
    steps_back = 0
    for t in range(2, 300):
        added = crowns.added(points[t - 1], points[t][None])[0, 0].tolist()
        assert added not in (removed[t - 1], removed[t - 2])
        steps_back += added == removed[t - 3] if t >= 3 else 0
    assert steps_back > 0                      # once the tenure is over, stepping back is allowed


def test_patience_on_a_drawn_neighbourhood():
    """On crowns a sample without an improving point is not yet a local optimum: the climb
    stops only after `patience` failed draws in a row (and every failed draw keeps the point)."""
    problem = Weierstrass(2, m=20)
    search = HillClimbing(problem, seed=0, backend="cpu", patience=4, history="all")
    result = search.run()
    assert result.status == "local_optimum" and search.patience == 4
    h = result.history
    assert np.all(h[-4:] == h[-1]) and result.iterations >= 4
    assert HillClimbing(problem, backend="cpu").patience == 10
    with pytest.raises(ValueError, match="patience"):
        HillClimbing(problem, patience=0)


def test_kick_redraws_strength_coordinates():
    """An ILS kick redraws exactly `strength` coordinates inside the box and leaves the point
    it was given alone; a strength outside [1, n] is refused."""
    problem = Weierstrass(6, form="cec", m=100)
    rng = np.random.default_rng(3)
    x = problem.initial_solution(rng)
    before = x.copy()
    for strength in (1, 3, 6):
        y = problem.perturb(x, rng, strength)
        assert np.count_nonzero(y != x) == strength
        assert np.all((y >= -1.0) & (y <= 1.0))
    assert np.array_equal(x, before)
    for strength in (0, 7, 1.5):
        with pytest.raises(ValueError, match="strength"):
            problem.perturb(x, rng, strength)


@pytest.mark.parametrize("patience", [1, 3])
def test_iterated_local_search_on_crowns(patience):
    """ILS runs on the crowns neighbourhood (kicks from `perturb`, a fresh draw per descent
    step): it improves on its first local optimum's value or keeps it, its reported fitness is
    its solution's, and its descents draw new neighbours (their step counter grows past the
    number of kicks)."""
    from lsmgpu import IteratedLocalSearch
    problem = Weierstrass(4, form="cec", m=300)
    search = IteratedLocalSearch(problem, seed=0, backend="cpu", patience=patience)
    result = search.run(30)
    assert result.iterations == 30
    assert np.all(np.diff(np.minimum.accumulate(result.history)) <= 0)
    assert result.fitness <= result.history[0]
    assert np.isclose(result.fitness, problem.evaluate(result.solution), rtol=0, atol=1e-12)
    assert search._draws >= 30 * patience
    with pytest.raises(ValueError, match="patience"):
        IteratedLocalSearch(problem, patience=0)
