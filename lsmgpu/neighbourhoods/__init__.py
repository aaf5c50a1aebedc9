"""Neighbourhoods: the moves around a solution, one self-contained unit each (docs/architecture.md).

``base`` holds the contract, ``generic`` the neighbourhoods of any vector (bit flips, value
change, swap, 3-exchange, 2-opt), ``crowns`` the real-vector one, ``tour`` those over candidate
lists of a tour (candidate 2-opt, Or-opt, candidate 3-opt, the ILS polish chain).
"""
from .base import Neighbourhood
from .crowns import Crowns, counter_uniform
from .generic import BitFlip, Swap, ThreeExchange, TwoOpt, ValueChange
from .tour import BlockExchange, CandidateThreeOpt, CandidateTwoOpt, OrOpt, OverCandidates, candidate_polish

__all__ = ["Neighbourhood", "BitFlip", "ValueChange", "Swap", "ThreeExchange", "TwoOpt", "CandidateTwoOpt",
           "BlockExchange", "OrOpt", "CandidateThreeOpt", "OverCandidates", "Crowns", "candidate_polish",
           "counter_uniform"]
