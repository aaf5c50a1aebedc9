"""Variable neighbourhood search (Mladenović & Hansen 1997; Luong et al.'s framework lists it
beside hill climbing, tabu search and ILS): shake in the k-th neighbourhood, descend, move or go
to k + 1."""
from __future__ import annotations

from dataclasses import dataclass

from ..validation import check_count
from .ils import ILSParams, IteratedLocalSearch

__all__ = ["VariableNeighbourhoodSearch", "VNSParams"]


@dataclass(frozen=True)
class VNSParams(ILSParams):
    """The variable neighbourhood search's own options (VariableNeighbourhoodSearch's docstring
    says what each does): ILS's, with ``k_max`` and acceptance "better" by default."""

    acceptance: object = "better"
    k_max: int = 5

    def __post_init__(self):
        if self.strength != 1:
            raise ValueError("VariableNeighbourhoodSearch: the shake's size is k (1 .. k_max), not `strength`")
        super().__post_init__()
        object.__setattr__(self, "k_max", check_count("VariableNeighbourhoodSearch", "k_max", self.k_max, 1))


class VariableNeighbourhoodSearch(IteratedLocalSearch):
    """Basic VNS. The k-th neighbourhood N_k(x) is what k kick units of the problem make from x
    (``problem.kick_moves``: k double bridges of a tour, applied on the GPU as moves; or
    ``problem.perturb`` of strength k: k random moves of the neighbourhood). One iteration (a
    shake) draws x' in N_k(x) of the accepted solution x, descends from it as the ILS does
    (``rule``, ``polish``, ``patience``) and accepts the local optimum by ``acceptance``
    (default "better": strictly better); on acceptance k goes back to 1, otherwise to k + 1, and
    after ``k_max`` back to 1 (default 5). The other options are IteratedLocalSearch's; ``run``
    needs a budget."""

    algorithm = "VariableNeighbourhoodSearch"
    Params = VNSParams
    iteration_unit = "shakes"
    state_fields = IteratedLocalSearch.state_fields + ("k",)

    def __init__(self, problem, *, params: VNSParams | None = None, **options):
        super().__init__(problem, params=params, **options)
        self.k_max = check_count(self.algorithm, "k_max", self.params.k_max, 1, self.problem.n)
        self.k = 1

    def _start_hook(self):
        self.k = 1
        super()._start_hook()

    def _iterate(self):
        self.strength = self.k
        accepted = self._kick_descend_accept()
        self.k = 1 if accepted else self.k % self.k_max + 1
        return None
