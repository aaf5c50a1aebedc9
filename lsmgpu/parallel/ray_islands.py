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

Checkpoints: ``run(checkpoint=PATH, checkpoint_every=S)`` has every island write its own search's
checkpoint to ``PATH.island<k>``, and the driver write PATH (the islands' files and the board's
best) every second at most; ``resume(PATH)`` starts every island from its file and the board from
its best. The files must be on a file system every actor sees.
- Asynchronous islands write every S seconds and when they end; on resume an island that had
  written none starts afresh from its seed.
- Synchronous islands write at an exchange, all at the same one: the first exchange S seconds
  after the last written (the board decides, once for all), just after the exchange's solution
  is offered. Each keeps its last two files (``PATH.island<k>`` and ``.previous``): an island
  writes exchange e only after every island posted e, so every island has written the one before,
  and on resume every island goes on from the latest exchange all of them have written (afresh
  from their seeds where one has written none): a seeded run with an iteration budget resumes to
  the uninterrupted run's islands (DontLookILS's where no chain waited at the cut for the slowest:
  docs/guide.md).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

import numpy as np

from .. import search as searches
from ..checkpoint import DEFAULT_EVERY, read_checkpoint
from ..result import SearchResult
from ..search.loop import Search
from ..validation import check_count, check_options, check_seconds
from .board import PREVIOUS, Board, save_exchange, synchronous_cut
from .distributed import ActorBuilds, RayDriver, actor_device, end_actors, ray_connected, ray_module
from .seeds import spawn_seeds

__all__ = ["IslandRunner", "RayIslands"]

log = logging.getLogger("lsmgpu")


#: seconds between two looks at the board while a synchronous exchange waits
WAIT = 0.002


class IslandRunner(ActorBuilds):
    """What an actor holds: the problem, the search's class and options, and a stop flag the
    driver sets while the island runs (the actor serves two calls at once)."""

    def __init__(self, problem, method, options):
        self.problem, self.method, self.options, self.stopping = problem, method, options, False

    def device(self) -> str:
        return actor_device(self.problem, self.options)

    def run(self, island: int, seed, board, exchange_every: int, synchronous: bool, iterations, deadline, target,
            saving=(None, None, None)):
        """One island until its budget or the driver's stop: (its SearchResult, the solutions it
        took from the board, its work: (count, unit)). ``saving``: the checkpoint file it goes on
        from where that exists, the one it writes, and the seconds between two writes."""
        import ray
        left = None if deadline is None else max(0.0, deadline - time.time())
        iterations_done, holder = [0], {}        # this call's (a resumed island exchanges on from there)
        origin, file, every = saving
        if file is not None and every is None:
            every = DEFAULT_EVERY

        def exchange(state) -> bool:
            search = holder["search"]
            iterations_done[0] += 1
            if iterations_done[0] % exchange_every or search.best_x is None:
                return bool(self.stopping)
            if not synchronous:
                offered, save = ray.get(board.post.remote(float(search.best), search.best_x)), False
            else:
                number = iterations_done[0] // exchange_every
                ray.get(board.post.remote(float(search.best), search.best_x, island, number))
                while (gathered := ray.get(board.gather.remote(number, None if file is None else every))) is None:
                    if self.stopping or (deadline is not None and time.time() > deadline):
                        return True
                    time.sleep(WAIT)
                *offered, save = gathered
            if offered is not None and offered[0] < search.best:
                search.offer(offered[1])
            if save:
                save_exchange(search, file)
            return bool(self.stopping)

        try:
            search = self.method(self.problem, seed=seed, callbacks=[exchange], **self.options)
            holder["search"] = search
            own = {"checkpoint": None} if synchronous else {"checkpoint": file, "checkpoint_every": every}
            if origin is not None and Path(origin).is_file():     # the whole run's seconds: before and left
                before = read_checkpoint(origin, search)["elapsed"]
                result = search.resume(origin, iterations=iterations, seconds=None if left is None else before + left,
                                       target=target, **own)
            else:
                result = search.run(iterations, seconds=left, target=target, **own)
            if search.best_x is not None:        # before the result: the driver then finds it on the board
                ray.get(board.post.remote(float(search.best), search.best_x))
        finally:
            board.retire.remote(island)
        if result.status == "callback":          # stopped by the driver, or the deadline while waiting
            result = dataclasses.replace(result, status=self.stopping or "seconds")
        return result, search.migrants, search.work

    def stop(self, reason: str = "interrupted") -> None:
        self.stopping = reason


class RayIslands(RayDriver, Search):
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
    #: the driver's checkpoint: the islands' own files and the board's best (the module's docstring)
    state_fields = ("island_files", "board_value", "board_tour")
    #: seconds between two writes of the driver's (small) checkpoint, at most
    DRIVER_EVERY = 1.0

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
        self.island_files, self.board_value, self.board_tour, self._saving = [], np.inf, None, (None, None)
        self.seed, self.address = seed, address
        self.options = options
        self.actors: list = []
        self.board = self.migrants = None

    def _stop_actors(self, ray) -> None:
        end_actors(self.actors)
        if self.board is not None:
            ray.kill(self.board)
        self.actors, self.board = [], None

    def _start_actors(self, ray):
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
        self._progress, self._saving = progress, (checkpoint, checkpoint_every)
        return super().run(iterations, seconds=seconds, target=target, checkpoint=checkpoint,
                           checkpoint_every=None if checkpoint is None else self._driver_every(checkpoint_every))

    def resume(self, path, *, progress=None, checkpoint=None, checkpoint_every=None, **budget) -> SearchResult:
        """Go on from the checkpoint at ``path`` (Search.resume): every island from its own file,
        the board from its best; ``progress`` as for ``run``; with ``checkpoint`` the islands and
        the driver write on (the islands to ``checkpoint``'s island files)."""
        self._progress, self._saving = progress, (checkpoint, checkpoint_every)
        return super().resume(path, checkpoint=checkpoint, checkpoint_every=None if checkpoint is None
                              else self._driver_every(checkpoint_every), **budget)

    def _driver_every(self, every) -> float:
        """The driver's period: the islands' (``every``, default 60 s; checked), at most DRIVER_EVERY."""
        every = check_seconds("RayIslands", every, "checkpoint_every")
        return self.DRIVER_EVERY if every is None else min(every, self.DRIVER_EVERY)

    def _start(self) -> None:
        self.island_files = []
        self._launch(resume=False)

    def _restore(self, state: dict) -> None:
        """The islands from their files (Search.resume read the driver's), the board from its best."""
        super()._restore(state)
        self._launch(resume=True)

    def state(self) -> dict:
        """The islands' files and the board's best now (each island's state is in its own file)."""
        if self.board is not None:
            self.board_value, self.board_tour, _ = self._ray.get(self.board.best.remote())
        return super().state()

    def _check_islands(self, count) -> None:
        """A resumed run has the checkpoint's number of islands (ValueError naming both)."""
        if count and count != len(self.island_files):
            raise ValueError(f"RayIslands: the checkpoint holds {len(self.island_files)} islands, this run has {count}")

    def _launch(self, resume: bool) -> None:
        """The actors (unless start_actors() started them) and every island's run: afresh, or
        (``resume``) from the islands' checkpoint files."""
        ray = self._ray = ray_connected(self.address)
        self.results, self.workers_of, self.lost, self._pending = [None] * max(1, len(self.actors)), {}, [], {}
        self._stopped, self._overall = False, "done"
        if resume:
            self._check_islands(len(self.actors) or self.islands)      # before any actor starts, where known
        self._devices = self.devices if self.actors else self._start_actors(ray)
        count = len(self.actors)
        if resume:
            self._check_islands(count)
        origins = self.island_files if resume else [None] * count
        if resume and self.synchronous:
            origins = synchronous_cut(origins, self.method)
        path, every = self._saving
        self.island_files = [None] * count if path is None else [str(Path(path).resolve()) + f".island{a}"
                                                                 for a in range(count)]
        if self.synchronous and not resume:          # a former run's files would mislead a resume's cut
            for file in filter(None, self.island_files):
                for stale in (Path(file), Path(file + PREVIOUS)):
                    stale.unlink(missing_ok=True)
        if resume:
            ray.get(self.board.restore.remote(self.board_value, self.board_tour))
        self.results, self.migrants = [None] * count, [0] * count
        seeds = spawn_seeds(self.seed, count)
        b = self.budget
        deadline = None if b.seconds is None else time.time() - self.elapsed + b.seconds
        self._deadline = deadline
        self._pending = {self.actors[a].run.remote(a, seeds[a], self.board, self.exchange_every, self.synchronous,
                                                   b.iterations, deadline, b.target,
                                                   (origins[a], self.island_files[a], every)): a
                         for a in range(count)}

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
