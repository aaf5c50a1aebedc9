"""The command line's progress bar: a callback that shows a search's best so far as it runs."""
from __future__ import annotations

import sys

from tqdm import tqdm

from .callbacks import Callback

__all__ = ["ProgressBar"]


class ProgressBar(Callback):
    """A tqdm bar over iterations (or over seconds with --time) showing the best fitness so far."""

    def __init__(self, iterations: int | None, seconds: float | None):
        self.by_time = iterations is None and seconds is not None
        self.total = seconds if self.by_time else iterations
        self.bar = tqdm(total=self.total, unit="s" if self.by_time else "it", dynamic_ncols=True,
                        file=sys.stderr, disable=None)

    def on_iteration(self, state):
        done = state.seconds if self.by_time else state.iteration
        if self.total is not None:
            done = min(done, self.total)
        self.bar.update(done - self.bar.n)
        if state.iteration % 16 == 0:
            self.bar.set_postfix(best=f"{state.best:g}", refresh=False)

    def on_end(self, result):
        self.bar.set_postfix(best=f"{result.fitness:g}")
        self.bar.close()
