"""The population primitive: improve B solutions to local optima of a neighbourhood chain.

A population method (ant colonies, a genetic algorithm, batched ILS) hands over a (B, n) array
of solutions and gets them back at local optima, with their fitnesses and the moves each took.
A chain is a list of neighbourhoods: the first is descended until none of its moves improves,
then the next ones in order; where one of them improved, the descent goes back to the first
(variable neighbourhood descent, as IteratedLocalSearch's polish). A step takes the best
improving move (``rule="best"``, ties to the lowest move index) or the improving move of lowest
index (``"first"``), so each solution ends exactly where improving it alone with the same rule
ends: the CPU backend is the reference. (A neighbourhood drawn anew each step, crowns, is read
at its draw 0.)

On CUDA every solution descends at once (lsmgpu/backends/cuda/population.py: one launch
evaluates all the solutions' neighbourhoods, each picks and applies its own move); a backend
without a batched population improves them one after another, with a BackendFallback warning.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends import resolve
from ..backends.dontlook import descend_rows
from ..backends.population import RULES, population_for
from ..budget import check_deadline
from ..neighbourhoods import Neighbourhood
from ..problem import Problem, check_problem
from ..search.dontlook import DontLookDescent

__all__ = ["improve", "Improved", "RULES"]


@dataclass
class Improved:
    """The improved population: ``solutions`` (B, n), their ``fitness`` (B,) in the problem's
    own sense, and ``moves`` (B,): the improving moves each took."""

    solutions: np.ndarray
    fitness: np.ndarray
    moves: np.ndarray


def improve(problem: Problem, solutions, chain=None, *, rule: str = "best", backend="auto") -> Improved:
    """Each row of ``solutions`` descended to a local optimum of ``chain`` (a Neighbourhood, a
    sequence of them, or None: the problem's own; or a DontLookDescent: its don't-look moves,
    e.g. ``DontLookDescent(candidates="alpha", lk=True)``, each row whole in a thread block on
    the GPU, a lone row in many; descended again from every city until a descent makes no move,
    so that no city has an improving move left) on ``backend``."""
    check_problem("improve", problem)
    if rule not in RULES:
        raise ValueError(f"improve: `rule` must be one of {RULES}, got {rule!r}")
    population = _checked_population(problem, solutions)
    if isinstance(chain, DontLookDescent):
        backend = resolve(backend)
        check_deadline("the descents' set-up")
        engine = chain.population(backend, problem, len(population), None)
    else:
        steps = _checked_chain(problem, chain)
        backend = resolve(backend, steps[0])
        check_deadline("the descents' set-up")
        engine = population_for(backend, steps, len(population), announce="improve")
    try:
        engine.load(population)
        made = descend_rows(engine, rule, again=isinstance(chain, DontLookDescent))
        out = engine.solutions()
    finally:
        engine.close()
    fitness = np.array([problem.fitness(x) for x in out], dtype=problem.fitness_dtype)
    return Improved(out, fitness, made)


def _checked_population(problem: Problem, solutions) -> np.ndarray:
    """``solutions`` as a (B, n) array of valid solutions, or ValueError naming the first bad row."""
    array = np.asarray(solutions)
    if array.ndim != 2 or array.shape[1] != problem.n or len(array) == 0:
        raise ValueError(f"improve: `solutions` must have shape (B, {problem.n}) with B >= 1, got {array.shape}")
    rows = []
    for k, row in enumerate(array):
        try:
            rows.append(problem.encoding.validate(row))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"improve: solution {k} is not valid: {exc}") from None
    return np.array(rows, dtype=problem.encoding.dtype)


def _checked_chain(problem: Problem, chain) -> list[Problem]:
    """The problem over each neighbourhood of ``chain`` (the first one's own when None)."""
    if chain is None:
        return [problem]
    chain = [chain] if isinstance(chain, Neighbourhood) else list(chain)
    if not chain or not all(isinstance(nb, Neighbourhood) for nb in chain):
        raise TypeError("improve: `chain` must be a Neighbourhood, a non-empty sequence of them or a DontLookDescent")
    return [problem.with_neighbourhood(nb) for nb in chain]
