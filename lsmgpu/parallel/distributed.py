"""Starts spread over Ray actors: every GPU of a machine or a cluster, one actor each.

Each actor owns one backend: with ``num_gpus=1`` Ray gives it one GPU (CUDA_VISIBLE_DEVICES)
and the actor's CUDA context is created in its own process, after that; actors without a
GPU run the CPU backend. The driver hands out the starts in batches (an actor runs a batch
together, one launch per iteration for all of them, see lsmgpu.batch; it gets its next batch
when it returns one, so fast and slow GPUs share the work), gathers the results with
``ray.wait``, and:

* honours ``seconds`` for the whole run: starts get what is left of it, and at the deadline
  every actor is told to stop, which ends its current search with the best so far;
* on Ctrl-C does the same and returns the best of everything gathered;
* survives an actor that dies: its batch is rerun on another actor (once), or its starts are
  reported in the result's ``lost``; none is silently dropped;
* is checkpointed by start: a checkpoint keeps the results gathered so far, and ``resume`` runs
  every start without one from its seed (the starts still running when the checkpoint was
  written start again), so a seeded run with an iteration budget resumes to the uninterrupted
  run's results.

``ray.init()`` with no ``address`` starts Ray on this machine, so the same code serves one
multi-GPU host and a cluster (``address="ray://..."`` or ``"auto"``).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import sys
import time

from ..errors import BackendUnavailable
from ..result import SearchResult
from ..search.loop import Search
from ..validation import check_options
from .seeds import search_class, spawn_seeds, warn_one_start

__all__ = ["RayDriver", "RayMultiStart", "ActorBuilds", "actor_device", "end_actors", "ray_connected", "ray_module"]

log = logging.getLogger("lsmgpu")

#: attempts per start before it counts as lost
ATTEMPTS = 2
#: seconds an ending actor waits for the kernel builds it started (a first run's full builds, 6-11 s
#: each on the H200: docs/benchmarks/tsp-depth.md, "Quick builds first")
ACTOR_BUILDS_WAIT = 120.0


def ray_module():
    try:
        import ray
    except ImportError:
        raise BackendUnavailable("distributed runs need Ray: pip install 'lsmgpu[ray]'") from None
    return ray


def ray_connected(address: str | None):
    """Ray, started here (``address`` None) or joined to the cluster at ``address`` where this
    process has not done so yet."""
    ray = ray_module()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    return ray


class RayDriver:
    """What the drivers of actors share: ``start_actors``; a driver writes ``_start_actors(ray)``
    (its actors, Ray connected; their devices) and has ``address``."""

    def start_actors(self) -> list[str]:
        """Start Ray and the actors now and wait until each answers (their devices), so that the
        next ``run``'s budget does not pay their start-up (a benchmark's fair row, a test
        independent of the machine's speed); ``run`` starts them itself otherwise. The actors end
        with that run."""
        self.devices = self._start_actors(ray_connected(self.address))
        return self.devices


class ActorBuilds:
    """What every actor class shares: its end after its kernel builds. A run shorter than a full build
    (quick builds first: lsmgpu.backends.cuda.driver.load_first_module) leaves the full build running;
    an actor killed at once loses it, and the next run on that machine builds again."""

    def end_after_builds(self) -> None:
        """Waits for this process's kernel builds under way (at most ACTOR_BUILDS_WAIT seconds; none
        where the actor never loaded the CUDA backend), then kills this actor: a kill, as the driver's
        were, since Ray reports an actor's own exit after CUDA's clean-up as a worker's crash."""
        driver = sys.modules.get("lsmgpu.backends.cuda.driver")
        if driver is not None:
            driver.finish_builds(ACTOR_BUILDS_WAIT)
        ray = ray_module()
        ray.kill(ray.get_runtime_context().current_actor)


def end_actors(actors) -> None:
    """Ends the ``actors`` (ActorBuilds) after their kernel builds without waiting for them: each
    kills itself once they have ended (Ray's shutdown, e.g. at the driver's exit, stops them before)."""
    for actor in actors:
        actor.end_after_builds.remote()


def actor_device(problem, options) -> str:
    """Where an actor's searches of ``problem`` with ``options`` run: backend, device, its GPU."""
    from ..backends import resolve
    backend = resolve(options.get("backend", "auto"), problem)
    gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return f"{backend.name}:{backend.device}" + (f" (CUDA_VISIBLE_DEVICES={gpus})" if gpus else "")


class StartRunner(ActorBuilds):
    """What an actor holds: the problem, the search, its backend, and the search running now,
    which the driver can stop (Search.stop; the actor runs two calls at once)."""

    def __init__(self, search, problem, options):
        self.search, self.problem, self.options = search, problem, options
        self.stopping, self.current = False, None

    def device(self) -> str:
        """Where this actor's searches run."""
        return actor_device(self.problem, self.options)

    def run(self, starts, seeds, iterations, deadline, target, stagnation):
        """Run the given starts, together when they can be batched (lsmgpu.batch), else one
        after the other; (starts, results), None for a start the deadline left no time."""
        from .drivers import batch_driver
        left = None if deadline is None else deadline - time.time()
        if self.stopping or (left is not None and left <= 0):
            return starts, [None] * len(starts)
        driver, _ = batch_driver(self.search, self.options, self.problem)
        if len(starts) > 1 and driver is not None:
            self.current = batch = driver(self.problem, seeds, **self.options)
            if self.stopping:
                return starts, [None] * len(starts)
            result = batch.run(iterations, seconds=left, target=target, stagnation=stagnation)
            if not self.stopping:
                return starts, result.runs
            # stopped by the driver (its deadline, another start's target, Ctrl-C): say why
            return starts, [r if r is None or r.status != "interrupted"
                            else dataclasses.replace(r, status=self.stopping) for r in result.runs]
        results = []
        for seed in seeds:
            left = None if deadline is None else deadline - time.time()
            if self.stopping or (left is not None and left <= 0):
                results.append(None)
                continue
            self.current = search = self.search(self.problem, seed=seed, **self.options)
            results.append(search.run(iterations, seconds=left, target=target, stagnation=stagnation))
        return starts, results

    def stop(self, reason: str = "interrupted") -> None:
        """End the current search with its best so far; its status says ``reason`` ("seconds":
        the driver's deadline, "stopped": another start reached the target, "interrupted")."""
        self.stopping = reason
        if self.current is not None:
            self.current.stop(reason)


class RayMultiStart(RayDriver, Search):
    """``starts`` runs of ``search`` on ``problem`` over Ray actors.

    ``workers``: number of actors (default: one per GPU Ray sees, or one per CPU, at most
    ``starts``); ``batch``: starts handed to an actor at once, which runs them together when
    the search can be batched (default: the starts split evenly over the actors);
    ``address``: the Ray cluster (default: start one here); ``options`` go to every search
    (``backend`` defaults to "auto": CUDA on a GPU actor, else the CPU).
    """

    algorithm = "RayMultiStart"
    combines = True
    #: a checkpoint keeps the starts' results gathered so far (the module's docstring)
    state_fields = ("results", "workers_of")

    def __init__(self, search, problem, *, starts: int, seed=None, workers: int | None = None,
                 batch: int | None = None, address: str | None = None, **options):
        self.search = search_class(search)
        self.needs_budget = self.search.needs_budget
        self._init_run(None, None, "improvements")
        check_options("RayMultiStart", self.search, options, taken=("problem", "seed", "initial"))
        self.problem, self.options = problem, options
        self.seeds = spawn_seeds(seed, starts)
        warn_one_start("RayMultiStart", self.search, problem, starts)
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"RayMultiStart: `workers` must be an integer >= 1, got {workers!r}")
        if batch is not None and (not isinstance(batch, int) or batch < 1):
            raise ValueError(f"RayMultiStart: `batch` must be an integer >= 1, got {batch!r}")
        self.workers, self.batch, self.address = workers, batch, address
        self.actors: list = []

    def _start_actors(self, ray):
        gpus = int(ray.cluster_resources().get("GPU", 0))
        count = self.workers or gpus or int(ray.cluster_resources().get("CPU", 1))
        count = min(count, len(self.seeds))
        Actor = ray.remote(StartRunner).options(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1,
                                                max_concurrency=2)
        self.actors = [Actor.remote(self.search, self.problem, self.options) for _ in range(count)]
        return ray.get([a.device.remote() for a in self.actors])

    def run(self, iterations=None, *, seconds=None, target=None, stagnation=None, progress=None, checkpoint=None,
            checkpoint_every=None) -> SearchResult:
        """Run the starts (the one loop of lsmgpu.search.loop: a look at the actors a step);
        ``progress(k, result)`` is called as each start's result arrives. ``seconds`` counts from
        this call, the actors' start-up included; Ctrl-C stops every actor and returns what they
        had."""
        self._progress = progress
        return super().run(iterations, seconds=seconds, target=target, stagnation=stagnation, checkpoint=checkpoint,
                           checkpoint_every=checkpoint_every)

    def resume(self, path, *, progress=None, **budget) -> SearchResult:
        """Go on from the checkpoint at ``path`` (Search.resume): the starts without a result run
        from their seeds; ``progress`` as for ``run``."""
        self._progress = progress
        return super().resume(path, **budget)

    def _start(self) -> None:
        self.results, self.workers_of = [None] * len(self.seeds), {}
        self._launch()

    def _restore(self, state: dict) -> None:
        """The results of a checkpoint; the starts without one run again from their seeds."""
        super()._restore(state)
        self._launch()

    def _launch(self) -> None:
        """The actors (unless start_actors() started them) and the first batch for each, of the
        starts that have no result yet."""
        ray = self._ray = ray_connected(self.address)
        self.lost, self._pending, self._stopped, self._overall = [], {}, False, "done"
        self._devices = self.devices if self.actors else self._start_actors(ray)
        todo = [k for k, result in enumerate(self.results) if result is None]
        size = self.batch or max(1, -(-len(todo) // len(self.actors)))
        self._queue = [tuple(todo[i:i + size]) for i in range(0, len(todo), size)]
        self._attempts = {chunk: 0 for chunk in self._queue}
        self._alive = set(range(len(self.actors)))
        for a in range(len(self.actors)):
            self._submit(a)

    def _budget_spent(self) -> str | None:
        """The driver's own stop tests live in ``step`` (the deadline, a start at the target)."""
        return None

    @property
    def _deadline(self) -> float | None:
        """The budget's end on the clock the actors share (time.time)."""
        seconds = self.budget.seconds
        return None if seconds is None else time.time() - self.elapsed + seconds

    def _submit(self, a: int) -> None:
        if self._queue and not self._stopped:
            chunk = self._queue.pop(0)
            self._attempts[chunk] += 1
            b = self.budget
            ref = self.actors[a].run.remote(list(chunk), [self.seeds[k] for k in chunk], b.iterations, self._deadline,
                                            b.target, b.stagnation)
            self._pending[ref] = (chunk, a)

    def _stop_all(self, reason: str) -> None:
        for a in self._alive:
            self.actors[a].stop.remote(reason)

    def step(self) -> bool:
        """Wait up to 0.2 s for an actor's answer: take its starts' results, rerun the starts of an
        actor that died (ATTEMPTS times), stop everyone at the deadline or a start's target;
        True once no start is pending."""
        ray = self._ray
        ready, _ = ray.wait(list(self._pending), num_returns=1, timeout=0.2) if self._pending else ([], [])
        deadline = self._deadline
        if deadline is not None and time.time() > deadline and not self._stopped:
            self._stopped, self._overall = True, "seconds"
            self._stop_all("seconds")
        for ref in ready:
            chunk, a = self._pending.pop(ref)
            try:
                _, chunk_results = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                self._alive.discard(a)
                log.warning("starts %s: their actor died (%s)", list(chunk), type(exc).__name__)
                if self._attempts[chunk] < ATTEMPTS and self._alive:
                    self._queue.insert(0, chunk)
                    busy = {c for _, c in self._pending.values()}
                    for b in self._alive - busy:
                        self._submit(b)
                else:
                    self.lost.extend(chunk)
                continue
            for k, result in zip(chunk, chunk_results):
                self.results[k], self.workers_of[k] = result, self._devices[a]
                if self._progress is not None:
                    self._progress(k, result)
                if result is not None and result.status == "target" and not self._stopped:
                    self._stopped, self._overall = True, "target"
                    self._stop_all("stopped")
            self._submit(a)
        if not self._pending:
            if self._queue and not self._stopped and not self._alive:
                self.lost.extend(k for chunk in self._queue for k in chunk)
            self.status = self._overall
        return self.status is not None

    def result(self) -> SearchResult:
        """Every start's result (None: not run, or lost with its actor), combined; after Ctrl-C the
        actors are stopped and what they had is gathered first."""
        if self.status == "interrupted" and getattr(self, "_pending", None):
            self._stop_all("interrupted")
            for ref, (chunk, a) in list(self._pending.items()):
                try:
                    for k, result in zip(chunk, self._ray.get(ref, timeout=30)[1]):
                        self.results[k], self.workers_of[k] = result, self._devices[a]
                except Exception:   # starts that cannot answer are reported as not run
                    pass
        return SearchResult.combined(getattr(self, "results", [None] * len(self.seeds)), self.elapsed, self.status,
                                     self.problem.sense, getattr(self, "workers_of", {}), getattr(self, "lost", ()),
                                     algorithm=self.search.__name__, problem=self.problem.name)

    def _release(self) -> None:
        end_actors(self.actors)
        self.actors = []
