"""Don't-look-bit descents of tours: 2-opt and Or-opt over candidate lists, one city at a time
(Bentley 1992), the NumPy reference the GPU's kernel (templates/skeleton/dontlook.cu.j2) equals.

A descent that scans every move of a tour each step pays for the whole tour per improving move;
after a few changes (an ant's tour, a child, a kick) almost every city is already fine. Here each
row keeps a queue of the cities to look at (every city at first, in tour order). A check pops city
c and evaluates c's moves (``MOVES`` per city, numbered as below); the best improving one (least
delta, ties to the lowest number) is applied and the endpoints of the edges it removed join the
queue's end (those not in it); without one, c is done until a neighbour changes. The row is at a
local optimum of these moves when the queue is empty.

The moves of city c, with K candidates per city (``candidates[c]``), segments up to S cities and
nb(a, dir) the tour neighbour of a after (dir 0) or before (dir 1) it in the array's order:

* 2-opt, number dir K + r: c2 = nb(c, dir), c3 = candidates[c, r], c4 = nb(c3, dir); edges {c, c2}
  and {c3, c4} go, {c, c3} and {c2, c4} come; only where d(c, c3) < d(c, c2) (the gain criterion).
* Or-opt, number 2K + ((dir S + L - 1) K + r) 4 + 2 e + o: the segment of L cities from s1 = c
  going dir to s2, between p = nb(s1, 1 - dir) and q = nb(s2, dir), moves into the edge {u, w} at
  c3 = candidates[c, r]: u = c3, w = nb(c3, dir) (e = 0) or u = nb(c3, 1 - dir), w = c3 (e = 1), as
  u s1 .. s2 w (o = 0; L > 1) or u s2 .. s1 w (o = 1); u and w outside the segment.
* Or-3opt (with ``or3``: Or-opt without a bound on the segment's length, found as sequential 3-opt),
  number 2K + 8SK + (dir K + r) K + r': reading the tour from c going dir as c c2 .. c4 c3 .. c6 c5
  .., c3 = candidates[c, r] at least two cities on, c4 = nb(c3, 1 - dir), c5 = candidates[c4, r']
  beyond c3 (or c itself), c6 = nb(c5, 1 - dir): the stretches c2 .. c4 and c3 .. c6 swap places,
  c c3 .. c6 c2 .. c4 c5 (edges {c, c2}, {c4, c3}, {c6, c5} go, {c, c3}, {c4, c5}, {c6, c2} come);
  only where d(c, c3) < d(c, c2), as 2-opt.
* LK3 (with ``lk``: Lin-Kernighan's third level, the sequential 3-opt moves with two reversals),
  number 2K + 8SK [+ 2K^2 with or3] + (dir K + r) K + r': the 2-opt move (c, c2, c3, c4) of
  number dir K + r, not closed by {c2, c4} but continued: c5 = candidates[c4, r'] and c6 the
  neighbour of c5 that makes the second reversal close the tour (in the tour after the first
  reversal, c6 is to c5 what c2 is to c4: nb(c5, dir) where c5 lies in the reversed stretch
  c2 .. c3, nb(c5, 1 - dir) elsewhere). Edges {c, c2}, {c3, c4}, {c5, c6} go, {c, c3}, {c4, c5},
  {c6, c2} come; only where both partial gains are positive, d(c, c3) < d(c, c2) and
  d(c4, c5) < d(c, c2) - d(c, c3) + d(c3, c4) (LK's gain criterion), and c5 is none of c2, c3,
  c4 and c6 not c4.

A lone tour is checked ``wide`` cities at a time (``wide_checks``; on the GPU a block each): its
queue starts ``interleaved`` (a round's cities far apart on the tour); a round pops up to ``wide``
cities, examines each on the tour as the round found it, then applies their moves in that order,
each as its steps where the edges they remove are all still there and the change they make, read
on the tour as it then is, is the change examined: the same move (``apply_checked``); else the
steps made are undone. The kept moves' cities join the queue's end; the examined cities without a
kept move that had one, or whose candidates include a city the kept moves queued (what they were
examined on has changed), join its front, in the round's order, to be examined again next round.
With ``wide`` 1 this is the check above.

A move is applied as 2-opt steps, each named by the two edges it removes (the reconnection is then
unique, whatever the array's orientation): 2-opt one step; Or-opt ({p, s1}, {u, w}), ({p, u},
{q, s2}) and for o = 0 ({u, s2}, {s1, w}); Or-3opt ({c, c2}, {c6, c5}), ({c, c6}, {c3, c4}),
({c6, c4}, {c2, c5}) (the ILS kick's swap of two adjacent stretches); LK3 ({c, c2}, {c3, c4}),
({c2, c4}, {c5, c6}) (lsmgpu/backends/tour_steps.py).
"""
from __future__ import annotations

import time
from collections import deque

import numpy as np

from .fallback import kernel_or_host
from .kopt import kopt_check, level_candidates
from .lk import lk_check
from .tour_steps import apply_checked, apply_steps, edge_lengths

__all__ = ["DontLookRules", "CpuDontLook", "descend_rows", "dontlook_for", "moves_per_city", "check_city",
           "improve_city", "enqueue", "interleaved", "wide_checks"]

#: a lone tour (the segments' whole tour, improve's one tour, focused ACO's start) is checked this
#: many cities at a time where it has WIDE_SPACING cities a check (fewer cities: fewer at a time)
WIDE = 512
WIDE_SPACING = 64


class DontLookRules:
    """The moves a check evaluates: ``candidates`` (n, K) per city, Or-opt segments up to
    ``segment``, with ``or3`` the Or-3opt moves and with ``lk`` the LK3 moves too; with
    ``lk_depth`` > 0, where none of them improves, the variable-depth LK chain of up to that many
    levels: of 2-opt moves with ``lk_move`` 2 (lsmgpu/backends/lk.py), of LKH's sequential 5-opt
    basis moves with ``lk_move`` 5 (lsmgpu/backends/kopt.py), their gain criterion over the
    lengths plus the cities' ``penalties`` where given (the Held-Karp ascent's π); with
    ``chain_alone`` (5-opt chains only) a check is the chain alone, no other move evaluated first,
    as LKH's LK (whose 5-opt search holds the 2- and 3-opt moves). ``candidates`` and ``penalties``
    may be functions that make them (the α-nearest: their ascent runs where the table is first read,
    inside the search's time budget); ``bridges``: the ants' bridging moves (lsmgpu/backends/bridge.py)."""

    def __init__(self, candidates, segment: int, or3: bool = False, lk: bool = False, lk_depth: int = 0,
                 lk_move: int = 2, penalties=None, chain_alone: bool = False, bridges: bool = False):
        self._candidates = candidates if callable(candidates) else self._table(candidates)
        self.segment, self.lk_depth, self.lk_move, self._penalties = int(segment), int(lk_depth), int(lk_move), penalties
        self.or3, self.lk, self.chain_alone, self.bridges = bool(or3), bool(lk), bool(chain_alone), bool(bridges)

    def with_candidates(self, candidates, penalties=None) -> "DontLookRules":
        """The same moves over another candidate table with ``penalties`` (a tour segment's: none, its
        cities' belong to the whole tour; FocusedACO's ``ant_lists``: those of the new lists' ascent)."""
        return DontLookRules(candidates, self.segment, self.or3, self.lk, self.lk_depth, self.lk_move,
                             penalties, self.chain_alone, self.bridges)

    @property
    def penalties(self) -> np.ndarray | None:
        """The cities' penalties of the 5-opt chain's gain criterion (made on the first read where a
        function was given), or None."""
        if callable(self._penalties):
            self._penalties = self._penalties()
        return None if self._penalties is None else np.asarray(self._penalties, dtype=np.float64)

    @staticmethod
    def _table(candidates) -> np.ndarray:
        return np.ascontiguousarray(candidates, dtype=np.int32)

    @property
    def candidates(self) -> np.ndarray:
        """The (n, K) int32 table, made on the first read where a function was given (once)."""
        if callable(self._candidates):
            self._candidates = self._table(self._candidates())
        return self._candidates

    @property
    def k(self) -> int:
        return self.candidates.shape[1]

    @property
    def moves(self) -> int:
        """The moves a check evaluates at once (the LK chain's stages come after, where none improves;
        with ``chain_alone`` its first level's 2-opt closings: t2 either side, t3 of ``level_candidates``)."""
        return 2 * level_candidates(self.k) if self.chain_alone else moves_per_city(self.k, self.segment, self.or3, self.lk)


def wide_checks(rows: int, n: int) -> int:
    """The cities a round checks at once in each of ``rows`` tours of n cities: up to WIDE for a
    lone tour, 1 (one after another) where there are several (they fill the GPU themselves)."""
    return max(1, min(WIDE, n // WIDE_SPACING)) if rows == 1 else 1


def interleaved(cities, wide: int) -> np.ndarray:
    """``cities`` cut into ``wide`` stretches of consecutive ones and read across them (the first
    of each, then the second of each, ..): a wide round's cities far apart on the tour."""
    cities = np.asarray(cities)
    per = -(-len(cities) // wide)
    order = np.arange(per * wide).reshape(wide, per).T.ravel()
    return cities[order[order < len(cities)]]


def moves_per_city(k: int, segment: int, or3: bool = False, lk: bool = False) -> int:
    return 2 * k + 8 * segment * k + (2 * k * k if or3 else 0) + (2 * k * k if lk else 0)


def _plan_or(p, s1, s2, q, u, w, o):
    steps = [((p, s1), (u, w)), ((p, u), (q, s2))]
    if o == 0:
        steps.append(((u, s2), (s1, w)))
    return steps


def check_city(c: int, x: np.ndarray, pos: np.ndarray, rules: DontLookRules, between):
    """City c's best improving move: (delta, number, the edges its steps remove, the cities to
    queue), or None where no move of c improves. Every move of c is evaluated at once, in the
    numbering of the module's docstring (axes dir, r for 2-opt; dir, L, r, e, o for Or-opt); where
    none improves and ``rules.lk_depth`` > 0, the LK chain's (number ``rules.moves``; of 5-opt
    moves with ``rules.lk_move`` 5); with ``rules.chain_alone`` the 5-opt chain's alone."""
    if rules.chain_alone:
        return kopt_check(c, x, pos, rules, between)
    n, K, S = len(x), rules.k, rules.segment
    cand = rules.candidates[c].astype(np.int64)
    pc, pcand = int(pos[c]), pos[cand]
    sign = np.array([1, -1])
    dist = edge_lengths(between)
    # 2-opt: (dir, r)
    c2 = x[(pc + sign) % n]
    c4 = x[(pcand[None, :] + sign[:, None]) % n]
    d_c2 = dist(c, c2)[:, None]
    two = dist(c, cand)[None, :] + dist(c2[:, None], c4) - d_c2 - dist(cand[None, :], c4)
    two_ok = (cand[None, :] != c2[:, None]) & (c4 != c) & (cand[None, :] != c) & (dist(c, cand)[None, :] < d_c2)
    # Or-opt: (dir, L, r, e, o)
    L = np.arange(1, S + 1)
    way = sign[:, None]
    s2 = x[(pc + way * (L[None, :] - 1)) % n]                       # (dir, L)
    p = x[(pc - sign) % n][:, None]                                 # (dir, 1)
    q = x[(pc + way * L[None, :]) % n]                              # (dir, L)
    removed = dist(p, c) + dist(s2, q) - dist(p, q)                 # (dir, L)
    ahead, behind = x[(pcand[None, :] + way) % n], x[(pcand[None, :] - way) % n]     # (dir, r)
    u = np.stack([np.broadcast_to(cand, ahead.shape), behind], axis=-1)[:, None]    # (dir, 1, r, e)
    w = np.stack([ahead, np.broadcast_to(cand, ahead.shape)], axis=-1)[:, None]
    S2 = s2[:, :, None, None]
    span = L[None, :, None, None]
    outside = ((((pos[u] - pc) * sign[:, None, None, None]) % n >= span)
               & (((pos[w] - pc) * sign[:, None, None, None]) % n >= span) & (n >= span + 3))
    base = dist(u, w) + removed[:, :, None, None]
    forward = dist(u, c) + dist(S2, w) - base                      # u s1 .. s2 w
    backward = dist(u, S2) + dist(c, w) - base                      # u s2 .. s1 w
    orr = np.stack([forward, backward], axis=-1)                    # (dir, L, r, e, o)
    or_ok = np.stack([outside & (span > 1), outside], axis=-1)
    parts, oks, third = [two, orr], [two_ok, or_ok], []
    for wanted, family, planner in ((rules.or3, _or3, _plan_or3), (rules.lk, _lk3, _plan_lk3)):
        if wanted:
            found = family(c, x, pos, rules, cand, c2, d_c2, dist)
            parts.append(found[0])
            oks.append(found[1])
            third.append((found, planner))
    deltas = np.concatenate([part.ravel() for part in parts])
    ok = np.concatenate([part.ravel() for part in oks]) & (deltas < 0)
    if not ok.any():
        if not rules.lk_depth:
            return None
        return (kopt_check if rules.lk_move == 5 else lk_check)(c, x, pos, rules, between)
    number = int(np.argmin(np.where(ok, deltas, np.inf)))
    if number < 2 * K:
        d, r = divmod(number, K)
        a3, a4 = int(cand[r]), int(c4[d, r])
        return deltas[number], number, [((c, int(c2[d])), (a3, a4))], [c, int(c2[d]), a3, a4]
    t = number - 2 * K - orr.size
    for (delta, _, ends), planner in third:         # Or-3opt, then LK3: (dir, r, r') each
        if 0 <= t < delta.size:
            d, r, r2 = np.unravel_index(t, delta.shape)
            cities = [c, int(c2[d])] + [int(a[d, r, r2]) for a in ends]
            return deltas[number], number, planner(*cities), cities
        t -= delta.size
    d, l, r, e, o = np.unravel_index(number - 2 * K, orr.shape)
    P, Q, T2, U, W = int(p[d, 0]), int(q[d, l]), int(s2[d, l]), int(u[d, 0, r, e]), int(w[d, 0, r, e])
    return deltas[number], number, _plan_or(P, c, T2, Q, U, W, o), [P, Q, c, T2, U, W]


def _or3(c, x, pos, rules, cand, c2, d_c2, dist):
    """City c's Or-3opt moves (axes dir, r, r'): their deltas, which are legal, and the cities
    (c4, c3, c6, c5) of each, in the numbering of the module's docstring. c3 and c4 depend on (dir,
    r) only; c5 and c6 on r' too."""
    n = len(x)
    way = np.array([1, -1])[:, None]                                # (dir, r)
    pc3 = pos[cand][None, :]
    o3 = ((pc3 - pos[c]) * way) % n                                 # c3's distance from c, going dir
    c4 = x[(pc3 - way) % n]
    c5 = rules.candidates[c4].astype(np.int64)                       # (dir, r, r')
    way = way[:, :, None]
    o5 = ((pos[c5] - pos[c]) * way) % n
    o5 = np.where(o5 == 0, n, o5)                                    # c itself ends the tour's reading
    c6 = x[(pos[c5] - way) % n]
    d_c3 = dist(c, cand)[None, :]                                    # (1, r)
    delta = (d_c3[:, :, None] + dist(c4[:, :, None], c5) + dist(c6, c2[:, None, None]) - d_c2[:, :, None]
             - dist(c4, cand[None, :])[:, :, None] - dist(c6, c5))
    ok = ((o3 >= 2) & (d_c3 < d_c2))[:, :, None] & (o5 > o3[:, :, None])
    return delta, ok, tuple(np.broadcast_to(a, c5.shape) for a in (c4[:, :, None], cand[None, :, None], c6, c5))


def _plan_or3(c, c2, c4, c3, c6, c5):
    return [((c, c2), (c6, c5)), ((c, c6), (c3, c4)), ((c6, c4), (c2, c5))]


def _lk3(c, x, pos, rules, cand, c2, d_c2, dist):
    """City c's LK3 moves (axes dir, r, r'): their deltas, which are legal, and the cities (c4,
    c3, c6, c5) of each, in the numbering of the module's docstring. c3 and c4 are the 2-opt
    move's (dir, r); c5 and c6 depend on r' too; o3 and o5 are c3's and c5's distances from c
    going dir, the first reversal's stretch c2 .. c3 being offsets 1 .. o3."""
    n = len(x)
    way = np.array([1, -1])[:, None]                                # (dir, r)
    pc3 = pos[cand][None, :]
    o3 = ((pc3 - pos[c]) * way) % n
    c4 = x[(pc3 + way) % n]
    c5 = rules.candidates[c4].astype(np.int64)                       # (dir, r, r')
    way = way[:, :, None]
    o5 = ((pos[c5] - pos[c]) * way) % n
    o5 = np.where(o5 == 0, n, o5)                                    # c itself ends the tour's reading
    O3 = o3[:, :, None]
    inside = o5 <= O3
    c6 = np.where(inside, x[(pos[c5] + way) % n], x[(pos[c5] - way) % n])
    d13 = dist(c, cand)[None, :]                                     # (1, r)
    d34 = dist(cand[None, :], c4)[:, :, None]                        # (dir, r, 1)
    d45 = dist(c4[:, :, None], c5)
    gain = (d_c2 - d13)[:, :, None]                                  # the first partial gain
    delta = d13[:, :, None] + d45 + dist(c6, c2[:, None, None]) - d_c2[:, :, None] - d34 - dist(c5, c6)
    ok = (((o3 >= 2) & (o3 <= n - 2))[:, :, None] & (gain > 0) & (gain + d34 - d45 > 0)
          & (o5 != 1) & (o5 != O3) & (o5 != O3 + 1) & (inside | (o5 != O3 + 2)))
    return delta, ok, tuple(np.broadcast_to(a, c5.shape) for a in (c4[:, :, None], cand[None, :, None], c6, c5))


def _plan_lk3(c, c2, c4, c3, c6, c5):
    return [((c, c2), (c3, c4)), ((c2, c4), (c5, c6))]


def improve_city(c: int, x, pos, rules: DontLookRules, between, queue, queued):
    """A check of city c: its best improving move applied to x and pos, the endpoints of the edges
    it removed appended to ``queue`` (those not ``queued``); the move's delta, or None (no move)."""
    found = check_city(c, x, pos, rules, between)
    if found is None:
        return None
    delta, _, steps, touched = found
    apply_steps(x, pos, steps)
    enqueue(touched, queue, queued)
    return delta


def enqueue(cities, queue, queued) -> None:
    """The cities not queued yet join the queue's end, in order."""
    for city in cities:
        if not queued[city]:
            queued[city] = True
            queue.append(city)


def descend_rows(engine, rule: str = "best", deadline: float | None = None, again: bool = True) -> np.ndarray:
    """Every row of ``engine`` (loaded) descended, with ``again`` again from every city until a descent
    makes no move in any row, or the deadline (a don't-look descent looks at a city again only when
    its own edges change: a change elsewhere can leave it an improving move); all descents' moves."""
    made = 0
    while True:
        last, _, _ = engine.descend(np.ones(engine.rows, bool), rule, deadline)
        made = made + last
        if not (again and last.any()) or (deadline is not None and time.perf_counter() >= deadline):
            return made
        engine.load(engine.solutions())


class CpuDontLook:
    """``rows`` tours descended by don't-look bits with NumPy, row after row (the reference);
    the population protocol of lsmgpu.backends.population as the population methods use it.
    ``wide``: the cities a round checks at once (the module's docstring; None: ``wide_checks``,
    as the GPU's rows)."""

    name = "cpu"

    def __init__(self, rules: DontLookRules, distance, rows: int, device: str = "", wide: int | None = None):
        self.rules, self.between, self.rows, self.device = rules, distance.between, int(rows), device
        self._wide = wide

    def load(self, xs, cities=None) -> None:
        """Tours (rows x n); every city queued in tour order, or the ``cities`` given (in that
        order, in every row)."""
        self.x = np.array(xs, dtype=np.int64)
        n = self.x.shape[1]
        self.current = self.between(self.x, np.roll(self.x, -1, axis=1)).sum(axis=1).astype(np.float64)
        self.n = n
        self.wide = wide_checks(self.rows, n) if self._wide is None else int(self._wide)
        self.queues = [interleaved(row if cities is None else np.asarray(cities, dtype=np.int64), self.wide).tolist()
                       for row in self.x]
        self.done = np.zeros(self.rows, dtype=np.int64)
        self.checks = np.zeros(self.rows, dtype=np.int64)

    def descend(self, rows, rule: str = "best", deadline: float | None = None):
        """Every row in ``rows`` to a local optimum (``rule`` is the chain descents'; a check takes
        its city's best move): (moves made per row, moves evaluated per row, whether all finished)."""
        for k in np.flatnonzero(rows):
            x, queue = self.x[k], deque(self.queues[k])
            pos = np.empty(self.n, dtype=np.int64)
            pos[x] = np.arange(self.n)
            queued = np.zeros(self.n, dtype=bool)
            queued[list(queue)] = True
            while queue:
                if deadline is not None and (self.wide > 1 or self.checks[k] % 64 == 0) and time.perf_counter() >= deadline:
                    self.queues[k] = list(queue)
                    return self.done.copy(), self.checks * self.rules.moves, False
                cities = [queue.popleft() for _ in range(min(self.wide, len(queue)))]
                queued[cities] = False
                self.checks[k] += len(cities)
                if self.wide == 1:
                    delta = improve_city(cities[0], x, pos, self.rules, self.between, queue, queued)
                    self._count(k, delta)
                else:
                    self._wide_round(k, cities, x, pos, queue, queued)
            self.queues[k] = []
        return self.done.copy(), self.checks * self.rules.moves, True

    def _count(self, k: int, delta) -> None:
        if delta is not None:
            self.current[k] += delta
            self.done[k] += 1

    def _wide_round(self, k: int, cities, x, pos, queue, queued) -> None:
        """Row k's round: ``cities`` examined on the tour as it is, then their moves applied in
        order; the cities to examine again at the queue's front."""
        found = [check_city(c, x, pos, self.rules, self.between) for c in cities]
        touched, kept = set(), []
        for move in found:
            kept.append(move is not None and apply_checked(x, pos, move[2], self.between, move[0]))
            if kept[-1]:
                self._count(k, move[0])
                touched.update(move[3])
                enqueue(move[3], queue, queued)
        again = [c for c, move, done in zip(cities, found, kept)
                 if not done and (move is not None or touched.intersection(self.rules.candidates[c].tolist()))]
        for c in reversed(again):
            if not queued[c]:
                queued[c] = True
                queue.appendleft(c)

    def solutions(self) -> np.ndarray:
        return self.x.astype(np.int32)

    def values(self) -> np.ndarray:
        return self.current.copy()

    def close(self) -> None:
        pass


def dontlook_for(backend, kernel: str, host, *args, announce: str, what: str):
    """``backend.<kernel>(*args)`` where the backend has that kernel, else ``host(*args, device)``
    on the host (announced by a BackendFallback warning naming ``what`` on a backend other than
    the CPU): the don't-look descents (kernel "dontlook", CpuDontLook), the ILS chains
    ("dontlook_chains", CpuChains) and focused ACO's ants ("focused_ants", CpuFocusedAnts)."""
    def on_host():
        return host(*args, getattr(backend, "device", ""))
    return kernel_or_host(backend, kernel, args, on_host, announce=announce, what=f"{what} run")
