"""LKH's sequential 5-opt basis move (Helsgaun, EJOR 2000, section 4.4), chained as LKH's
Lin-Kernighan step: the NumPy reference of the don't-look descents' ``lk_move=5``.

Where none of city c's other moves improves (lsmgpu/backends/dontlook.py), a check searches the
sequential moves from t1 = c: t2 is a tour neighbour of t1, the edge {t1, t2} the first removed
one, its gain G = d(t1, t2). A level adds {t2i, t2i+1} for t2i+1 one of t2i's first
KOPT_CANDIDATES candidates (G - d(t2i, t2i+1) > 0, LK's gain criterion) and removes the tour edge
{t2i+1, t2i+2} (t2i+2 either tour neighbour of t2i+1, not t1; t2i+1 may be t1, which then loses
both its tour edges, as in LKH), G <- G - d(t2i, t2i+1) + d(t2i+1, t2i+2).
After j removed edges the move closes with {t2j, t1}, d(t2j, t1) - G longer, where that makes one
tour; t2j may be t2, the closing then puts the first removed edge back, as LKH's Best5OptMove allows
(LKH's long chains pass through such kept moves: docs/benchmarks/tsp-depth.md, "The closing at t2").
Unlike lsmgpu/backends/lk.py's chain of 2-opt moves, the levels in between need not be
tours: only the closing is checked (``_one_cycle``), so the 3-, 4- and 5-opt moves that pass
through two cycles are found too (LKH's MOVE_TYPE = 5; its trials gain nothing with 3-opt moves,
docs/benchmarks/tsp-depth.md, "What LKH-3's lead needs").

Each of t1's tour neighbours, its predecessor first, is t2 of a chain of its own (LKH's
LinKernighan). A stage searches every sequence of up to STAGE_LEVELS levels from its t2 and the
closing after each level. The first improving closing in LKH's depth-first order wins: the
sequences' choices (rank, side, rank, side, ...) compared in order, a closing before the longer
sequences it starts. Where none improves, the stage keeps its closing after the last level with
the largest G among those that may go on (LKH's best non-gainful move: G at least the cheapest
non-tour candidate edge of its last city, and its last removed edge not one the chain added), ties
to the first in that order, applies it and goes on from its last city as the next stage's t2 with
that G, until ``lk_depth`` levels in all; then the chain ends and the tour is as it was. Between
stages nothing else is forbidden (as in LKH, an edge a stage added may be removed by a later one).
As in LKH, G and the gain criterion read the costs d(a, b) + π_a + π_b where the rules hold
penalties π (the α-candidates' ascent's): a closing's change of length is the same under them
(every city of a move loses as many edges as it gains), but which partial sums stay positive is
not (docs/benchmarks/tsp-depth.md, "LKH's 5-opt basis move"). Whether a closing improves is read
on the lengths themselves. The move is applied as 2-opt steps (reversals of whole stretches
between removed edges), the fewest for each closing (``_reversals``).
"""
from __future__ import annotations

import weakref
from collections import deque
from functools import lru_cache
from itertools import permutations, product

import numpy as np

from .tour_steps import apply_steps, edge_lengths

__all__ = ["kopt_check", "reversal_table", "reversal_keys", "kopt_context", "level_candidates", "KOPT_CANDIDATES",
           "STAGE_LEVELS"]

#: the candidates a level tries (LKH's MAX_CANDIDATES = 5)
KOPT_CANDIDATES = 5
#: levels (added edges before the closing) of a stage: 4, so a stage's move removes up to 5 edges
STAGE_LEVELS = 4


def _left(x, pos, a, b):
    """The position of the tour edge {a, b}: that of its end that comes first in x (elementwise)."""
    n = len(x)
    return np.where(x[(pos[a] + 1) % n] == b, pos[a], pos[b])


def _edge_keys(a, b, n: int):
    """The edges {a, b} as numbers (elementwise), the same for {b, a}: how edges are compared."""
    return np.minimum(a, b) * n + np.maximum(a, b)


def _ports(t, x, pos):
    """For rows of cities t (rows, 2j) whose pairs (t[2e], t[2e+1]) are tour edges: each end's
    port 2 rank + side, rank the edge's place among the row's edges in tour order, side 0 for the
    end that comes first in x; and whether the row's edges are distinct."""
    left = _left(x, pos, t[:, 0::2], t[:, 1::2])
    rank = np.argsort(np.argsort(left, axis=1, kind="stable"), axis=1)
    distinct = (np.diff(np.sort(left, axis=1), axis=1) > 0).all(axis=1)
    side = (x[left] != t[:, 0::2]).astype(np.int64)                  # the edge's first city t[2e]: side 0 if first in x
    ports = np.empty_like(t)
    ports[:, 0::2], ports[:, 1::2] = 2 * rank + side, 2 * rank + 1 - side
    return ports, distinct


@lru_cache(maxsize=None)
def _next_port(j: int) -> np.ndarray:
    """For each port of j stretches, the port at the other end of its stretch's neighbour that a
    walk leaving it enters: from the head (side 1) of stretch s the tail of s + 1, from the tail
    of s the head of s - 1 (as ``_one_cycle`` walks)."""
    port = np.arange(2 * j)
    rank = port // 2
    return np.where(port % 2 == 1, 2 * ((rank + 1) % j), 2 * ((rank - 1) % j) + 1)


def _one_cycle(ports) -> np.ndarray:
    """Whether the tour without the rows' removed edges and with their added ones (t2e+1 to t2e+2,
    the last city back to t1) is one cycle: from the head of the first stretch (port 1), along
    each stretch and over each added edge, back to it after exactly j stretches."""
    rows, j = ports.shape[0], ports.shape[1] // 2
    partner = np.empty_like(ports)
    r = np.arange(rows)
    ends = np.concatenate([ports[:, 1:], ports[:, :1]], axis=1)       # added: (t2, t3), ..., (t2j, t1)
    partner[r[:, None], ends[:, 0::2]] = ends[:, 1::2]
    partner[r[:, None], ends[:, 1::2]] = ends[:, 0::2]
    following = _next_port(j)
    at, early = np.ones(rows, dtype=np.int64), np.zeros(rows, dtype=bool)
    for _ in range(j - 1):
        at = partner[r, following[at]]
        early |= at == 1
    return ~early & (partner[r, following[at]] == 1)


def _order(ports_row) -> tuple:
    """One row's new tour as its stretches in order from stretch 0, each (stretch, +1 or -1)."""
    j = len(ports_row) // 2
    ends = np.roll(ports_row, -1)
    partner = {}
    for a, b in zip(ends[0::2].tolist(), ends[1::2].tolist()):
        partner[a], partner[b] = b, a
    order, at = [], 1
    for _ in range(j):
        rank, side = divmod(at, 2)
        order.append((rank, 1) if side == 1 else ((rank - 1) % j, -1))
        at = partner[2 * ((rank + 1) % j) if side == 1 else 2 * ((rank - 1) % j) + 1]
    return tuple(order[1:])


def _reversals(target: tuple) -> tuple:
    """The fewest reversals of runs of stretches 1 .. j-1 (stretch 0 stays first) that make
    ``target`` ((stretch, sign) for each after stretch 0) from the stretches in order: (first,
    last) index pairs, 1-based in the whole arrangement (``_fewest_reversals``)."""
    return _fewest_reversals(len(target))[target]


@lru_cache(maxsize=None)
def _fewest_reversals(stretches: int) -> dict:
    """Every signed arrangement of ``stretches`` stretches with the reversals that make it from the
    stretches in order, the first found by a breadth-first search over the arrangements (at most
    4! 2^4 of them): one search for every closing of that many stretches."""
    start = tuple((s, 1) for s in range(1, stretches + 1))
    seen, todo = {start: ()}, deque([start])
    while todo:
        state = todo.popleft()
        for a in range(len(state)):
            for b in range(a, len(state)):
                flipped = tuple((s, -sign) for s, sign in reversed(state[a:b + 1]))
                nxt = state[:a] + flipped + state[b + 1:]
                if nxt not in seen:
                    seen[nxt] = seen[state] + ((a + 1, b + 1),)
                    todo.append(nxt)
    return seen


def _steps(t_row, ports_row, x, pos) -> list:
    """One closing's 2-opt steps: the reversals of ``_reversals`` as the pairs of edges each removes."""
    j = len(t_row) // 2
    left = sorted(int(_left(x, pos, t_row[2 * e], t_row[2 * e + 1])) for e in range(j))
    n = len(x)
    head = [int(x[(left[s] + 1) % n]) for s in range(j)]
    tail = [int(x[left[(s + 1) % j]]) for s in range(j)]
    arrangement = [(0, 1)] + [(s, 1) for s in range(1, j)]
    first = lambda s, sign: head[s] if sign == 1 else tail[s]        # noqa: E731
    last = lambda s, sign: tail[s] if sign == 1 else head[s]         # noqa: E731
    steps = []
    for a, b in _reversals(_order(ports_row)):
        after = arrangement[(b + 1) % j]
        steps.append(((last(*arrangement[a - 1]), first(*arrangement[a])), (last(*arrangement[b]), first(*after))))
        arrangement[a:b + 1] = [(s, -sign) for s, sign in reversed(arrangement[a:b + 1])]
    return steps


class _Lengths:
    """A check's edge lengths: ``dist`` of any edges, ``cost`` with the penalties π (d(a, b) + π_a +
    π_b; the lengths where there are none), and both of every city's first KOPT_CANDIDATES
    candidate edges (``cand``, ``cand_dist``, ``cand_cost``, (n, K)), made once for a table of rules
    and read at every level of every stage (``lengths_of``)."""

    def __init__(self, rules, between):
        self.between, self.dist, self.pi = between, edge_lengths(between), rules.penalties
        self.cand = rules.candidates[:, :KOPT_CANDIDATES].astype(np.int64)
        cities = np.arange(len(self.cand))[:, None]
        self.cand_dist = self.dist(cities, self.cand)
        self.cand_cost = self.cost(cities, self.cand, self.cand_dist)

    def cost(self, a, b, lengths=None):
        """d(a, b) + π_a + π_b (elementwise), ``lengths`` the d(a, b) where known."""
        lengths = self.dist(a, b) if lengths is None else lengths
        return lengths if self.pi is None else lengths + self.pi[a] + self.pi[b]


#: each table of rules' _Lengths, with the ``between`` it was made for
_LENGTHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lengths_of(rules, between) -> _Lengths:
    """The rules' _Lengths over ``between``, made on the first check that asks (n x K lengths)."""
    lengths = _LENGTHS.get(rules)
    if lengths is None or lengths.between != between:
        lengths = _LENGTHS[rules] = _Lengths(rules, between)
    return lengths


def _cheapest(c, x, pos, lengths):
    """Each city's (elementwise) cheapest candidate edge under ``lengths.cost`` that is not a tour
    edge (inf where every candidate is a tour neighbour): LKH's t->Cost, the least a chain from that
    city must have gained to go on."""
    n = len(x)
    after, before = x[(pos[c] + 1) % n], x[(pos[c] - 1) % n]
    other = lengths.cand[c]
    usable = (other != after[:, None]) & (other != before[:, None])
    return np.where(usable, lengths.cand_cost[c], np.inf).min(axis=1, initial=np.inf)


def _stage(t1, t2, gain, x, pos, lengths, levels, added_before):
    """Every sequence of up to ``levels`` levels from t1 and t2 (module docstring), G from ``gain``
    under ``lengths.cost`` (lengths with penalties), the real change from ``lengths.dist``: (closings:
    a list per level of (real delta, number, t rows, ports rows), kept: (G, real delta, t row, ports
    row) of the last level's closing with the largest G that may go on, or None)."""
    n, K, dist = len(x), lengths.cand.shape[1], lengths.dist
    t = np.array([[t1, t2]], dtype=np.int64)
    G = np.array([gain], dtype=np.float64)
    real = np.array([dist(t1, t2)], dtype=np.float64)                   # removed less added lengths
    number = np.zeros(1, dtype=np.int64)
    neighbours = lambda c: (x[(pos[c] + 1) % n], x[(pos[c] - 1) % n])      # noqa: E731
    ranks, sides, width = np.repeat(np.arange(K), 2), np.tile([1, -1], K), 2 * K    # a level's branches: (rank, side)
    added = np.empty((1, 0), dtype=np.int64)                            # each row's added and removed edges' keys
    removed = _edge_keys(t[:, :1], t[:, 1:], n)
    closings, kept = [], None
    for level in range(1, levels + 1):
        free = t[:, -1]                                                 # rows x branches below, row-major
        after, before = neighbours(free)
        t3 = lengths.cand[free][:, ranks]
        g = G[:, None] - lengths.cand_cost[free][:, ranks]
        ok = (g > 0) & (t3 != after[:, None]) & (t3 != before[:, None])     # t3 may be t1
        new_added = _edge_keys(free[:, None], t3, n)
        ok &= ~(added[:, None, :] == new_added[:, :, None]).any(axis=2)      # added edges distinct
        t4 = x[(pos[t3] + sides) % n].astype(np.int64)
        ok &= t4 != t1
        new_removed = _edge_keys(t3, t4, n)
        ok &= ~(removed[:, None, :] == new_removed[:, :, None]).any(axis=2)  # removed edges distinct
        parent, branch = np.nonzero(ok)
        free, t3, t4 = free[parent], t3[parent, branch], t4[parent, branch]
        d34 = dist(t3, t4)
        real = real[parent] - lengths.cand_dist[free, ranks[branch]] + d34
        G = g[parent, branch] + lengths.cost(t3, t4, d34)
        number = number[parent] * width + branch
        t = np.concatenate([t[parent], t3[:, None], t4[:, None]], axis=1)
        added = np.concatenate([added[parent], new_added[parent, branch][:, None]], axis=1)
        removed = np.concatenate([removed[parent], new_removed[parent, branch][:, None]], axis=1)
        if not len(t):
            break
        t4 = t[:, -1]
        ports, close = _ports(t, x, pos)
        close[close] = _one_cycle(ports[close])
        closings.append((np.where(close, dist(t4, t1) - real, np.inf), number, t, ports))
        if level == levels:
            goes_on = close & (G >= _cheapest(t4, x, pos, lengths))
            if added_before:
                before_keys = _edge_keys(*np.array(added_before, dtype=np.int64).T, n)
                goes_on &= ~(_edge_keys(t[:, -2], t4, n)[:, None] == before_keys[None, :]).any(axis=1)
            if goes_on.any():
                best = int(np.argmax(np.where(goes_on, G, -np.inf)))
                kept = (float(G[best]), float(dist(t4[best], t1) - real[best]), t[best], ports[best])
    return closings, kept


def kopt_check(c: int, x: np.ndarray, pos: np.ndarray, rules, between):
    """City c's improving 5-opt chain (module docstring): (delta, number, the 2-opt steps, the
    cities to queue) with number ``rules.moves`` (after the other moves'), or None where none
    improves. x and pos are left as they were."""
    lengths = lengths_of(rules, between)
    n = len(x)
    for t2 in (int(x[(pos[c] - 1) % n]), int(x[(pos[c] + 1) % n])):
        found = _chain(c, t2, x.copy(), pos.copy(), lengths, rules.lk_depth)
        if found is not None:
            delta, steps, touched = found
            return delta, rules.moves, steps, touched
    return None


def _chain(c, t2, x, pos, lengths, depth):
    """The chain from t1 = c and t2 on the tour x, pos (changed by its kept moves): (delta, the
    2-opt steps, the cities to queue) of its improving closing, or None."""
    width, gain = 2 * lengths.cand.shape[1], float(lengths.cost(c, t2))
    steps, touched, added, left, change = [], [c], [], depth, 0.0
    while left > 0:
        levels = min(STAGE_LEVELS, left)
        closings, kept = _stage(c, t2, gain, x, pos, lengths, levels, added)
        first = None
        for level, (delta, number, t, ports) in enumerate(closings):
            improving = np.flatnonzero(change + delta < 0)                 # the whole chain shorter
            if len(improving):
                i = int(improving[np.argmin(number[improving])])
                order = (int(number[i]) * width ** (levels - 1 - level), level)    # depth-first: prefix first
                if first is None or order < first[0]:
                    first = (order, float(delta[i]), t[i], ports[i])
        if first is not None:
            _, delta, t, ports = first
            return change + delta, steps + _steps(t, ports, x, pos), touched + [int(city) for city in t[1:]]
        if kept is None or levels == left:
            return None
        gain, kept_change, t, ports = kept
        change += kept_change
        made = _steps(t, ports, x, pos)
        apply_steps(x, pos, made)
        steps += made
        touched += [int(city) for city in t[1:]]
        added += [(int(t[2 * m - 1]), int(t[2 * m])) for m in range(1, len(t) // 2)] + [(int(t[-1]), c)]
        t2, left = int(t[-1]), left - levels
    return None


def order_code(target: tuple) -> int:
    """A closing's new order of stretches (``_order``'s tuple) as one number: 4 bits a stretch,
    2 stretch + (1 where reversed), the first stretch after stretch 0 lowest (the GPU's key)."""
    return sum((2 * stretch + (sign < 0)) << (4 * k) for k, (stretch, sign) in enumerate(target))


def reversal_table() -> list[tuple[int, int, tuple]]:
    """For every order of j = 2 .. 5 stretches a closing can make (each stretch after stretch 0
    anywhere, either way round): (j, ``order_code``, ``_reversals``), the GPU kernel's table of
    the fewest reversals (templates/skeleton/kopt.cu.j2)."""
    table = []
    for j in range(2, STAGE_LEVELS + 2):
        for order in permutations(range(1, j)):
            for signs in product((1, -1), repeat=j - 1):
                target = tuple(zip(order, signs))
                table.append((j, order_code(target), _reversals(target)))
    return table


def reversal_keys(table: list[tuple[int, int, tuple]]) -> list[tuple[int, int]]:
    """``table``'s rows by (j, code) as one key, j 2^16 + code, ascending, each with its row: the
    kernel finds a closing's reversals by searching these keys in halves (ko_keys, ko_rows in
    templates/skeleton/kopt.cu.j2) instead of reading the table row by row."""
    return sorted((j * 2**16 + code, row) for row, (j, code, _) in enumerate(table))


def level_candidates(k: int) -> int:
    """The candidates a level tries from candidate lists of k a city: KOPT_CANDIDATES, or k where fewer."""
    return min(k, KOPT_CANDIDATES)


def kopt_context(k: int) -> dict:
    """What templates/skeleton/kopt.cu.j2 is rendered with for candidate lists of k a city: KO_K,
    KO_LEVELS, KO_TABLE and KO_KEYS."""
    table = reversal_table()
    return dict(KO_K=level_candidates(k), KO_LEVELS=STAGE_LEVELS, KO_TABLE=table, KO_KEYS=reversal_keys(table))
