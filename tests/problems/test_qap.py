"""QAP: QAPLIB files, the O(n) swap delta, Taillard's tabu search settings."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsmgpu import TabuSearch
from lsmgpu.problems import QAP
from lsmgpu.problems.qap import read_solution
from tests.checks import assert_delta_is_reevaluation, assert_file_rejected


@st.composite
def qap_and_solution(draw):
    n = draw(st.integers(4, 14))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    symmetric = draw(st.booleans())
    a, b = rng.integers(-20, 60, (n, n)), rng.integers(0, 90, (n, n))
    if symmetric:
        a, b = a + a.T, b + b.T
    return QAP(a, b), rng.permutation(n)


@given(qap_and_solution())
def test_delta_equals_full_reevaluation(case):
    """delta(p, swap) == cost(p after swap) - cost(p) for every swap, asymmetric matrices too."""
    qap, p = case
    assert_delta_is_reevaluation(qap, p)


def test_shipped_solutions_have_their_stated_cost(tai12a, nug12):
    """The QAPLIB .sln permutations evaluate to the values stated in them (checks a/b order)."""
    for qap in (tai12a, nug12):
        value, p = read_solution(QAP.shipped(qap.name).with_suffix(".sln"))
        assert qap.evaluate(p) == value == qap.best_known


@pytest.mark.parametrize("name", ["tai12a", "nug12"])
def test_tabu_search_reaches_optimum(name):
    """Robust tabu search from seed 0 reaches the QAPLIB optimum within 5,000 iterations."""
    qap = QAP.from_file(QAP.shipped(name))
    result = TabuSearch(qap, seed=0, backend="cpu").run(5000, target=qap.best_known)
    assert result.fitness == qap.best_known
    assert result.status == "target"
    assert qap.evaluate(result.solution) == result.fitness


def test_default_tenure_is_taillards(tai12a):
    """The default tenure range is [0.9 n, 1.1 n]."""
    assert TabuSearch(tai12a, backend="cpu").tenure == (10, 14)


@pytest.mark.parametrize("text,message", [
    ("4\n1 2 3 4\n", "truncated or wrong n"),
    ("3\n" + "1 " * 18, "n must be >= 4"),
    ("2\n1 2 x 4 1 2 3 4", "not a QAPLIB"),
    ("", "empty"),
])
def test_bad_files_raise_clear_errors(tmp_path, text, message):
    """Truncated, too small or garbled .dat files raise a ValueError that says what is wrong."""
    assert_file_rejected(tmp_path, QAP.from_file, "bad.dat", text, message)


def test_bad_matrices_raise():
    """Non-square or mismatched matrices are refused, naming the argument."""
    with pytest.raises(ValueError, match="`a` must be a square matrix, got shape"):
        QAP(np.ones((5, 4)), np.ones((5, 5)))
    with pytest.raises(ValueError, match="one shape"):
        QAP(np.ones((5, 5)), np.ones((6, 6)))
    with pytest.raises(ValueError, match="NaN"):
        QAP(np.full((5, 5), np.nan), np.ones((5, 5)))


def test_write_solution_roundtrip(tmp_path, tai12a):
    """write_solution writes a QAPLIB .sln that read_solution reads back."""
    p = np.random.default_rng(0).permutation(12)
    tai12a.write_solution(p, tmp_path / "x.sln")
    value, q = read_solution(tmp_path / "x.sln")
    assert value == tai12a.evaluate(p) and np.array_equal(p, q)


@given(qap_and_solution())
def test_three_exchange_delta_equals_full_reevaluation(case):
    """The 3-exchange (both rotations) delta equals the change of the full cost."""
    from lsmgpu import ThreeExchange
    qap, p = case
    assert_delta_is_reevaluation(qap.with_neighbourhood(ThreeExchange()), p)


def test_three_exchange_tabu_search_reaches_optimum():
    """A 3-cycle is an even permutation, so a 3-exchange search keeps its start's parity. From a
    start of the optimum's parity it reaches tai12a's optimum; from the other parity it cannot."""
    from lsmgpu import ThreeExchange
    qap = QAP.from_file(QAP.shipped("tai12a"))
    _, optimum = read_solution(QAP.shipped("tai12a").with_suffix(".sln"))

    def parity(p):
        return sum(int(a > b) for i, a in enumerate(p) for b in p[i + 1:]) % 2

    rng = np.random.default_rng(0)
    same = next(p for p in (rng.permutation(12) for _ in range(50)) if parity(p) == parity(optimum))
    other = next(p for p in (rng.permutation(12) for _ in range(50)) if parity(p) != parity(optimum))
    result = TabuSearch(qap, neighbourhood=ThreeExchange(), initial=same, seed=0, backend="cpu").run(
        5000, target=qap.best_known)
    assert result.fitness == qap.best_known
    stuck = TabuSearch(qap, neighbourhood=ThreeExchange(), initial=other, seed=0, backend="cpu").run(300)
    assert parity(stuck.solution) == parity(other) != parity(optimum)


def refresh_like_the_kernel(qap, old, p, table, r, s):
    """NumPy mirror of qap.cu.j2 for swap (r, s): apply_state's vectors from the old
    permutation ``old``, then refresh_state on the new one ``p``."""
    a, b, n = qap.a, qap.b, qap.n
    u, v = a[r] - a[s], b[old[r], old] - b[old[s], old]
    u2, v2 = a[:, r] - a[:, s], b[old, old[r]] - b[old, old[s]]
    moves = qap.neighbourhood.decode(np.arange(qap.neighbourhood.size, dtype=np.int64))
    i, j = moves[:, 0], moves[:, 1]
    meets = (i == r) | (i == s) | (j == r) | (j == s)
    half = (u[i] - u[j]) * (v[i] - v[j])
    update = 2 * half if qap.template_params()["symmetric"] else half + (u2[i] - u2[j]) * (v2[i] - v2[j])
    q = i * n + j
    table[q[~meets]] += update[~meets]
    table[q[meets]] = qap.delta(p, moves[meets])


@pytest.mark.parametrize("symmetric", [False, True])
def test_taillard_table_update_equals_fresh_deltas(symmetric):
    """The GPU's delta table (Taillard's O(1) update after each swap, O(n) for the entries that
    meet the swap) stays equal to the deltas computed afresh over 40 random swaps."""
    rng = np.random.default_rng(11)
    n = 23
    a, b = rng.integers(-5, 40, (n, n)), rng.integers(0, 50, (n, n))
    if symmetric:
        a, b = a + a.T, b + b.T
        np.fill_diagonal(a, 0), np.fill_diagonal(b, 0)
    qap = QAP(a, b, delta_table=True)
    assert qap.template_params()["symmetric"] == symmetric
    p = rng.permutation(n)
    table = qap.swap_delta_table(p)
    for _ in range(40):
        r, s = sorted(rng.choice(n, 2, replace=False))
        old = p.copy()
        p[[r, s]] = p[[s, r]]
        refresh_like_the_kernel(qap, old, p, table, r, s)
        assert np.array_equal(table, qap.swap_delta_table(p))


def test_delta_table_is_chosen_by_size_and_neighbourhood():
    """Auto: the table from TABLE_MIN_N facilities, swap only (one thread per move); the
    refresh covers every swap and a warp for each entry recomputed in O(n), in whole warps;
    a bad value is refused."""
    from lsmgpu import ThreeExchange
    rng = np.random.default_rng(0)
    big, small = (QAP(rng.integers(0, 9, (n, n)), rng.integers(0, 9, (n, n))) for n in (QAP.TABLE_MIN_N, 12))
    assert big.delta_table and big.lanes_per_move() == 1
    assert big.refresh_items() % 32 == 0 and big.refresh_items() >= big.n ** 2 + 2 * 32 * big.n
    assert not small.delta_table and small.solution_data(np.arange(12)) == {} and small.refresh_items() == 0
    assert not big.with_neighbourhood(ThreeExchange()).delta_table
    assert QAP(small.a, small.b, delta_table=True).delta_table
    with pytest.raises(ValueError, match="delta_table"):
        QAP(small.a, small.b, delta_table="yes")
