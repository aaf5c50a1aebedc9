"""The command line's progress bar: a callback that shows a search's best so far as it runs."""
from __future__ import annotations

import sys

from tqdm import tqdm

from .callbacks import Callback

__all__ = ["ProgressBar"]

#: the bar over seconds: elapsed and total to a tenth of a second, not tqdm's raw floats
SECONDS_FORMAT = "{l_bar}{bar}| {n:.1f}/{total:.1f} s{postfix}"


class ProgressBar(Callback):
    """A tqdm bar over iterations (or over seconds with --time) showing the best fitness so far,
    and its gap (%) where ``gap(fitness)`` gives one (the problem's to its best known value). It
    appears at ``show()`` (the command calls it after its header line, so the bar is not drawn on
    that line), or at the search's start at the latest."""

    def __init__(self, iterations: int | None, seconds: float | None, gap=None):
        self.by_time = iterations is None and seconds is not None
        self.total = seconds if self.by_time else iterations
        self.gap = gap
        self.bar, self.shown = None, None

    def _postfix(self, best, refresh: bool) -> None:
        """The best so far (and its gap) beside the bar, where it changed."""
        if best == self.shown:
            return
        self.shown = best
        gap = None if self.gap is None else self.gap(best)
        extra = {} if gap is None else {"gap": f"{100 * gap:.3f} %"}
        self.bar.set_postfix(best=f"{best:.10g}", **extra, refresh=refresh)

    def show(self) -> None:
        if self.bar is None:
            self.bar = tqdm(total=self.total, unit="s" if self.by_time else "it", dynamic_ncols=True,
                            file=sys.stderr, disable=None, bar_format=SECONDS_FORMAT if self.by_time else None)

    def on_start(self, search):
        self.show()

    def on_iteration(self, state):
        if self.bar is None:
            return
        done = round(state.seconds, 1) if self.by_time else state.iteration
        if self.total is not None:
            done = min(done, self.total)
        self.bar.update(done - self.bar.n)
        self._postfix(state.best, refresh=False)

    def on_end(self, result):
        if self.bar is None:
            return
        self._postfix(result.fitness, refresh=True)
        self.bar.close()
