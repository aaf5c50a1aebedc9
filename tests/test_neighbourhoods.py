"""Neighbourhoods: sizes, index <-> move, application and tabu attributes."""
import itertools

import numpy as np
import pytest

from lsmgpu import Binary, BitFlip, Crowns, Discrete, Permutation, Real, Swap, ThreeExchange, TwoOpt, ValueChange


def bound(neighbourhood, encoding):
    return neighbourhood.bind(encoding)


CASES = [
    (BitFlip(1), Binary(9)), (BitFlip(2), Binary(9)), (BitFlip(3), Binary(9)),
    (ValueChange(), Discrete(7, k=4)), (Swap(), Permutation(9)), (TwoOpt(), Permutation(9)),
    (ThreeExchange(), Permutation(8)),
]


def enumerated(nb) -> list[tuple]:
    """Every move of ``nb`` in index order, written out from each class's definition."""
    n = nb.n
    if isinstance(nb, BitFlip):
        return list(itertools.combinations(range(n), nb.distance))
    if isinstance(nb, ValueChange):
        return [(i, o) for i in range(n) for o in range(nb.encoding.k - 1)]
    if isinstance(nb, ThreeExchange):
        return [(*t, r) for t in itertools.combinations(range(n), 3) for r in (0, 1)]
    if isinstance(nb, TwoOpt):     # reversals x[i..j], 1 <= i < j <= n-1, but the null move (1, n-1)
        return [(i, j) for i in range(1, n) for j in range(i + 1, n) if (i, j) != (1, n - 1)]
    return list(itertools.combinations(range(n), 2))     # Swap


@pytest.mark.parametrize("neighbourhood,encoding", CASES, ids=lambda c: repr(c))
def test_decode_numbers_the_moves_as_defined(neighbourhood, encoding):
    """decode(0..size-1) lists exactly the moves of the class's definition, in their order."""
    nb = bound(neighbourhood, encoding)
    moves = nb.decode(np.arange(nb.size, dtype=np.int64))
    assert moves.shape == (nb.size, nb.arity)
    assert [tuple(m) for m in moves.tolist()] == enumerated(nb)


@pytest.mark.parametrize("neighbourhood,encoding", CASES, ids=lambda c: repr(c))
def test_every_move_gives_a_distinct_neighbour(neighbourhood, encoding, rng):
    """Each move changes the solution, and no two moves give the same neighbour."""
    nb = bound(neighbourhood, encoding)
    x = encoding.random(rng)
    seen = set()
    for move in nb.decode(np.arange(nb.size)):
        y = x.copy()
        nb.apply(y, move)
        encoding.validate(y)
        key = tuple(y.tolist())
        if isinstance(nb, TwoOpt):  # a tour and its reverse are one cycle
            key = min(key, (key[0],) + key[1:][::-1])
        assert not np.array_equal(x, y)
        seen.add(key)
    assert len(seen) == nb.size


def test_sizes():
    """Sizes are the paper's: C(n, d) flips, (k-1) n value changes, C(n,2) swaps, n(n-3)/2 2-opt moves."""
    assert bound(BitFlip(3), Binary(73)).size == 73 * 72 * 71 // 6
    assert bound(ValueChange(), Discrete(10, k=5)).size == 40
    assert bound(Swap(), Permutation(100)).size == 4950
    assert bound(TwoOpt(), Permutation(85900)).size == 85900 * 85897 // 2
    assert bound(ThreeExchange(), Permutation(10)).size == 2 * 120


def test_twoopt_enumerates_every_2opt_tour_once():
    """For n = 8, TwoOpt reaches exactly the n(n-3)/2 tours that differ from x in two edges."""
    n = 8
    nb = bound(TwoOpt(), Permutation(n))
    x = np.arange(n)

    def edges(t):
        return {frozenset((t[k], t[(k + 1) % n])) for k in range(n)}

    found = set()
    for move in nb.decode(np.arange(nb.size)):
        y = x.copy()
        nb.apply(y, move)
        assert len(edges(x) - edges(y)) == 2
        found.add(frozenset(edges(y)))
    assert len(found) == n * (n - 3) // 2


@pytest.mark.parametrize("neighbourhood,encoding", CASES, ids=lambda c: repr(c))
def test_tabu_attributes_undo(neighbourhood, encoding, rng):
    """The attributes a move removes are exactly those its undoing move would add back."""
    nb = bound(neighbourhood, encoding)
    x = encoding.random(rng)
    for move in nb.decode(rng.integers(0, nb.size, 20)):
        y = x.copy()
        nb.apply(y, move)
        undo = next(m for m in nb.decode(np.arange(nb.size))
                    if np.array_equal(_applied(nb, y, m), x))
        removed = {tuple(a) for a in nb.removed(x, move).tolist()}
        added_back = {tuple(a) for a in nb.added(y, undo[None, :])[0].tolist()}
        assert removed == added_back


def _applied(nb, x, move):
    y = x.copy()
    nb.apply(y, move)
    return y


def test_bad_parameters_raise():
    """Impossible neighbourhood settings raise errors that name the parameter."""
    with pytest.raises(ValueError, match="distance"):
        BitFlip(4)
    with pytest.raises(ValueError, match="n >= 4"):
        TwoOpt().bind(Permutation(3))
    with pytest.raises(TypeError, match="Permutation"):
        TwoOpt().bind(Binary(10))
    with pytest.raises(ValueError, match="`m`"):
        Crowns(m=0)
    with pytest.raises(RuntimeError, match="bind"):
        _ = Swap().size


def test_crowns_rings_and_reproducibility():
    """Crowns neighbour q lies in ring q (radius in [q h, (q+1) h]) and depends only on (seed, step, q)."""
    nb = Crowns(m=50, seed=3).bind(Real(4, low=-10, high=10))
    x = np.zeros(4)
    points = nb.moves(x, np.arange(50), step=7)
    radius = np.linalg.norm(points - x, axis=1)
    h = nb.max_radius / 50
    q = np.arange(50)
    assert np.all(radius >= q * h - 1e-12) and np.all(radius <= (q + 1) * h + 1e-12)
    assert np.array_equal(points[10:20], nb.moves(x, np.arange(10, 20), step=7))
    assert not np.array_equal(points, nb.moves(x, np.arange(50), step=8))


def test_crowns_displacement_follows_its_definition():
    """The broadcast displacement equals the definition computed one number at a time (the
    order the GPU adds in): component d = u(4d) + u(4d+1) + u(4d+2) + u(4d+3) - 2, radius
    (q + u(4n)) h, bit for bit, for one neighbour and for many."""
    from lsmgpu.neighbourhoods import counter_uniform
    n, step = 5, 41
    nb = Crowns(m=300, seed=9).bind(Real(n))
    index = np.array([0, 7, 299])
    expected = []
    for q in index:
        u = [counter_uniform(9, step, q, draw) for draw in range(4 * n + 1)]
        v = np.array([((u[4 * d] + u[4 * d + 1]) + u[4 * d + 2]) + u[4 * d + 3] - 2.0 for d in range(n)])
        norm2 = 0.0
        for d in range(n):
            norm2 = norm2 + v[d] * v[d]
        expected.append(v / np.sqrt(norm2) * ((q + u[4 * n]) * nb.ring_width))
    assert np.array_equal(nb.displacement(index, step), np.array(expected))
    assert np.array_equal(nb.displacement(index[1:2], step), np.array(expected[1:2]))


def test_encodings_validate():
    """Encodings reject wrong shapes, NaN, out-of-range values and non-permutations by name."""
    with pytest.raises(ValueError, match="shape"):
        Permutation(5).validate([0, 1, 2])
    with pytest.raises(ValueError, match="not a permutation"):
        Permutation(3).validate([0, 0, 1])
    with pytest.raises(ValueError, match="NaN"):
        Real(2).validate([0.0, np.nan])
    with pytest.raises(ValueError, match=r"\[0, 3\]"):
        Discrete(3, k=4).validate([0, 4, 1])
    with pytest.raises(ValueError, match="`n`"):
        Binary(0)
    draws = np.stack([Binary(5).random(np.random.default_rng(s)) for s in range(20)])
    assert draws.shape == (20, 5) and set(np.unique(draws).tolist()) == {0, 1}


LARGE = [(BitFlip(3), Binary(300)), (Swap(), Permutation(100_000)), (TwoOpt(), Permutation(85_900)),
         (ThreeExchange(), Permutation(2_000))]


@pytest.mark.parametrize("neighbourhood,encoding", CASES + LARGE, ids=lambda c: repr(c))
def test_decode_one_equals_vector_decode(neighbourhood, encoding):
    """The scalar decoder of the per-iteration path agrees with the vectorised one, ends included."""
    nb = bound(neighbourhood, encoding)
    rng = np.random.default_rng(0)
    index = np.concatenate([[0, nb.size - 1], rng.integers(0, nb.size, 300)])
    vector = nb.decode(index)
    for k, move in zip(index, vector):
        assert np.array_equal(nb.decode_one(int(k)), move)
