"""Many iterated local searches of a tour at once, each whole chain where the tour lives: the
don't-look ILS (lsmgpu/backends/dontlook_chains.py).

The batched ILS (``MultiStart(IteratedLocalSearch, ...)``) steps its chains together, one launch a
descent step for all of them, each step scanning every chain's whole neighbourhood: after a local
kick most of that work is on parts of the tour nothing changed, and the batch waits for its
slowest descent. Here a chain is a thread block that kicks (a local double bridge), descends with
don't-look bits from the kick's six endpoints (2-opt and Or-opt over candidate lists) and accepts
or goes back, on its own, for thousands of kicks a second; the host looks between rounds of a
fixed number of checks (the clock, the target, Ctrl-C, the islands' exchange).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..backends.dontlook import CpuDontLook, descend_rows, dontlook_for
from ..backends.dontlook_chains import MAX_KICKS, MAX_WALK, CpuChains, KickRules, kick_spans, kick_walks
from ..validation import check_count, check_flag, check_number
from .dontlook import DontLookDescent
from .partition import BackgroundMerge
from .population import PopulationSearch

__all__ = ["DontLookILS", "DontLookILSParams"]

#: The defaults below are the measured best on the H100 (runs and figures:
#: docs/benchmarks/populations.md, "The don't-look ILS", "Merging the chains", "Walk kicks").
#: chains on a GPU when `chains` is not given (132 to 512 about equal, 1,024 behind)
GPU_CHAINS = 256
#: the descents' longest Or-opt segment when `segment` is not given: 3, and 5 from SEGMENT_LONGER_FROM cities
SEGMENT, SEGMENT_LONGER, SEGMENT_LONGER_FROM = 3, 5, 3000
#: the best chains' tours an exchange merges when `merge` is not given: (from this many cities, tours), none below
#: the first (60 s, H200: pla33810 64 ahead of 32 on 3 seeds; pla85900 32 ahead of 16 on 4 and of 64 on 2)
MERGE_BY_SIZE = ((15000, 32), (25000, 64), (50000, 32))
#: the chains' longest kicked segments spread from kick_segment / KICK_SPREAD to kick_segment * KICK_SPREAD
KICK_SPREAD = 1.0
#: the walk kicks' steps when `kick_walk` is not given: KICK_WALK below WALK_BELOW cities, else 0 (segment
#: kicks: ahead on rl5915 and rl11849)
KICK_WALK, WALK_BELOW = 128, 5000
#: with the 5-opt chains alone, no `pre_descent` given and no `start_descent` made, their starts are first descended
#: by 2-opt + Or-opt on the CPU, and on a GPU below this many cities: 256 chains on the H200 gained from it against
#: their own first descents on pr2392, rl5915 and rl11849 (10-30 s, 6 of 7 runs) and lost on d15112 and d18512 (30 and
#: 60 s, 6 of 6: 0.18 % against 0.08 on d18512 at 30 s); one chain on the CPU gains (docs/benchmarks/start-up.md,
#: "A 2-opt + Or-opt descent before the 5-opt chains"). Several chains below START_DESCENT_BELOW descend their start
#: themselves instead, so this is for a lone chain.
PRE_DESCENT_GPU_BELOW = 15000
#: with several chains and no `start_descent` given, their shared start is descended once by their own moves below
#: this many cities: 256 chains of the 5-opt checks on the H200 gain from it against the 2-opt + Or-opt descent first
#: on pr2392 (10 s, 3 of 3 seeds: 0.102 % against 0.147), rl5915 (20 s: 0.310 against 0.487) and rl11849 (30 s: 0.627
#: against 0.636) and lose against none on d15112 and d18512 (30 s: 0.114 / 0.107 against 0.107 / 0.084: there the
#: wide descent's optimum is longer than a chain's own, 0.159 % against 0.122 on d18512; start-up.md, "The chains'
#: own descent of their start")
START_DESCENT_BELOW = 15000


def default_start_descent(chains: int, n: int) -> bool:
    """Whether several chains' shared start is descended once by their own moves where `start_descent` is
    not given: with more than one chain below START_DESCENT_BELOW cities."""
    return chains > 1 and n < START_DESCENT_BELOW


def default_pre_descent(chain_alone: bool, backend: str, n: int) -> bool:
    """Whether the starts are descended by 2-opt + Or-opt before the chains where `pre_descent` is
    not given and their own descent of the start is not made: with the 5-opt chains alone, on the CPU,
    or on a GPU below PRE_DESCENT_GPU_BELOW cities."""
    return chain_alone and (backend == "cpu" or n < PRE_DESCENT_GPU_BELOW)


def default_merge(n: int) -> int:
    """The tours an exchange merges on ``n`` cities when `merge` is not given (MERGE_BY_SIZE): below 15,000
    cities merging lost where measured (rl11849 in four runs); from 50,000 a merge of 64 tours holds the
    host busy most of the run and the chains run fewer rounds than the merges gain back."""
    tours = 0
    for cities, merged in MERGE_BY_SIZE:
        if n >= cities:
            tours = merged
    return tours


@dataclass(frozen=True)
class DontLookILSParams:
    """The don't-look ILS's own options (DontLookILS's docstring says what each does); None: the
    defaults that depend on the instance's size or the backend."""

    chains: int | None = None
    kick_segment: int = 300
    kick_spread: float = KICK_SPREAD
    kick_walk: int | None = None
    walk_share: float = 1.0
    exchange_every: int | None = 50
    merge: int | None = None
    round_checks: int = 1024
    candidates: object = None
    segment: int | None = None
    lk: bool = False
    lk_depth: int = 0
    lk_move: int = 2
    chain_alone: bool = False
    pre_descent: bool | None = None
    start_descent: bool | None = None

    def __post_init__(self):
        owner = "DontLookILS"
        counts = (("chains", 1, 2**20), ("kick_segment", 1, 2**30), ("kick_walk", 0, MAX_WALK),
                  ("exchange_every", 1, None), ("merge", 0, None), ("round_checks", 1, 2**40), ("segment", 0, None))
        for name, low, high in counts:
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_count(owner, name, getattr(self, name), low, high))
        spread, share = check_number(owner, "kick_spread", self.kick_spread), check_number(owner, "walk_share",
                                                                                          self.walk_share)
        if not 1 <= spread <= 1000:
            raise ValueError(f"{owner}: `kick_spread` must be within 1 .. 1000, got {self.kick_spread}")
        if not 0 <= share <= 1:
            raise ValueError(f"{owner}: `walk_share` must be within 0 .. 1, got {self.walk_share}")
        for name in ("pre_descent", "start_descent"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_flag(owner, name, getattr(self, name)))


class DontLookILS(PopulationSearch):
    """``chains`` iterated local searches of a tour, each kicked, descended and accepted on its own.

    chains         : how many (None: 256 on a GPU, 1 on the CPU)
    kick_segment   : the kick swaps two adjacent segments of 1 .. kick_segment cities (default 300;
                     50 was 2-4x further from the optimum at 10 s)
    kick_spread    : the chains' longest segments spread geometrically from kick_segment / kick_spread
                     to kick_segment * kick_spread (1: all kick_segment; default KICK_SPREAD)
    kick_walk      : w > 0: walk kicks, the double bridge cut after a random city and the ends of two
                     random walks of w steps from it over the candidate lists (cities near each
                     other: Applegate et al. 2003's kicks for chained Lin-Kernighan), the two shorter
                     of the three arcs swapped; 0: segment kicks (None: 128 below 5,000 cities,
                     0 from there: KICK_WALK, WALK_BELOW)
    walk_share     : the share of the chains that walk-kick, spread evenly over them (0.5: every
                     other chain; the others segment-kick; default 1)
    exchange_every : islands: every this many rounds the worse half of the chains go on from the
                     better half's best tours (the best giving to the worst; default 50); None: never
    merge          : at an exchange, the best tours of the ``merge`` best chains are merged by
                     partition crossover (lsmgpu/search/partition.py: the best tour, part by part
                     improved from the others; in a thread while the GPU runs); where that came out
                     shorter than the best, the worst chain goes on from it at the next exchange
                     (None: none below 15,000 cities, 32 from there, 64 from 25,000, 32 from
                     50,000: `default_merge`; 0 or 1: never)
    round_checks   : checks of every chain between two looks of the host (default 1024)
    candidates, segment, lk, lk_depth, lk_move, chain_alone : the descent's (DontLookDescent's): the
                     problem's ILS candidate lists (or "alpha", an int K, a table), Or-opt segments up
                     to ``segment`` (None: 3, and 5 from 3,000 cities: SEGMENT_LONGER), LK3 moves with
                     ``lk`` (default False), the LK chain with ``lk_depth`` (default 0) of 2-opt moves
                     or, with ``lk_move`` 5, of LKH's 5-opt basis moves, with ``chain_alone`` that
                     chain alone (no other move first);
                     no Or-3opt moves: they swap a kick's two segments back at once (H100, 60 s:
                     pr2392 0.63 % with them, 0.31 without; docs/benchmarks.md)
    pre_descent    : the start tours descended by 2-opt + Or-opt over the problem's ILS lists before
                     the chains (inside the budget): a far shorter first descent for deep checks
                     (None: where ``start_descent`` is not made, with ``chain_alone`` on the CPU, and
                     on a GPU below 15,000 cities: `default_pre_descent`)
    start_descent  : each distinct start tour descended once by the chains' own moves until none
                     moves (a lone tour checked wide on a GPU, as FocusedACO's start), the chains
                     loaded at that local optimum: they kick at once rather than each make the same
                     first descent (None: with more than one chain below 15,000 cities:
                     `default_start_descent`)
    initial        : the start tour of every chain (None: the problem's ``initial_solution``), or
                     one per chain
    backend, seed, callbacks, history : as for every search

    ``run(iterations=, seconds=, target=, stagnation=)``: ``iterations`` is the kicks each chain
    makes, ``stagnation`` counts rounds without a better tour; the result's ``iterations`` is the
    kicks the slowest chain made, and ``counters`` (kicks, checks, moves per chain) is kept on the
    search after the run.
    """

    algorithm = "DontLookILS"
    Params = DontLookILSParams
    iteration_unit = "rounds"
    state_fields = ("kick_seed", "rounds", "counters")
    island_exchange_every = 50          # rounds of 1,024 checks

    def __init__(self, problem, *, params: DontLookILSParams | None = None, initial=None, backend="auto", seed=None,
                 callbacks=None, history: str = "improvements", **options):
        self.params = p = self._params(params, options)
        super().__init__(problem, local_search=None, backend=backend, seed=seed, callbacks=callbacks,
                         history=history)
        if problem.n < 8:
            raise ValueError(f"DontLookILS: a tour of at least 8 cities is kicked, {problem.name} has {problem.n}")
        segment = (SEGMENT_LONGER if problem.n >= SEGMENT_LONGER_FROM else SEGMENT) if p.segment is None else p.segment
        self.rules = DontLookDescent(p.candidates, segment=segment, lk=p.lk, lk_depth=p.lk_depth,
                                     lk_move=p.lk_move, chain_alone=p.chain_alone).bound(problem)
        self.chains = (GPU_CHAINS if self.backend.name != "cpu" else 1) if p.chains is None else p.chains
        self.start_descent = default_start_descent(self.chains, problem.n) if p.start_descent is None \
            else p.start_descent
        self.pre_descent = (not self.start_descent and default_pre_descent(p.chain_alone, self.backend.name, problem.n)) \
            if p.pre_descent is None else p.pre_descent
        self._check_memory("chains", self.chains)
        self.spans = kick_spans(problem.n, p.kick_segment, self.chains, p.kick_spread)
        self.kick_walk = (KICK_WALK if problem.n < WALK_BELOW else 0) if p.kick_walk is None else p.kick_walk
        self.walks = kick_walks(self.chains, self.kick_walk, p.walk_share)
        self.exchange_every = p.exchange_every
        self.merge = default_merge(problem.n) if p.merge is None else p.merge
        self.merging = None
        self.round_checks = p.round_checks
        self.initial = None if initial is None else self._starts(initial)
        self.counters = None

    def _starts(self, initial) -> np.ndarray:
        """The start tours, one per chain (ValueError naming a wrong shape or a non-permutation)."""
        xs = np.asarray(initial)
        if xs.ndim == 1:
            xs = np.broadcast_to(xs, (self.chains, len(xs)))
        if xs.shape != (self.chains, self.problem.n):
            raise ValueError(f"DontLookILS: `initial` must be a tour of {self.problem.n} cities or {self.chains} of "
                             f"them, got shape {xs.shape}")
        for x in np.unique(xs, axis=0):
            self.problem.encoding.validate(x)
        return np.ascontiguousarray(xs)

    def _set_up(self) -> None:
        problem = self.problem
        xs = self.initial
        if xs is None:
            xs = np.broadcast_to(self.start_x, (self.chains, problem.n))
        self.kick_seed = int(self.rng.integers(2**63))
        self.loaded = False
        self._build_chains()
        self.population.load(*self._descended_starts(xs))
        self.loaded = True
        self.rounds = 0
        self._start_merges()

    def _descended_starts(self, xs) -> tuple[np.ndarray, bool]:
        """The chains' start tours, each distinct one descended once on the search's backend inside
        the budget: with ``pre_descent`` by 2-opt + Or-opt over the problem's ILS candidate lists
        (one pass: from a start far from any optimum the 5-opt chains' first descent took most of a
        short run on the CPU, from a 2-opt + Or-opt optimum a fraction of it; docs/benchmarks/
        start-up.md, "A 2-opt + Or-opt descent before the 5-opt chains"), then with
        ``start_descent`` by the chains' own rules until none moves (a lone tour wide on a GPU);
        and whether they are at that local optimum (the chains' first descent then over). The
        GPU's descents equal the CPU's, so both backends' runs are the same. The shortest
        descended tour is the best so far (a deadline or Ctrl-C inside a descent or the chains'
        loading returns it)."""
        if not (self.pre_descent or self.start_descent):
            return xs, False
        starts, rows = np.unique(xs, axis=0, return_inverse=True)
        deadline = None if self.budget.seconds is None else self.t0 + self.budget.seconds
        if self.pre_descent:
            rules = DontLookDescent(segment=self.rules.segment)
            starts = self._descend(rules.population(self.backend, self.problem, len(starts), None), starts, deadline)
        at_optimum = False
        if self.start_descent:
            own = dontlook_for(self.backend, "dontlook", CpuDontLook, self.rules, self.problem.edge_distance(),
                               len(starts), announce="DontLookILS", what="the start's descent")
            starts = self._descend(own, starts, deadline, again=True)
            at_optimum = deadline is None or time.perf_counter() < deadline
        return starts[rows.reshape(-1)], at_optimum

    def _descend(self, engine, starts, deadline, again: bool = False) -> np.ndarray:
        """``starts`` descended by the rows ``engine`` (closed after), with ``again`` from every city
        until a descent makes no move; the shortest kept as the best so far, also where a deadline
        or Ctrl-C cuts the descent."""
        engine.load(starts)
        try:
            descend_rows(engine, deadline=deadline, again=again)
        finally:
            descended, lengths = engine.solutions().astype(np.int64), engine.values()
            engine.close()
            shortest = descended[int(np.argmin(lengths))]
            if np.array_equal(np.sort(shortest), np.arange(len(shortest))):     # measured exactly, on the host
                self._record(shortest, self.problem.sense * float(self.problem.fitness(shortest)))
        return descended

    def _start_merges(self) -> None:
        """The merges' thread (with ``merge`` > 1)."""
        if self.merge > 1:
            self.merging = BackgroundMerge(self.distance.between)
            self.parts.append(self.merging)

    def _build_chains(self) -> None:
        """The chains on the backend, their kicks keyed by ``kick_seed`` and limited by the budget."""
        limit = self.budget.iterations if self.budget.iterations is not None else MAX_KICKS
        kicks = KickRules(self.kick_seed, self.spans, limit, self.walks)
        self.distance = self.problem.edge_distance()
        self.population = dontlook_for(self.backend, "dontlook_chains", CpuChains, self.rules, kicks,
                                       self.distance, self.chains, announce="DontLookILS",
                                       what="the chains")
        self.parts.append(self.population)
        self.device = getattr(self.population, "device", "")

    def _part_states(self) -> dict:
        merging = self.merging.memory() if self.merging else None
        return {**super()._part_states(), "chains": self.population.memory(), "merging": merging}

    def _restore_parts(self, parts: dict) -> None:
        """The chains as the start builds them, then the checkpoint's tours, queues and counters;
        the merge that was running starts again from its tours."""
        self._build_chains()
        self.population.load_memory(parts["chains"])
        self.loaded = True
        self._start_merges()
        if self.merging:
            self.merging.load_memory(parts["merging"])

    def _iterating_part(self):
        return getattr(self, "population", None)

    def _start_solution(self) -> np.ndarray:
        """The start tour of every chain (its best where ``initial`` gives one per chain)."""
        if self.initial is None:
            return super()._start_solution()
        starts = np.unique(self.initial, axis=0)
        return starts[int(np.argmin([self.problem.fitness(x) for x in starts]))].copy()

    def _iterate(self) -> None:
        """A round: every chain's next ``round_checks`` checks, then the host's look."""
        deadline = None if self.budget.seconds is None else self.t0 + self.budget.seconds
        finished = self.population.advance(self.round_checks, deadline)
        bests = self.population.bests()
        k = int(np.argmin(bests))
        improved = bests[k] < self.best and self._record(self.population.best_solution(k), bests[k])
        if not improved:
            self._since_best += 1
        self.counters = self.population.counters()
        self.iteration = int(self.counters["kicks"].min())
        self.evaluations = int(self.counters["checks"].sum()) * self.rules.moves
        self.rounds += 1
        if self.exchange_every and self.rounds % self.exchange_every == 0:
            self._exchange(bests)
        self._finish_iteration(min(bests[k], self.best), improved)
        if finished and self.status is None:
            self.status = "iterations"

    def _last_look(self) -> None:
        """Where the run ends before any chain has ended its first descent (a budget shorter than
        it: the CPU's chain on 18,512 cities and more in 10 s), the shortest chain's tour as it
        stands, part-way down that descent, measured on the host: shorter than the start tour
        the run would return otherwise."""
        if not getattr(self, "loaded", False) or np.isfinite(self.population.bests()).any():
            return
        tour = self.population.solutions()[int(np.argmin(self.population.values()))].astype(np.int64)
        if np.array_equal(np.sort(tour), np.arange(len(tour))):     # Ctrl-C inside a move: a tour still?
            self._record(tour, self.problem.sense * float(self.problem.fitness(tour)))

    @property
    def work(self) -> tuple[int, str]:
        return (int(self.counters["kicks"].sum()) if self.counters else 0), "kicks"

    def _ready(self) -> bool:
        """A tour from elsewhere waits until every chain has ended its first descent."""
        return bool(np.isfinite(self.population.bests()).all())

    def _welcome(self, value, tour) -> bool:
        """The worst chain goes on from a tour offered (``offer``) where it is shorter than that
        chain's best."""
        bests = self.population.bests()
        worst = int(np.argmax(bests))
        if value >= bests[worst]:
            return False
        self.population.adopt_tour(worst, tour, value)
        return True

    def _exchange(self, bests) -> None:
        """The worse half of the chains go on from the better half's best tours, best to worst,
        but the worst from the last exchange's merge where that came out shorter than its best
        tour; the ``merge`` best tours are merged for the next exchange (in a thread, beside the
        GPU's rounds). Not before every chain has ended its first descent (a best of +inf is no
        tour to give)."""
        if not np.isfinite(bests).all():
            return
        order = np.argsort(bests, kind="stable")
        half = len(order) // 2
        sources = np.full(len(order), -1, dtype=np.int64)
        sources[order[::-1][:half]] = order[:half]
        merged = None
        if self.merge > 1 and half:
            seconds = self.budget.seconds
            merged = self.merging.take(None if seconds is None else max(0.0, self.t0 + seconds - time.perf_counter()))
            self.merging.start(self.population.best_solutions(order[:self.merge]))
        if merged is not None:
            sources[order[-1]] = -1
        self.population.adopt(sources)
        if merged is not None:
            self.population.adopt_tour(order[-1], *merged)

    @property
    def merged(self) -> int:
        """Merges that came out shorter than their best tour (0 before a run)."""
        return self.merging.shorter if self.merging else 0

    @property
    def merge_seconds(self) -> float:
        """The merges' time in their thread."""
        return self.merging.seconds if self.merging else 0.0
