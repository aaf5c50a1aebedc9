"""Which driver runs the starts of a search together on one device, or why none does."""
from __future__ import annotations

from ..search import IteratedLocalSearch, TabuSearch
from .batch import BatchTabuSearch, batch_unsupported
from .batch_ils import BatchIteratedLocalSearch, batch_ils_unsupported

__all__ = ["batch_driver"]


def batch_driver(search, options: dict, problem):
    """(the batch class for ``search`` with ``options`` on ``problem``, None), or (None, why its
    starts run one after the other)."""
    if search is TabuSearch:
        why = batch_unsupported(search, options, problem)
        return (BatchTabuSearch if why is None else None), why
    if search is IteratedLocalSearch:
        why = batch_ils_unsupported(options, problem)
        return (BatchIteratedLocalSearch if why is None else None), why
    return None, f"{search.__name__} runs its starts one after the other (batching is for tabu search and ILS)"
