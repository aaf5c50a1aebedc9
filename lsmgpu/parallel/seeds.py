"""Seeds and search classes of many starts: start k of a run seeded with ``seed`` is seeded with
``SeedSequence(seed).spawn(starts)[k]``, so it equals a single search created with that seed,
whichever machine or process runs it."""
from __future__ import annotations

import numpy as np

from ..search import ALGORITHMS, LocalSearch

__all__ = ["spawn_seeds", "search_class"]


def spawn_seeds(seed, starts: int) -> list[np.random.SeedSequence]:
    """The independent seed of each start."""
    if not isinstance(starts, (int, np.integer)) or starts < 1:
        raise ValueError(f"MultiStart: `starts` must be an integer >= 1, got {starts!r}")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(int(starts))


def search_class(search):
    """A search class from a class or its command-line name ("tabu", "hc", "ils")."""
    if isinstance(search, str):
        if search not in ALGORITHMS:
            raise ValueError(f"MultiStart: unknown search {search!r}; one of {sorted(ALGORITHMS)}")
        return ALGORITHMS[search]
    if isinstance(search, type) and issubclass(search, LocalSearch):
        return search
    raise TypeError(f"MultiStart: `search` must be a LocalSearch subclass or one of the names, got {search!r}")
