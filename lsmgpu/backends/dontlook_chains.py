"""Iterated local search chains made of don't-look descents: B chains of one tour each, the whole
chain (kick, descent, acceptance) where the tour lives. The NumPy reference the GPU's ``chains``
kernel (templates/skeleton/dontlook_chains.cu.j2) equals row by row.

A chain's descent is lsmgpu.backends.dontlook's: a queue of cities, each check applying the
city's best improving 2-opt or Or-opt move and queueing the endpoints of the edges it removed.
Where the queue runs dry the descent has ended and the chain

1. accepts its tour if it is not longer than its best (the best becomes it), else goes back to
   its best tour (so the accepted tour is always the chain's best: ILS "better-equal");
2. unless it has made ``limit`` kicks, kicks: kick number t of chain k swaps two adjacent
   segments (a double bridge), drawn by ``counter_uniform(seed, t, k, draw)``. A segment kick
   (``walk`` 0) keeps it local: p = floor(u0 n), l1 = 1 + floor(u1 span), l2 = 1 + floor(u2 span)
   (span: chain k's longest segment, ``KickRules.span_of(k)``). A walk kick (``walk`` w > 0) cuts
   after three cities near each other: v = x[floor(u0 n)] and the ends of two random walks of w
   steps from v over the candidate lists (step s of walk j of try t takes candidate
   floor(u K), u of draw 3 + (2t + j) w + s), the first of WALK_TRIES tries whose three cities
   differ; the three cuts part the tour into three arcs and the two shorter swap (p: the cut
   before them, l1, l2 their lengths); where no try gives three cities, the segment kick. With
   B = x[p+1 .. p+l1], C = x[p+l1+1 .. p+l1+l2], a = x[p] and d = x[p+l1+l2+1] (positions mod n),
   a B C d becomes a C B d: three 2-opt steps ({a, b1}, {cl, d}), ({a, cl}, {c1, bl}),
   ({cl, bl}, {b1, d}); the six endpoints are queued and the next descent starts.

The first descent starts from the loaded tour with every city queued (in tour order) and a best
of +inf, so it is accepted. ``advance(budget)`` runs up to ``budget`` checks of every chain (ends
of descents and kicks do not count); ``adopt(sources)`` restarts chains from others' best tours
(islands); ``CpuChains`` is the host's, ``backend.dontlook_chains`` the GPU's (both through
lsmgpu.backends.dontlook.dontlook_for). A cut made by the budget falls at the same check on both backends, so the chains
equal each other after every call, not only at the end.
"""
from __future__ import annotations

import copy
import time
from collections import deque

import numpy as np

from ..budget import check_deadline
from ..neighbourhoods.crowns import counter_uniform
from .dontlook import enqueue, improve_city
from .tour_steps import apply_steps

__all__ = ["KickRules", "CpuChains", "kick_span", "kick_spans", "kick_walks", "kick_cuts", "plan_kick", "MAX_KICKS",
           "MAX_WALK"]

#: kicks a chain can count (the kernel's kick counter and the random numbers' step are 32-bit)
MAX_KICKS = 2**31 - 1
#: a walk kick's longest random walk (steps over the candidate lists)
MAX_WALK = 256
#: a walk kick's tries at three distinct cities before it falls back to the segment kick
WALK_TRIES = 4


class KickRules:
    """The chains' kicks: the random numbers' ``seed``, the longest kicked segment ``span`` (one for
    every chain, or one per chain), the kicks each chain makes (``limit``) and the walk kicks'
    steps (``walk``, one for every chain or one per chain; 0: segment kicks)."""

    def __init__(self, seed: int, span, limit: int, walk=0):
        if not 0 <= int(limit) <= MAX_KICKS:
            raise ValueError(f"the kicks a chain makes (iterations) must be within 0 .. {MAX_KICKS:,} (a 32-bit "
                             f"counter on the GPU), got {limit:,}")
        walks = np.atleast_1d(np.asarray(walk, dtype=np.int64))
        if walks.ndim != 1 or len(walks) == 0 or walks.min() < 0 or walks.max() > MAX_WALK:
            raise ValueError(f"a walk kick's steps must be within 0 .. {MAX_WALK} (0: segment kicks), one or one "
                             f"per chain, got {walk}")
        self.walks = walks.astype(np.int32)
        spans = np.atleast_1d(np.asarray(span, dtype=np.int64))
        if spans.ndim != 1 or len(spans) == 0 or spans.min() < 1 or spans.max() >= 2**31:
            raise ValueError(f"a kick's longest segment must be 1 .. 2**31 - 1 cities, one or one per chain, "
                             f"got {span}")
        self.seed, self.spans, self.limit = int(seed), spans.astype(np.int32), int(limit)

    def span_of(self, chain: int) -> int:
        """Chain ``chain``'s longest kicked segment."""
        return int(self.spans[chain if len(self.spans) > 1 else 0])

    def walk_of(self, chain: int) -> int:
        """Chain ``chain``'s walk kicks' steps (0: segment kicks)."""
        return int(self.walks[chain if len(self.walks) > 1 else 0])

    def for_rows(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``rows`` chains' longest segments and walks (ValueError where there are spans or walks
        for another count)."""
        for name, values in (("kick spans", self.spans), ("kick walks", self.walks)):
            if len(values) not in (1, rows):
                raise ValueError(f"{len(values)} {name} given for {rows} chains")
        return tuple(np.ascontiguousarray(np.broadcast_to(v, (rows,))) for v in (self.spans, self.walks))


def kick_span(n: int, segment):
    """The longest kicked segment on n cities: ``segment``, at least 1 and at most (n - 3) // 2 (the
    two segments and their ends a, d are then distinct); of one segment an int, of an array of
    them an int64 array."""
    spans = np.clip(np.asarray(segment).astype(np.int64), 1, max(1, (n - 3) // 2))
    return int(spans) if spans.ndim == 0 else spans


def kick_spans(n: int, segment: int, chains: int, spread: float) -> np.ndarray:
    """The chains' longest kicked segments, spread geometrically from segment / spread (chain 0) to
    segment * spread (the last chain), each a ``kick_span`` on n cities: chains that kick harder
    or softer, so the islands keep the ones whose kicks suit the instance."""
    exponents = np.linspace(-1.0, 1.0, chains) if chains > 1 else np.zeros(1)
    return kick_span(n, np.round(segment * spread ** exponents))       # halves to even, as Python's round


def kick_walks(chains: int, walk: int, share: float) -> np.ndarray:
    """The chains' walk kicks' steps: ``walk`` for a ``share`` of them spread evenly over the chains
    (chain k where floor((k + 1) share) > floor(k share): every other one for 0.5), 0 (segment
    kicks) for the others."""
    k = np.arange(chains)
    walks = np.floor((k + 1) * share + 1e-9) > np.floor(k * share + 1e-9)
    return np.where(walks, int(walk), 0).astype(np.int64)


def kick_cuts(x, pos, kicks: KickRules, kick: int, chain: int, candidates) -> tuple[int, int, int]:
    """Kick number ``kick`` of chain ``chain`` on tour x (positions pos): (p, l1, l2), the segments
    x[p+1 .. p+l1] and x[p+l1+1 .. p+l1+l2] it swaps (the module's docstring says how)."""
    n = len(x)
    walk = kicks.walk_of(chain)
    u = counter_uniform(kicks.seed, kick, chain, np.arange(3 + 2 * WALK_TRIES * walk))
    p = int(np.floor(u[0] * n))
    k = candidates.shape[1]
    for t in range(WALK_TRIES if walk else 0):
        cuts = {p}
        for j in range(2):
            c = int(x[p])
            for s in range(walk):
                c = int(candidates[c, int(np.floor(u[3 + (2 * t + j) * walk + s] * k))])
            cuts.add(int(pos[c]))
        if len(cuts) == 3:
            q0, q1, q2 = sorted(cuts)
            arcs = (n - q2 + q0, q1 - q0, q2 - q1)                  # the arc the swap leaves out first
            longest = int(np.argmax(arcs))
            start = (q0, q1, q2)[longest]
            return start, arcs[(longest + 1) % 3], arcs[(longest + 2) % 3]
    span = kicks.span_of(chain)
    return p, 1 + int(np.floor(u[1] * span)), 1 + int(np.floor(u[2] * span))


def plan_kick(x, pos, kicks: KickRules, kick: int, chain: int, between, candidates):
    """Kick number ``kick`` of chain ``chain`` on tour x (positions pos): (its length change, its
    2-opt steps, the six endpoints to queue)."""
    n = len(x)
    p, l1, l2 = kick_cuts(x, pos, kicks, kick, chain, candidates)
    a, b1, bl, c1, cl, d = (int(x[(p + o) % n]) for o in (0, 1, l1, l1 + 1, l1 + l2, l1 + l2 + 1))
    lengths = between(np.array([a, cl, bl, a, bl, cl]), np.array([c1, b1, d, b1, c1, d])).astype(np.float64)
    delta = lengths[:3].sum() - lengths[3:].sum()
    steps = [((a, b1), (cl, d)), ((a, cl), (c1, bl)), ((cl, bl), (b1, d))]
    return delta, steps, [a, b1, bl, c1, cl, d]


class CpuChains:
    """``rows`` chains stepped with NumPy, one after another (the reference). A round is cut at the
    run's deadline (``cut_at_deadline``): ``advance`` looks at it before every check (a check of
    the 5-opt chains of 100 levels takes milliseconds in NumPy)."""

    name = "cpu"
    cut_at_deadline = True

    def __init__(self, rules, kicks: KickRules, distance, rows: int, device: str = ""):
        self.rules, self.kick_rules, self.between = rules, kicks, distance.between
        self.rows, self.device = int(rows), device
        kicks.for_rows(self.rows)                       # a span for every chain, or one for all

    def load(self, xs, at_optimum: bool = False) -> None:
        """Start tours (rows x n): every city queued, no best yet; ``at_optimum``: tours already at
        a local optimum of these rules, none queued and each its chain's best (the chains kick at
        once). Rows are set up in blocks of about a million cities, the run's deadline checked
        between them (a million chains take seconds)."""
        xs = np.asarray(xs)
        B, n = xs.shape
        self.x, self.pos = np.empty((B, n), dtype=np.int64), np.empty((B, n), dtype=np.int64)
        self.current, self.queues = np.empty(B), []
        rows = max(1, 2**20 // n)
        for first in range(0, B, rows):
            check_deadline("the chains' start tours were loaded")
            x = self.x[first:first + rows]
            x[:] = xs[first:first + rows]
            np.put_along_axis(self.pos[first:first + rows], x, np.broadcast_to(np.arange(n), x.shape), axis=1)
            self.current[first:first + rows] = self._tour_lengths(first, x)
            self.queues.extend((deque() for _ in x) if at_optimum else (deque(row) for row in x.tolist()))
        self.best, self.best_x = (self.current.copy() if at_optimum else np.full(B, np.inf)), self.x.copy()
        self.queued = np.full((B, n), not at_optimum)
        self.kicks, self.checks, self.made = (np.zeros(B, dtype=np.int64) for _ in range(3))
        self.idle = np.zeros(B, dtype=bool)

    def _tour_lengths(self, first: int, x) -> np.ndarray:
        """The lengths of the tours x (rows first, first + 1, ..)."""
        return self.between(x, np.roll(x, -1, axis=1)).sum(axis=1)

    def advance(self, budget: int, deadline: float | None = None) -> bool:
        """Up to ``budget`` checks of every chain (fewer once the ``deadline``, a time.perf_counter()
        value, has passed: looked at before every check); whether every chain has made its last
        kick and ended its descent."""
        for k in range(self.rows):
            self._advance(k, budget, deadline)
        return bool(self.idle.all())

    def _advance(self, k: int, budget: int, deadline) -> None:
        x, pos, queue, queued = self.x[k], self.pos[k], self.queues[k], self.queued[k]
        done = 0
        while not self.idle[k]:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if not queue:
                self._settle(k)
                self.idle[k] = self.kicks[k] >= self.kick_rules.limit
                if self.idle[k]:
                    break
                delta, steps, touched = plan_kick(x, pos, self.kick_rules, int(self.kicks[k]), k, self.between,
                                                   self.rules.candidates)
                self.current[k] += delta
                self.kicks[k] += 1
                apply_steps(x, pos, steps)
                enqueue(touched, queue, queued)
                continue
            if done >= budget:
                break
            c = queue.popleft()
            queued[c] = False
            done += 1
            delta = improve_city(c, x, pos, self.rules, self.between, queue, queued)
            if delta is not None:
                self.current[k] += delta
                self.made[k] += 1
        self.checks[k] += done

    def _settle(self, k: int) -> None:
        """The end of chain k's descent: accepted (best <- tour) or back to its best."""
        if self.current[k] <= self.best[k]:
            self.best[k], self.best_x[k] = self.current[k], self.x[k]
        else:
            self.current[k], self.x[k] = self.best[k], self.best_x[k]
            self.pos[k][self.x[k]] = np.arange(self.x.shape[1])

    def adopt(self, sources) -> None:
        """Chain k goes on from chain sources[k]'s best tour where sources[k] >= 0 (no source adopts)."""
        for k, s in enumerate(sources):
            if s >= 0:
                self.adopt_tour(k, self.best_x[s], self.best[s])

    def adopt_tour(self, k: int, tour, length: float) -> None:
        """Chain k goes on from ``tour`` (of that ``length``) as its best and its tour."""
        self.x[k] = self.best_x[k] = tour
        self.pos[k][self.x[k]] = np.arange(self.x.shape[1])
        self.current[k] = self.best[k] = length
        self.queues[k].clear()
        self.queued[k] = False
        self.idle[k] = self.kicks[k] >= self.kick_rules.limit

    def bests(self) -> np.ndarray:
        return self.best.copy()

    def best_solution(self, k: int) -> np.ndarray:
        return self.best_x[k].astype(np.int32)

    def best_solutions(self, rows) -> np.ndarray:
        """The best tours of the chains ``rows``, in that order."""
        return self.best_x[np.asarray(rows)].astype(np.int32)

    def solutions(self) -> np.ndarray:
        return self.x.astype(np.int32)

    def values(self) -> np.ndarray:
        return self.current.copy()

    def counters(self) -> dict:
        """Per chain: kicks made, cities checked, improving moves applied."""
        return {"kicks": self.kicks.copy(), "checks": self.checks.copy(), "moves": self.made.copy()}

    #: what a chain keeps between rounds
    STATE = ("x", "pos", "current", "queues", "best", "best_x", "queued", "kicks", "checks", "made", "idle")

    def memory(self) -> dict:
        """Every chain's state between rounds (tours, queues, don't-look bits, bests, counters),
        copied, for a checkpoint."""
        return {name: copy.deepcopy(getattr(self, name)) for name in self.STATE}

    def load_memory(self, memory: dict) -> None:
        """Take back what ``memory()`` wrote; a chain is idle where it has made this run's kicks
        (a resumed run may allow more than the checkpointed one did)."""
        for name in self.STATE:
            setattr(self, name, copy.deepcopy(memory[name]))
        self.idle = self.kicks >= self.kick_rules.limit

    def close(self) -> None:
        pass
