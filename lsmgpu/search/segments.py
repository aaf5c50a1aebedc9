"""One tour improved in many places at once: tour-segment decomposition (lsmgpu/backends/
segments.py), the GPU's parallelism on one tour's regions instead of copies of it.

A round cuts the tour at a random position into segments of ``segment_cities`` consecutive
cities, runs an ILS chain on every segment at once (don't-look 2-opt + Or-opt + LK3 descents, LK3 off
with ``lk=False``, over the segment's own candidates, with segment-local kicks; one thread block a
segment, its path in shared memory) and splices the chains' best paths back: a segment's ends stay
fixed, so the tour stays a tour and never gets longer. The next round cuts elsewhere, so what lay
across a cut lies inside a segment. Moves between cities far apart in the tour (close in space)
are no segment's: every ``descent_every`` rounds a don't-look descent of the whole tour makes
them, from the cities whose candidates lie in another segment of the round's cut (LKH's and
POPMUSIC's tour-segment subproblems, all at once on the GPU rather than one after another).

Don't-look bits across rounds: a city is *settled* once all its moves were looked at (every one
inside its segment at a round's end, or the whole tour's descent checked it) and no edge near it
changed since (its own, those up to the Or-opt reach along the tour, its candidates'). The whole
tour's descent starts from the crossing cities not settled: late in a run, when few edges change
a round, it checks a few thousand cities instead of a third of the tour.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..backends.dontlook import CpuDontLook, dontlook_for
from ..backends.dontlook_chains import KickRules, kick_span
from ..backends.segments import SegmentCut, segment_chains_for
from ..validation import check_count
from .dontlook import DontLookDescent, default_lk_depth
from .population import PopulationSearch

__all__ = ["TourSegments", "TourSegmentsParams"]

#: The defaults below are the measured best on the H100 at 60 s (docs/benchmarks/segments.md):
#: segment length when `segment_cities` is not given: SEGMENT_CITIES, fewer where the tour would give
#: fewer than MIN_SEGMENTS segments, never below MIN_CITIES (1,000,000 cities: 8,000 ahead of 4,000
#: and 2,000; pla85900: 2,000 ahead of 1,000)
SEGMENT_CITIES, MIN_SEGMENTS, MIN_CITIES = 8000, 40, 64
#: kicks a chain makes a round when `round_kicks` is not given: its segment's cities / KICKS_PER
KICKS_PER = 4
#: walk kicks' steps (ahead of segment kicks at 1,000,000 cities) and the rounds between two
#: descents of the whole tour (6 ahead of 3 and 1 from the Hilbert tour, the descent being one block's)
KICK_WALK, DESCENT_EVERY = 50, 6
#: the LK chain's levels on a GPU where `lk_depth` is not given (1,000,000 cities at 60 s: 9 levels
#: 0.669 %, 6 levels 0.699 %; docs/benchmarks/segments.md)
SEGMENTS_LK_DEPTH = 9


@dataclass(frozen=True)
class TourSegmentsParams:
    """The tour segments' own options (TourSegments's docstring says what each does)."""

    segment_cities: int | None = None
    round_kicks: int | None = None
    kick_segment: int = 30
    kick_walk: int = KICK_WALK
    descent_every: int = DESCENT_EVERY
    round_checks: int = 1024
    start: str = "curve"
    candidates: object = None
    segment: int = 3
    lk: bool = True
    lk_depth: int | None = None

    def __post_init__(self):
        counts = (("segment_cities", 8, 2**20), ("round_kicks", 0, 2**31 - 1), ("kick_segment", 1, 2**20),
                  ("kick_walk", 0, 256), ("descent_every", 0, None), ("round_checks", 1, 2**40))
        for name, low, high in counts:
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_count("TourSegments", name, getattr(self, name), low, high))
        if self.start not in ("curve", "problem"):
            raise ValueError(f"TourSegments: `start` must be 'curve' or 'problem', got {self.start!r}")


class TourSegments(PopulationSearch):
    """A tour improved segment by segment, every segment at once (the module's docstring says how).

    segment_cities : cities a segment (None: 8,000, fewer where that gives under 40 segments, at
                     least 64: SEGMENT_CITIES, MIN_SEGMENTS, MIN_CITIES; at most half the tour)
    round_kicks    : kicks each segment's chain makes a round (None: a quarter of its cities; 0:
                     descents alone)
    kick_segment   : a segment kick swaps two adjacent stretches of 1 .. kick_segment cities (default 30)
    kick_walk      : w > 0: walk kicks of w steps over the segment's candidates (DontLookILS's; default
                     50), 0: segment kicks
    descent_every  : a descent of the whole tour every this many rounds (default 6; 0: never)
    round_checks   : checks of every chain between two looks of the host (default 1024)
    start          : the start tour where ``initial`` gives none: "curve" (the cities along a
                     Hilbert curve: 0.2 s at 1,000,000 cities against the greedy tour's 10, and
                     as good after 60 s; the default) or "problem" (its ``initial_solution``)
    candidates, segment, lk, lk_depth : the descents' (DontLookDescent's): the problem's ILS candidate
                     lists (or "alpha", an int K, a table), Or-opt segments up to ``segment`` (default 3),
                     LK3 moves with ``lk`` (default on: 1.09 % against 1.29 % at 60 s on 1,000,000
                     cities, 1.22 against 1.52 % on pla85900), the LK chain with ``lk_depth``
                     (default SEGMENTS_LK_DEPTH on a GPU, 0 on the CPU)
    initial        : the start tour (None: ``start``'s)
    backend, seed, callbacks, history : as for every search

    ``run(iterations=, seconds=, target=, stagnation=)``: ``iterations`` is rounds; the last round
    ends at the deadline, its chains' best paths spliced. Needs a tour with coordinates (a TSP whose
    kernels compute distances from them). On the CPU the NumPy reference runs the chains one after
    another: for tests and small tours.
    """

    algorithm = "TourSegments"
    Params = TourSegmentsParams
    iteration_unit = "rounds"
    state_fields = ("tour", "length", "rounds", "kicks", "crossing", "descent_seconds", "settled", "descended")
    island_exchange_every = 1           # rounds of seconds each

    def __init__(self, problem, *, params: TourSegmentsParams | None = None, initial=None, backend="auto",
                 seed=None, callbacks=None, history: str = "improvements", **options):
        self.params = p = self._params(params, options)
        super().__init__(problem, local_search=None, backend=backend, seed=seed, callbacks=callbacks,
                         history=history)
        if getattr(problem, "coords", None) is None or getattr(problem, "gpu_matrix", True):
            raise ValueError(f"TourSegments: {problem.name} has no coordinates its kernels read (a TSP with "
                             "EUC_2D, CEIL_2D or ATT weights); its segments are gathered from them")
        n = problem.n
        if n < 16:
            raise ValueError(f"TourSegments: a tour of at least 16 cities is cut, {problem.name} has {n}")
        wanted = p.segment_cities or max(MIN_CITIES, min(SEGMENT_CITIES, n // MIN_SEGMENTS))
        self.m = min(wanted, n // 2)
        self.round_kicks = self.m // KICKS_PER if p.round_kicks is None else p.round_kicks
        self.descent = DontLookDescent(p.candidates, segment=p.segment, lk=p.lk,
                                       lk_depth=default_lk_depth(p.lk_depth, self.backend, SEGMENTS_LK_DEPTH))
        self.initial = None if initial is None else problem.encoding.validate(np.asarray(initial))

    def _start_solution(self) -> np.ndarray:
        if self.initial is not None:
            return self.initial.copy()
        if self.params.start == "problem":
            return super()._start_solution()
        from ..problems.candidates import hilbert_tour          # lsmgpu.problems imports lsmgpu's modules
        return hilbert_tour(self.problem.coords).astype(np.int64)

    def _set_up(self) -> None:
        self.tour, self.length = self.start_x.copy(), self.best
        self.rounds, self.kicks, self.crossing, self.descent_seconds, self.descended = 0, 0, 0, 0.0, 0
        self.settled = np.zeros(self.problem.n, dtype=bool)
        self._build()

    def _build(self) -> None:
        """The segments' chains and the whole tour's descent on the backend (the candidate lists
        made here, inside the budget)."""
        problem, p = self.problem, self.params
        self.rules = self.descent.bound(problem)
        self.distance = problem.edge_distance()
        rows = problem.n // self.m
        self.spans = kick_span(self.m, p.kick_segment)
        kicks = KickRules(0, self.spans, self.round_kicks, p.kick_walk)
        self.chains = self._chains(self.rules, kicks, rows)
        self.parts.append(self.chains)
        self.whole = None
        if p.descent_every:
            self.whole = dontlook_for(self.backend, "dontlook", CpuDontLook, self.rules, self.distance, 1,
                                      announce="TourSegments", what="the whole tour's descent")
            self.parts.append(self.whole)
        self.device = getattr(self.chains, "device", "")
        self._splice_took = 0.0

    def _chains(self, rules, kicks, rows: int):
        """The ``rows`` segments' chains on the search's backend (RayTourSegments: over actors)."""
        return segment_chains_for(self.backend, rules, kicks, self.distance, rows, self.m, self.algorithm)

    def _restore_parts(self, parts: dict) -> None:
        self._build()

    def _no_time_for_another(self) -> bool:
        """A round ends at the deadline itself (its chains stop there, their paths spliced)."""
        return False

    def _iterate(self) -> None:
        """A round: cut, every segment's chain, splice; the whole tour's descent where due."""
        p, n = self.params, self.problem.n
        seconds = self.budget.seconds
        deadline = None if seconds is None else self.t0 + seconds - self._splice_took
        cut = SegmentCut(self.tour, self.m, int(self.rng.integers(n)), self.rules, self.distance.table,
                         self.problem.dist)
        self.chains.kick_rules = KickRules(int(self.rng.integers(2**63)), self.spans, self.round_kicks, p.kick_walk)
        self.chains.set_cut(cut)
        start = cut.identity()
        self.chains.load(start)
        before = cut.start_lengths
        while not (finished := self.chains.advance(p.round_checks, deadline)):
            if deadline is not None and time.perf_counter() >= deadline:
                break
        started = time.perf_counter()
        after = self.chains.bests()
        counters = self.chains.counters()
        self.kicks += int(counters["kicks"].sum())
        self.evaluations += int(counters["checks"].sum()) * self.rules.moves
        better = np.flatnonzero(after < before)
        spliced = cut.splice(self.chains.best_solutions(better), better)
        self.length -= float((before[better] - after[better]).sum())
        self._unsettle(self.tour, spliced)
        self.tour = spliced
        if finished:
            self.settled[cut.inner] = True           # at their segment's local optimum, all their moves in it
        self.rounds += 1
        self.crossing += len(cut.crossing)           # counted with its round (a round cut short is neither)
        if self.whole is not None and self.rounds % p.descent_every == 0 and \
                (deadline is None or time.perf_counter() < deadline):
            descent = time.perf_counter()
            self._descend_whole(cut.crossing[~self.settled[cut.crossing]], deadline)
            self.descent_seconds += time.perf_counter() - descent
        self._splice_took = time.perf_counter() - started
        self.iteration = self.rounds
        improved = self._record(self.tour, self.length)
        self._finish_iteration(self.length, improved)

    def _descend_whole(self, cities, deadline) -> None:
        """The whole tour to a don't-look local optimum from ``cities`` (until the deadline); they
        and the cities its moves touched are settled where it ends before the deadline."""
        if not len(cities):
            return
        self.whole.load(self.tour[None, :], cities)
        _, evaluated, finished = self.whole.descend(np.ones(1, bool), "best", deadline)
        self.evaluations += int(evaluated.sum())
        self.descended += len(cities)
        descended = self.whole.solutions()[0].astype(np.int64)
        self.length = float(self.whole.values()[0])
        moved = self._unsettle(self.tour, descended)
        self.tour = descended
        if finished:
            self.settled[cities] = True
            self.settled[moved] = True               # queued again by the descent's own moves

    def _unsettle(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Unsettle the cities near a changed edge of ``before`` -> ``after`` (see the module's
        docstring); the cities whose tour neighbours changed are returned."""
        moved = np.flatnonzero((_neighbours(before) != _neighbours(after)).any(axis=1))
        if not len(moved):
            return moved
        rules, reach = self.rules, max(self.params.segment, 1) + 1
        near = np.zeros(len(after), dtype=bool)
        near[moved] = True
        near = _along(after, near, reach)
        near |= near[rules.candidates].any(axis=1)
        if rules.or3 or rules.lk:                    # their moves reach the candidates' neighbours' candidates
            near = _along(after, near, 1)
            near |= near[rules.candidates].any(axis=1)
        self.settled &= ~near
        return moved

    def _welcome(self, value, tour) -> bool:
        """An offered tour (another island's) replaces the search's where it is shorter (none of
        its cities settled)."""
        if value >= self.length:
            return False
        self.tour, self.length = np.array(tour, dtype=np.int64), float(value)
        self.settled[:] = False
        return True

    @property
    def descended_share(self) -> float:
        """The mean share of the cities the whole tour's descents started from, over the rounds so far."""
        return self.descended / max(1, self.rounds * self.problem.n)

    @property
    def crossing_share(self) -> float:
        """The mean share of the cities whose moves were not all their segment's (the whole tour's
        descent starts from them), over the rounds so far."""
        return self.crossing / max(1, self.rounds * self.problem.n)

    @property
    def work(self) -> tuple[int, str]:
        return getattr(self, "kicks", 0), "kicks"


def _neighbours(tour: np.ndarray) -> np.ndarray:
    """(n, 2): each city's two tour neighbours, the smaller first (the same whichever way round)."""
    pair = np.empty((len(tour), 2), dtype=np.int64)
    pair[tour, 0] = np.roll(tour, 1)
    pair[tour, 1] = np.roll(tour, -1)
    pair.sort(axis=1)
    return pair


def _along(tour: np.ndarray, cities: np.ndarray, reach: int) -> np.ndarray:
    """The cities within ``reach`` places along ``tour`` of one of ``cities`` (a mask over cities)."""
    placed = cities[tour]
    near = placed.copy()
    for step in range(1, reach + 1):
        near |= np.roll(placed, step) | np.roll(placed, -step)
    out = np.empty_like(cities)
    out[tour] = near
    return out
