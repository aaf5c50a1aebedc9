"""Iterated local search chains whose tours are cut into windows, every window a chain of its own:
the NumPy reference the GPU's ``windows`` and ``turn`` kernels (templates/skeleton/dontlook_windows.cu.j2)
equal.

A chain of lsmgpu.backends.dontlook_chains kicks and descends one place of its tour at a time; on
18,512 cities a minute gives each city some fifteen kicks. Kicks and descents are local, so
disjoint stretches of one tour can be worked on at once: the tour's positions are cut into
``count`` windows of ``length`` (the last takes the rest), and each window is an ILS chain of its
own on the path it holds (its ends and the cities outside stay where they are; the descent's
path rules, lsmgpu.backends.dontlook). A chain of W windows makes W times the kicks.

1. The start tours descend whole, as the chains' first descent (no kicks), and are accepted.
2. A round: window w of chain k runs, with an empty queue and a best of 0 (the change of its
   path's length), the chains' loop on its path: at the end of a descent accept (not longer than
   its best) or go back, then kick (``plan_kick`` on the path, stream k W + w, its own count of
   kicks) and descend from the six endpoints; up to ``budget`` checks, then it goes back to its
   best where the ongoing descent is longer. A window's quota of kicks is limit // W, one more for
   the first limit mod W windows; a window at its quota after a descent is idle.
3. The turn: each chain's best (and length) adds its windows' gains in window order, and the tour
   is rotated by floor(counter_uniform(seed, round, k, 3) n) positions (x[i] <- x[i + offset]) so
   the next round's windows end elsewhere.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ..neighbourhoods.crowns import counter_uniform
from .dontlook import apply_steps, enqueue, improve_city
from .dontlook_chains import CpuChains, past_deadline, plan_kick

__all__ = ["Windows", "CpuWindowChains", "window_span"]

#: the shortest window (a kick needs two segments and their ends; the descent some room)
MIN_WINDOW = 16


class Windows:
    """How a tour of n cities is cut: ``count`` windows of ``length`` positions, the last taking
    the rest."""

    def __init__(self, n: int, length: int):
        self.n, self.length = int(n), int(length)
        if not MIN_WINDOW <= self.length <= self.n:
            raise ValueError(f"a window must hold {MIN_WINDOW} .. {self.n} positions (the tour's cities), "
                             f"got {length}")
        self.count = self.n // self.length

    def bounds(self, w: int) -> tuple[int, int]:
        """Window w's positions lo .. hi - 1."""
        lo = w * self.length
        return lo, self.n if w == self.count - 1 else lo + self.length

    def quota(self, limit: int, w: int) -> int:
        """Window w's share of a chain's ``limit`` kicks."""
        return limit // self.count + (w < limit % self.count)


def window_span(length: int, segment: int) -> int:
    """The longest kicked segment in a window of ``length`` positions: ``segment``, at most
    (length - 2) // 2 (a, the two segments and d then fit)."""
    return max(1, min(int(segment), (int(length) - 2) // 2))


def rotation(seed: int, round_: int, chain: int, n: int) -> int:
    """The positions chain ``chain``'s tour turns by before round ``round_``."""
    return int(np.floor(counter_uniform(seed, round_, chain, 3) * n))


class CpuWindowChains(CpuChains):
    """``rows`` chains of ``windows`` windows each, stepped with NumPy (the reference)."""

    def __init__(self, rules, kicks, distance, rows: int, windows: Windows, device: str = ""):
        super().__init__(rules, kicks, distance, rows, device)
        self.windows = windows

    def load(self, xs) -> None:
        """Start tours (rows x n): every city queued for the first, whole descent."""
        super().load(xs)
        shape = (self.rows, self.windows.count)
        self.slot_kicks, self.slot_idle = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=bool)
        self.gains = np.zeros(shape)
        self.round = -1                          # -1: the start tours' descent

    def advance(self, budget: int, deadline: float | None = None) -> bool:
        """The start tours' descent (up to ``budget`` checks of every chain, until it ends), or a
        round of every window and the turn; whether every window is idle."""
        if self.round < 0:
            for k in range(self.rows):
                self._advance(k, budget, deadline, 0)
            if self.idle.all():
                self._turn(0)
            return False
        for k in range(self.rows):
            for w in range(self.windows.count):
                self._window(k, w, budget, deadline)
        self._turn(self.round + 1)
        return bool(self.slot_idle.all())

    def _window(self, k: int, w: int, budget: int, deadline) -> None:
        lo, hi = self.windows.bounds(w)
        x, best_x = self.x[k, lo:hi], self.best_x[k, lo:hi]          # views: the chain's path
        pos = np.full(self.x.shape[1], -1, dtype=np.int64)
        pos[x] = np.arange(hi - lo)
        queue, queued = deque(), np.zeros(self.x.shape[1], dtype=bool)
        state = {"current": 0.0, "best": 0.0}
        kicks, quota = int(self.slot_kicks[k, w]), self.windows.quota(self.kick_rules.limit, w)
        stream = k * self.windows.count + w
        done, idle = 0, False
        while True:
            if past_deadline(deadline, done):
                break
            if not queue:
                self._settle_path(x, best_x, pos, state)
                if kicks >= quota:
                    idle = True
                    break
                delta, steps, touched = plan_kick(x, self.kick_rules, kicks, stream, self.between, path=True)
                state["current"] += delta
                kicks += 1
                apply_steps(x, pos, steps, path=True)
                enqueue(touched, queue, queued)
                continue
            if done >= budget:
                break
            c = queue.popleft()
            queued[c] = False
            done += 1
            delta = improve_city(c, x, pos, self.rules, self.between, queue, queued, path=True)
            if delta is not None:
                state["current"] += delta
                self.made[k] += 1
        if not idle:
            self._settle_path(x, best_x, pos, state)
        self.gains[k, w], self.slot_kicks[k, w], self.slot_idle[k, w] = state["best"], kicks, idle
        self.checks[k] += done
        self.pos[k, x] = np.arange(lo, hi)

    @staticmethod
    def _settle_path(x, best_x, pos, state) -> None:
        """The end of a window's descent: accepted (its best <- its path) or back to its best."""
        if state["current"] <= state["best"]:
            state["best"] = state["current"]
            best_x[:] = x
        else:
            state["current"] = state["best"]
            x[:] = best_x
            pos[x] = np.arange(len(x))

    def _turn(self, round_: int) -> None:
        """Every chain adds its windows' gains and turns its tour for round ``round_``."""
        n = self.x.shape[1]
        for k in range(self.rows):
            for gain in self.gains[k]:
                self.best[k] += gain
            self.current[k] = self.best[k]
            self.x[k] = self.best_x[k] = np.roll(self.x[k], -rotation(self.kick_rules.seed, round_, k, n))
            self.pos[k, self.x[k]] = np.arange(n)
        self.gains[:] = 0.0
        self.round = round_

    def counters(self) -> dict:
        """Per chain: kicks made (its windows'), cities checked, improving moves applied."""
        counters = super().counters()
        counters["kicks"] = counters["kicks"] + self.slot_kicks.sum(axis=1)
        return counters
