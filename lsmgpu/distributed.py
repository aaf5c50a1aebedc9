"""Starts spread over Ray actors: every GPU of a machine or a cluster, one actor each.

Each actor owns one backend: with ``num_gpus=1`` Ray gives it one GPU (CUDA_VISIBLE_DEVICES)
and the actor's CUDA context is created in its own process, after that; actors without a
GPU run the CPU backend. The driver hands out starts one at a time (an actor gets its next
start when it returns one, so fast and slow GPUs share the work), gathers the results with
``ray.wait``, and:

* honours ``seconds`` for the whole run: starts get what is left of it, and at the deadline
  every actor is told to stop, which ends its current search with the best so far;
* on Ctrl-C does the same and returns the best of everything gathered;
* survives an actor that dies: its start is rerun on another actor (once), or reported in
  ``MultiStartResult.lost``; it is never silently dropped.

``ray.init()`` with no ``address`` starts Ray on this machine, so the same code serves one
multi-GPU host and a cluster (``address="ray://..."`` or ``"auto"``).
"""
from __future__ import annotations

import logging
import os
import time

from .errors import BackendUnavailable
from .multistart import MultiStartResult, search_class, spawn_seeds

__all__ = ["RayMultiStart"]

log = logging.getLogger("lsmgpu")

#: attempts per start before it counts as lost
ATTEMPTS = 2


def _ray():
    try:
        import ray
    except ImportError:
        raise BackendUnavailable("distributed runs need Ray: pip install 'lsmgpu[ray]'") from None
    return ray


class StartRunner:
    """What an actor holds: the problem, the search, its backend, and a stop flag that the
    driver can set while a search runs (the actor runs two calls at once)."""

    def __init__(self, search, problem, options):
        self.search, self.problem, self.options = search, problem, options
        self.stopping = False

    def device(self) -> str:
        """Where this actor's searches run."""
        from .backends import resolve
        backend = resolve(self.options.get("backend", "auto"), self.problem)
        gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        return f"{backend.name}:{backend.device}" + (f" (CUDA_VISIBLE_DEVICES={gpus})" if gpus else "")

    def run(self, k, seed, iterations, deadline, target, stagnation):
        """Run start k; (k, None) when the deadline has passed before it could begin."""
        left = None if deadline is None else deadline - time.time()
        if self.stopping or (left is not None and left <= 0):
            return k, None
        callbacks = list(self.options.get("callbacks") or []) + [lambda state: self.stopping]
        options = {**self.options, "callbacks": callbacks}
        search = self.search(self.problem, seed=seed, **options)
        return k, search.run(iterations, seconds=left, target=target, stagnation=stagnation)

    def stop(self) -> None:
        self.stopping = True


class RayMultiStart:
    """``starts`` runs of ``search`` on ``problem`` over Ray actors.

    ``workers``: number of actors (default: one per GPU Ray sees, or one per CPU, at most
    ``starts``); ``address``: the Ray cluster (default: start one here); ``options`` go to
    every search (``backend`` defaults to "auto": CUDA on a GPU actor, else the CPU).
    """

    def __init__(self, search, problem, *, starts: int, seed=None, workers: int | None = None,
                 address: str | None = None, **options):
        self.search = search_class(search)
        self.problem, self.options = problem, options
        self.seeds = spawn_seeds(seed, starts)
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"RayMultiStart: `workers` must be an integer >= 1, got {workers!r}")
        self.workers, self.address = workers, address
        self.actors: list = []

    def _start_actors(self, ray):
        if not ray.is_initialized():
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        count = self.workers or gpus or int(ray.cluster_resources().get("CPU", 1))
        count = min(count, len(self.seeds))
        Actor = ray.remote(StartRunner).options(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1,
                                                max_concurrency=2)
        self.actors = [Actor.remote(self.search, self.problem, self.options) for _ in range(count)]
        return ray.get([a.device.remote() for a in self.actors])

    def run(self, iterations=None, *, seconds=None, target=None, stagnation=None, progress=None) -> MultiStartResult:
        """Run the starts; ``progress(k, result)`` is called as each start's result arrives."""
        ray = _ray()
        t0 = time.time()
        devices = self._start_actors(ray)
        deadline = None if seconds is None else t0 + seconds
        queue = list(range(len(self.seeds)))
        attempts = {k: 0 for k in queue}
        results, workers, lost = [None] * len(self.seeds), {}, []
        pending: dict = {}          # object ref -> (start, actor index)
        alive = set(range(len(self.actors)))
        status, stopped = "done", False

        def submit(a):
            if queue and not stopped:
                k = queue.pop(0)
                attempts[k] += 1
                ref = self.actors[a].run.remote(k, self.seeds[k], iterations, deadline, target, stagnation)
                pending[ref] = (k, a)

        def stop_all():
            for a in alive:
                self.actors[a].stop.remote()

        for a in range(len(self.actors)):
            submit(a)
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                if deadline is not None and time.time() > deadline and not stopped:
                    stopped, status = True, "seconds"
                    stop_all()
                for ref in ready:
                    k, a = pending.pop(ref)
                    try:
                        _, result = ray.get(ref)
                    except ray.exceptions.RayActorError as exc:
                        alive.discard(a)
                        log.warning("start %d: its actor died (%s)", k, type(exc).__name__)
                        if attempts[k] < ATTEMPTS and alive:
                            queue.insert(0, k)
                            idle = [b for b in alive if all(b != c for _, c in pending.values())]
                            for b in idle:
                                submit(b)
                        else:
                            lost.append(k)
                        continue
                    results[k], workers[k] = result, devices[a]
                    if progress is not None:
                        progress(k, result)
                    if result is not None and result.status == "target" and not stopped:
                        stopped, status = True, "target"
                        stop_all()
                    submit(a)
            if queue and not stopped and not alive:
                lost.extend(queue)
        except KeyboardInterrupt:
            status = "interrupted"
            stop_all()
            for ref, (k, a) in list(pending.items()):
                try:
                    results[k] = ray.get(ref, timeout=30)[1]
                    workers[k] = devices[a]
                except Exception:   # a start that cannot answer is reported as not run
                    pass
        finally:
            for actor in self.actors:
                ray.kill(actor)
        return MultiStartResult.gather(results, time.time() - t0, status, self.problem.sense, workers, lost)
