"""A run's budget, checked in one place for every search and multi-start, single or batched."""
from __future__ import annotations

from dataclasses import dataclass

from .validation import check_count, check_number, check_seconds

__all__ = ["Budget"]


@dataclass(frozen=True)
class Budget:
    """Stop criteria of a run (any combination; the first to fire ends it). ``target`` is in the
    problem's units (not signed); ``seconds`` is wall time from the call of ``run``, set-up
    included."""

    iterations: int | None = None
    evaluations: int | None = None
    seconds: float | None = None
    target: float | None = None
    stagnation: int | None = None

    @classmethod
    def checked(cls, owner: str, iterations=None, evaluations=None, seconds=None, target=None, stagnation=None,
                required: bool = False) -> "Budget":
        """The budget with every value checked (ValueError / TypeError naming it). ``required``:
        refuse a budget that can never end the run (a tabu search or an ILS never stops by itself)."""
        budget = cls(check_count(owner, "iterations", iterations), check_count(owner, "evaluations", evaluations),
                     check_seconds(owner, seconds), check_number(owner, "target", target),
                     check_count(owner, "stagnation", stagnation))
        if required and budget.endless:
            raise ValueError(f"{owner}: give a budget (iterations=, seconds=, evaluations= or stagnation=): "
                             "this search never stops by itself")
        return budget

    @property
    def endless(self) -> bool:
        """Whether nothing but a target (which may never be reached) or Ctrl-C can end the run."""
        return all(v is None for v in (self.iterations, self.evaluations, self.seconds, self.stagnation))
