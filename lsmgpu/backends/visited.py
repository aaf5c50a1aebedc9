"""The ants' visited sets (Skinderowicz 2020, section 4.1), for B ants building in lock step.

Each structure answers ``visited(items)``, marks an item with ``mark(items)`` (one per ant) and
lists the unvisited items in its own order (``unvisited()``, (B, L): every ant has L left),
which is the order in which a roulette wheel over all unvisited items accumulates its weights.
The GPU's construction kernel (templates/skeleton/colony.cu.j2) keeps the same structures in
shared memory and walks them in the same order, so a CPU ant and a GPU ant with the same
random numbers choose alike:

* ``BitmaskTabu`` (BT): one bit per item; the unvisited in item order;
* ``ListTabu`` (LC, list compression): ``unvisited`` and ``indices``, two n-element arrays; a
  visited item is replaced by the list's last;
* ``CompactTabu`` (CT, compact tabu): one ``entries`` array: its first L entries list the
  unvisited items, the rest hold, for an item moved to the left part, its index there, or the
  sentinel n once visited; ``visited(u)`` is ``entries[u] > u``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BitmaskTabu", "ListTabu", "CompactTabu", "TABUS", "tabu_for"]


class BitmaskTabu:
    """Visited flags, one per item (the bitmask tabu's semantics)."""

    def __init__(self, ants: int, n: int):
        self.n, self.left = n, n
        self.flags = np.zeros((ants, n), dtype=bool)
        self.ants = np.arange(ants)

    def visited(self, items: np.ndarray) -> np.ndarray:
        return self.flags[self._each_ant(items), items]

    def _each_ant(self, items) -> np.ndarray:
        """The ants' indices shaped to broadcast against ``items`` ((B,) or (B, k))."""
        return self.ants.reshape((-1,) + (1,) * (np.ndim(items) - 1))

    def mark(self, items: np.ndarray) -> None:
        self.flags[self.ants, items] = True
        self.left -= 1

    def unvisited(self) -> np.ndarray:
        return np.flatnonzero(~self.flags.ravel()).reshape(len(self.ants), self.left) % self.n


class ListTabu(BitmaskTabu):
    """List compression (Uchida et al.; Dawson & Stewart): ``unvisited[:L]`` and its inverse ``indices``."""

    def __init__(self, ants: int, n: int):
        super().__init__(ants, n)
        self.list = np.tile(np.arange(n, dtype=np.int32), (ants, 1))
        self.indices = self.list.copy()

    def visited(self, items: np.ndarray) -> np.ndarray:
        return self.indices[self._each_ant(items), items] >= self.left

    def mark(self, items: np.ndarray) -> None:
        a, last = self.ants, self.left - 1
        where = self.indices[a, items]
        moved = self.list[a, last]
        self.list[a, where] = moved
        self.indices[a, moved] = where
        self.indices[a, items] = last
        self.left = last

    def unvisited(self) -> np.ndarray:
        return self.list[:, :self.left]


class CompactTabu(BitmaskTabu):
    """The compact tabu: one ``entries`` array (its left part the unvisited items, its right part
    the positions of items moved left, or n for visited ones)."""

    def __init__(self, ants: int, n: int):
        super().__init__(ants, n)
        self.entries = np.tile(np.arange(n, dtype=np.int32), (ants, 1))

    def visited(self, items: np.ndarray) -> np.ndarray:
        items = np.asarray(items)
        return self.entries[self._each_ant(items), items] > items

    def mark(self, items: np.ndarray) -> None:
        a, e, n, last = self.ants, self.entries, self.n, self.left - 1
        items = np.asarray(items)
        moved = e[a, last]                                    # the list's last item fills the hole
        where = np.where(items < self.left, items, e[a, items])   # an unmoved item sits at its own index
        fill = where != last
        e[a[fill], where[fill]] = moved[fill]
        e[a[fill], moved[fill]] = where[fill]                 # its new index, in its own right-part slot
        e[a[~fill], last] = n                                 # item `last` is visited (or was the one marked)
        own = items >= last                                   # the marked item's slot is in the right part now
        e[a[own], items[own]] = n
        self.left = last

    def unvisited(self) -> np.ndarray:
        return self.entries[:, :self.left]


#: the visited sets by the names a colony's ``tabu=`` takes
TABUS = {"bt": BitmaskTabu, "lc": ListTabu, "ct": CompactTabu}


def tabu_for(name: str, ants: int, n: int):
    """A fresh visited set of kind ``name`` for ``ants`` ants over ``n`` items."""
    return TABUS[name](ants, n)
