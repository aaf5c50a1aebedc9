"""Focused ant colony optimisation (FACO; Skinderowicz 2022): a MAX-MIN ant system whose ants each
change a few edges of a source tour, guided by pheromone on the candidate lists, then descend
with don't-look bits from the cities they touched (lsmgpu/backends/focused.py).

MaxMinAntSystem's ants build whole tours that its local search then descends from scratch: on
15,000 cities an iteration of 64 ants took a second and more, and the colony ended 3.5 % above
the optimum in the V100 paper's time. A focused ant keeps the source tour but for ``moves``
cities moved where the pheromone and the distances lead, so its descent is a few dozen checks and
every ant of an iteration is one launch (a block an ant). The source of an iteration is the
previous iteration's best ant (the colony's best with probability ``global_best_source``), which
also deposits the pheromone: the colony moves like many kicked descents at once, the pheromone
steering where the kicks go. A colony that stands still (``restart_after`` iterations without a
better best) is merged into the best so far by partition crossover and replaced by a new one from
the problem's start tour (drawn anew where the start is drawn; TSP's greedy tour, its start from
5,000 cities, is one tour, the new colony's ants and pheromone new): restarts, as MAX-MIN ant
systems reset their trails, here with the stuck colony's different edges kept where they help.
``colonies`` runs several such colonies side by side, their ants in the same launch, each with its
own source, pheromone and restarts.
"""
from __future__ import annotations

import time

import numpy as np

from ..backends.dontlook import CpuDontLook, descend_rows, dontlook_for
from ..backends.focused import MAX_ITERATIONS, CpuFocusedAnts, FocusRules, trail_limits, trail_scale
from ..budget import time_left
from ..validation import check_flag
from .dontlook import DontLookDescent, default_lk_depth
from .focused_params import FocusedParams, default_ants, default_moves
from .partition import partition_crossover
from .population import PopulationSearch

__all__ = ["FocusedACO", "FocusedParams"]


class FocusedACO(PopulationSearch):
    """Focused ACO for tours: ``ants`` ants an iteration, each moving ``moves`` cities of the
    source tour where the pheromone and the distances lead, then a don't-look 2-opt + Or-opt
    descent from the cities it touched.

    ants               : ants a colony an iteration (default: 4 sqrt(n) rounded to a multiple of
                         64, >= 64)
    colonies           : independent colonies (default 1), each of ``ants`` ants with its own
                         source, best, pheromone and restarts, all their ants in one launch on the
                         GPU; each starts from the descended start tour, its ants drawing their own
                         random numbers; a colony's best joins the best so far by partition
                         crossover when it restarts and at the end
    moves              : cities an ant moves next to its walk (FACO's "minimum of new edges", here
                         counted per moved city, which brings up to three new edges; default 128;
                         without the LK chain 64 from 10,000 cities, with it 192 from
                         30,000: MOVES)
    rho                : evaporation (the pheromone keeps 1 - rho an iteration; default 0.5)
    p_best, beta       : MMAS's p_best for the trail limits over the candidate lists (0.1), the
                         distance's weight (1.0): the FACO paper's defaults
    global_best_source : probability that the colony's best (the best so far until a restart), not
                         the iteration's best, is the next source and deposits (0.01)
    walk               : steps an ant may walk (default n)
    restart_after      : iterations without the colony's best improving after which the colony
                         starts again (None: never): its best is merged into the best so far by
                         partition crossover (lsmgpu/search/partition.py), and a new colony starts
                         from the problem's start tour, descended as the first, with fresh pheromone
                         (default RESTART_AFTER)
    candidates, segment, or3, lk, lk_depth, lk_move, chain_alone : the descent's (DontLookDescent's;
                         ``or3`` default OR3: with the Or-3opt moves; ``lk`` default False;
                         ``lk_depth`` default GPU_LK_DEPTH on a GPU, 0 on the CPU; ``lk_move`` 2, the
                         chain's 2-opt moves, or 5, LKH's 5-opt basis moves; ``chain_alone`` the 5-opt
                         chain alone); the ants choose among the same candidates (at most 32 a city on
                         the GPU)
    bridges            : where an ant's descent stands still, the best bridging move over the
                         candidates (LKH's non-sequential Gain23 moves of the first kind: a double
                         bridge, lsmgpu/backends/bridge.py) is made and the descent goes on, until
                         none shortens the ant's tour (default False)
    ant_lists          : after this many iterations (None: never), the candidate lists become the
                         α-nearest of an ascent over the edges of that iteration's ants' tours, the
                         best and the lists themselves (TSP.alpha_over_tours, inside the budget; the
                         5-opt chains' penalties its π), and the colonies start again from the best
                         over them: good tours' edges in the ascent's graph, as LKH's POPMUSIC
                         candidates are (a TSP only)
    initial            : the start tour (None: the problem's initial solution); it is descended
                         whole first, again from every city until a descent makes no move
    backend, seed, callbacks, history : as for every search

    ``run(iterations=, seconds=, target=, stagnation=)``: iterations are the colony's.
    """

    algorithm = "FocusedACO"
    Params = FocusedParams
    iteration_unit = "colony iterations"
    state_fields = ("tau_min", "tau_max", "focus_seed", "colony_best", "colony_since", "restarts", "ant_lists_made",
                    "evaluations_before")
    island_exchange_every = 100         # iterations of a few milliseconds

    def __init__(self, problem, *, params: FocusedParams | None = None, initial=None, backend="auto", seed=None,
                 callbacks=None, history: str = "improvements", **options):
        self.params = params = self._params(params, options)
        super().__init__(problem, local_search=None, backend=backend, seed=seed, callbacks=callbacks,
                         history=history)
        if problem.n < 8:
            raise ValueError(f"FocusedACO: the ants move cities of tours of at least 8, {problem.name} has {problem.n}")
        self.rules = DontLookDescent(params.candidates, segment=params.segment, or3=params.or3,
                                     lk=params.lk, lk_depth=default_lk_depth(params.lk_depth, self.backend),
                                     lk_move=params.lk_move, chain_alone=params.chain_alone).bound(problem)
        self.rules.bridges = check_flag("FocusedACO", "bridges", params.bridges)     # the ants' own
        if params.ant_lists is not None and not callable(getattr(problem, "alpha_over_tours", None)):
            raise ValueError(f"FocusedACO: `ant_lists` makes α-lists over tours of a TSP; {problem.name} has none")
        self.ant_lists, self.ant_lists_made, self._given_rules = params.ant_lists, None, self.rules
        self.evaluations_before = 0            # the checks of ants built before the last lists, as evaluations
        self.ants = default_ants(problem.n) if params.ants is None else params.ants
        self.colonies = params.colonies
        if self.backend.name == "cpu":              # on a GPU the ants' tours live there (its own check)
            self._check_memory("ants", self.ants * self.colonies)
        moves = params.moves
        self.moves = default_moves(problem.n, self.rules.lk_depth) if moves is None else moves
        self.walk = problem.n if params.walk is None else params.walk
        self.rho, self.p_best, self.beta = params.rho, params.p_best, params.beta
        self.global_best_source = params.global_best_source
        self.restart_after = params.restart_after
        self.restarts, self._whole, self._start_seconds = 0, None, 0.0
        self.initial = None if initial is None else problem.encoding.validate(np.asarray(initial))

    def _set_up(self) -> None:
        distance = self.problem.edge_distance()
        if self.budget.iterations is not None and self.budget.iterations > MAX_ITERATIONS:
            raise ValueError(f"FocusedACO: at most {MAX_ITERATIONS:,} iterations (a 32-bit counter on the GPU), "
                             f"got {self.budget.iterations:,}")
        self.restarts, self._whole = 0, None          # this run's: a search may run again
        self.rules, self.ant_lists_made, self.evaluations_before = self._given_rules, None, 0
        self.focus_seed = int(self.rng.integers(2**63))
        prebuild = getattr(self.backend, "prebuild_focused_ants", None)
        if prebuild is not None:                    # the ants' kernels build beside the start's descent
            prebuild(self.rules, self._focus_rules(), distance, self.ants * self.colonies, self.beta)
        source, length = self._descend_start(self.start_x)
        self._record(source, length)        # before the ants' build: a deadline inside it returns this tour
        self._build_colony(distance)
        C = self.colonies
        self.colony_best, self.colony_since = [0.0] * C, [0] * C
        self.tau_min, self.tau_max = [0.0] * C, [0.0] * C
        for colony in range(C):
            self._start_colony(colony, source, length)
        self._start_seconds = time.perf_counter() - self.t0      # what a restart's start may take, at most

    def _start_colony(self, colony: int, source, length: float) -> None:
        """``colony`` from ``source`` (its best), every trail at tau_max."""
        self.colony_best[colony], self.colony_since[colony] = float(length), 0
        self._limits(colony, length)
        self.colony.start(source, length, self.tau_max[colony], colony)

    def _limits(self, colony: int, length: float) -> None:
        """``colony``'s trail limits for a best tour of ``length``."""
        self.tau_min[colony], self.tau_max[colony] = trail_limits(length, self.rules.k, self.rho, self.p_best)

    def _descend_start(self, tour) -> tuple[np.ndarray, float]:
        """The start ``tour`` descended from every city, again until a descent makes no move (a lone
        tour: checked wide on a GPU), until the deadline: the tour and its length."""
        if self._whole is None:                     # made once, for the restarts' starts too
            self._whole = dontlook_for(self.backend, "dontlook", CpuDontLook, self.rules, self.problem.edge_distance(),
                                       1, announce="FocusedACO", what="the start's descent")
            self.parts.append(self._whole)
            self.device = getattr(self._whole, "device", "")
        deadline = None if self.budget.seconds is None else self.t0 + self.budget.seconds
        self._whole.load(tour[None, :])
        descend_rows(self._whole, deadline=deadline)
        return self._whole.solutions()[0], float(self._whole.values()[0])

    def _build_colony(self, distance) -> None:
        """The ants on the backend, their walks keyed by ``focus_seed``."""
        self.colony = dontlook_for(self.backend, "focused_ants", CpuFocusedAnts, self.rules, self._focus_rules(),
                                   distance, self.ants * self.colonies, self.beta, announce="FocusedACO",
                                   what="the ants")
        self.parts.append(self.colony)
        self.device = getattr(self.colony, "device", "")

    def _focus_rules(self) -> FocusRules:
        """The ants' walks' rules, keyed by ``focus_seed``."""
        return FocusRules(self.focus_seed, self.moves, self.walk, self.colonies)

    def _part_states(self) -> dict:
        return {**super()._part_states(), "ants": self.colony.memory()}

    def _restore_parts(self, parts: dict) -> None:
        """The ants as the start builds them (no first descent: the source is the checkpoint's),
        refused where the checkpoint holds other colonies or ants than this search's."""
        held = parts["ants"]
        colonies, ants = len(held["source"]), len(held["checks"]) // len(held["source"])
        if (colonies, ants) != (self.colonies, self.ants):
            raise ValueError(f"FocusedACO: the checkpoint holds {colonies} colonies of {ants} ants; this search has "
                             f"{self.colonies} of {self.ants} (give it the checkpointed run's `colonies` and `ants`)")
        self._whole = None
        self.rules = self._given_rules if self.ant_lists_made is None else \
            self._given_rules.with_candidates(*self.ant_lists_made)
        self._build_colony(self.problem.edge_distance())
        self.colony.load_memory(parts["ants"])
        self._start_seconds = time.perf_counter() - self.t0

    def _iterating_part(self):
        return getattr(self, "colony", None)

    def _start_solution(self) -> np.ndarray:
        return super()._start_solution() if self.initial is None else self.initial

    def _iterate(self) -> None:
        """An iteration: every colony's ants from its source, then each colony's next source and
        its deposit."""
        lengths = self.colony.build(self.iteration)
        self.evaluations = self.evaluations_before + self.colony.checked() * self.rules.moves
        bests = [colony * self.ants + int(np.argmin(lengths[colony * self.ants:(colony + 1) * self.ants]))
                 for colony in range(self.colonies)]
        for colony, k in enumerate(bests):
            self.colony_since[colony] += 1
            if lengths[k] < self.colony_best[colony]:
                self.colony.keep_best(k, colony)
                self.colony_best[colony], self.colony_since[colony] = float(lengths[k]), 0
                self._limits(colony, self.colony_best[colony])
        k = int(np.argmin(lengths))
        improved = lengths[k] < self.best and self._record(self.colony.tour(k), lengths[k])
        if not improved:
            self._since_best += 1
        for colony, k in enumerate(bests):
            if self.rng.random() < self.global_best_source:
                self.colony.follow(-1, self.colony_best[colony], colony)
            else:
                self.colony.follow(k, float(lengths[k]), colony)
            self.colony.deposit(1.0 - self.rho, 1.0 / trail_scale(self.colony.lengths[colony]), self.tau_min[colony],
                                self.tau_max[colony], colony)
        self.iteration += 1
        if self.iteration == self.ant_lists and self.ant_lists_made is None:
            self._lists_from_ants()
        for colony in range(self.colonies):
            if self.restart_after is not None and self.colony_since[colony] >= self.restart_after:
                improved = self._restart(colony) or improved
        self._finish_iteration(float(lengths.min()), improved)

    def _lists_from_ants(self) -> None:
        """``ant_lists``: the α-lists and penalties of an ascent over the edges of the ants' tours, the
        best and the current lists, the ants and the start's descent built again over them, every colony started again
        from its own best (the colony that holds the best so far from it), so that colonies side by side stay apart."""
        tours = np.stack([self.colony.tour(k) for k in range(self.ants * self.colonies)] + [self.best_x])
        leader = int(np.argmin(self.colony_best))
        starts = [(self.best_x, self.best) if colony == leader
                  else (self.colony.best_tour(colony), self.colony_best[colony]) for colony in range(self.colonies)]
        self.ant_lists_made = self.problem.alpha_over_tours(tours, self.rules.k, self.rules.candidates)
        self.evaluations_before = self.evaluations
        self.rules = self._given_rules.with_candidates(*self.ant_lists_made)
        for part in (self.colony, self._whole):
            if part is not None:
                part.close()
                self.parts.remove(part)
        self._whole = None
        self._build_colony(self.problem.edge_distance())
        for colony, (source, length) in enumerate(starts):
            self._start_colony(colony, source, length)

    def _restart(self, colony: int) -> bool:
        """The colony's best merged into the best so far by partition crossover, then a new
        colony from the problem's start tour, unless less time is left than the run's set-up took (a
        start tour is not cut at the deadline: the colony goes on instead): whether the merge made
        a new best."""
        improved = self._merge_colony(colony)
        left = time_left()
        if left is not None and left < self._start_seconds:
            self.colony_since[colony] = 0
            return improved
        source, length = self._descend_start(self.problem.start_solution(self.rng))
        self._start_colony(colony, source, length)
        self.restarts += 1
        return improved

    def _merge_colony(self, colony: int) -> bool:
        """The colony's best merged into the best so far by partition crossover: whether that
        made a new best."""
        merged, gain = partition_crossover(self.best_x, self.colony.best_tour(colony),
                                           self.problem.edge_distance().between)
        return gain > 0 and self._record(merged, float(self.problem.evaluate(merged)))

    def _last_look(self) -> None:
        """Colonies started again (``restarts``) or side by side end merged into the best so far,
        as a standing one is (a few milliseconds a colony: one partition crossover), where this run
        built its colonies."""
        if (self.restarts or self.colonies > 1) and getattr(self, "colony", None) in self.parts:
            for colony in range(self.colonies):
                self._merge_colony(colony)

    @property
    def work(self) -> tuple[int, str]:
        return self.ants * self.colonies * self.iteration, "ant tours"

    def _welcome(self, value, tour) -> bool:
        """A tour from elsewhere that beats the best so far becomes the best and the next source
        of the colony whose best is the worst (its trail limits follow it)."""
        if value >= self.best:
            return False
        colony = int(np.argmax(self.colony_best))
        self.colony.adopt_best(tour, colony)
        self.colony.follow(-1, value, colony)
        self.colony_best[colony], self.colony_since[colony] = float(value), 0
        self._limits(colony, value)
        return True
