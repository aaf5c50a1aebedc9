"""The searches: one shared loop (loop.Search), local searches on it (base.LocalSearch) and one
small class per algorithm (hill climbing, tabu search, ILS, VNS: vns.py); the population methods
over the batched local search (population.py): the ant colonies (colony.py) and the genetic
algorithm (genetic.py), whose local search may be a short tabu search (short_tabu.py) or don't-look
descents (dontlook.py); the don't-look ILS (dontlook_ils.py), many ILS chains each whole where its
tour lives; focused ACO (focused.py, its options in focused_params.py), ants that change a few edges
of a source tour each."""
from .base import LocalSearch
from .colony import AntColonySystem, MaxMinAntSystem
from .dontlook import DontLookDescent
from .dontlook_ils import DontLookILS
from .focused import FocusedACO
from .loop import Search
from .genetic import GeneticAlgorithm
from .hill_climbing import HillClimbing
from .ils import IteratedLocalSearch
from .population import PopulationSearch
from .segments import TourSegments
from .short_tabu import ShortTabuSearch
from .tabu import TabuSearch
from .vns import VariableNeighbourhoodSearch
from ..validation import nearest_hint

__all__ = ["LocalSearch", "PopulationSearch", "HillClimbing", "TabuSearch", "IteratedLocalSearch", "AntColonySystem",
           "MaxMinAntSystem", "GeneticAlgorithm", "ShortTabuSearch", "DontLookDescent", "DontLookILS", "FocusedACO",
           "VariableNeighbourhoodSearch", "TourSegments", "Search", "SEARCHES", "search_class", "searches_of",
           "register"]

#: every search by its name: the one table the CLI's --algorithm, MultiStart, RayMultiStart,
#: RayIslands, compare and the benchmarks read (register() adds a user's own)
SEARCHES = {"tabu": TabuSearch, "hc": HillClimbing, "ils": IteratedLocalSearch, "vns": VariableNeighbourhoodSearch,
            "acs": AntColonySystem,
            "mmas": MaxMinAntSystem, "ga": GeneticAlgorithm, "dontlook-ils": DontLookILS, "faco": FocusedACO,
            "segments": TourSegments}


def register(name: str, cls) -> None:
    """Make the search class ``cls`` known by ``name`` to the command line, MultiStart and
    RayMultiStart (a LocalSearch), RayIslands (a PopulationSearch) and compare: a subclass of
    Search with its options in a Params dataclass (TypeError / ValueError naming what is wrong)."""
    if not isinstance(name, str) or not name or name in SEARCHES:
        raise ValueError(f"register: `name` must be a new non-empty string, got {name!r}"
                         + (f" (already {SEARCHES[name].__name__})" if name in SEARCHES else ""))
    if not (isinstance(cls, type) and issubclass(cls, Search)):
        raise TypeError(f"register: `cls` must be a subclass of lsmgpu.search.loop.Search, got {cls!r}")
    SEARCHES[name] = cls


def searches_of(kind: type) -> dict:
    """The registered searches that are ``kind`` (LocalSearch: what MultiStart runs; PopulationSearch:
    what RayIslands runs), by name."""
    return {name: cls for name, cls in SEARCHES.items() if issubclass(cls, kind)}


def search_class(name: str, owner: str = "lsmgpu", kind: type | None = None):
    """The search called ``name`` (SEARCHES; of ``kind`` where given), or ValueError naming it and
    the nearest valid name."""
    valid = SEARCHES if kind is None else searches_of(kind)
    if name in valid:
        return valid[name]
    raise ValueError(f"{owner}: unknown search {name!r}{nearest_hint(name, valid)}; one of {sorted(valid)}")
