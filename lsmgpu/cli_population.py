"""The command line's population runs (``lsmgpu solve --algorithm acs | mmas | ga | dontlook-ils |
faco``): each builds its search's options from the parsed flags, says what runs, and returns its
SearchResult; with --gpus or --address one search per GPU as islands over Ray
(lsmgpu.parallel.ray_islands). lsmgpu.cli has checked the flags that do not apply; it asks
``choose_five_opt`` for focused ACO's and the don't-look ILS chain's 5-opt options."""
from __future__ import annotations

import dataclasses
import sys

from .search import SEARCHES
from .search.focused_params import default_ants
from .search.loop import COMMON_OPTIONS

__all__ = ["CHAINS_EXCHANGE", "FACO", "CHAINS", "SEGMENTS", "FIVE_OPT_CITIES", "FIVE_OPT_SECONDS", "FIVE_OPT_DEPTH",
           "FIVE_OPT_RESTART_AFTER", "CPU_FIVE_OPT_SECONDS_PER_CITY", "ANT_LISTS_AFTER", "ANT_LISTS_SECONDS",
           "ANT_LISTS_MOVES", "ANT_LISTS_MOVES_FROM", "BRIDGES_SECONDS", "BRIDGES_BELOW", "BRIDGES_ANTS",
           "FIVE_OPT_OPTIONS", "five_opt_default", "cpu_five_opt", "five_opt_ant_lists", "five_opt_moves",
           "five_opt_bridges", "five_opt_ants",
           "choose_five_opt", "population"]

#: the don't-look ILS's islands' exchange when --exchange-every is not given (rounds)
CHAINS_EXCHANGE = 50
#: focused ACO's, the don't-look ILS's and the tour segments' command-line names
FACO, CHAINS, SEGMENTS = "faco", "dontlook-ils", "segments"
#: a TSP with coordinates of FIVE_OPT_CITIES cities on a GPU, run for FIVE_OPT_SECONDS or more:
#: focused ACO's descents over the 5 α-nearest, each check the chain of up to FIVE_OPT_DEPTH levels
#: of LKH's 5-opt basis moves alone (LKH's LK), the colony restarting after FIVE_OPT_RESTART_AFTER
#: iterations without a better tour, unless --candidates, --lk-depth or --lk-move is given. At 60 s
#: (H200, 8641780) pcb3038 / fnl4461 / rl11849 / d15112 / d18512 0.004 / 0.001 / 0.047 / 0.017 /
#: 0.014 % against the 2-opt default's 0.066 / 0.059 / 0.195 / 0.104 / 0.104, pr2392's optimum in
#: 8.7 s against 18.5; u1817 and rl5915 0.072 / 0.083 against 0.033 / 0.035; at 15 s a mean of
#: 0.070 % over the nine; a cold 30 s run (kernels built inside it) d18512 0.027 %, pcb3038 0.041 %:
#: docs/benchmarks/tsp-depth.md, "The chain alone, 100 levels". Cold 15 s runs of the command
#: (H200, 50fe82f) on the seven of 2,392-18,512 cities: a mean of 0.099 % against the 2-opt
#: default's 0.131, lower on five of seven: tsp-depth.md, "Cold 15 s runs of the command"
FIVE_OPT_CITIES, FIVE_OPT_SECONDS, FIVE_OPT_DEPTH = range(2_000, 20_001), 15.0, 100
FIVE_OPT_RESTART_AFTER = 30
#: on the CPU, the don't-look ILS chain's checks are the same 5-opt chains alone over the α-nearest
#: for a TSP with coordinates run for CPU_FIVE_OPT_SECONDS_PER_CITY seconds a city or more (their first
#: descent, from a 2-opt + Or-opt optimum of the start, must end in the budget), unless --candidates,
#: --lk-depth or --lk-move is given: docs/benchmarks/start-up.md, "A 2-opt + Or-opt descent before the
#: 5-opt chains" and "Three seeds near the line" (2-core host, e4b0e2d, seeds 0-2: between 0.001 and
#: 0.0017 s a city behind 2-opt + Or-opt on the mean on 5 of 6 rows (rl5915 at 10 s 2.55 % against 2.00), from
#: 0.0022 ahead or level but on rl11849 at 30 s, far ahead from 0.003 (pr1002 at 3 s 0.92 % against 2.80))
CPU_FIVE_OPT_SECONDS_PER_CITY = 0.002
#: the flags (and FocusedACO's options of the same names) the 5-opt defaults set
FIVE_OPT_OPTIONS = ("candidates", "lk_depth", "lk_move", "chain_alone", "restart_after", "ant_lists", "moves",
                    "bridges", "ants")
#: with the 5-opt chains in a run of ANT_LISTS_SECONDS or more, focused ACO's candidate lists and
#: penalties come from an ascent over its ants' tours after ANT_LISTS_AFTER iterations, unless
#: --ant-lists is given. At 60 s (H200, c925acb) over one to three seeds the nine's mean 0.017 %
#: against 0.027 % without (LKH-3 POPMUSIC 0.021 %): rl5915 0.013 against 0.090, u1817 the optimum,
#: d15112 / d18512 0.016 / 0.013 against 0.018 / 0.015, rl11849 0.104 against 0.094 (two seeds):
#: docs/benchmarks/tsp-depth.md, "The ants' tours as the ascent's graph". At 30 s (H200, 3f537e6, with
#: 192 moved cities from 10,000 cities) six instances' mean 0.038 % against 0.045 % without over two or
#: three seeds: pcb3038 0.003 / 0.015, fnl4461 0.011 / 0.022, rl11849 0.074 / 0.096; d15112 and d18512
#: 0.023 / 0.020 and 0.033 / 0.025 behind: tsp-depth.md, "The ants' lists at 30 s". At 15 s (3282c90, seed 0)
#: behind: 0.094 % against 0.083, all three from 10,000 cities behind (tsp-depth.md, "The ants' lists at 15 s").
ANT_LISTS_AFTER, ANT_LISTS_SECONDS = 10, 30.0
#: with the ants' lists, an ant moves ANT_LISTS_MOVES cities from ANT_LISTS_MOVES_FROM cities on, unless
#: --moves is given (the search's own default: 128 below 30,000 cities). At 60 s (H200, ed7a43a) rl11849
#: 0.042 / 0.042 / 0.023 % over three seeds against 128's 0.106 / 0.102, d15112 0.010 / 0.013 against
#: 0.016 / 0.015, d18512 0.021 / 0.014 against 0.013 / 0.019; on rl5915 192 is behind (0.093 / 0.081
#: against 0.011 / 0.002): tsp-depth.md, "More moved cities with the ants' lists"
ANT_LISTS_MOVES, ANT_LISTS_MOVES_FROM = 192, 10_000
#: with the ants' lists in a run of BRIDGES_SECONDS or more on a TSP of fewer than BRIDGES_BELOW cities,
#: the ants make bridging moves (LKH's non-sequential double bridges) where their descents stand still,
#: unless --bridges / --no-bridges is given. At 60 s (H200, 6232644 and 50f3d90) over four to seven
#: seeds: pcb3038 0.0008 % against 0.0018 without, fnl4461 0.0015 against 0.0035, u1817 0.029 against
#: 0.036, rl5915 0.034 against 0.029 (two seeds of seven in its trap either way), pr1002 and pr2392 at the
#: optimum: tsp-depth.md, "Bridging moves with the ants' lists, over more seeds"
BRIDGES_SECONDS, BRIDGES_BELOW = 60.0, 10_000
#: with the bridging moves the command chose, a colony of at most BRIDGES_ANTS ants (FocusedACO's own
#: default, 4 sqrt(n) rounded to 64, is more from 5,184 cities: 320 on rl5915), unless --ants is given. At 60 s
#: (H200, eb25fe6, a513aa6) rl5915 over seeds 0-6 0.0093 % against 320 ants' 0.035 (three runs of seven in
#: its 0.08 % trap against none); over seeds 0-13 0.026, three of fourteen in it (192 ants: two of four),
#: LKH-3 POPMUSIC 0.0106 over fourteen: tsp-depth.md, "256 ants on rl5915", "More seeds on both sides"
BRIDGES_ANTS = 256


def _local_search(args):
    default = "none" if args.algorithm == "ga" else "auto"
    return {"none": None}.get(args.local_search or default, args.local_search or default)


def _chain(search) -> str:
    return repr(search.improvement) if search.improvement else (" + ".join(repr(nb) for nb in search.chain)
                                                               or "no local search")


def _spans(spans) -> str:
    """The chains' longest kicked segments in words: one figure, or their range."""
    return f"{spans.min()}" if spans.min() == spans.max() else f"{spans.min()} .. {spans.max()}"


def _chain_depth(rules) -> str:
    """The descents' LK chain in words ("" without one)."""
    if not rules.lk_depth:
        return ""
    return (f", LK chains of up to {rules.lk_depth} " + ("5-opt moves" if rules.lk_move == 5 else "moves")
            + (" alone" if rules.chain_alone else ""))


def five_opt_default(args, problem, seconds: float | None) -> bool:
    """Whether the search takes the 5-opt chains over the α-nearest by default: a TSP with
    coordinates, none of --candidates, --lk-depth, --lk-move given, and for focused ACO on a GPU
    FIVE_OPT_CITIES cities run for FIVE_OPT_SECONDS or more, for the don't-look ILS chain on the
    CPU CPU_FIVE_OPT_SECONDS_PER_CITY seconds a city or more (``seconds``, the run's:
    ``choose_five_opt``)."""
    if problem.coords is None or args.candidates is not None or args.lk_depth is not None or args.lk_move is not None:
        return False
    if args.algorithm == CHAINS:
        return cpu_five_opt(problem.n, seconds)
    return problem.n in FIVE_OPT_CITIES and (seconds or 0) >= FIVE_OPT_SECONDS


def cpu_five_opt(n: int, seconds: float | None) -> bool:
    """Whether a run of ``seconds`` on n cities gives the CPU chain CPU_FIVE_OPT_SECONDS_PER_CITY a city."""
    return (seconds or 0) >= CPU_FIVE_OPT_SECONDS_PER_CITY * n


def five_opt_ant_lists(args, seconds: float | None) -> int:
    """--ant-lists for the default 5-opt chains: the flag where given, else ANT_LISTS_AFTER in a run
    of ANT_LISTS_SECONDS or more, else 0 (never)."""
    if args.ant_lists is not None:
        return args.ant_lists
    return ANT_LISTS_AFTER if (seconds or 0) >= ANT_LISTS_SECONDS else 0


def five_opt_moves(args, problem) -> int | None:
    """--moves for the default 5-opt chains: the flag where given, else ANT_LISTS_MOVES with the ants'
    lists on a TSP of ANT_LISTS_MOVES_FROM cities or more, else None (the search's own default)."""
    if args.moves is not None or not args.ant_lists or problem.n < ANT_LISTS_MOVES_FROM:
        return args.moves
    return ANT_LISTS_MOVES


def five_opt_bridges(args, problem, seconds: float | None) -> bool | None:
    """--bridges for the default 5-opt chains: the flag where given, else True with the ants' lists in
    a run of BRIDGES_SECONDS or more on a TSP of fewer than BRIDGES_BELOW cities, else None (the
    search's own default: none)."""
    if args.bridges is not None:
        return args.bridges
    return True if _bridging_run(args, problem, seconds) else None


def five_opt_ants(args, problem, seconds: float | None) -> int | None:
    """--ants for the default 5-opt chains: the flag where given, else with the ants' bridging moves in a
    run where the command gives them (``five_opt_bridges``) FocusedACO's own default capped at
    BRIDGES_ANTS, else None (the search's own default)."""
    if args.ants is not None or not args.bridges or not _bridging_run(args, problem, seconds):
        return args.ants
    return min(default_ants(problem.n), BRIDGES_ANTS)


def _bridging_run(args, problem, seconds: float | None) -> bool:
    """Whether the command gives the ants bridging moves by default: the ants' lists in a run of
    BRIDGES_SECONDS or more on a TSP of fewer than BRIDGES_BELOW cities."""
    return bool(args.ant_lists) and (seconds or 0) >= BRIDGES_SECONDS and problem.n < BRIDGES_BELOW


def choose_five_opt(args, problem) -> None:
    """Focused ACO's or the don't-look ILS chain's 5-opt options where the flags do not give them:
    where ``five_opt_default`` says so, the 5-opt chains of FIVE_OPT_DEPTH levels alone over the
    α-nearest, and for focused ACO restarts after FIVE_OPT_RESTART_AFTER iterations,
    ``five_opt_ant_lists``, ``five_opt_moves``, ``five_opt_bridges`` and ``five_opt_ants``, for the run's seconds
    (--seconds, the command's DEFAULT_SECONDS where no budget is given, else a resumed checkpoint's
    own; None: no seconds); a resumed run takes those its checkpoint keeps, so that it goes on as it
    was built whichever budget the defaults would pick now (the checkpoint refuses other values),
    read once by the command (``args.resume_settings``: checkpoint_settings)."""
    given = {name for name in FIVE_OPT_OPTIONS if getattr(args, name) is not None}
    budget, kept = args.resume_settings if args.resume else ({"seconds": None}, {})
    seconds = args.seconds if args.seconds is not None else budget["seconds"]
    if five_opt_default(args, problem, seconds):
        args.candidates, args.lk_depth, args.lk_move = "alpha", FIVE_OPT_DEPTH, 5
        args.chain_alone = True if args.chain_alone is None else args.chain_alone
        if args.algorithm == FACO:
            args.restart_after = FIVE_OPT_RESTART_AFTER if args.restart_after is None else args.restart_after
            args.ant_lists = five_opt_ant_lists(args, seconds)
            args.moves = five_opt_moves(args, problem)
            args.bridges = five_opt_bridges(args, problem, seconds)
            args.ants = five_opt_ants(args, problem, seconds)
    for name in FIVE_OPT_OPTIONS:
        if name not in given and name in kept:
            setattr(args, name, kept[name])


def options(args) -> tuple[dict, callable]:
    """The search's options from the flags, and what to say about a search built with them."""
    chosen, describe = _options(args)
    for name in ("lk", "lk_depth", "lk_move", "chain_alone", "bridges", "restart_after", "colonies", "moves"):
        if getattr(args, name) is not None:            # given: else the search's own default
            chosen[name] = getattr(args, name)
    if args.ant_lists:                                 # 0: never, the search's own default
        chosen["ant_lists"] = args.ant_lists
    if args.candidates is not None:
        chosen["candidates"] = args.candidates
        return chosen, lambda s: f"{describe(s)}, candidates {args.candidates}"
    return chosen, describe


def _options(args) -> tuple[dict, callable]:
    """Each search's own options from its flags (--candidates aside)."""
    name = args.algorithm
    if name == "ga":
        return (dict(genes=args.genes, groups=args.groups, local_search=_local_search(args),
                     initial="random" if args.initial_solution is None else args.initial_solution),
                lambda s: f"{s.genes} genes in {s.breeding.groups} group(s), {s.breeding.crossover}, {_chain(s)}")
    if name == CHAINS:
        exchange = CHAINS_EXCHANGE if args.exchange_every is None else args.exchange_every
        return (dict(chains=args.chains, exchange_every=exchange, initial=args.initial_solution),
                lambda s: (f"{s.chains} chains, exchange every {exchange} rounds, " if s.chains > 1 else "one chain, ")
                          + f"kicked segments <= {_spans(s.spans)}" + (", LK3 moves" if s.rules.lk else "")
                          + _chain_depth(s.rules))
    if name == FACO:
        return (dict(ants=args.ants, initial=args.initial_solution),
                lambda s: (f"{s.colonies} colonies of " if s.colonies > 1 else "")
                          + f"{s.ants} ants moving {s.moves} cities each, "
                          + ("" if s.rules.chain_alone else "2-opt + Or-opt" + (" + Or-3opt" if s.rules.or3 else "")
                             + (" + LK3" if s.rules.lk else "") + " ")
                          + "descents" + _chain_depth(s.rules) + (", bridging moves" if s.rules.bridges else "")
                          + (f", candidate lists from the ants' tours after {s.ant_lists} iterations"
                             if s.ant_lists else ""))
    if name == SEGMENTS:
        return (dict(initial=args.initial_solution),
                lambda s: f"{s.problem.n // s.m:,} segments of {s.m:,} cities, {s.round_kicks:,} kicks a round each, "
                          f"2-opt + Or-opt" + (" + LK3" if s.descent.lk else "") + " descents"
                          + _chain_depth(s.descent) + ", the whole tour's every "
                          f"{s.params.descent_every} rounds")
    if name in ("acs", "mmas"):
        return (dict(ants=args.ants, local_search=_local_search(args), initial=args.initial_solution),
                lambda s: f"{s.ants} ants, {_chain(s)}")
    return dict(initial=args.initial_solution), lambda s: "a registered search"       # a user's own


def population(args, problem, iterations, left, callbacks):
    """One population search (--iterations: its own: kicks a chain makes, colony iterations,
    generations), or with --gpus / --address one per GPU as islands."""
    chosen, describe = options(args)
    if args.gpus or args.address:
        return _islands(args, problem, iterations, left, chosen)
    search = SEARCHES[args.algorithm](problem, backend=args.backend, seed=args.seed, callbacks=callbacks, **chosen)
    print(f"{search.algorithm} on {problem.name} (n = {problem.n}, {describe(search)}), backend "
          f"{search.backend.name}", file=sys.stderr)
    for callback in callbacks:
        callback.show()                   # the progress bar, on the line after the header
    return run_search(args, search, iterations, left)


def run_search(args, search, iterations, left):
    """One search's run (or resume: --resume) with the command's budget and checkpoints; the
    target is the instance's best known unless --target gives one."""
    target = args.target if args.target is not None else args.problem.best_known
    budget = dict(target=target, stagnation=args.stagnation, checkpoint=args.checkpoint,
                  checkpoint_every=args.checkpoint_every)
    if args.resume:
        return search.resume(args.resume, iterations=iterations, seconds=args.seconds, **budget)
    return search.run(iterations, seconds=left(), **budget)


def _islands(args, problem, iterations, left, chosen):
    """RayIslands of the search; its summary, and the best island's SearchResult (None, said, when
    no island finished)."""
    from .parallel.ray_islands import RayIslands
    method = SEARCHES[args.algorithm]
    own = {k: chosen.pop(k) for k in list(chosen) if k not in COMMON_OPTIONS}       # the search's Params
    islands = RayIslands(problem, method=args.algorithm, islands=args.gpus, seed=args.seed, address=args.address,
                         backend=args.backend, params=method.Params(**own), **chosen)
    print(f"{islands.method} islands on {problem.name} (n = {problem.n}, {args.gpus or 'one per'} GPU(s), best "
          f"solutions exchanged every {islands.exchange_every} iterations)", file=sys.stderr)
    budget = dict(seconds=left(), target=problem.best_known if args.target is None else args.target,
                  checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every)
    multi = islands.resume(args.resume, iterations=iterations, **budget) if args.resume else \
        islands.run(iterations, **budget)
    return combined_result(problem, multi, "island")


def combined_result(problem, multi, what: str):
    """The result of many starts or islands as the command reports it (None, said, when none
    finished; KeyboardInterrupt when Ctrl-C came before any did): stopped by the best run's own
    criterion where each ran to its own."""
    print(multi.summary(), file=sys.stderr)
    if multi.solution is None:
        if multi.status == "interrupted":
            raise KeyboardInterrupt        # nothing ran: main() says so
        print(f"lsmgpu: no {what} finished", file=sys.stderr)
        return None
    if multi.status == "done":
        best = min((r for r in multi.runs if r is not None), key=lambda r: problem.sense * r.fitness)
        return dataclasses.replace(multi, status=best.status)
    return multi
