"""Focused ant colony optimisation (Skinderowicz 2022, "Improving Ant Colony Optimization efficiency
for solving large TSP instances"): MAX-MIN pheromone on the candidate lists, each ant changing only
a few edges of a source tour, then a don't-look descent from the cities it touched. The NumPy
reference the GPU's ``focused`` kernel (templates/skeleton/focused.cu.j2) equals ant by ant.

An ant of iteration t (ant k) copies its colony's source tour and walks it from city x[p],
p = floor(counter_uniform(seed, t, k, 0) n). At each step (number i) from city ``cur``, with s the
next city of the walk's direction and ``ahead(v)`` how far v lies ahead of cur on the tour, the
candidates v of cur not walked yet (1 <= ahead(v) <= n - walked) weigh w_v = tau[cur, v] eta[cur, v]
(0 for the others); the next city is the first with r < W_v, r = counter_uniform(seed, t, k, 1 + i)
W_31 and W the warp's inclusive scan of the 32 weights (``warp_scan``: the GPU's summation order),
or s where no candidate is left. A next city v other than s moves from between its neighbours
p, q to between cur and s (an Or-opt move of one city, 2-opt steps ({p, v}, {cur, s}) then
({p, cur}, {q, v})), a new edge; cur, s, v, p, q are queued for the descent. The walk stops after
``moves`` such moves, ``walk`` steps, or with 3 cities left. The FACO paper's ant builds a new
tour copying the source's stretches once it has made its moved cities; moving the cities in place
keeps the rest of the tour the source's without copying it, and a GPU block a tour. The ant's tour
then descends (lsmgpu.backends.dontlook, 2-opt and Or-opt) from its queued cities; with the
rules' ``bridges``, where the descent stands still the ant's best bridging move (a double bridge
over the candidates, lsmgpu/backends/bridge.py) is made and the descent goes on from its cities,
until no bridging move shortens the tour.

The pheromone, a colony's own: tau on each city's candidates only; an update keeps ``keep`` of it (at least
tau_min), deposits ``deposit`` on the candidates that are the source's neighbours of their city,
and holds it under tau_max (FACO's trail limits, ``trail_limits``).
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ..budget import DeadlineReached, check_deadline
from ..neighbourhoods.crowns import counter_uniform
from .bridge import find_bridge
from .dontlook import enqueue, improve_city
from .tour_steps import apply_steps

__all__ = ["FocusRules", "CandidatePheromone", "trail_limits", "trail_scale", "warp_scan", "choose_lane",
           "focused_walk", "CpuFocusedAnts", "MAX_ITERATIONS"]

#: iterations the random numbers can count (their step is 32-bit on the GPU)
MAX_ITERATIONS = 2**31 - 1
#: lanes of the GPU's warp that weighs a city's candidates (at most this many candidates)
LANES = 32
#: a CPU ant's descent checks the run's deadline every this many city checks
DEADLINE_CHECKS = 16


class FocusRules:
    """An ant's walk: the random numbers' ``seed``, the moved cities it stops at (``moves``)
    and the steps it may take (``walk``); the ants' ``colonies``, each of as many ants with its
    own source, best tour and pheromone (ant k of colony k // (ants / colonies))."""

    def __init__(self, seed: int, moves: int, walk: int, colonies: int = 1):
        self.seed, self.moves, self.walk, self.colonies = int(seed), int(moves), int(walk), int(colonies)

    def per_colony(self, ants: int, what: str) -> int:
        """The ants of a colony when ``ants`` ants make up the colonies (a clear refusal where
        they do not divide)."""
        if ants % self.colonies:
            raise ValueError(f"{what}: {ants} ants do not make {self.colonies} colonies of as many ants")
        return ants // self.colonies


def trail_scale(length: float) -> float:
    """The length pheromone is measured by: the tour's, or 1 for a tour of length 0 (every city at
    one point: optimal, and only the trails' ratios matter)."""
    return length if length > 0 else 1.0


def trail_limits(length: float, candidates: int, rho: float, p_best: float) -> tuple[float, float]:
    """(tau_min, tau_max) for a best tour of ``length``: tau_max = 1 / (length (1 - rho)), tau_min
    from ``p_best`` over ``candidates`` choices a step (FACO's candidate-list form of MMAS's)."""
    tau_max = 1.0 / (trail_scale(length) * (1.0 - rho))
    root = p_best ** (1.0 / candidates)
    tau_min = tau_max * (1.0 - root) / ((candidates - 1) * root) if candidates > 1 else tau_max
    return min(tau_min, tau_max), tau_max


class CandidatePheromone:
    """tau on every city's candidates (n, K) and the heuristic eta = 1 / d^beta (a distance of 0
    counts as the least positive candidate distance)."""

    def __init__(self, candidates: np.ndarray, between, beta: float):
        self.candidates = np.asarray(candidates, dtype=np.int64)
        n = len(self.candidates)
        d = between(np.repeat(np.arange(n), self.candidates.shape[1]), self.candidates.ravel()).astype(np.float64)
        positive = d[d > 0]
        floor = positive.min() if positive.size else 1.0
        self.eta = (1.0 / np.maximum(d, floor) ** beta).reshape(self.candidates.shape)
        self.tau = np.zeros(self.candidates.shape)

    def fill(self, tau: float) -> None:
        self.tau[:] = tau

    def update(self, source, keep: float, deposit: float, tau_min: float, tau_max: float) -> None:
        """Evaporate (keep ``keep``, at least tau_min), deposit on the ``source`` tour's edges,
        hold under tau_max."""
        source = np.asarray(source, dtype=np.int64)
        n = len(source)
        pos = np.empty(n, dtype=np.int64)
        pos[source] = np.arange(n)
        succ, pred = source[(pos + 1) % n], source[(pos - 1) % n]
        on = (self.candidates == succ[:, None]) | (self.candidates == pred[:, None])
        tau = np.maximum(self.tau * keep, tau_min)
        self.tau = np.minimum(np.where(on, tau + deposit, tau), tau_max)

    def weights(self) -> np.ndarray:
        """tau eta, the ants' weights (n, K)."""
        return self.tau * self.eta


def warp_scan(values: np.ndarray) -> np.ndarray:
    """The inclusive prefix sums over the last axis of up to 32 values (zeros beyond them), as the
    GPU's warp forms them (warp_inclusive_scan, Hillis-Steele: at offsets 1, 2, 4, 8, 16 each lane
    adds the value ``offset`` lanes before it), in the values' float type (float64 for others)."""
    values = np.asarray(values)
    dtype = values.dtype if np.issubdtype(values.dtype, np.floating) else np.float64
    v = np.zeros(values.shape[:-1] + (LANES,), dtype=dtype)
    v[..., :values.shape[-1]] = values
    for offset in (1, 2, 4, 8, 16):
        v[..., offset:] = v[..., offset:] + v[..., :-offset]
    return v


def choose_lane(weights, open_, u: float) -> int | None:
    """The roulette over the open lanes: the first open lane with u W_31 < W_lane (W the warp's
    scan of the open lanes' weights), the last open one where rounding leaves none; None where no
    lane is open."""
    scan = warp_scan(np.where(open_, weights, 0.0))
    if not scan[LANES - 1] > 0:
        return None
    hits = np.flatnonzero(open_ & (u * scan[LANES - 1] < scan[:len(weights)]))
    return int(hits[0] if hits.size else np.flatnonzero(open_)[-1])


def focused_walk(x, pos, weights, candidates, rules: FocusRules, iteration: int, ant: int, between):
    """Ant ``ant``'s walk of iteration ``iteration`` on its copy (x, pos) of the source, in place:
    (its length change, the cities to queue in order)."""
    n = len(x)
    cur = int(x[int(counter_uniform(rules.seed, iteration, ant, 0) * n)])
    way, walked, moved, delta, touched = 1, 1, 0, 0.0, []
    dist = lambda a, b: float(between(np.array([a]), np.array([b]))[0])       # noqa: E731
    for step in range(rules.walk):
        if moved >= rules.moves or walked > n - 3:
            break
        s = int(x[(pos[cur] + way) % n])
        cand = candidates[cur]
        ahead = ((pos[cand] - pos[cur]) * way) % n
        open_ = (ahead >= 1) & (ahead <= n - walked)
        lane = choose_lane(weights[cur], open_, counter_uniform(rules.seed, iteration, ant, 1 + step))
        v = s if lane is None else int(cand[lane])
        if v != s:
            p, q = int(x[(pos[v] - way) % n]), int(x[(pos[v] + way) % n])
            delta += dist(cur, v) + dist(v, s) + dist(p, q) - dist(cur, s) - dist(p, v) - dist(v, q)
            apply_steps(x, pos, [((p, v), (cur, s)), ((p, cur), (q, v))])
            touched += [cur, s, v, p, q]
            moved += 1
            way = 1 if x[(pos[cur] + 1) % n] == v else -1
        cur = v
        walked += 1
    return delta, touched


class CpuFocusedAnts:
    """``ants`` ants walking their colony's source tour and descending, one after another with
    NumPy (the reference), each colony's pheromone and best tour kept (``focus.colonies``
    colonies of ants / colonies ants; ant k of colony k // (ants / colonies)).

    ``start(tour, length, tau, colony)`` sets the colony's source and best to ``tour`` and its
    every tau to ``tau``; ``build(iteration)`` walks and descends every ant (their lengths),
    ``tour(k)`` is ant k's and ``best_tour(colony)`` the colony's best; ``follow(k, length,
    colony)`` makes ant k's tour the colony's next source (k = -1: its best tour); ``keep_best(k,
    colony)`` keeps ant k's tour as the colony's best, ``adopt_best(tour, colony)`` a given one;
    ``deposit(..., colony)`` updates the colony's pheromone from its source
    (CandidatePheromone.update). ``lengths`` holds the sources' lengths.
    An iteration is cut at the run's deadline (``cut_at_deadline``): its finished ants are kept.
    """

    name = "cpu"
    cut_at_deadline = True

    def __init__(self, rules, focus: FocusRules, distance, ants: int, beta: float, device: str = ""):
        self.rules, self.focus, self.between = rules, focus, distance.between
        self.ants, self.device = int(ants), device
        self.per_colony = focus.per_colony(self.ants, "focused ant colony")
        self.pheromone_states = [CandidatePheromone(rules.candidates, distance.between, beta)
                                 for _ in range(focus.colonies)]
        self.checks = np.zeros(self.ants, dtype=np.int64)
        n = len(rules.candidates)
        self.source, self.best = np.zeros((2, focus.colonies, n), dtype=np.int64)
        self.lengths = np.zeros(focus.colonies)
        self.x = np.zeros((self.ants, n), dtype=np.int64)

    def start(self, tour, length: float, tau: float, colony: int = 0) -> None:
        self.source[colony] = self.best[colony] = tour
        self.lengths[colony] = float(length)
        self.pheromone_states[colony].fill(tau)

    def build(self, iteration: int) -> np.ndarray:
        """Every ant's walk from its colony's source and its descent: the ants' tour lengths. At the
        run's deadline the ants not finished get length inf (they are not followed), so that the
        iteration ends with the ants that did finish; DeadlineReached where a colony has none."""
        lengths = np.full(self.ants, np.inf)
        try:
            self._build_into(lengths, iteration)
        except DeadlineReached:
            if np.isinf(lengths.reshape(-1, self.per_colony)).all(axis=1).any():
                raise
        return lengths

    def _build_into(self, lengths: np.ndarray, iteration: int) -> None:
        """``build``'s ants one after another, each length written as the ant finishes."""
        n = self.x.shape[1]
        weights = [state.weights() for state in self.pheromone_states]
        for k in range(self.ants):
            check_deadline("every ant had moved")
            colony = k // self.per_colony
            x = self.x[k]
            x[:] = self.source[colony]
            pos = np.empty(n, dtype=np.int64)
            pos[x] = np.arange(n)
            delta, touched = focused_walk(x, pos, weights[colony], self.rules.candidates, self.focus, iteration, k,
                                          self.between)
            queue, queued = deque(), np.zeros(n, dtype=bool)
            enqueue(touched, queue, queued)
            delta += self._descend(k, x, pos, queue, queued)
            while self.rules.bridges:
                bridge = find_bridge(x, pos, self.rules.candidates, self.between)
                if bridge is None:
                    break
                x[:] = bridge.tour
                pos[x] = np.arange(n)
                enqueue(bridge.cities, queue, queued)
                delta += self._descend(k, x, pos, queue, queued) - bridge.gain
            lengths[k] = self.lengths[colony] + delta

    def _descend(self, k: int, x, pos, queue, queued) -> float:
        """Ant k's descent from its queued cities until the queue is empty: its change of length.
        The run's deadline is checked every DEADLINE_CHECKS checks: one ant's descent with deep
        chains takes up to seconds on the CPU (the ant is dropped; the run returns its best)."""
        delta = 0.0
        while queue:
            if self.checks[k] % DEADLINE_CHECKS == 0:
                check_deadline("the ant's descent ended")
            c = queue.popleft()
            queued[c] = False
            self.checks[k] += 1
            delta += improve_city(c, x, pos, self.rules, self.between, queue, queued) or 0.0
        return delta

    def follow(self, k: int, length: float, colony: int = 0) -> None:
        self.source[colony] = self.best[colony] if k < 0 else self.x[k]
        self.lengths[colony] = float(length)

    def keep_best(self, k: int, colony: int = 0) -> None:
        self.best[colony] = self.x[k]

    def adopt_best(self, tour, colony: int = 0) -> None:
        """A tour from elsewhere as the colony's best kept."""
        self.best[colony] = tour

    def deposit(self, keep: float, deposit: float, tau_min: float, tau_max: float, colony: int = 0) -> None:
        self.pheromone_states[colony].update(self.source[colony], keep, deposit, tau_min, tau_max)

    def pheromone(self, colony: int = 0) -> np.ndarray:
        """The colony's tau (n, K)."""
        return self.pheromone_states[colony].tau.copy()

    def memory(self) -> dict:
        """What the ants keep between iterations (each colony's source and its length, best tour
        and tau; the checks counted), for a checkpoint."""
        return {"source": self.source.copy(), "lengths": self.lengths.copy(), "best": self.best.copy(),
                "tau": np.stack([state.tau for state in self.pheromone_states]), "checks": self.checks.copy()}

    def load_memory(self, memory: dict) -> None:
        """Take back what ``memory()`` wrote (CpuFocusedAnts' or CudaFocusedAnts')."""
        self.source[:], self.best[:], self.lengths[:] = memory["source"], memory["best"], memory["lengths"]
        for state, tau in zip(self.pheromone_states, memory["tau"]):
            state.tau = np.array(tau, dtype=np.float64)
        self.checks = np.array(memory["checks"], dtype=np.int64)

    def tour(self, k: int) -> np.ndarray:
        return self.x[k].astype(np.int32)

    def best_tour(self, colony: int = 0) -> np.ndarray:
        """The colony's best tour kept."""
        return self.best[colony].astype(np.int32)

    def checked(self) -> int:
        """Cities the ants' descents have checked."""
        return int(self.checks.sum())

    def close(self) -> None:
        pass
