"""The searches: one shared loop (base.LocalSearch) and one small class per algorithm; the
population methods over the batched local search (population.py): the ant colonies (colony.py)
and the genetic algorithm (genetic.py), whose local search may be a short tabu search (short_tabu.py) or don't-look descents (dontlook.py); the don't-look ILS
(dontlook_ils.py), many ILS chains each whole where its tour lives; focused ACO (focused.py), ants that
change a few edges of a source tour each."""
from .base import LocalSearch
from .colony import AntColonySystem, MaxMinAntSystem
from .dontlook import DontLookDescent
from .dontlook_ils import DontLookILS
from .focused import FocusedACO
from .genetic import GeneticAlgorithm
from .hill_climbing import HillClimbing
from .ils import IteratedLocalSearch
from .population import PopulationSearch
from .short_tabu import ShortTabuSearch
from .tabu import TabuSearch
from ..validation import nearest_hint

__all__ = ["LocalSearch", "PopulationSearch", "HillClimbing", "TabuSearch", "IteratedLocalSearch", "AntColonySystem", "MaxMinAntSystem",
           "GeneticAlgorithm", "ShortTabuSearch", "DontLookDescent", "DontLookILS", "FocusedACO",
           "ALGORITHMS", "COLONIES", "POPULATION_METHODS", "SEARCHES", "search_class"]

#: the searches by their command-line names
ALGORITHMS = {"tabu": TabuSearch, "hc": HillClimbing, "ils": IteratedLocalSearch}
#: the ant colonies by their command-line names
COLONIES = {"acs": AntColonySystem, "mmas": MaxMinAntSystem}
#: every population method by its command-line name
POPULATION_METHODS = {**COLONIES, "ga": GeneticAlgorithm}
#: every search by its command-line name (the one table the CLI and the benchmarks read)
SEARCHES = {**ALGORITHMS, **POPULATION_METHODS, "dontlook-ils": DontLookILS, "faco": FocusedACO}


def search_class(name: str, owner: str = "lsmgpu"):
    """The search called ``name`` (SEARCHES), or ValueError naming it and the nearest valid name."""
    if name in SEARCHES:
        return SEARCHES[name]
    raise ValueError(f"{owner}: unknown search {name!r}{nearest_hint(name, SEARCHES)}; one of {sorted(SEARCHES)}")
