"""The one-to-two and one-to-three index mappings."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lsmgpu.mappings import (index_to_pair, index_to_triple, pair_count, pair_to_index,
                             triple_count, triple_to_index)


def test_pair_mapping_is_a_bijection_for_every_n_up_to_200():
    """index -> (i, j) -> index is the identity and covers every pair i < j exactly once."""
    for n in range(2, 201):
        index = np.arange(pair_count(n))
        i, j = index_to_pair(index, n)
        assert np.all((0 <= i) & (i < j) & (j < n))
        assert np.array_equal(pair_to_index(i, j, n), index)
        assert len(set(zip(i.tolist(), j.tolist()))) == pair_count(n)


def test_pair_mapping_follows_luong_formula_order():
    """Pairs are numbered row by row: f(i, j) = i(n-1) + (j-1) - i(i+1)/2."""
    n = 7
    expected = [(i, j) for i in range(n) for j in range(i + 1, n)]
    i, j = index_to_pair(np.arange(pair_count(n)), n)
    assert list(zip(i.tolist(), j.tolist())) == expected


def test_triple_mapping_is_a_lexicographic_bijection():
    """index -> (i, j, k) -> index is the identity, in lexicographic order, for n <= 120 and 200."""
    for n in list(range(3, 121)) + [200]:
        index = np.arange(triple_count(n))
        i, j, k = index_to_triple(index, n)
        assert np.all((0 <= i) & (i < j) & (j < k) & (k < n))
        assert np.array_equal(triple_to_index(i, j, k, n), index)
        assert np.all(np.diff((i * n + j) * n + k) > 0)


@given(st.integers(2, 100_000), st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=50))
def test_pair_mapping_exact_for_large_n(n, fractions):
    """Random indices (and both ends) invert exactly up to n = 100,000, where a float root is off."""
    m = pair_count(n)
    index = np.array([int(f * m) for f in fractions] + [0, m - 1], dtype=np.int64)
    i, j = index_to_pair(index, n)
    assert np.all((0 <= i) & (i < j) & (j < n))
    assert np.array_equal(pair_to_index(i, j, n), index)


@given(st.integers(3, 100_000), st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=50))
def test_triple_mapping_exact_for_large_n(n, fractions):
    """Random triple indices invert exactly up to n = 100,000 (C(n,3) ~ 1.7e14)."""
    m = triple_count(n)
    index = np.array([int(f * m) for f in fractions] + [0, m - 1], dtype=np.int64)
    i, j, k = index_to_triple(index, n)
    assert np.all((0 <= i) & (i < j) & (j < k) & (k < n))
    assert np.array_equal(triple_to_index(i, j, k, n), index)


def test_row_boundaries_at_n_100000():
    """Every row start and end at n = 100,000 maps back exactly (where roots are most fragile)."""
    n = 100_000
    i = np.arange(n - 1, dtype=np.int64)
    first, last = pair_to_index(i, i + 1, n), pair_to_index(i, np.full_like(i, n - 1), n)
    for index in (first, last):
        a, b = index_to_pair(index, n)
        assert np.array_equal(pair_to_index(a, b, n), index)
