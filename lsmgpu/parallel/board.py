"""The islands' meeting place (``Board``) and synchronous islands' checkpoints
(lsmgpu/parallel/ray_islands.py says how islands use them).

A synchronous island writes its checkpoint at an exchange the board picks for every island
(``Board.gather``'s ``save``), keeping the file before it as ``PREVIOUS`` (``save_exchange``).
An island writes exchange e only after every island posted e, so each has written the exchange
before: ``synchronous_cut`` finds the latest exchange every island wrote, from which all resume.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..checkpoint import checkpoint_iteration, write_checkpoint

__all__ = ["PREVIOUS", "Board", "save_exchange", "synchronous_cut"]

#: a synchronous island's file before its last (``PATH.island<k>`` + PREVIOUS)
PREVIOUS = ".previous"


class Board:
    """The islands' meeting place: the best solution posted so far, and each synchronous
    exchange's posts."""

    def __init__(self, islands: int = 0):
        self.value, self.tour, self.posts = np.inf, None, 0
        self.running = set(range(islands))
        self.exchanges = {}              # exchange number -> [islands posted, best value, its island, its tour, save]
        self.saved_at = time.time()      # when the islands last wrote their checkpoints (synchronous)

    def post(self, value: float, tour, island: int | None = None, exchange: int | None = None):
        """Keep ``tour`` (minimised ``value``) if it is the best. Asynchronous (``exchange`` None):
        the best (value, tour) where it is better than the poster's, else None. Synchronous: the
        post counts toward that exchange (see ``gather``); None."""
        self.posts += 1
        if value < self.value:
            self.value, self.tour = float(value), np.array(tour, copy=True)
        if exchange is None:
            return (self.value, self.tour) if self.value < value else None
        posted, best, by, kept, _ = self.exchanges.get(exchange, (set(), np.inf, -1, None, None))
        if (value, island) < (best, by) or kept is None:
            best, by, kept = float(value), island, np.array(tour, copy=True)
        self.exchanges[exchange] = [posted | {island}, best, by, kept, None]
        if self.running <= self.exchanges[exchange][0]:      # every running island is past the earlier ones
            for old in [e for e in self.exchanges if e < exchange]:
                del self.exchanges[old]
        return None

    def gather(self, exchange: int, every: float | None = None):
        """The exchange's best (value, tour, save) once every running island has posted it, else
        None; ``save``: whether the islands write their checkpoints at this exchange (decided once,
        by the first island to gather it: ``every`` seconds or more since the last; None: never)."""
        entry = self.exchanges.get(exchange)
        if entry is None or not self.running <= entry[0]:
            return None
        if entry[4] is None:
            entry[4] = every is not None and time.time() - self.saved_at >= every
            if entry[4]:
                self.saved_at = time.time()
        return entry[1], entry[3], entry[4]

    def retire(self, island: int) -> None:
        """An island that ended (or was lost): the synchronous exchanges no longer wait for it."""
        self.running.discard(island)

    def best(self):
        return self.value, self.tour, self.posts

    def restore(self, value: float, tour) -> None:
        """The best of a checkpointed run, before any island posts."""
        if tour is not None:
            self.value, self.tour = float(value), np.array(tour, copy=True)



def save_exchange(search, file: str) -> None:
    """A synchronous island's checkpoint at an exchange (its state with the offered solution, taken
    in on resume); the file before it kept as ``file + PREVIOUS``."""
    if Path(file).is_file():
        os.replace(file, file + PREVIOUS)
    write_checkpoint(file, search, search.state(), search.budget, search.elapsed)


def synchronous_cut(files, algorithm: str) -> list:
    """Per synchronous island, the file it resumes from: of each island's two last files, the one
    of the latest iteration that every island has written (None for all where an island has
    written none: every island starts afresh); ValueError where an island lacks that iteration."""
    written = []
    for file in files:
        found = [path for path in ((file, file + PREVIOUS) if file else ()) if Path(path).is_file()]
        written.append({checkpoint_iteration(path, algorithm): path for path in found})
    if not all(written):
        return [None] * len(files)
    cut = min(max(found) for found in written)
    lacking = [k for k, found in enumerate(written) if cut not in found]
    if lacking:
        raise ValueError(f"RayIslands: synchronous island(s) {lacking} kept no checkpoint of iteration {cut}, "
                         f"the latest every island wrote")
    return [found[cut] for found in written]
