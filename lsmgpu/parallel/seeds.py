"""Seeds, start solutions and search classes of many starts: start k of a run seeded with ``seed`` is seeded with
``SeedSequence(seed).spawn(starts)[k]``, so it equals a single search created with that seed,
whichever machine or process runs it."""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..search import SEARCHES, IteratedLocalSearch, LocalSearch, search_class as named_search, searches_of
from ..validation import check_count, check_seed

__all__ = ["spawn_seeds", "search_class", "SpawnedSeeds", "start_solutions", "warn_one_start"]


class SpawnedSeeds(Sequence):
    """The seeds of ``count`` starts spawned from ``root``, each made when asked for: item k equals
    ``root.spawn(count)[k]`` (SeedSequence's spawn key is the parent's plus (k,)), so a million
    starts cost nothing until they run."""

    def __init__(self, root: np.random.SeedSequence, count: int):
        self.root, self.count = root, count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.count))]
        if not -self.count <= k < self.count:
            raise IndexError(k)
        k %= self.count
        root = self.root
        return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (root.n_children_spawned + k,),
                                      pool_size=root.pool_size)


def spawn_seeds(seed, starts: int) -> SpawnedSeeds:
    """The independent seed of each start: from an int, a SeedSequence, or a Generator (which
    gives the root's entropy, so two multi-starts from one Generator differ, as two searches do)."""
    starts = check_count("MultiStart", "starts", starts, 1)
    seed = check_seed("MultiStart", seed)
    if isinstance(seed, np.random.Generator):
        root = np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    else:
        root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return SpawnedSeeds(root, starts)


def search_class(search):
    """A search class from a class or its command-line name ("tabu", "hc", "ils")."""
    if isinstance(search, str):
        if search in SEARCHES and search not in searches_of(LocalSearch):
            raise ValueError(f"MultiStart: {search!r} is a population search, its own many starts (run it "
                             f"alone, or as islands over GPUs: lsmgpu.parallel.ray_islands.RayIslands); "
                             f"MultiStart runs one of {sorted(searches_of(LocalSearch))}")
        return named_search(search, "MultiStart", LocalSearch)
    if isinstance(search, type) and issubclass(search, LocalSearch):
        return search
    raise TypeError(f"MultiStart: `search` must be a LocalSearch subclass or one of the names, got {search!r}")


def start_solutions(problem, initial, starts: int):
    """``initial`` as one validated start solution per start (None: each start draws its own)."""
    if initial is None:
        return None
    array = np.asarray(initial)
    if array.ndim == 1:
        x = problem.encoding.validate(array)
        return np.broadcast_to(x, (int(starts), len(x)))
    if array.ndim != 2 or len(array) != starts:
        raise ValueError(f"MultiStart: `initial` must be one solution or one per start ({starts} x n), "
                         f"got shape {array.shape}")
    return np.stack([problem.encoding.validate(x) for x in array])


def warn_one_start(who: str, search: type, problem, starts: int) -> None:
    """Say so where ``starts`` descents (tabu search, hill climbing) that draw their own start
    would all begin from one solution: the problem's start is the same whatever the seed (TSP's
    greedy tour, its default from 5,000 cities), so the starts would make one run, or nearly, N
    times. Iterated local searches are not warned about: their kicks, drawn from each seed, part them."""
    if starts > 1 and not problem.start_is_drawn and not issubclass(search, IteratedLocalSearch):
        warnings.warn(f"{who}: {problem.name}'s start solution is the same for every seed, so the {starts} "
                      f"{search.__name__} starts begin from one solution (TSP: start='nearest' or 'random', "
                      f"the command's --start, draws one per seed)", stacklevel=3)
