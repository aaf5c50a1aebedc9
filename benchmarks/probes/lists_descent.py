"""Whose candidate lists and penalties make the 5-opt descent land close: lsmgpu's or LKH-3's.

LKH-3 goes on improving a tour by trials: a walk that keeps the best tour's α-0 edges and takes
random candidates elsewhere, then one Lin-Kernighan descent (benchmarks/probes/trial_parts.py
builds such trials on the GPU). A trial pays only where its descent lands close to the best
tour. On the CPU, from the same trial tours (a walk from LKH-3's tour after 100 trials, seeded
by the trial's number), the probe descends with the CLI's 5-opt chain (FIVE_OPT_DEPTH levels
alone) over each pair of candidate lists and penalties, and with LKH-3's own descent
(``INITIAL_TOUR_FILE``, ``MAX_TRIALS = 1``), and prints each descent's gap above the tour it
started from (first, how many of LKH-3's list entries each kind of lists shares, and how many of
the edges of LKH-3's tour after 100 trials each holds). The lists and penalties:

- ours: lsmgpu's 5 α-nearest and π (the default ascent, period 100);
- half: the same from an ascent with LKH's first period, n / 2 (``TSP(ascent_period="half")``);
- periodP: the same from an ascent with first period P;
- lkh: LKH-3's 5 α-nearest (its ``CANDIDATE_FILE``) and its π (``PI_FILE``);
- lkh-popmusic: the same from LKH-3's POPMUSIC configuration (its candidates and an ascent of first
  period 100 over them, as in the depth benchmark's LKH rows);
- ours-on-popmusic: lsmgpu's ascent (period 100) over the graph of LKH-3's POPMUSIC lists, its α-lists and π;
- ours-on-tours: the same over the union of the edges of TOUR_GRAPH_RUNS tours of lsmgpu's own (FocusedACO
  on the CPU, 16 ants, 20 iterations, seeds 0, 1, ...; ``TSP.alpha_over_tours``, the ascent ``TSP(ascent_tours=)`` runs), good tours' edges as POPMUSIC's are;
- ours-on-ants: the same over the edges of the tours of one FocusedACO colony's ants (CPU, ANT_GRAPH_ANTS
  ants, their last of ANT_GRAPH_ITERATIONS iterations);
- ours-plus-ants: the same over those ants' tours' edges and the edges of lsmgpu's own 5 α-nearest together
  (``TSP.alpha_over_tours``, as ``FocusedACO(ant_lists=)`` makes them);
- ours-plus-history: the same over the tours of that colony's ants in every one of its ANT_GRAPH_ITERATIONS iterations
  and lsmgpu's own 5 α-nearest;
- ours-plus-colonies: the same over the last ants of ANT_GRAPH_COLONIES colonies (seeds 0, 1, ...) and lsmgpu's own
  5 α-nearest: more different tours than one colony's;
- ours-on-optima: the same over the edges of OPTIMA_RUNS local optima (don't-look 2-opt + Or-opt over
  10 quadrant neighbours from random tours, seeded 0): POPMUSIC's kind of graph, many poor but different
  local optima; ours-plus-optima: those with lsmgpu's own 5 α-nearest;
- ours-on-nn-optima, ours-plus-nn-optima: the same from OPTIMA_RUNS nearest-neighbour tours from random cities
  (local optima closer than the random tours': 8.8 % above on rl1304 against 10.9, and more alike);
- ours-on-kopt-optima, ours-plus-kopt-optima: KOPT_OPTIMA_RUNS of those nearest-neighbour optima descended
  further by the 5-opt chain (the descent below) over lsmgpu's own 5 α-nearest and π: good tours far
  apart, as POPMUSIC's are, where the ants' tours are good but alike;
- any of the graph kinds above (ours-on-popmusic, ours-on-tours, the ants', the optima's) with ``-within``:
  the 5 chosen among the graph's edges alone (``alpha_candidates(within_graph=True)``, LKH-3's POPMUSIC
  lists: good tours' edges ordered by α), not among the quadrant neighbours beside;
- lkh-lists: LKH-3's lists, lsmgpu's π;
- lkh-pi: the 5 α-nearest that lsmgpu's pool and α give under LKH-3's π, with that π;
- lkh-nogain23: not a list but LKH-3's own descent without its non-sequential moves (``GAIN23 = NO``);
- any of the lists with ``+bridges``: the same lists, the descent with the ants' bridging moves
  (lsmgpu/backends/bridge.py) where the chain stands still.

    python -m benchmarks.probes.lists_descent .data/tsplib/rl1304.tsp 1,3,4,7 ours,half,lkh,lkh-lists,lkh-pi
    python -m benchmarks.probes.lists_descent .data/tsplib/rl1304.tsp 1,2,3,4,5,6,7 \
        ours,ours+bridges,half,half+bridges,lkh,lkh+bridges
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from lsmgpu.backends.bridge import find_bridge
from lsmgpu.backends.dontlook import CpuDontLook, DontLookRules, descend_rows
from lsmgpu.backends.focused import FocusRules, focused_walk
from lsmgpu.cli_population import FIVE_OPT_DEPTH
from problems.alpha import alpha_candidates, ascent, tour_graph
from problems.tsp import TSP, nearest_neighbour_tour

from ..depth import LKH_CONFIGS
from .trial_parts import candidate_alpha, read_pi, trial_weights


#: ours-on-tours: the tours whose edges make the ascent's graph
TOUR_GRAPH_RUNS = 6
#: ours-on-ants: the ants of one colony's last iteration whose tours make the ascent's graph
ANT_GRAPH_ANTS, ANT_GRAPH_ITERATIONS = 64, 10
#: ours-on-optima: the local optima whose tours make the ascent's graph
OPTIMA_RUNS = 50
#: ours-plus-colonies: the colonies (seeds 0, 1, ...) whose last ants' tours make the graph
ANT_GRAPH_COLONIES = 3
#: ours-on-kopt-optima: the nearest-neighbour optima descended by the 5-opt chain (a CPU descent each)
KOPT_OPTIMA_RUNS = 20


def lkh(path: str, extra: str) -> np.ndarray:
    """LKH-3's tour (0-based) with its own parameter text plus ``extra`` (one run, 100 s at most)."""
    import elkai._elkai as elkai
    params = f"PROBLEM_FILE = :stdin:\nRUNS = 1\nTOTAL_TIME_LIMIT = 100\nTRACE_LEVEL = 0\n{extra}"
    return np.array(elkai.solve_problem(params, Path(path).read_text()), np.int64) - 1


def read_candidates(path: str, n: int, k: int = 5) -> np.ndarray:
    """LKH's CANDIDATE_FILE ("city dad count (to alpha)*count" lines) as (n, k) 0-based lists, a
    short row repeating its last."""
    table = np.zeros((n, k), np.int64)
    for line in Path(path).read_text().split("\n")[1:]:
        parts = line.split()
        if len(parts) < 3 or parts[0] == "-1":
            continue
        city, count = int(parts[0]) - 1, int(parts[2])
        others = [int(parts[3 + 2 * j]) - 1 for j in range(count)]
        table[city] = (others + others[-1:] * k)[:k]
    return table


def ascent_of(path: str, period):
    """The ascent of ``TSP(ascent_period=period)`` on the instance at ``path`` (the instance's own
    period rule)."""
    return TSP.from_file(path, ascent_period=period)._held_karp_ascent()


def chain_descent(problem: TSP, tour: np.ndarray, candidates: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, float]:
    """The CLI's 5-opt chain alone over ``candidates`` with penalties ``pi``, from every city
    until no chain improves: the tour it ends at and its length."""
    rules = DontLookRules(candidates.astype(np.int32), 3, False, False, FIVE_OPT_DEPTH, 5, pi, True)
    engine = CpuDontLook(rules, problem.edge_distance(), 1)
    engine.load(tour[None, :])
    descend_rows(engine)
    return engine.solutions()[0].astype(np.int64), float(engine.values()[0])


def descend(problem: TSP, tour: np.ndarray, candidates: np.ndarray, pi: np.ndarray, bridges: bool = False) -> float:
    """``chain_descent`` (with ``bridges``, then the best bridging move and again, until none
    shortens the tour: the ants' ``bridges``): the length it ends at."""
    between = problem.edge_distance().between
    while True:
        tour, length = chain_descent(problem, tour, candidates, pi)
        bridge = find_bridge(tour, np.argsort(tour), candidates.astype(np.int32), between) if bridges else None
        if bridge is None:
            return length
        tour = bridge.tour


def colony_ants(problem: TSP, seed: int) -> list[np.ndarray]:
    """The tours of one FocusedACO colony's ANT_GRAPH_ANTS ants (CPU, ``seed``) after each of its
    ANT_GRAPH_ITERATIONS iterations."""
    from lsmgpu import FocusedACO
    kept = []
    search = FocusedACO(problem, backend="cpu", seed=seed, ants=ANT_GRAPH_ANTS,
                        callbacks=lambda _: kept.append(np.stack([search.colony.tour(k)
                                                                  for k in range(ANT_GRAPH_ANTS)])))
    search.run(iterations=ANT_GRAPH_ITERATIONS)
    return kept


def local_optima(problem: TSP, starts: str = "random") -> np.ndarray:
    """OPTIMA_RUNS don't-look 2-opt + Or-opt local optima over 10 quadrant neighbours, as rows, from
    random tours (``starts="random"``) or from nearest-neighbour tours from random cities ("nn"),
    seed 0."""
    from lsmgpu import DontLookDescent
    from lsmgpu.parallel import improve
    rng = np.random.default_rng(0)
    if starts == "nn":
        tours = np.stack([nearest_neighbour_tour(problem, int(c)) for c in rng.choice(problem.n, OPTIMA_RUNS,
                                                                                       replace=False)])
    else:
        tours = np.stack([rng.permutation(problem.n) for _ in range(OPTIMA_RUNS)])
    return improve(problem, tours, DontLookDescent(10), backend="cpu").solutions.astype(np.int64)


def main(path: str, trials: str, kinds: str) -> None:
    problem = TSP.from_file(path)
    n, folder = problem.n, tempfile.mkdtemp()
    best = lkh(path, "MAX_TRIALS = 100\n")
    length = float(problem.evaluate(best))
    pi_file, candidate_file = os.path.join(folder, "pi"), os.path.join(folder, "candidates")
    lkh(path, f"PI_FILE = {pi_file}\nCANDIDATE_FILE = {candidate_file}\nMAX_TRIALS = 1\n")
    lkh_pi, lkh_lists = read_pi(pi_file, n), read_candidates(candidate_file, n)
    pop_pi_file, pop_candidate_file = os.path.join(folder, "pop-pi"), os.path.join(folder, "pop-candidates")
    popmusic = LKH_CONFIGS["LKH-3 POPMUSIC"]
    lkh(path, f"PI_FILE = {pop_pi_file}\nCANDIDATE_FILE = {pop_candidate_file}\nMAX_TRIALS = 1\n{popmusic}")
    ours = problem._held_karp_ascent()               # the default period; candidate_alpha reads it
    our_lists, _ = alpha_candidates(problem, 5, ours)
    half = ascent_of(path, "half")
    made = {"ours": (our_lists, ours.pi), "half": (alpha_candidates(problem, 5, half)[0], half.pi),
            "lkh": (lkh_lists, lkh_pi),
            "lkh-popmusic": (read_candidates(pop_candidate_file, n), read_pi(pop_pi_file, n)),
            "lkh-lists": (lkh_lists, ours.pi),
            "lkh-pi": (alpha_candidates(problem, 5, dataclasses.replace(ours, pi=lkh_pi))[0], lkh_pi)}

    def share(kind: str) -> float:
        """The share of LKH-3's list entries that ``kind``'s lists hold too."""
        return round(float(np.mean([len(set(a) & set(b)) / 5 for a, b in zip(made[kind][0], lkh_lists)])), 3)

    def covered(kind: str) -> float:
        """The share of the edges of LKH-3's tour after 100 trials that ``kind``'s lists hold (either
        end's list)."""
        lists, after = made[kind][0], np.roll(best, -1)
        return round(float(np.mean((lists[best] == after[:, None]).any(1) | (lists[after] == best[:, None]).any(1))), 4)

    print({"instance": problem.name, "start_gap_pct": round(100 * problem.gap(length), 4),
           "half_ascent_iterations": half.iterations,
           "entries_shared_with_lkh_lists": {kind: share(kind) for kind in ("ours", "half", "lkh-pi")}}, flush=True)
    weights = trial_weights(best, our_lists, candidate_alpha(problem, our_lists))
    between = problem.edge_distance().between
    asked = {kind.removesuffix("+bridges") for kind in kinds.split(",")}
    wanted = {kind.removesuffix("-within") for kind in asked}          # a graph's kind, with "-within" or not
    if "ours-on-popmusic" in wanted:
        pop = made["lkh-popmusic"][0]
        key = np.unique(np.minimum(np.arange(n)[:, None], pop) * n + np.maximum(np.arange(n)[:, None], pop))
        run = ascent(problem, graph=(key // n, key % n))
        for kind, within in (("ours-on-popmusic", False), ("ours-on-popmusic-within", True)):
            if kind in asked:
                made[kind] = (alpha_candidates(problem, 5, run, within)[0], run.pi)
                print({"lists": kind, "graph_edges": len(key), "ascent_iterations": run.iterations,
                       "entries_shared_with_lkh_lists": share(kind)}, flush=True)
    graphs = {}                                      # kind: (the tours whose edges make its graph, lists beside)
    if "ours-on-tours" in wanted:
        from lsmgpu import FocusedACO
        tours = np.stack([FocusedACO(problem, backend="cpu", seed=seed, ants=16).run(iterations=20).solution
                          for seed in range(TOUR_GRAPH_RUNS)])
        print({"tours": "ours-on-tours", "tour_gaps_pct": [round(100 * problem.gap(problem.evaluate(t)), 3)
                                                           for t in tours]}, flush=True)
        graphs["ours-on-tours"] = (tours, None)
    for starts, kind in (("random", "ours-on-optima"), ("nn", "ours-on-nn-optima")):
        if wanted & {kind, kind.replace("-on-", "-plus-")}:
            optima = local_optima(problem, starts)
            print({"tours": kind, "gap_pct": round(float(np.mean([100 * problem.gap(problem.evaluate(t))
                                                                 for t in optima])), 2)}, flush=True)
            graphs.update({kind: (optima, None), kind.replace("-on-", "-plus-"): (optima, our_lists)})
    if wanted & {"ours-on-kopt-optima", "ours-plus-kopt-optima"}:
        descended = np.stack([chain_descent(problem, x, our_lists, ours.pi)[0]
                              for x in local_optima(problem, "nn")[:KOPT_OPTIMA_RUNS]])
        print({"tours": "ours-on-kopt-optima", "gap_pct": [round(100 * problem.gap(problem.evaluate(x)), 2)
                                                           for x in descended]}, flush=True)
        graphs.update({"ours-on-kopt-optima": (descended, None), "ours-plus-kopt-optima": (descended, our_lists)})
    if wanted & {"ours-on-ants", "ours-plus-ants", "ours-plus-history", "ours-plus-colonies"}:
        history = [colony_ants(problem, seed) for seed in range(ANT_GRAPH_COLONIES if "ours-plus-colonies" in wanted
                                                                else 1)]
        graphs.update({"ours-on-ants": (history[0][-1], None), "ours-plus-ants": (history[0][-1], our_lists),
                       "ours-plus-history": (np.concatenate(history[0]), our_lists),
                       "ours-plus-colonies": (np.concatenate([h[-1] for h in history]), our_lists)})
    for (base, (tours, lists)), within in itertools.product(graphs.items(), (False, True)):
        kind = base + ("-within" if within else "")
        if kind in asked:
            made[kind] = problem.alpha_over_tours(tours, 5, lists, within)
            print({"lists": kind, "graph_edges": len(tour_graph(problem, tours, lists)[0]),
                   "entries_shared_with_lkh_lists": share(kind)}, flush=True)
    for kind in dict.fromkeys(k.removesuffix("+bridges") for k in kinds.split(",") if k.startswith("period")):
        run = ascent_of(path, int(kind[len("period"):]))
        made[kind] = (alpha_candidates(problem, 5, run)[0], run.pi)
        print({"lists": kind, "ascent_iterations": run.iterations, "ascent_s": round(run.seconds, 2),
               "entries_shared_with_lkh_lists": share(kind)}, flush=True)
    print({"best_tour_edges_in_lists": {kind: covered(kind) for kind in made}}, flush=True)
    for trial in (int(t) for t in trials.split(",") if t):
        x = best.copy()
        pos = np.empty(n, np.int64)
        pos[x] = np.arange(n)
        focused_walk(x, pos, weights, our_lists, FocusRules(trial, n, n), 0, 0, between)
        row = {"trial": trial, "walk_above_pct": round(100 * (problem.evaluate(x) - length) / length, 2)}
        tour_file = os.path.join(folder, "trial.tour")
        Path(tour_file).write_text(f"TYPE : TOUR\nDIMENSION : {n}\nTOUR_SECTION\n"
                                   + "\n".join(str(c + 1) for c in x) + "\n-1\nEOF\n")
        lkh_descent = lkh(path, f"INITIAL_TOUR_FILE = {tour_file}\nMAX_TRIALS = 1\n")
        row["LKH-3's descent"] = round(100 * (float(problem.evaluate(lkh_descent)) - length) / length, 4)
        for kind in kinds.split(","):
            if kind == "lkh-nogain23":
                tour = lkh(path, f"INITIAL_TOUR_FILE = {tour_file}\nMAX_TRIALS = 1\nGAIN23 = NO\n")
                row[kind] = round(100 * (float(problem.evaluate(tour)) - length) / length, 4)
                continue
            lists = kind.removesuffix("+bridges")
            row[kind] = round(100 * (descend(problem, x, *made[lists], kind != lists) - length) / length, 4)
        print(row, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
