"""Partition crossover of tours: the best of two (or many) tours, part by part (after Whitley,
Hains & Howe's GPX, 2009), in NumPy on the host.

Many chains of an iterated local search kicked from one tour improve it in different places; the
best chain keeps only its own improvements. Two tours A and B that share most of their edges
differ in separate places: remove the edges they share and the rest falls into connected
*components*. A component's *portals* are its cities with one shared edge; inside it, A's other
edges make paths that pair the portals, and so do B's. B's paths can replace A's where the
result is still one tour: walking A's paths' partners, then the partners along A's tour outside
the component (``outside``), then B's, ..., must visit every portal of the component in one cycle
(always so where B pairs the portals as A does: GPX's condition; a 2-opt move of B's pairs them
otherwise and passes too). The child takes B's paths in every such component where they are
shorter than A's, so it is at least as short as A, often shorter than both.

Components that pair the portals alike never change another's test; those that pair them
otherwise can, where their portals interleave along the tour: the child is then built again
from the alike ones alone (``_build`` finds out by walking the tour's pieces).

A component whose B paths do not make one tour alone may with another's (the two halves of a
double bridge; a place where B links the ends of seventy rows of cities otherwise than A does,
with a small place beside it): such components next to each other along A are *fused*, tested
as one and, where together they make one tour and are shorter, taken as one (after Tinós,
Whitley & Ochoa's GPX2, Evolutionary Computation 2020).
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as Late

import numpy as np

from ..backends.crossover import positions_of

__all__ = ["partition_crossover", "merge_tours", "BackgroundMerge"]


def _neighbours(tour: np.ndarray) -> np.ndarray:
    """(2, n): each city's neighbours in the tour, the one before it in row 0, after it in row 1
    (a row per side keeps the comparisons of two tours' neighbours on contiguous rows)."""
    neighbours = np.empty((2, len(tour)), dtype=np.int64)
    neighbours[0, tour[1:]], neighbours[0, tour[0]] = tour[:-1], tour[-1]
    neighbours[1, tour[:-1]], neighbours[1, tour[-1]] = tour[1:], tour[0]
    return neighbours


def _unshared(neighbours: np.ndarray, forward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(city, the city after it) of every edge of a tour that the other tour lacks, each once: as the
    edge forward from its city (``neighbours``: ``_neighbours``; ``forward``: per city, whether its
    edge forward is shared)."""
    city = np.flatnonzero(~forward)
    return city, neighbours[1, city]


def _labels(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Connected components of the graph on n cities with edges (u[i], v[i]): each city's label is
    the least city of its component (minimum hooking and pointer jumping, vectorised)."""
    label = np.arange(n)
    while True:
        lu, lv = label[u], label[v]
        apart = lu != lv
        if not apart.any():
            return label
        low = np.minimum(lu[apart], lv[apart])
        np.minimum.at(label, lu[apart], low)
        np.minimum.at(label, lv[apart], low)
        while True:
            jumped = label[label]
            if not (jumped != label).any():
                break
            label = jumped


def _labels_among(cities: np.ndarray, n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``_labels`` of a graph whose edges join only ``cities`` (sorted), worked out on those alone:
    a city's label is the least city of its component (the others label themselves)."""
    index = np.full(n, -1)
    index[cities] = np.arange(len(cities))
    label = np.arange(n)
    label[cities] = cities[_labels(len(cities), index[u], index[v])]
    return label


def _cycle_least(value: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """For a graph on nodes 0 .. m-1 whose edges are two perfect matchings (``first[i]``,
    ``second[i]``: node i's partner in each), so its components are cycles that take the two in
    turn: the least ``value`` on each node's cycle. Every other node of a cycle is one orbit of
    ``first[second[.]]``; the least over each orbit comes from windows doubled until they stop
    changing, and a node's cycle is its orbit and its ``second`` partner's."""
    step = first[second]
    least = value.copy()
    while True:
        doubled = np.minimum(least, least[step])
        if not (doubled < least).any():
            return np.minimum(least, least[second])
        least, step = doubled, step[step]


def _cyclic_neighbours(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For items sorted by ``group``: the indices of the previous and next item of the same group,
    cyclically."""
    index = np.arange(len(group))
    first = np.r_[True, group[1:] != group[:-1]]
    start = np.maximum.accumulate(np.where(first, index, 0))
    last = np.r_[group[1:] != group[:-1], True]
    end = np.minimum.accumulate(np.where(last, index, len(group))[::-1])[::-1]
    return np.where(first, end, index - 1), np.where(last, start, index + 1)


def _partners(ends: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """partner[p]: the portal at the other end of the path of a tour's unshared edges that leaves
    portal p (``ends``: the portals in the tour's order; ``forward``: per city, whether its edge
    forward is shared). The path runs along the tour, so the partner is the next portal along it
    where p's edge forward is unshared, else the portal before."""
    partner = np.full(len(forward), -1, dtype=np.int64)
    partner[ends] = np.where(forward[ends], np.roll(ends, 1), np.roll(ends, -1))
    return partner


class _Pair:
    """Two tours' shared edges, components, portals (in A's order) and the portals' partners."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b, n = a, b, len(a)
        self.pos_a, self.pos_b = positions_of(a), positions_of(b)
        na, nb = _neighbours(a), _neighbours(b)
        self.a_shared = (na == nb[0]) | (na == nb[1])      # per side and city
        self.b_forward = (nb[1] == na[0]) | (nb[1] == na[1])       # per city: B's edge forward shared
        self.a_edges, self.b_edges = _unshared(na, self.a_shared[1]), _unshared(nb, self.b_forward)
        differing = np.flatnonzero(~(self.a_shared[0] & self.a_shared[1]))
        self.component = _labels_among(differing, n, *(np.r_[x, y] for x, y in zip(self.a_edges, self.b_edges)))
        portal = self.a_shared[0] != self.a_shared[1]          # one shared edge
        self.portals = a[portal[a]]
        if len(self.portals):
            self.pair_a = _partners(self.portals, self.a_shared[1])
            self.pair_b = _partners(b[portal[b]], self.b_forward)

    def lengths(self, between) -> tuple[np.ndarray, np.ndarray]:
        """A's and B's edges inside each component (indexed by its label), summed."""
        sums = []
        for u, v in (self.a_edges, self.b_edges):
            sums.append(np.bincount(self.component[u], weights=between(u, v).astype(np.float64), minlength=len(self.a)))
        return sums[0], sums[1]

    def one_cycle(self) -> np.ndarray:
        """Per component label: whether B's paths with the tour outside make one cycle."""
        p = self.portals
        sorted_p = p[np.argsort(self.component[p], kind="stable")]      # by component, then along A
        before, after = _cyclic_neighbours(self.component[sorted_p])
        outside = np.where(self.pair_a[sorted_p] == sorted_p[before], after, before)     # as indices
        cycle = self._cycles(sorted_p, outside, sorted_p)
        low = np.full(len(self.a), len(self.a))
        high = np.full(len(self.a), -1)
        np.minimum.at(low, self.component[sorted_p], cycle)
        np.maximum.at(high, self.component[sorted_p], cycle)
        return low == high

    def group_one_cycle(self, portals: np.ndarray) -> bool:
        """Whether B's paths in the components of ``portals`` (all their portals) together, with the
        tour outside, make one cycle (``one_cycle`` of their union): every node's cycle has node 0."""
        p = portals[np.argsort(self.pos_a[portals])]  # the group's portals along A: p[i] is node i
        node = np.arange(len(p))
        before, after = node - 1, node + 1
        before[0], after[-1] = len(p) - 1, 0
        outside = np.where(self.pair_a[p] == p[before], after, before)
        return bool((self._cycles(p, outside, node) == 0).all())

    def _cycles(self, p: np.ndarray, outside: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Per portal of ``p``: the least ``value`` on its cycle of the tour outside (``outside``:
        each portal's partner there, as an index into p) and B's paths (``_cycle_least``)."""
        index = np.empty(len(self.a), dtype=np.int64)
        index[p] = np.arange(len(p))
        return _cycle_least(value, outside, index[self.pair_b[p]])

    def fuse(self, gain: np.ndarray, alone: np.ndarray) -> np.ndarray:
        """Fuse components that make no tour alone into groups that do and are shorter in B, each
        group then one component (one label): first two at a time, where they are next to each
        other along A (a portal of one follows a portal of the other among such components'
        portals), the best pairs first (equal gains: the lower labels first), each component in one
        pair at most; then all those left together, where they make one tour, dropping one at a
        time (the most costly in B first) those no shorter in B whose leaving keeps the rest one
        tour. ``gain``: per label, A's length less B's; ``alone``: per label, ``one_cycle``. Per
        label: the label of its group (its own where not fused; a group's label is its first member's)."""
        p = self.portals[~alone[self.component[self.portals]]]      # along A
        label = self.component[p]
        relabel = np.arange(len(self.a))
        if not (gain[label] > 0).any():             # no pair nor group of them is shorter in B
            return relabel
        by_label = np.argsort(label, kind="stable")
        grouped = p[by_label]
        labels, first = np.unique(label[by_label], return_index=True)
        span = dict(zip(labels.tolist(), zip(first.tolist(), np.r_[first[1:], len(p)].tolist())))

        def one_tour(group) -> bool:
            return self.group_one_cycle(np.concatenate([grouped[span[c][0]:span[c][1]] for c in group]))
        groups, left = [], labels.tolist()
        if len(left) >= 2:
            after, n = np.roll(label, -1), len(self.a)
            low, high = np.minimum(label, after), np.maximum(label, after)
            key = np.unique(low[low != high] * n + high[low != high])     # next to each other along A
            two = np.stack([key // n, key % n], axis=1)
            two_gain = gain[two].sum(axis=1)
            two = two[two_gain > 0]
            two_gain = two_gain[two_gain > 0]
            taken: set = set()
            for c, d in two[np.lexsort((two[:, 1], two[:, 0], -two_gain))].tolist():     # best first
                if c not in taken and d not in taken and one_tour((c, d)):
                    taken.update((c, d))
                    groups.append([c, d])
            left = [c for c in left if c not in taken]
        in_left = np.zeros(len(self.a), dtype=bool)       # per label: still in the group of all left
        in_left[left] = True
        if len(left) >= 2 and self.group_one_cycle(p[in_left[label]]):
            for worst in sorted((c for c in left if gain[c] <= 0), key=lambda c: gain[c]):
                in_left[worst] = False
                if in_left.sum() < 2 or not self.group_one_cycle(p[in_left[label]]):
                    in_left[worst] = True
            left = np.flatnonzero(in_left).tolist()
            if gain[left].sum() > 0:
                groups.append(left)
        for group in groups:
            relabel[group[1:]] = group[0]
        self.component = relabel[self.component]
        return relabel

    def alike(self) -> np.ndarray:
        """Per component label: whether B pairs its portals as A does."""
        p = self.portals
        unlike = np.bincount(self.component[p], weights=self.pair_a[p] != self.pair_b[p], minlength=len(self.a))
        return unlike == 0


def _build(pair: _Pair, take: np.ndarray) -> np.ndarray | None:
    """The child: A's tour with B's paths in the components ``take`` marks (by label); None where
    the pieces do not make one tour. A's tour is cut at the taken components' portals into
    pieces that either run inside a component (A's path, left out) or outside (kept); the child
    walks an outside piece, B's path from its last portal, the outside piece that path reaches, ..."""
    a, b, n = pair.a, pair.b, len(pair.a)
    cut = pair.portals[take[pair.component[pair.portals]]]       # along A
    first, last = cut, np.roll(cut, -1)          # the pieces of A's tour between cuts
    inside = ~pair.a_shared[1, first]                # A's edge to the next city is not shared
    starts, ends = first[~inside].tolist(), last[~inside].tolist()
    piece_of = {city: (i, end) for i, (s, e) in enumerate(zip(starts, ends)) for city, end in ((s, 0), (e, 1))}
    b_leaves_forward = dict(zip(cut.tolist(), (~pair.b_forward[cut]).tolist()))     # B's path leaves forward
    pos_a, pos_b = (dict(zip(cut.tolist(), where[cut].tolist())) for where in (pair.pos_a, pair.pos_b))
    pair_b = dict(zip(cut.tolist(), pair.pair_b[cut].tolist()))
    parts, piece, reverse, used = [], 0, False, 0
    while True:
        s, e = starts[piece], ends[piece]
        run = _arc(a, pos_a[s], pos_a[e])
        parts.append(run[::-1] if reverse else run)
        used += 1
        q = s if reverse else e
        r = pair_b[q]
        parts.append(_interior(b, pos_b[q], pos_b[r], b_leaves_forward[q]))
        piece, end = piece_of[r]
        reverse = end == 1
        if piece == 0:
            break
    if used != len(starts) or reverse:
        return None
    child = np.concatenate(parts)
    return child if len(child) == n else None


def _arc(tour: np.ndarray, i: int, j: int) -> np.ndarray:
    """tour[i .. j] forward, cyclically, both ends included."""
    return tour[i:j + 1] if i <= j else np.concatenate([tour[i:], tour[:j + 1]])


def _interior(tour: np.ndarray, i: int, j: int, forward: bool) -> np.ndarray:
    """The cities strictly between positions i and j of ``tour``, going forward or backward."""
    if forward:
        return _arc(tour, i, j)[1:-1]
    return _arc(tour, j, i)[1:-1][::-1]


def _tour(tour, name: str) -> np.ndarray:
    """``tour`` as int64, ValueError where it is not a permutation of 0 .. n-1 (n >= 3)."""
    tour = np.asarray(tour)
    n = len(tour)
    if tour.ndim != 1 or n < 3 or not np.issubdtype(tour.dtype, np.integer) or tour.min() < 0 \
            or tour.max() >= n or np.bincount(tour, minlength=n).max() != 1:
        raise ValueError(f"partition crossover: tour {name} must be a permutation of 0 .. n-1 (n >= 3), "
                         f"got shape {tour.shape}, dtype {tour.dtype}")
    return tour.astype(np.int64)


def partition_crossover(a, b, between) -> tuple[np.ndarray, float]:
    """The child of tours A and B: A with B's edges in every component (or fused group of them)
    where they are shorter and leave one tour. Returns (the child, how much shorter than A it
    is); ``between(u, v)`` is the edge length, vectorised."""
    a, b = _tour(a, "A"), _tour(b, "B")
    if len(a) != len(b):
        raise ValueError(f"partition crossover: tours of {len(a)} and {len(b)} cities")
    return _crossover(a, b, between)


def _crossover(a: np.ndarray, b: np.ndarray, between) -> tuple[np.ndarray, float]:
    """``partition_crossover`` of two checked tours (int64, of one length)."""
    pair = _Pair(a, b)
    if pair.a_shared.all():
        return a, 0.0
    a_length, b_length = pair.lengths(between)
    if not len(pair.portals):                     # no edge shared: one component, all of it
        return (b, float(a_length.sum() - b_length.sum())) if b_length.sum() < a_length.sum() else (a, 0.0)
    one_cycle = pair.one_cycle()
    relabel = pair.fuse(a_length - b_length, one_cycle)
    fused = np.bincount(relabel, minlength=len(a)) > 1      # per label: a fused group's
    if fused.any():                # a group's label holds its members' edges and makes one tour (fuse tried it)
        a_length, b_length = (np.bincount(relabel, weights=x, minlength=len(a)) for x in (a_length, b_length))
        one_cycle = one_cycle | fused
    shorter = b_length < a_length
    alone = shorter & one_cycle
    tries = (alone, alone & ~fused) if fused.any() else (alone,)     # the fused groups with the rest, without
    for take in tries + (shorter & pair.alike(),):
        if not take.any():
            return a, 0.0
        child = _build(pair, take)
        if child is not None:
            return child, float((a_length - b_length)[take].sum())
    raise AssertionError("partition crossover: components that pair their portals alike always make one tour")


def merge_tours(tours, between) -> tuple[np.ndarray, float]:
    """Tours (rows, n), the first the one to improve, folded by partition crossover in row order:
    (the merged tour, how much shorter than the first row it is)."""
    tours = np.asarray(tours)
    if tours.ndim != 2:
        raise ValueError(f"partition crossover: tours must be (rows, n), got shape {tours.shape}")
    merged, gain = _tour(tours[0], "0"), 0.0
    for k in range(1, len(tours)):
        merged, saved = _crossover(merged, _tour(tours[k], str(k)), between)
        gain += saved
    return merged, gain


class BackgroundMerge:
    """``merge_tours`` in a thread of its own, so a search's GPU rounds go on while the host
    merges (a merge of 32 tours of 85,900 cities takes up to a second; PyCUDA lets go of Python's
    lock while it waits for the GPU). ``start(tours)`` begins one, ``take(timeout)`` waits for it
    (at most ``timeout`` seconds; None: as long as it takes, so runs stay reproducible) and gives
    (tour, its length) where it came out shorter than its first tour, else None; ``close()``.
    ``memory()`` / ``load_memory()``: the running merge's tours and the counters, for a checkpoint
    (a restored merge starts again from its tours: merges are deterministic)."""

    def __init__(self, between):
        self.between = between
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="lsmgpu-merge")
        self.pending = self.tours = None
        self.shorter, self.seconds = 0, 0.0     # merges that came out shorter; the thread's time

    def start(self, tours) -> None:
        self.tours = np.array(tours)
        self.pending = self.pool.submit(self._merge, self.tours)

    def memory(self) -> dict:
        return {"tours": self.tours, "shorter": self.shorter, "seconds": self.seconds}

    def load_memory(self, memory: dict) -> None:
        self.shorter, self.seconds = memory["shorter"], memory["seconds"]
        if memory["tours"] is not None:
            self.start(memory["tours"])

    def _merge(self, tours):
        started = time.perf_counter()
        tour, gain = merge_tours(tours, self.between)
        return tour, gain, time.perf_counter() - started

    def take(self, timeout: float | None = None):
        if self.pending is None:
            return None
        try:
            tour, gain, took = self.pending.result(timeout)
        except Late:
            return None                          # still running: dropped (the thread ends it unread)
        finally:
            self.pending = self.tours = None
        self.seconds += took
        if gain <= 0:
            return None
        self.shorter += 1
        return tour, float(self.between(tour, np.roll(tour, -1)).sum())

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
