"""The algorithmic level: many searches of one problem (multi-start, batches, islands, Ray).

``multistart`` runs independent starts (``MultiStart``); ``batch`` steps tabu-search starts
together on one device through the backend's batch evaluator, as islands with
``exchange_every``; ``distributed`` spreads batches over Ray actors, one per GPU (Ray is an
optional extra, imported only there). Each returns one SearchResult (``SearchResult.combined``:
the best run, every run in ``runs``).
``improve`` is the population primitive: B solutions to local optima of a neighbourhood chain.
"""
from .improve import Improved, improve
from .multistart import MultiStart
from .seeds import spawn_seeds

__all__ = ["MultiStart", "spawn_seeds", "improve", "Improved"]
