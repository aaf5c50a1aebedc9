"""The searches: one shared loop (base.LocalSearch) and one small class per algorithm."""
from .base import LocalSearch
from .hill_climbing import HillClimbing
from .ils import IteratedLocalSearch
from .tabu import TabuSearch

__all__ = ["LocalSearch", "HillClimbing", "TabuSearch", "IteratedLocalSearch", "ALGORITHMS"]

#: the searches by their command-line names
ALGORITHMS = {"tabu": TabuSearch, "hc": HillClimbing, "ils": IteratedLocalSearch}
