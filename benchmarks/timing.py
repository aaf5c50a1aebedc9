"""Kernel timing shared by the tables: one full pass over a neighbourhood, from CUDA events."""
from __future__ import annotations

import statistics

from lsmgpu.backends.base import Query


def pass_seconds(evaluator, repeats: int, launches: int = 20) -> float:
    """Median seconds of one full pass over ``evaluator``'s neighbourhood around its loaded
    solution (evaluate + reduce, no apply): CUDA events over ``launches`` queued launches,
    ``repeats`` times, after a first selection that tunes the launch."""
    import pycuda.driver as cuda
    query = Query(rule="best", current=0)
    evaluator.select(query)
    times = []
    for _ in range(repeats):
        start, end = cuda.Event(), cuda.Event()
        start.record()
        for _ in range(launches):
            evaluator._launch_select(*evaluator.config, 0, query, 0)
        end.record()
        end.synchronize()
        times.append(end.time_since(start) * 1e-3 / launches)
    return statistics.median(times)
