"""A FocusedACO whose probe sees each iteration's ants before the iteration goes on with them
(benchmarks/probes/beat_source.py, benchmarks/probes/ant_tail.py)."""
from __future__ import annotations

import numpy as np

from lsmgpu.search import FocusedACO


class WatchedACO(FocusedACO):
    """FocusedACO that builds each iteration's ants through ``_watch(build)`` (the probe's look
    at them: by default the build alone), then goes on with those ants' lengths as the search
    would."""

    def _watch(self, build) -> np.ndarray:
        return build(self.iteration)

    def _iterate(self) -> None:
        build = self.colony.build
        lengths = self._watch(build)
        self.colony.build = lambda iteration: lengths            # the iteration goes on with these ants
        try:
            super()._iterate()
        finally:
            self.colony.build = build
