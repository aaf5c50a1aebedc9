"""Partition crossover: every child is one tour made of its parents' edges, as long as its first
parent less the gain it reports; it takes the better parent in each separate part (GPX's
components and 2-opt moves alike), so tours improved in different places merge into the sum of
their improvements; and the don't-look ILS merges its chains with it at an exchange."""
import time

import numpy as np
import pytest

from lsmgpu import DontLookILS
from lsmgpu.problems import TSP
from lsmgpu.search import partition
from lsmgpu.search.dontlook_ils import default_merge
from lsmgpu.search.partition import merge_tours, partition_crossover


def points(n, seed):
    xy = np.random.default_rng(seed).uniform(0, 1000, (n, 2))

    def between(u, v):
        return np.rint(np.hypot(*(xy[u] - xy[v]).T)).astype(np.int64)
    return between


def length(between, tour):
    return int(between(tour, np.roll(tour, -1)).sum())


def edges(tour):
    return {frozenset(e) for e in zip(tour.tolist(), np.roll(tour, -1).tolist())}


def perturbed(rng, tour, moves):
    """``tour`` after random reversals, segment swaps and rotations (the same cycle rotated)."""
    tour, n = tour.copy(), len(tour)
    for _ in range(moves):
        i, j = sorted(rng.choice(n, 2, replace=False))
        kind = rng.integers(3)
        if kind == 0:
            tour[i:j + 1] = tour[i:j + 1][::-1]
        elif kind == 1:
            k = rng.integers(i, j + 1)
            tour[i:j + 1] = np.r_[tour[k:j + 1], tour[i:k]]
        else:
            tour = np.roll(tour, rng.integers(n))
    return tour


def test_every_child_is_one_tour_of_its_parents_edges(monkeypatch):
    """2,000 random pairs from a common tour (some reversed): the child is a permutation whose
    edges are A's or B's, its length is A's less the gain; the rebuild from the components that
    pair their portals alike (interleaved 2-opt moves) is reached and also makes tours."""
    builds, build = [], partition._build
    monkeypatch.setattr(partition, "_build", lambda pair, take: builds.append(build(pair, take)) or builds[-1])
    rng, improved = np.random.default_rng(1), 0
    for trial in range(2000):
        n = int(rng.integers(8, 70))
        between = points(n, trial)
        base = rng.permutation(n)
        a, b = perturbed(rng, base, rng.integers(0, 4)), perturbed(rng, base, rng.integers(0, 4))
        if trial % 3 == 0:
            b = b[::-1]
        child, gain = partition_crossover(a, b, between)
        assert sorted(child.tolist()) == list(range(n))
        assert edges(child) <= edges(a) | edges(b)
        assert gain >= 0 and length(between, child) == length(between, a) - gain
        improved += gain > 0
    assert improved > 500
    assert any(child is None for child in builds) and sum(child is not None for child in builds) > 500


def test_it_takes_the_better_parent_in_each_part():
    """A and B differ by one 2-opt move in each of two far apart places, A better in the first,
    B in the second: the child is better than both, by exactly B's better place."""
    n = 60
    between = points(n, 3)
    base = np.arange(n)
    # find, in two windows, a reversal that shortens the base tour
    found = []
    for lo in (2, 32):
        moves = [(i, j) for i in range(lo, lo + 20) for j in range(i + 2, lo + 24)]
        gains = [length(between, base) - length(between, np.r_[base[:i], base[i:j + 1][::-1], base[j + 1:]])
                 for i, j in moves]
        found.append((moves[int(np.argmax(gains))], max(gains)))
    assert all(g > 0 for _, g in found)
    (i1, j1), g1 = found[0]
    (i2, j2), g2 = found[1]
    a = np.r_[base[:i1], base[i1:j1 + 1][::-1], base[j1 + 1:]]
    b = np.r_[base[:i2], base[i2:j2 + 1][::-1], base[j2 + 1:]]
    child, gain = partition_crossover(a, b, between)
    assert gain == g2 and length(between, child) == length(between, base) - g1 - g2


def test_a_shorter_double_bridge_is_taken_by_fusing_its_two_halves():
    """B is A after a double bridge: its two places make no tour alone, only together (fused):
    the child is the shorter of the two tours, every time, in either order; a double bridge
    beside a separate 2-opt move that A does better keeps A's move."""
    rng, taken = np.random.default_rng(7), 0
    for trial in range(300):
        n = int(rng.integers(12, 90))
        between = points(n, 1000 + trial)
        a = rng.permutation(n)
        i, j, k, m = sorted(rng.choice(np.arange(2, n - 1), 4, replace=False))
        b = np.r_[a[:i], a[k:m], a[j:k], a[i:j], a[m:]]           # a double bridge: two places of k 2
        for first, second in ((a, b), (b, a)):
            child, gain = partition_crossover(first, second, between)
            assert length(between, child) == min(length(between, first), length(between, second))
            assert gain == length(between, first) - length(between, child)
            taken += gain > 0
    assert taken >= 290
    n = 80
    between = points(n, 11)
    base = np.arange(n)
    moves = [(i, j) for i in range(50, 70) for j in range(i + 2, 76)]
    i2, j2 = max(moves, key=lambda m: length(between, base) - length(between, np.r_[base[:m[0]], base[m[0]:m[1] + 1][::-1],
                                                                                     base[m[1] + 1:]]))
    better = np.r_[base[:i2], base[i2:j2 + 1][::-1], base[j2 + 1:]]
    assert length(between, better) < length(between, base)
    bridged = np.r_[base[:5], base[30:40], base[15:30], base[5:15], base[40:]]
    a, b = (better, bridged) if length(between, bridged) < length(between, base) else (bridged[::-1], better)
    child, gain = partition_crossover(a, b, between)
    assert length(between, child) == min(length(between, bridged), length(between, base)) \
        - (length(between, base) - length(between, better))


def test_fusing_never_makes_a_child_longer(monkeypatch):
    """Over 1,500 random pairs from a common tour (moves, segment exchanges and double bridges): the
    child with fusion is never longer than the child of each place alone (fusion switched off),
    and shorter in some."""
    rng, cases = np.random.default_rng(4), []
    for trial in range(1500):
        n = int(rng.integers(10, 80))
        base = rng.permutation(n)
        a, b = perturbed(rng, base, rng.integers(0, 3)), perturbed(rng, base, rng.integers(1, 4))
        i, j, k, m = sorted(rng.choice(np.arange(1, n), 4, replace=False))
        b = np.r_[b[:i], b[k:m], b[j:k], b[i:j], b[m:]] if trial % 2 else b
        cases.append((a, b, points(n, 5000 + trial)))
    fused = [length(between, partition_crossover(a, b, between)[0]) for a, b, between in cases]
    monkeypatch.setattr(partition._Pair, "fuse", lambda pair, gain, alone: np.arange(len(pair.a)))
    alone = [length(between, partition_crossover(a, b, between)[0]) for a, b, between in cases]
    assert all(f <= s for f, s in zip(fused, alone))
    assert sum(f < s for f, s in zip(fused, alone)) > 50


def random_matching(rng, m):
    """A perfect matching of nodes 0 .. m-1 (m even): each node's partner."""
    order = rng.permutation(m).reshape(-1, 2)
    partner = np.empty(m, dtype=np.int64)
    partner[order[:, 0]], partner[order[:, 1]] = order[:, 1], order[:, 0]
    return partner


def test_cycle_least_is_the_least_value_on_each_cycle_of_two_matchings():
    """Two random perfect matchings (some sharing edges, so 2-cycles): each node's result is the
    least value met walking its cycle, one matching's edge and the other's in turn."""
    rng = np.random.default_rng(3)
    for trial in range(300):
        m = 2 * int(rng.integers(1, 60))
        first = random_matching(rng, m)
        second = first.copy() if trial % 10 == 0 else random_matching(rng, m)
        value = rng.integers(0, 1000, m)
        want = []
        for start in range(m):
            node, seen = start, [start]
            while True:
                node = first[second[node]]
                if node == start:
                    break
                seen.append(node)
            want.append(value[seen + [second[i] for i in seen]].min())
        assert partition._cycle_least(value, first, second).tolist() == want


def test_tours_sharing_no_edge_give_the_shorter():
    """Tours sharing no edge give the shorter."""
    between = points(9, 4)
    a = np.arange(9)
    b = (np.arange(9) * 2) % 9                     # 0 2 4 6 8 1 3 5 7: no edge of a
    assert not edges(a) & edges(b)
    child, gain = partition_crossover(a, b, between)
    shorter = min((a, b), key=lambda t: length(between, t))
    assert np.array_equal(child, shorter) and gain == length(between, a) - length(between, shorter)


def test_merging_tours_improved_in_different_places_sums_the_improvements():
    """Eight copies of a poor tour, each improved by its best reversal inside its own window of
    25 positions: merged, the improvements add up exactly, whatever the order."""
    n = 220
    between = points(n, 5)
    base = np.random.default_rng(5).permutation(n)
    tours, total = [], 0
    for w in range(8):
        lo = 2 + 27 * w
        best = max(((i, j) for i in range(lo, lo + 22) for j in range(i + 2, lo + 25)),
                   key=lambda m: length(between, base) - length(between, np.r_[base[:m[0]], base[m[0]:m[1] + 1][::-1],
                                                                                base[m[1] + 1:]]))
        tour = np.r_[base[:best[0]], base[best[0]:best[1] + 1][::-1], base[best[1] + 1:]]
        total += length(between, base) - length(between, tour)
        tours.append(tour)
    assert total > 0
    for order in (range(8), range(7, -1, -1)):
        first = tours[list(order)[0]]
        merged, gain = merge_tours([tours[k] for k in order], between)
        assert length(between, merged) == length(between, base) - total
        assert gain == length(between, first) - length(between, merged)


def test_the_ils_merges_its_chains_at_exchanges():
    """With merging the exchanges give the worst chain merged tours (reproducibly; the result is
    a tour of its length); ``merge=0`` never merges; a negative count is refused."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = []
    for merge in (8, 8, 0):
        search = DontLookILS(problem, chains=8, backend="cpu", seed=1, exchange_every=2, round_checks=100, merge=merge)
        runs.append((search.run(iterations=40), search.merged))
    (first, merged), (second, again), (_, none) = runs
    assert merged > 0 and merged == again and none == 0
    assert np.array_equal(first.solution, second.solution) and problem.fitness(first.solution) == first.fitness
    with pytest.raises(ValueError, match="merge"):
        DontLookILS(problem, backend="cpu", merge=-1)


def test_bad_tours_are_named():
    """Bad tours are named."""
    between = points(10, 0)
    for a, b, match in ((np.arange(10), np.arange(9), "10 and 9 cities"), (np.r_[0, np.arange(9)], np.arange(10), "A"),
                        (np.arange(10), np.arange(10.0), "B"), (np.arange(2), np.arange(2), "n >= 3")):
        with pytest.raises(ValueError, match=match):
            partition_crossover(a, b, between)


def test_merging_is_on_by_default_from_15000_cities_with_64_tours_from_25000_to_50000():
    """Merging is on by default from 15,000 cities (32 tours), with 64 tours from 25,000 and 32 again from
    50,000; a given `merge` wins."""
    sizes = (14999, 15000, 24999, 25000, 49999, 50000, 10**6)
    assert [default_merge(n) for n in sizes] == [0, 32, 32, 64, 64, 32, 32]
    small, large = (TSP(np.random.default_rng(n).uniform(0, 10**4, (n, 2)), name=f"r{n}") for n in (14999, 15000))
    assert DontLookILS(small, backend="cpu").merge == 0
    assert DontLookILS(large, backend="cpu").merge == 32
    assert DontLookILS(small, backend="cpu", merge=4).merge == 4


def test_waiting_for_a_merge_never_passes_the_seconds(monkeypatch):
    """A merge slower than the budget is dropped at the deadline, not waited for; with an
    iteration budget every merge is waited for (reproducible runs)."""
    problem = TSP.from_file(TSP.shipped("kroA100"))

    def slow(tours, between):
        time.sleep(3.0)
        return tours[0], 1.0

    monkeypatch.setattr(partition, "merge_tours", slow)
    search = DontLookILS(problem, chains=4, backend="cpu", seed=1, exchange_every=1, round_checks=50, merge=4)
    result = search.run(seconds=1.0)
    assert result.status == "seconds" and search.merged == 0 and search.rounds > 1
    started = []
    monkeypatch.setattr(partition, "merge_tours", lambda tours, between: started.append(1) or (tours[0][::-1], 1.0))
    search = DontLookILS(problem, chains=4, backend="cpu", seed=1, exchange_every=1, round_checks=50, merge=4)
    search.run(iterations=20)
    # each merge is taken at the next exchange: all but the last (which may or may not have run)
    assert search.merged > 3 and len(started) in (search.merged, search.merged + 1)
