"""Population searches as islands over Ray actors: one search per GPU, exchanging best solutions.

``RayMultiStart`` spreads independent starts; here each actor (one GPU each, ``num_gpus=1``, or a
share of one: ``gpus_per_island``; CPU actors where Ray sees no GPU) runs one population search
for the whole budget: the don't-look ILS's chains, focused ACO, an ant colony system, a MAX-MIN
ant system or a genetic algorithm's groups (``method``). Every ``exchange_every`` iterations of its
own (the ILS's rounds, the colonies' iterations, the GA's generations) an island posts its best
solution to a ``Board`` actor and takes back the best any island posted, which the search takes
in where it is better than its own place for it (``PopulationSearch.offer``: the ILS's worst
chain, a colony's best so far, the GA's worst gene). Only one solution travels each way, never a
population.

The exchange is asynchronous by default: an island never waits for another, so runs on several
actors are not reproducible step by step (each island's own search is, given its seed). With
``synchronous=True`` an island waits at each exchange until every island still running has
posted that exchange and takes the best of those posts (ties to the lower island): with an
iteration budget a seeded run is then reproducible, the faster islands waiting for the slowest.

As for ``RayMultiStart``: ``seconds`` is the whole run's (the actors' start-up included); at the
deadline, on a target reached or on Ctrl-C every island is told to stop and returns its best so
far; an island whose actor dies is reported in the result's ``lost`` (the others stop waiting
for it), and the best solution it posted stays on the board (``board_value``, ``board_tour``).
"""
from __future__ import annotations

import dataclasses
import logging
import time

import numpy as np

from .. import search as searches
from ..result import SearchResult
from ..search.loop import Search
from ..validation import check_count, check_options
from .distributed import actor_device, ray_module
from .seeds import spawn_seeds

__all__ = ["RayIslands", "Board", "IslandRunner"]

log = logging.getLogger("lsmgpu")


#: seconds between two looks at the board while a synchronous exchange waits
WAIT = 0.002


class Board:
    """The islands' meeting place: the best solution posted so far, and each synchronous
    exchange's posts."""

    def __init__(self, islands: int = 0):
        self.value, self.tour, self.posts = np.inf, None, 0
        self.running = set(range(islands))
        self.exchanges = {}              # exchange number -> (islands posted, best value, its island, its tour)

    def post(self, value: float, tour, island: int | None = None, exchange: int | None = None):
        """Keep ``tour`` (minimised ``value``) if it is the best. Asynchronous (``exchange`` None):
        the best (value, tour) where it is better than the poster's, else None. Synchronous: the
        post counts toward that exchange (see ``gather``); None."""
        self.posts += 1
        if value < self.value:
            self.value, self.tour = float(value), np.array(tour, copy=True)
        if exchange is None:
            return (self.value, self.tour) if self.value < value else None
        posted, best, by, kept = self.exchanges.get(exchange, (set(), np.inf, -1, None))
        if (value, island) < (best, by) or kept is None:
            best, by, kept = float(value), island, np.array(tour, copy=True)
        self.exchanges[exchange] = (posted | {island}, best, by, kept)
        if self.running <= self.exchanges[exchange][0]:      # every running island is past the earlier ones
            for old in [e for e in self.exchanges if e < exchange]:
                del self.exchanges[old]
        return None

    def gather(self, exchange: int):
        """The exchange's best (value, tour) once every running island has posted it, else None."""
        entry = self.exchanges.get(exchange)
        if entry is None or not self.running <= entry[0]:
            return None
        return entry[1], entry[3]

    def retire(self, island: int) -> None:
        """An island that ended (or was lost): the synchronous exchanges no longer wait for it."""
        self.running.discard(island)

    def best(self):
        return self.value, self.tour, self.posts


class IslandRunner:
    """What an actor holds: the problem, the search's class and options, and a stop flag the
    driver sets while the island runs (the actor serves two calls at once)."""

    def __init__(self, problem, method, options):
        self.problem, self.method, self.options, self.stopping = problem, method, options, False

    def device(self) -> str:
        return actor_device(self.problem, self.options)

    def run(self, island: int, seed, board, exchange_every: int, synchronous: bool, iterations, deadline, target):
        """One island until its budget or the driver's stop: (its SearchResult, the solutions it
        took from the board, its work: (count, unit))."""
        import ray
        left = None if deadline is None else max(0.0, deadline - time.time())
        iterations_done, holder = [0], {}

        def exchange(state) -> bool:
            search = holder["search"]
            iterations_done[0] += 1
            if iterations_done[0] % exchange_every or search.best_x is None:
                return bool(self.stopping)
            if not synchronous:
                offered = ray.get(board.post.remote(float(search.best), search.best_x))
            else:
                number = iterations_done[0] // exchange_every
                ray.get(board.post.remote(float(search.best), search.best_x, island, number))
                while (offered := ray.get(board.gather.remote(number))) is None:
                    if self.stopping or (deadline is not None and time.time() > deadline):
                        return True
                    time.sleep(WAIT)
            if offered is not None and offered[0] < search.best:
                search.offer(offered[1])
            return bool(self.stopping)

        try:
            search = self.method(self.problem, seed=seed, callbacks=[exchange], **self.options)
            holder["search"] = search
            result = search.run(iterations, seconds=left, target=target)
            if search.best_x is not None:        # before the result: the driver then finds it on the board
                ray.get(board.post.remote(float(search.best), search.best_x))
        finally:
            board.retire.remote(island)
        if result.status == "callback":          # stopped by the driver, or the deadline while waiting
            result = dataclasses.replace(result, status=self.stopping or "seconds")
        return result, search.migrants, search.work

    def stop(self, reason: str = "interrupted") -> None:
        self.stopping = reason


class RayIslands(Search):
    """``islands`` population searches of ``problem`` over Ray actors, exchanging best solutions
    every ``exchange_every`` iterations through a board.

    ``method``: "dontlook-ils" (DontLookILS, the default), "faco", "acs", "mmas", "ga" or any
    registered PopulationSearch (lsmgpu.search.searches_of(PopulationSearch));
    ``islands``: actors (default: one per GPU share Ray sees, else 2 on CPUs); ``exchange_every``:
    the method's ``island_exchange_every`` when None; ``synchronous``: see the module's docstring;
    ``gpus_per_island``: the GPU share of an actor (1: a GPU each; 0.5: two islands a GPU);
    ``seed``: spawned one per island; ``address``: the Ray cluster (default: start one here);
    ``options`` go to every search (``backend``, ``initial``, ``params`` and the search's own
    options by name: ``chains``, ``ants``, ``genes`` ...). ``exchange_every`` is the islands' own
    period; a search's own (DontLookILS among its chains, the GA among its groups) goes in its
    ``params`` (e.g. ``params=GAParams(exchange_every=5)``).
    """

    algorithm = "RayIslands"
    needs_budget = True
    combines = True
    checkpoint_refused = "a run over Ray actors is not checkpointed yet"

    def __init__(self, problem, *, method: str = "dontlook-ils", islands: int | None = None,
                 exchange_every: int | None = None, synchronous: bool = False, gpus_per_island: float = 1.0,
                 seed=None, address: str | None = None, **options):
        cls = searches.search_class(method, "RayIslands", searches.PopulationSearch)
        if not 0 < gpus_per_island <= 1:
            raise ValueError(f"RayIslands: `gpus_per_island` must be in (0, 1], got {gpus_per_island!r}")
        check_options("RayIslands", cls, options, taken=("problem", "seed"))
        self.problem, self.method, self.search = problem, cls.__name__, cls
        self.islands = check_count("RayIslands", "islands", islands, 1)
        every = cls.island_exchange_every if exchange_every is None else exchange_every
        self.exchange_every = check_count("RayIslands", "exchange_every", every, 1)
        self.synchronous, self.gpus_per_island = bool(synchronous), float(gpus_per_island)
        self._init_run(None, None, "improvements")
        self.seed, self.address = seed, address
        self.options = options
        self.actors: list = []
        self.board = self.migrants = None

    def _stop_actors(self, ray) -> None:
        for actor in self.actors + [self.board]:
            if actor is not None:
                ray.kill(actor)
        self.actors, self.board = [], None

    def start_actors(self) -> list[str]:
        """Start Ray and the islands' actors now and wait until each answers (their devices), so
        that the next ``run``'s budget does not pay their start-up (a benchmark's fair row, a test
        independent of the machine's speed); ``run`` starts them itself otherwise. The actors end
        with that run."""
        self.devices = self._start_actors(ray_module())
        return self.devices

    def _start_actors(self, ray):
        if not ray.is_initialized():
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)
        gpus = ray.cluster_resources().get("GPU", 0)
        count = self.islands or int(gpus / self.gpus_per_island) or 2
        Actor = ray.remote(IslandRunner).options(num_gpus=self.gpus_per_island if gpus else 0,
                                                 num_cpus=0 if gpus else 1, max_concurrency=2)
        self.actors = [Actor.remote(self.problem, self.search, self.options) for _ in range(count)]
        self.board = ray.remote(Board).options(num_cpus=0).remote(count)
        return ray.get([a.device.remote() for a in self.actors])

    def run(self, iterations=None, *, seconds=None, target=None, progress=None, checkpoint=None,
            checkpoint_every=None) -> SearchResult:
        """Run the islands (the one loop of lsmgpu.search.loop: a look at the actors a step;
        ``iterations``: each search's own: kicks a chain makes, colony iterations, generations);
        ``progress(k, result)`` as each island's result arrives. Each island's result (in the
        result's ``runs``) has its ``work``; after the run, per island, ``migrants`` (solutions
        taken from the board), and the board's best (``board_value``, ``board_tour``, ``posts``)."""
        self._progress = progress
        return super().run(iterations, seconds=seconds, target=target, checkpoint=checkpoint,
                           checkpoint_every=checkpoint_every)

    def _start(self) -> None:
        """The actors (unless start_actors() started them) and every island's run."""
        ray = self._ray = ray_module()
        self.results, self.workers_of, self.lost, self._pending = [None] * max(1, len(self.actors)), {}, [], {}
        self._stopped, self._overall = False, "done"
        self._devices = self.devices if self.actors else self._start_actors(ray)
        count = len(self.actors)
        self.results, self.migrants = [None] * count, [0] * count
        seeds = spawn_seeds(self.seed, count)
        b = self.budget
        deadline = None if b.seconds is None else time.time() - self.elapsed + b.seconds
        self._deadline = deadline
        self._pending = {self.actors[a].run.remote(a, seeds[a], self.board, self.exchange_every, self.synchronous,
                                                   b.iterations, deadline, b.target): a for a in range(count)}

    def _budget_spent(self) -> str | None:
        """The driver's own stop tests live in ``step`` (the deadline, an island at the target)."""
        return None

    def _stop_all(self, reason: str) -> None:
        for ref, a in self._pending.items():
            self.actors[a].stop.remote(reason)

    def step(self) -> bool:
        """Wait up to 0.2 s for an island's answer; stop every island a second past the deadline
        or once one reached the target; True once none is pending."""
        ray = self._ray
        ready, _ = ray.wait(list(self._pending), num_returns=1, timeout=0.2)
        if self._deadline is not None and time.time() > self._deadline + 1.0 and not self._stopped:
            self._stopped, self._overall = True, "seconds"
            self._stop_all("seconds")
        for ref in ready:
            a = self._pending.pop(ref)
            try:
                result, self.migrants[a], _ = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                log.warning("island %d: its actor died (%s)", a, type(exc).__name__)
                self.lost.append(a)
                self.board.retire.remote(a)
                continue
            except ray.exceptions.RayTaskError as exc:   # bad input: the island's own error
                cause = getattr(exc, "cause", None)
                raise (cause if isinstance(cause, Exception) else exc) from None
            self.results[a], self.workers_of[a] = result, self._devices[a]
            if self._progress is not None:
                self._progress(a, result)
            if result.status == "target" and not self._stopped:
                self._stopped, self._overall = True, "target"
                self._stop_all("stopped")
        if not self._pending:
            self.status = self._overall
        return self.status is not None

    def result(self) -> SearchResult:
        """Every island's result (None: not run, or lost), combined; after Ctrl-C the islands are
        stopped and what they had is gathered first; the board's best is read."""
        if self.status == "interrupted" and getattr(self, "_pending", None):
            self._stop_all("interrupted")
            for ref, a in list(self._pending.items()):
                try:
                    self.results[a], self.migrants[a], _ = self._ray.get(ref, timeout=30)
                    self.workers_of[a] = self._devices[a]
                except Exception:   # an island that cannot answer is reported as not run
                    self.lost.append(a)
        if self.board is not None:
            self.board_value, self.board_tour, self.posts = ray_module().get(self.board.best.remote())
        count = len(self.actors) or 1
        return SearchResult.combined(getattr(self, "results", [None] * count), self.elapsed, self.status,
                                     self.problem.sense, getattr(self, "workers_of", {}), getattr(self, "lost", ()),
                                     algorithm=self.method, problem=self.problem.name)

    def _release(self) -> None:
        if self.actors or self.board is not None:
            self._stop_actors(ray_module())
