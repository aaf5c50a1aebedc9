"""Checkpoints: a search's whole state in one versioned file, written atomically.

A checkpoint holds what a search needs to go on exactly where it was: its solutions, its
memories (tabu matrix, pheromone, population), its random generators' states, its counters,
the budget it was given and the seconds it had run. ``Search.run(checkpoint=PATH,
checkpoint_every=S)`` writes one between iterations every S seconds and at the end of the run;
``Search.resume(PATH)`` reads it back into a search built with the same options and goes on. A
seeded run with an iteration budget that is resumed ends exactly as the uninterrupted run does.

The file is a pickle (read only checkpoints you trust, as with any pickle) of a dict with a
format name and version, the lsmgpu version, the algorithm, the problem's fingerprint, the
search's options (its Params' plain values: numbers, strings, flags, None, tuples), the budget,
the elapsed seconds and the search's state; a search resumed with other options is refused by
name. It is written to a temporary file beside the target and moved over it (``os.replace``), so
a crash while writing keeps the previous checkpoint whole.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import time
from dataclasses import asdict, is_dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from .budget import Budget
from .validation import check_seconds

__all__ = ["DEFAULT_EVERY", "FORMAT", "VERSION", "Checkpointer", "checkpoint_iteration",
           "checkpoint_settings", "problem_fingerprint", "read_checkpoint", "search_options", "write_checkpoint"]

FORMAT = "lsmgpu-checkpoint"
#: raised when the file's layout changes; a checkpoint of another version is refused
VERSION = 2
#: seconds between checkpoints when a path is given without ``checkpoint_every``
DEFAULT_EVERY = 60.0


def problem_fingerprint(problem) -> str:
    """A short digest of what makes ``problem`` the instance it is: its class, name, size,
    encoding and the fitness of one random solution drawn from a fixed seed (two instances of the
    same name and size still differ there; O(n), not the problem's start heuristic). A checkpoint
    of another problem is refused by it."""
    probe = problem.encoding.validate(problem.encoding.random(np.random.default_rng(12345)))
    text = "|".join((type(problem).__qualname__, problem.name, str(problem.n), repr(problem.encoding),
                     repr(float(problem.fitness(probe)))))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _lsmgpu_version() -> str:
    """The installed lsmgpu's version (recorded in a checkpoint, for the reader's information)."""
    try:
        return metadata.version("lsmgpu")
    except metadata.PackageNotFoundError:
        return "unknown"


def write_checkpoint(path, search, state: dict, budget: Budget, elapsed: float) -> None:
    """Write ``state`` of ``search`` to ``path`` atomically (a temporary file moved over it)."""
    payload = {"format": FORMAT, "version": VERSION, "lsmgpu": _lsmgpu_version(), "algorithm": search.algorithm,
               "problem": search.problem.name, "fingerprint": problem_fingerprint(search.problem),
               "options": search_options(search), "budget": asdict(budget), "elapsed": float(elapsed),
               "state": state}
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as f:
            pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def search_options(search) -> dict:
    """The plain values (None, flags, numbers, strings, tuples of them) of ``search``'s Params: what a
    checkpoint keeps to refuse a resume by a search built otherwise (tables and local-search
    objects are not compared)."""
    params = getattr(search, "params", None)
    if not is_dataclass(params):
        return {}
    return {name: value for name, value in asdict(params).items() if _plain(value)}


def _plain(value) -> bool:
    """None, a flag, a number, a string, or a tuple of them."""
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def read_checkpoint(path, search) -> dict:
    """The checkpoint at ``path`` for ``search``, or ValueError naming what does not match (the
    file's format or version, the algorithm, the problem, the options the checkpoint keeps)."""
    payload = _payload(path, search.algorithm)
    if payload["fingerprint"] != problem_fingerprint(search.problem):
        raise ValueError(f"{search.algorithm}: {str(path)!r} is a checkpoint of problem {payload['problem']!r}, not of "
                         f"{search.problem.name!r} (or of another instance of that name)")
    kept, own = payload.get("options", {}), search_options(search)
    differ = [name for name in kept if name in own and kept[name] != own[name]]
    if differ:
        raise ValueError(f"{search.algorithm}: {str(path)!r} was written by a run with "
                         + ", ".join(f"{name}={kept[name]!r}" for name in differ) + "; this search has "
                         + ", ".join(f"{name}={own[name]!r}" for name in differ)
                         + " (build it with the checkpointed run's options)")
    return payload


def checkpoint_iteration(path, algorithm: str) -> int:
    """The iteration at which the checkpoint at ``path`` (of ``algorithm``) was written."""
    return int(_payload(path, algorithm)["state"]["iteration"])


def checkpoint_settings(path, owner: str) -> tuple[dict, dict]:
    """The budget (Budget's fields) and the plain options (``search_options``; {} for a file written
    before checkpoints kept them) of the checkpoint at ``path``, whatever its algorithm, from one
    read: what a resumed run goes on with where it is given none (errors name ``owner``)."""
    payload = _payload(path, owner, any_algorithm=True)
    return payload["budget"], dict(payload.get("options", {}))


def _payload(path, owner: str, any_algorithm: bool = False) -> dict:
    """The checkpoint at ``path``, a checkpoint of this version of algorithm ``owner`` (of any
    algorithm with ``any_algorithm``; else ValueError naming what is not)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{owner}: no checkpoint at {str(path)!r}")
    try:
        with open(path, "rb") as f:
            payload = pickle.load(f)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError) as error:
        raise ValueError(f"{owner}: {str(path)!r} is not an lsmgpu checkpoint ({error})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{owner}: {str(path)!r} is not an lsmgpu checkpoint")
    if payload["version"] != VERSION:
        raise ValueError(f"{owner}: {str(path)!r} is a version {payload['version']} checkpoint (lsmgpu "
                         f"{payload['lsmgpu']}); this lsmgpu reads version {VERSION}")
    if not any_algorithm and payload["algorithm"] != owner:
        raise ValueError(f"{owner}: {str(path)!r} is a checkpoint of {payload['algorithm']}, not of {owner}")
    return payload


class Checkpointer:
    """Writes a running search's checkpoints: every ``every`` seconds between iterations, and at
    the end of the run (a run cut inside an iteration, by Ctrl-C or the clock, keeps the last
    one written between iterations)."""

    def __init__(self, owner: str, path, every):
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"{owner}: `checkpoint` must be a file path, got {path!r}")
        if path is None and every is not None:
            raise ValueError(f"{owner}: `checkpoint_every` needs `checkpoint` (the file to write)")
        self.path = None if path is None else Path(path)
        if self.path is not None and not self.path.parent.is_dir():
            raise FileNotFoundError(f"{owner}: `checkpoint`: no directory {str(self.path.parent)!r}")
        self.every = DEFAULT_EVERY if every is None else check_seconds(owner, every, "checkpoint_every")
        self.written, self._last = 0, time.perf_counter()

    def __bool__(self) -> bool:
        return self.path is not None

    def due(self) -> bool:
        return self.path is not None and time.perf_counter() - self._last >= self.every

    def write(self, search) -> None:
        write_checkpoint(self.path, search, search.state(), search.budget, search.elapsed)
        self.written += 1
        self._last = time.perf_counter()
