"""Many iterated local searches at once on one device (the batched ILS, islands optional).

``MultiStart(IteratedLocalSearch, problem, starts=B)`` runs its B chains here: the chains' current
and accepted solutions live in a population of the backend (lsmgpu/backends/population.py; on
CUDA all of them on the GPU), and every ILS iteration is, for all chains together, a kick (the
problem's double bridge made on the GPU from the draws of each chain's own generator, or a host
``perturb`` uploaded), the descent of every chain through the neighbourhood chain (one launch a
step for all of them), and the acceptance test, kept or undone on the device.

Chain k is an IteratedLocalSearch seeded with ``SeedSequence(seed).spawn(B)[k]``: it draws its
start solution and its kicks from that seed exactly as a single search does, and descends with
the same rule, so with an iteration budget its trajectory equals that single search's, on either
backend. Budgets: ``iterations`` and ``stagnation`` apply to each chain, ``seconds`` to the batch
(counted from the call, set-up included; looked at between iterations and between the descent's
launches), and a chain that reaches ``target`` stops the batch (the others report "stopped").
``exchange_every = K`` makes the chains islands: every K iterations the worse half of the active
chains restart from kicked copies (``exchange_strength`` kicks, default the ILS's strength) of the
better half's best solutions, the best giving to the worst; exchanges draw from a stream of their
own, so a seeded batch is reproducible.
"""
from __future__ import annotations

import numpy as np

from ..backends.population import population_for
from ..budget import DeadlineReached
from ..callbacks import State
from ..result import SearchResult
from ..search import IteratedLocalSearch
from ..search.loop import Search
from ..validation import check_count
from ..backends.ledger import Ledger, batch_ended
from .batch_state import batch_state, restore_batch
from .seeds import start_solutions

__all__ = ["BatchIteratedLocalSearch", "batch_ils_unsupported"]


#: IteratedLocalSearch options the batch honours
OPTIONS = {"backend", "rule", "strength", "acceptance", "polish", "patience", "candidates", "neighbourhood", "history",
           "exchange_every", "exchange_strength"}


def batch_ils_unsupported(options: dict, problem) -> str | None:
    """Why an ILS with ``options`` on ``problem`` cannot run its chains batched (None when it can)."""
    extra = set(options) - OPTIONS
    if extra:
        return f"options {sorted(extra)} are per-search"
    if options.get("rule", "best") in ("independent", "random"):
        return f"rule={options['rule']!r} selects on the host"
    template = IteratedLocalSearch(problem, **{k: v for k, v in options.items() if k not in ("exchange_every",
                                                                                              "exchange_strength")})
    if any(step.neighbourhood.drawn for step in [template.problem, *template.polish]):
        return "a neighbourhood drawn anew each step (crowns) is drawn per chain"
    main, rng = template.problem, np.random.default_rng(0)
    if main.kick_draws(rng) is None and main.kick_moves(main.encoding.random(rng), rng, 1) is not None:
        return f"{main.name} gives its kick as moves (kick_moves) but not as draws (kick_draws)"
    return None


class BatchIteratedLocalSearch(Search):
    """``len(seeds)`` iterated local searches of ``problem`` stepped together on one backend."""

    algorithm = "MultiStart"
    needs_budget = True
    combines = True

    def __init__(self, problem, seeds, *, backend="auto", rule="best", strength=1, acceptance="better-equal",
                 polish=None, patience=1, candidates=None, neighbourhood=None, history: str = "improvements",
                 initial=None, exchange_every: int | None = None, exchange_strength: int | None = None,
                 callbacks=None):
        template = IteratedLocalSearch(problem, rule=rule, strength=strength, acceptance=acceptance,
                                       polish=polish, patience=patience, candidates=candidates,
                                       neighbourhood=neighbourhood, backend=backend,
                                       history=history)   # checks them once
        self.template, self.problem, self.backend = template, template.problem, template.backend
        self.steps = [template.problem, *template.polish]
        self.seeds = list(seeds)
        self.initial = start_solutions(template.problem, initial, len(self.seeds))
        self.exchange_every = check_count("MultiStart", "exchange_every", exchange_every, 1)
        self.exchange_strength = check_count("MultiStart", "exchange_strength", exchange_strength, 1) or strength
        #: kicks made where the solutions live from each chain's draws (else a host perturb)
        self.device_kicks = self.problem.kick_draws(np.random.default_rng(0)) is not None
        self._init_run(None, callbacks, history)

    # --- the run: lsmgpu.search.loop.Search's loop, one ILS iteration of every chain a step -------
    def _start(self) -> None:
        """Start solutions (each chain's own draw, as a single search's), the population, the first
        descent; each kept as it exists (Ctrl-C or the deadline in a later phase finds the earlier)."""
        problem, B = self.problem, len(self.seeds)
        self.population = self.ledger = self._xs = None
        self._loaded = False
        self._rngs = [np.random.default_rng(s) for s in self.seeds]
        self._xs = (np.array(self.initial) if self.initial is not None else
                    np.stack([problem.start_solution(r) for r in self._rngs]))
        self.best_x = self._xs[0]
        self.population = population = population_for(self.backend, self.steps, B, announce="batched ILS")
        population.load(self._xs)
        self._loaded = True
        deadline = None if self.budget.seconds is None else self.t0 + self.budget.seconds
        _, evaluated, finished = population.descend(np.ones(B, bool), self.template.rule, deadline)
        if not finished:
            raise DeadlineReached("the time budget ran out in the first descent")
        population.keep(np.ones(B, bool), np.zeros(B, bool))
        population.save_best(np.ones(B, bool))
        self.ledger = Ledger(population.values(), 0, self.template.keep_every_iteration)
        self.ledger.evaluations += evaluated
        self._exchange_rng = np.random.default_rng(np.random.SeedSequence(self.seeds[0].entropy, spawn_key=(0x115,)))

    def _budget_spent(self) -> str | None:
        """The batch's own stop tests live in ``step`` (per chain: the ledger)."""
        return None

    # --- checkpoints: the run's fields, the batch's (batch_state) and the population's rows -------
    def state(self) -> dict:
        """Between iterations every chain's current solution is its accepted one: the accepted
        solutions, their values and the best solutions are the population."""
        population = self.population
        state = super().state()
        state["batch"] = batch_state(self, {"home": population.home_solutions(), "values": population.values(),
                                            "best": population.best_solutions()})
        return state

    def _restore(self, state: dict) -> None:
        """The chains as checkpointed: a fresh population holding their best and accepted rows."""
        batch = restore_batch(self, state)
        super()._restore(state)
        B = len(self.seeds)
        self.population = population_for(self.backend, self.steps, B, announce="batched ILS")
        self.population.load(batch["best"])
        self.population.set_rows(np.arange(B), batch["home"], batch["values"], home=True)
        self._loaded = True

    def step(self) -> bool:
        """One ILS iteration of every active chain (kick, descend, accept or go back); True once the
        batch has ended."""
        if self.status is not None:
            return True
        problem, population, ledger, budget = self.problem, self.population, self.ledger, self.budget
        sense, rule, step = problem.sense, self.template.rule, self.iteration
        deadline = None if budget.seconds is None else self.t0 + budget.seconds
        self.status = batch_ended(ledger, budget, step, deadline)
        if self.status is not None:
            return True
        active = ledger.active.copy()
        self._kick(active)
        _, evaluated, finished = population.descend(active, rule, deadline)
        if not finished:        # the clock ran out inside the descent: its solutions are looked at in the end
            ledger.stop(ledger.active, "seconds")
            self.status = "seconds"
            return True
        candidate = population.values()
        accepted = active & self._accepts(candidate, ledger.current)
        population.keep(accepted, active & ~accepted)
        now = np.where(accepted, candidate, ledger.current)
        population.save_best(active & (now < ledger.best))
        ledger.record(active.astype(np.int64), now[:, None], np.zeros(len(active), np.int64), self.elapsed, sense,
                      budget.iterations)
        ledger.evaluations += evaluated
        self.iteration = step = step + 1
        self.best, self.evaluations = float(ledger.best.min()), int(ledger.evaluations.sum())
        if self.callbacks.callbacks and self.callbacks.on_iteration(
                State(step, sense * self.best, sense * self.best, None, self.elapsed, self.evaluations)):
            self.status = "callback"
        goal = None if budget.target is None else sense * budget.target
        if goal is not None and (ledger.best[active] <= goal).any():
            reached = active & (ledger.best <= goal)
            ledger.stop(reached, "target")
            ledger.stop(ledger.active, "stopped")
            self.status = "target"
            return True
        if budget.stagnation is not None:
            stale = ledger.active & (ledger.since >= budget.stagnation)
            ledger.stop(stale, "iterations" if budget.iterations is not None and step >= budget.iterations
                        else "stagnation")
            ledger.active &= ~stale
        if self.exchange_every and step % self.exchange_every == 0:
            self._exchange(population, ledger, self._exchange_rng)
        return self.status is not None

    def _accepts(self, candidate, home) -> np.ndarray:
        """IteratedLocalSearch's acceptance test, per chain."""
        acceptance = self.template.acceptance
        if acceptance == "better":
            return candidate < home
        if acceptance == "better-equal":
            return candidate <= home
        if acceptance == "always":
            return np.ones(len(home), bool)
        return candidate <= home + acceptance * np.abs(home)

    def _kick(self, active) -> None:
        """Each active chain's kick from its own generator, as IteratedLocalSearch._kick draws it:
        ``strength`` units made where the solutions live, or one host ``perturb`` of the accepted solution."""
        problem, population, rngs = self.problem, self.population, self._rngs
        rows = np.flatnonzero(active)
        if not self.device_kicks:
            home = population.home_solutions()
            kicked = np.stack([problem.perturb(home[k], rngs[k], self.template.strength) for k in rows])
            values = np.array([problem.sense * problem.fitness(x) for x in kicked])
            population.set_rows(rows, kicked, values)
            return
        for _ in range(self.template.strength):
            draws = [problem.kick_draws(rngs[k]) for k in rows]
            table = np.full((len(active), len(draws[0])), -1, dtype=np.int64)
            table[rows] = draws
            population.kick(table, active)

    def _exchange(self, population, ledger, rng) -> None:
        """Islands (see the module docstring and Ledger.exchange): the restarted chains' kicked
        copies become their current and accepted solutions."""
        exchanged = ledger.exchange(self.problem, population.best_solutions, rng, self.exchange_strength)
        if exchanged is not None:
            population.set_rows(*exchanged, home=True)

    # --- the results ----------------------------------------------------------------------------
    def result(self) -> SearchResult:
        """Every chain's SearchResult: its best solution, or a solution it holds that is better (a
        descent cut short by the clock or Ctrl-C), re-evaluated exactly; combined."""
        problem, sense, B = self.problem, self.problem.sense, len(self.seeds)
        ledger, population, overall = getattr(self, "ledger", None), getattr(self, "population", None), self.status
        if population is None or not self._loaded:
            xs = getattr(self, "_xs", None)
            if xs is None:      # interrupted before the start solutions existed
                return SearchResult.combined([None] * B, self.elapsed, overall, sense, algorithm="IteratedLocalSearch",
                                             problem=problem.name)
            held = [xs]
        else:
            held = [population.best_solutions(), population.solutions(), population.home_solutions()]
        done = self.budget.iterations is not None and self.iteration >= self.budget.iterations
        if ledger is not None:
            ledger.stop(ledger.active, "iterations" if done else ("seconds" if overall == "seconds" else "interrupted"))
        device = getattr(population, "device", "") or getattr(self.backend, "device", "")
        results = []
        for k in range(B):
            candidates = [h[k] for h in held]
            values = [problem.fitness(x) for x in candidates]
            best = int(np.argmin([sense * v for v in values]))
            results.append(SearchResult(
                solution=np.array(candidates[best], copy=True), fitness=values[best],
                iterations=int(ledger.done[k]) if ledger else 0,
                evaluations=int(ledger.evaluations[k]) if ledger else 0, seconds=self.elapsed,
                history=ledger.history(k, sense) if ledger else np.array([values[0]]),
                improvements=ledger.improvements[k] if ledger else [],
                backend=self.backend.name, device=device, status=(ledger.status[k] if ledger else None) or overall,
                timings=dict(getattr(population, "timings", {}) or {}), algorithm="IteratedLocalSearch",
                problem=problem.name, work=(int(ledger.done[k]) if ledger else 0, "kicks")))
        return SearchResult.combined(results, self.elapsed, overall, sense)

    def _release(self) -> None:
        if getattr(self, "population", None) is not None:
            self.population.close()
