"""Don't-look ILS islands over Ray actors: one ``DontLookILS`` per GPU, exchanging best tours.

``RayMultiStart`` spreads independent starts; here each actor (one GPU each, ``num_gpus=1``; CPU
actors where Ray sees no GPU) runs one ``lsmgpu.DontLookILS`` of many chains for the whole budget,
and every ``exchange_every`` rounds of its own it posts its best tour to a ``Board`` actor and
takes back the best tour any island posted, which its worst chain then goes on from where it is
shorter (``DontLookILS.offer``). Only one tour travels each way, never a population. The exchange
is asynchronous (an island never waits for another), so runs on several actors are not
reproducible step by step; each island's own search is, given its seed.

As for ``RayMultiStart``: ``seconds`` is the whole run's (the actors' start-up included); at the
deadline, on a target reached or on Ctrl-C every island is told to stop and returns its best so
far; an island whose actor dies is reported in ``MultiStartResult.lost``, and the best tour it
posted stays on the board (``board_value``, ``board_tour`` after the run).
"""
from __future__ import annotations

import dataclasses
import logging
import time

import numpy as np

from ..budget import Budget
from ..validation import check_count
from .distributed import actor_device, ray_module
from .result import MultiStartResult
from .seeds import spawn_seeds

__all__ = ["RayIslands", "Board", "IslandRunner"]

log = logging.getLogger("lsmgpu")


class Board:
    """The islands' meeting place: the best tour posted so far."""

    def __init__(self):
        self.value, self.tour, self.posts = np.inf, None, 0

    def post(self, value: float, tour):
        """Keep ``tour`` (minimised ``value``) if it is the best; the best (value, tour) where it is
        better than the poster's, else None."""
        self.posts += 1
        if value < self.value:
            self.value, self.tour = float(value), np.array(tour, copy=True)
        return (self.value, self.tour) if self.value < value else None

    def best(self):
        return self.value, self.tour, self.posts


class IslandRunner:
    """What an actor holds: the problem, the search's options and a stop flag the driver sets
    while the island runs (the actor serves two calls at once)."""

    def __init__(self, problem, options):
        self.problem, self.options, self.stopping = problem, options, False

    def device(self) -> str:
        return actor_device(self.problem, self.options)

    def run(self, seed, board, exchange_every: int, iterations, deadline, target):
        """One DontLookILS island until its budget or the driver's stop: (its SearchResult, the
        tours it took from the board, kicks made)."""
        from ..search import DontLookILS
        import ray
        left = None if deadline is None else max(0.0, deadline - time.time())
        holder = {}

        def exchange(state) -> bool:
            search = holder["search"]
            if search.rounds % exchange_every == 0 and search.best_x is not None:
                offered = ray.get(board.post.remote(float(search.best), search.best_x))
                if offered is not None:
                    search.offer(offered[1])
            return bool(self.stopping)

        search = DontLookILS(self.problem, seed=seed, callbacks=[exchange], **self.options)
        holder["search"] = search
        result = search.run(iterations, seconds=left, target=target)
        if search.best_x is not None:        # before the result: the driver then finds it on the board
            ray.get(board.post.remote(float(search.best), search.best_x))
        if self.stopping and result.status == "callback":         # stopped by the driver: say why
            result = dataclasses.replace(result, status=self.stopping)
        return result, search.migrants, int(search.counters["kicks"].sum()) if search.counters else 0

    def stop(self, reason: str = "interrupted") -> None:
        self.stopping = reason


class RayIslands:
    """``islands`` DontLookILS searches of ``problem`` over Ray actors, exchanging best tours every
    ``exchange_every`` rounds (default 50) through a board.

    ``islands``: actors (default: one per GPU Ray sees, else 2 on CPUs); ``seed``: spawned one per
    island; ``address``: the Ray cluster (default: start one here); ``options`` go to every
    DontLookILS (``chains``, ``kick_segment``, ``backend`` ...; its own ``exchange_every`` among its
    chains is ``island_exchange``).
    """

    def __init__(self, problem, *, islands: int | None = None, exchange_every: int = 50, seed=None,
                 address: str | None = None, island_exchange: int | None = 50, **options):
        self.problem = problem
        self.islands = check_count("RayIslands", "islands", islands, 1)
        self.exchange_every = check_count("RayIslands", "exchange_every", exchange_every, 1)
        self.seed, self.address = seed, address
        self.options = {**options, "exchange_every": island_exchange}
        self.actors: list = []
        self.board = self.kicks = self.migrants = None

    def _stop_actors(self, ray) -> None:
        for actor in self.actors + [self.board]:
            if actor is not None:
                ray.kill(actor)

    def _start(self, ray):
        if not ray.is_initialized():
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        count = self.islands or gpus or 2
        Actor = ray.remote(IslandRunner).options(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1,
                                                 max_concurrency=2)
        self.actors = [Actor.remote(self.problem, self.options) for _ in range(count)]
        self.board = ray.remote(Board).options(num_cpus=0).remote()
        return ray.get([a.device.remote() for a in self.actors])

    def run(self, iterations=None, *, seconds=None, target=None, progress=None) -> MultiStartResult:
        """Run the islands (``iterations``: kicks a chain makes); ``progress(k, result)`` as each
        island's result arrives. After it: ``kicks`` and ``migrants`` (tours taken from the board)
        per island, and the board's best (``board_value``, ``board_tour``, ``posts``)."""
        Budget.checked("RayIslands", iterations, None, seconds, target, required=True)
        ray = ray_module()
        t0 = time.time()
        try:
            devices = self._start(ray)
        except KeyboardInterrupt:           # Ctrl-C while the actors start: nothing ran yet
            self._stop_actors(ray)
            return MultiStartResult.gather([None] * len(self.actors), time.time() - t0, "interrupted",
                                           self.problem.sense)
        deadline = None if seconds is None else t0 + seconds
        seeds = spawn_seeds(self.seed, len(self.actors))
        pending = {self.actors[a].run.remote(seeds[a], self.board, self.exchange_every, iterations, deadline,
                                             target): a for a in range(len(self.actors))}
        results, workers, lost = [None] * len(self.actors), {}, []
        self.kicks, self.migrants = [0] * len(self.actors), [0] * len(self.actors)
        status, stopped = "done", False

        def stop_all(reason):
            for ref, a in pending.items():
                self.actors[a].stop.remote(reason)

        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                if deadline is not None and time.time() > deadline + 1.0 and not stopped:
                    stopped, status = True, "seconds"
                    stop_all("seconds")
                for ref in ready:
                    a = pending.pop(ref)
                    try:
                        result, self.migrants[a], self.kicks[a] = ray.get(ref)
                    except ray.exceptions.RayActorError as exc:
                        log.warning("island %d: its actor died (%s)", a, type(exc).__name__)
                        lost.append(a)
                        continue
                    except ray.exceptions.RayTaskError as exc:   # bad input: the island's own error
                        cause = getattr(exc, "cause", None)
                        raise (cause if isinstance(cause, Exception) else exc) from None
                    results[a], workers[a] = result, devices[a]
                    if progress is not None:
                        progress(a, result)
                    if result.status == "target" and not stopped:
                        stopped, status = True, "target"
                        stop_all("stopped")
        except KeyboardInterrupt:
            status = "interrupted"
            stop_all("interrupted")
            for ref, a in list(pending.items()):
                try:
                    results[a], self.migrants[a], self.kicks[a] = ray.get(ref, timeout=30)
                    workers[a] = devices[a]
                except Exception:   # an island that cannot answer is reported as not run
                    lost.append(a)
        finally:
            self.board_value, self.board_tour, self.posts = ray.get(self.board.best.remote())
            self._stop_actors(ray)
        return MultiStartResult.gather(results, time.time() - t0, status, self.problem.sense, workers, lost)
