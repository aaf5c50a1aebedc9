"""A short tabu search as a population method's local search (issue 22: MMAS-QAP with tabu search).

Descents stop at the first local optimum; on the QAP's flat landscapes a few tabu iterations
from every ant or child go much further (Stuetzle & Hoos's MAX-MIN ant system for the QAP
improves its ants with short robust tabu searches). ``local_search=ShortTabuSearch(...)`` runs
``iterations`` tabu-search iterations on every solution the population method hands over, all
of them together on the backend's batch evaluator (the one batched tabu search steps: one launch
a tabu iteration for every solution on CUDA, lsmgpu/backends/cuda/batch.py), and hands back each
solution's best. Tenures are drawn per solution and iteration as TabuSearch draws them (Taillard's
range, e.g. the QAP's [0.9 n, 1.1 n]); aspiration by the solution's own best; fresh tabu memory
for every call. The draws come from a generator of the search's own seed, so a seeded run is
reproducible and the CUDA rows equal the CPU ones.
"""
from __future__ import annotations

import time

import numpy as np

from ..backends.base import TENURE_BLOCK, Query
from ..backends.ledger import Ledger
from ..neighbourhoods import Neighbourhood
from ..validation import check_count, check_flag
from .tabu import check_tenure

__all__ = ["ShortTabuSearch", "TabuPopulation"]

#: tabu iterations queued between two looks at the deadline and Ctrl-C (as the batched tabu search)
CHUNK = 64


class ShortTabuSearch:
    """``iterations`` tabu iterations on every solution of a population (default: 4 n).

    neighbourhood : the moves (default: the problem's own; it must define tabu attributes)
    tenure        : an int or a range (low, high) drawn each iteration (default: the problem's
                    ``tabu_tenure()``; QAP: Taillard's [0.9 n, 1.1 n])
    aspiration    : a tabu move beating the solution's best so far is admissible
    """

    def __init__(self, iterations: int | None = None, *, neighbourhood: Neighbourhood | None = None, tenure=None,
                 aspiration: bool = True):
        self.iterations = check_count("ShortTabuSearch", "iterations", iterations, 1)
        if neighbourhood is not None and not isinstance(neighbourhood, Neighbourhood):
            raise TypeError(f"ShortTabuSearch: `neighbourhood` must be a Neighbourhood or None, got "
                            f"{type(neighbourhood).__name__}")
        self.neighbourhood = neighbourhood
        self.tenure = None if tenure is None else check_tenure(tenure, owner="ShortTabuSearch", functions=False)
        self.aspiration = check_flag("ShortTabuSearch", "aspiration", aspiration)

    def bound(self, problem):
        """The problem over this search's neighbourhood (TypeError where it has no tabu attributes)."""
        bound = problem.with_neighbourhood(self.neighbourhood) if self.neighbourhood is not None else problem
        if bound.neighbourhood.tabu_shape() is None:
            raise TypeError(f"ShortTabuSearch: {bound.neighbourhood!r} defines no tabu attributes")
        return bound

    def population(self, backend, problem, rows: int, rng) -> "TabuPopulation":
        """The population that runs this search on ``rows`` solutions of ``problem`` on ``backend``."""
        bound = self.bound(problem)
        tenure = self.tenure or check_tenure(bound.tabu_tenure(), owner="ShortTabuSearch", functions=False)
        return TabuPopulation(backend, bound, rows, self.iterations or 4 * problem.n, tenure, self.aspiration, rng)

    def __repr__(self):
        return (f"ShortTabuSearch(iterations={self.iterations}, neighbourhood={self.neighbourhood!r}, "
                f"tenure={self.tenure!r}, aspiration={self.aspiration})")


class TabuPopulation:
    """``rows`` solutions given a short tabu search each, together on a batch evaluator; the
    population protocol of lsmgpu.backends.population as far as the population methods use it
    (load, descend, solutions, values, close): ``solutions()`` are each row's best."""

    def __init__(self, backend, problem, rows: int, iterations: int, tenure: tuple[int, int], aspiration: bool, rng):
        self.problem, self.rows, self.iterations, self.tenure = problem, int(rows), int(iterations), tenure
        self.rules = Query(rule="best", tabu=True, aspiration=aspiration, forced_after=0)
        self.rng = rng
        self.evaluator = backend.batch_evaluator(problem, problem.neighbourhood, self.rows)
        self.device = getattr(self.evaluator, "device", "")
        self.ledger = None

    def load(self, xs) -> None:
        xs = np.asarray(xs, dtype=self.problem.encoding.dtype)
        if xs.shape != (self.rows, self.problem.n):
            raise ValueError(f"ShortTabuSearch: expected {self.rows} solutions of {self.problem.n}, got {xs.shape}")
        values = np.array([self.problem.sense * self.problem.fitness(x) for x in xs], dtype=self.problem.fitness_dtype)
        self.ledger = Ledger(values, self.problem.neighbourhood.size)
        self.evaluator.load(xs, values)

    def descend(self, rows, rule: str = "best", deadline: float | None = None):
        """``iterations`` tabu iterations on every row (``rows`` must hold them all; ``rule`` is
        the descents' and is not read): (iterations made per row, moves evaluated per row, whether
        every row ran them all before ``deadline``)."""
        if not np.all(rows):
            raise ValueError("ShortTabuSearch: every row of the population is searched together")
        ledger, step, sense = self.ledger, 0, self.problem.sense
        while step < self.iterations and ledger.active.any():
            if deadline is not None and time.perf_counter() >= deadline:
                return ledger.done.copy(), ledger.evaluations.copy(), False
            if step % TENURE_BLOCK == 0:
                self.evaluator.set_tenures(self._tenures())
            count = min(CHUNK, self.iterations - step, TENURE_BLOCK - step % TENURE_BLOCK)
            chunk = self.evaluator.advance(step, count, self.rules, None, None, ledger, deadline=deadline)
            ledger.record(chunk.made, chunk.values, chunk.code, 0.0, sense, self.iterations)
            if chunk.interrupted:
                raise KeyboardInterrupt
            step += count if chunk.steps is None else chunk.steps
        return ledger.done.copy(), ledger.evaluations.copy(), step >= self.iterations or not ledger.active.any()

    def _tenures(self) -> np.ndarray:
        low, high = self.tenure
        if low == high:
            return np.full((self.rows, TENURE_BLOCK), low, dtype=np.int32)
        return self.rng.integers(low, high + 1, (self.rows, TENURE_BLOCK)).astype(np.int32)

    def solutions(self) -> np.ndarray:
        """Each row's best solution."""
        return self.evaluator.best_solutions()

    def values(self) -> np.ndarray:
        """Each row's best signed fitness."""
        return self.ledger.best.copy()

    def close(self) -> None:
        self.evaluator.close()
