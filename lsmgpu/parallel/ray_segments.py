"""One tour's segments spread over Ray actors, one GPU each: TourSegments over several GPUs.

The driver cuts the tour, hands each actor a contiguous share of the segments (their cities,
renumbered candidates and coordinates: lsmgpu.backends.segments.SegmentCut.part), and splices
the best paths they return; each actor runs its share's chains on its own backend (the chains'
kernel on its GPU, or the NumPy reference), a round per call, until the chains end or the
round's deadline. The whole tour's descent, the cuts and the splices stay on the driver.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..backends import resolve
from ..backends.segments import segment_chains_for
from ..search.segments import TourSegments, TourSegmentsParams
from ..validation import check_count
from .distributed import ActorBuilds, actor_device, end_actors, ray_connected, ray_module

__all__ = ["RayTourSegments", "RaySegmentsParams", "SegmentActor", "RaySegmentChains"]


class SegmentActor(ActorBuilds):
    """What an actor holds: the problem and the chains of its share of the segments (``rows`` of
    ``m`` cities) on its backend."""

    def __init__(self, problem, rules, kicks, rows: int, m: int, backend):
        self.problem, self.backend_choice = problem, backend
        self.chains = segment_chains_for(resolve(backend, problem), rules, kicks, problem.edge_distance(), rows, m,
                                         "RayTourSegments")

    def device(self) -> str:
        return actor_device(self.problem, {"backend": self.backend_choice})

    def round(self, part, kicks, budget: int, deadline):
        """The share's chains from the segments ``part``, with ``kicks``, until they end or the
        ``deadline`` (a time.time() value): (their best lengths, best tours, counters)."""
        part.dist = self.problem.dist
        chains = self.chains
        chains.kick_rules = kicks
        chains.set_cut(part)
        chains.load(part.identity())
        until = None if deadline is None else time.perf_counter() + (deadline - time.time())
        while not chains.advance(budget, until):
            if until is not None and time.perf_counter() >= until:
                break
        return chains.bests(), chains.best_solutions(np.arange(part.rows)), chains.counters()


class RaySegmentChains:
    """The segments' chains of a cut, spread over ``actors`` (the chains' protocol as TourSegments
    uses it: ``set_cut``, ``load``, ``advance``, ``bests``, ``best_solutions``, ``counters``):
    actor a takes segments shares[a] .. shares[a + 1] - 1."""

    def __init__(self, actors, shares, kicks, device: str):
        self.actors, self.shares, self.kick_rules, self.device = actors, shares, kicks, device

    def set_cut(self, cut) -> None:
        self.cut = cut

    def load(self, xs) -> None:
        """Nothing to do here: each actor loads its share when the round starts (``advance``)."""

    def advance(self, budget: int, deadline: float | None = None) -> bool:
        """The round on every actor at once, to its end or the ``deadline`` (a
        time.perf_counter() value); True: the round is over."""
        ray = ray_module()
        wall = None if deadline is None else time.time() + (deadline - time.perf_counter())
        calls = [actor.round.remote(self.cut.part(a, b), self.kick_rules, budget, wall)
                 for actor, a, b in zip(self.actors, self.shares[:-1], self.shares[1:])]
        results = ray.get(calls)
        self._bests = np.concatenate([r[0] for r in results])
        self._best_x = np.concatenate([r[1] for r in results])
        self._counters = {key: np.concatenate([r[2][key] for r in results]) for key in results[0][2]}
        return True

    def bests(self) -> np.ndarray:
        return self._bests.copy()

    def best_solutions(self, rows) -> np.ndarray:
        return self._best_x[np.asarray(rows, dtype=np.int64)]

    def counters(self) -> dict:
        return {key: value.copy() for key, value in self._counters.items()}

    def close(self) -> None:
        end_actors(self.actors)
        self.actors = []


@dataclass(frozen=True)
class RaySegmentsParams(TourSegmentsParams):
    """TourSegments's options, and the actors: ``actors`` (None: one per GPU of the Ray cluster,
    2 without GPUs) and ``address`` (the Ray cluster; None: start one here)."""

    actors: int | None = None
    address: str | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.actors is not None:
            object.__setattr__(self, "actors", check_count("RayTourSegments", "actors", self.actors, 1, 4096))


class RayTourSegments(TourSegments):
    """TourSegments with the segments' chains spread over Ray actors (one GPU each where the
    cluster has GPUs, else on the CPU backend); the driver cuts, splices and runs the whole
    tour's descent on its own ``backend``. Options: TourSegments's, ``actors``, ``address``."""

    algorithm = "RayTourSegments"
    Params = RaySegmentsParams

    def _chains(self, rules, kicks, rows: int):
        """The actors, each with a contiguous share of the ``rows`` segments (started now, inside
        the budget), as one set of chains."""
        p = self.params
        ray = ray_connected(p.address)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        count = min(rows, p.actors or gpus or 2)
        shares = np.linspace(0, rows, count + 1).round().astype(int)
        Actor = ray.remote(SegmentActor).options(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1)
        backend = "auto" if gpus else "cpu"
        actors = [Actor.remote(self.problem, rules, kicks, int(b - a), self.m, backend)
                  for a, b in zip(shares[:-1], shares[1:])]
        devices = ray.get([actor.device.remote() for actor in actors])
        return RaySegmentChains(actors, shares, kicks, ", ".join(devices))
