"""Thread control: the wave auto-tuner (Luong, Melab & Talbi, Algorithm 3).

How many threads to launch, and how many per block, depends on the kernel, the GPU and the
neighbourhood size; no fixed choice is good for all. The tuner times configurations on the
real kernel: total threads from the power of two nearest n up to the neighbourhood size (the
grid-stride loop covers the rest), threads per block from 32 to 1024 in steps of 32, a few
timed trials each (median). A configuration that fails to launch (too many registers or
threads) is skipped and the best so far is kept. Results are cached per (kernel, device,
size class) in memory and in ``tuning.json`` in lsmgpu's cache folder: one kernel serves
every instance of a kind (lsmgpu.kernels), and instances whose n and neighbourhood size round
up to the same powers of two get the same candidates, so they share one tuning
(:func:`tuning_key`).
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from typing import Callable

import numpy as np

from ..budget import time_left
from ..errors import KernelLaunchError

__all__ = ["WaveTuner", "default_configuration", "tuning_key"]

log = logging.getLogger("lsmgpu")


#: block sizes tried first at every total (a coarse pass before the other multiples of 32)
COMMON_BLOCKS = (256, 128, 512, 1024, 64, 32)


def _pow2_at_least(v: int) -> int:
    return 1 << max(0, int(v - 1).bit_length())


#: a size class tuned within this factor of the moves (and of n) serves a new one untimed
NEAR_CLASS = 4


def tuning_key(kernel: str, device: str, n: int, size: int) -> str:
    """The tuning cache's key: the kernel, the device and the size class (n and the number of
    moves rounded up to powers of two, which decide the tuner's candidates)."""
    return f"{kernel}|{device}|n{_pow2_at_least(n)}|moves{_pow2_at_least(size)}"


def _size_class(key: str) -> tuple[str, int, int] | None:
    """(kernel|device, n, moves) of a tuning key; None for a key of another form."""
    head, _, rest = key.rpartition("|n")
    n, _, moves = rest.partition("|moves")
    return (head, int(n), int(moves)) if n.isdigit() and moves.isdigit() else None


def default_configuration(size: int, resident_threads: int, block: int = 256) -> tuple[int, int]:
    """Untuned choice: one thread per move up to a few waves of resident threads."""
    threads = min(_pow2_at_least(size), 4 * resident_threads)
    block = min(block, threads)
    return max(block, threads // block * block), block


class WaveTuner:
    """Times (threads, threads-per-block) configurations and keeps the fastest.

    ``trials``: timed launches per configuration (after one warm-up launch);
    ``budget``: seconds of tuning after which the best so far is kept;
    ``blocks``: candidate block sizes (default 32..1024 step 32);
    ``cache``: path of the JSON cache, or None for memory only.
    """

    def __init__(self, trials: int = 3, budget: float = 2.0, blocks=None, cache: str | None = "default",
                 max_threads: int | None = None):
        if trials < 1 or budget <= 0:
            raise ValueError("WaveTuner: `trials` must be >= 1 and `budget` > 0")
        self.trials, self.budget = trials, budget
        self.blocks = list(blocks) if blocks is not None else list(range(32, 1025, 32))
        self.max_threads = max_threads
        if cache == "default":
            from ..cubins import cache_dir
            cache = os.path.join(cache_dir(), "tuning.json")
        self.cache_path = cache
        self.memory: dict[str, tuple[int, int]] = {}
        if cache and os.path.isfile(cache):
            try:
                self.memory.update({k: tuple(v) for k, v in json.loads(open(cache).read()).items()})
            except (ValueError, OSError):
                log.warning("tuning cache %s unreadable; starting afresh", cache)

    def candidates(self, n: int, size: int, resident_threads: int) -> list[tuple[int, int]]:
        """(threads, block) pairs: totals are powers of two from the one nearest n up to the
        neighbourhood size (capped at ``max_threads``, default 16 waves), rounded to whole blocks;
        the largest totals first and the common block sizes before the other multiples of 32,
        so that when slow launches use up the time budget, the configurations tried span the
        range and fill the GPU rather than being the starved small grids."""
        top = _pow2_at_least(size)
        cap = _pow2_at_least(self.max_threads or 16 * resident_threads)
        totals, total = [], _pow2_at_least(n)
        while True:
            totals.append(min(total, cap))
            if total >= top or total >= cap:
                break
            total *= 2
        common = [b for b in COMMON_BLOCKS if b in self.blocks]
        rest = [b for b in self.blocks if b not in common]
        pairs = [(t // b * b, b) for blocks in (common, rest) for t in reversed(totals) for b in blocks if b <= t]
        return list(dict.fromkeys(pairs))

    def tune(self, key: str, n: int, size: int, resident_threads: int,
             launch: Callable[[int, int], float]) -> tuple[int, int]:
        """Best (threads, block) for ``launch(threads, block) -> seconds``; cached under ``key``.
        A size class the tuner has not timed takes the configuration of the nearest one it has
        timed for the same kernel and device within NEAR_CLASS times the moves and n (its
        threads capped by this neighbourhood's), untimed: a new instance of a known kind starts
        at once."""
        if key in self.memory:
            return self.memory[key]
        near = self._near(key)
        if near is not None:
            threads, block = self.memory[near]
            threads = max(block, min(threads, _pow2_at_least(size)) // block * block)
            log.info("tuner: %s takes %s's configuration (%d threads, %d per block), untimed", key, near,
                     threads, block)
            return threads, block
        limit, left = self.budget, time_left()
        cut = left is not None and left < self.budget     # the search's own deadline comes first
        if cut:
            limit = max(0.0, 0.5 * left)
        start = time.perf_counter()
        best, best_time, failures = None, np.inf, 0
        for threads, block in self.candidates(n, size, resident_threads):
            try:
                launch(threads, block)  # warm-up
                elapsed = float(np.median([launch(threads, block) for _ in range(self.trials)]))
            except KernelLaunchError as exc:
                failures += 1
                log.info("tuner: %s failed (%s); keeping the best so far %s", (threads, block), exc, best)
                continue
            if elapsed < best_time:
                best, best_time = (threads, block), elapsed
            if time.perf_counter() - start > limit:
                break
        if best is None:
            raise KernelLaunchError(f"tuner: no configuration of {key} could be launched")
        log.info("tuner: %s -> %d threads, %d per block (%.1f us), %d failed launches%s",
                 key, best[0], best[1], best_time * 1e6, failures, " (cut by the run's deadline: not cached)" * cut)
        if not cut:
            self.memory[key] = best
            self._save()
        return best

    def _near(self, key: str) -> str | None:
        """The cached key of the same kernel and device whose size class is nearest ``key``'s
        (in moves, then n), within NEAR_CLASS times; None if there is none."""
        mine = _size_class(key)
        if mine is None:
            return None
        best, distance = None, None
        for other in self.memory:
            theirs = _size_class(other)
            if theirs is None or theirs[0] != mine[0]:
                continue
            ratios = [max(a, b) / min(a, b) for a, b in zip(mine[1:], theirs[1:])]
            if max(ratios) <= NEAR_CLASS and (distance is None or ratios[::-1] < distance):
                best, distance = other, ratios[::-1]
        return best

    def _save(self) -> None:
        if not self.cache_path:
            return
        try:      # written whole to a private file, then renamed: two processes never clobber it
            fd, temporary = tempfile.mkstemp(dir=os.path.dirname(self.cache_path), suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump({k: list(v) for k, v in self.memory.items()}, f)
            os.replace(temporary, self.cache_path)
        except OSError as exc:
            log.warning("tuning cache not written: %s", exc)
