"""lsmgpu: local-search metaheuristics with the neighbourhood evaluated on the GPU.

>>> from lsmgpu import TabuSearch
>>> from lsmgpu.problems import QAP
>>> result = TabuSearch(QAP.from_file(QAP.shipped("tai12a")), seed=0, backend="cpu").run(iterations=200)
>>> result.fitness >= 224416
True
"""
import logging

from .callbacks import Callback, State
from .encodings import Binary, Discrete, Permutation, Real
from .errors import BackendFallback, BackendUnavailable, KernelCompileError, KernelLaunchError
from .neighbourhoods import (BitFlip, BlockExchange, CandidateThreeOpt, CandidateTwoOpt, Crowns, Neighbourhood, OrOpt,
                             Swap, ThreeExchange, TwoOpt, ValueChange, candidate_polish)
from .parallel import MultiStart
from .problem import ColonyModel, DeviceArray, Problem
from .result import SearchResult
from .search import (AntColonySystem, DontLookDescent, DontLookILS, FocusedACO, GeneticAlgorithm, HillClimbing,
                     IteratedLocalSearch, LocalSearch, MaxMinAntSystem, ShortTabuSearch, TabuSearch, TourSegments,
                     VariableNeighbourhoodSearch)

__version__ = "0.1.0"


def __getattr__(name):
    """Imported on first use: ``RayMultiStart``, ``RayIslands`` and ``RayTourSegments`` (Ray is an optional extra),
    ``load`` (a problem from its file; lsmgpu.problems, whose problems import lsmgpu's modules)
    and ``compare``."""
    if name == "RayMultiStart":
        from .parallel.distributed import RayMultiStart
        return RayMultiStart
    if name == "RayIslands":
        from .parallel.ray_islands import RayIslands
        return RayIslands
    if name == "RayTourSegments":
        from .parallel.ray_segments import RayTourSegments
        return RayTourSegments
    if name == "load":
        from .problems import load
        return load
    if name == "compare":
        from .comparison import compare
        return compare
    raise AttributeError(f"module 'lsmgpu' has no attribute {name!r}")

logging.getLogger("lsmgpu").addHandler(logging.NullHandler())

__all__ = ["Callback", "State", "Binary", "Discrete", "Permutation", "Real",
           "BackendFallback", "BackendUnavailable", "KernelCompileError", "KernelLaunchError",
           "BitFlip", "BlockExchange", "CandidateThreeOpt", "CandidateTwoOpt", "Crowns", "Neighbourhood", "OrOpt",
           "Swap", "ThreeExchange", "TwoOpt", "ValueChange", "candidate_polish",
           "ColonyModel", "DeviceArray", "Problem", "SearchResult",
           "HillClimbing", "IteratedLocalSearch", "VariableNeighbourhoodSearch", "LocalSearch", "TabuSearch",
           "AntColonySystem", "MaxMinAntSystem", "GeneticAlgorithm", "ShortTabuSearch", "DontLookDescent",
           "DontLookILS", "FocusedACO", "TourSegments", "MultiStart",
           "RayMultiStart", "RayIslands", "RayTourSegments", "compare", "load"]
