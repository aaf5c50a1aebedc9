"""The searches: one shared loop (base.LocalSearch) and one small class per algorithm; the ant
colonies (colony.py), population methods over the batched local search."""
from .base import LocalSearch
from .colony import AntColonySystem, MaxMinAntSystem
from .hill_climbing import HillClimbing
from .ils import IteratedLocalSearch
from .tabu import TabuSearch

__all__ = ["LocalSearch", "HillClimbing", "TabuSearch", "IteratedLocalSearch", "AntColonySystem", "MaxMinAntSystem",
           "ALGORITHMS", "COLONIES"]

#: the searches by their command-line names
ALGORITHMS = {"tabu": TabuSearch, "hc": HillClimbing, "ils": IteratedLocalSearch}
#: the ant colonies by their command-line names
COLONIES = {"acs": AntColonySystem, "mmas": MaxMinAntSystem}
