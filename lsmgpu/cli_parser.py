"""The ``lsmgpu`` command's flags: the parser (every flag checked as it is read, its error one line
naming it), the defaults the command falls back to, and the help that lists the shipped instances."""
from __future__ import annotations

import argparse
import math

from .cli_population import (ANT_LISTS_AFTER, ANT_LISTS_SECONDS, BRIDGES_BELOW, BRIDGES_SECONDS, CHAINS_EXCHANGE,
                             FIVE_OPT_CITIES, FIVE_OPT_DEPTH, FIVE_OPT_RESTART_AFTER, FIVE_OPT_SECONDS)
from .neighbourhoods import CandidateThreeOpt, OrOpt, candidate_polish
from .search import SEARCHES, LocalSearch, searches_of

__all__ = ["DEFAULT_ITERATIONS", "DEFAULT_SECONDS", "SEGMENTS_FROM", "CLUSTERED", "CLUSTERED_SEGMENTS_FROM",
           "QAP_GPU_STARTS", "QAP_GPU_EXCHANGE", "POLISH", "parser"]

#: `lsmgpu compare`'s budget when none is given
DEFAULT_ITERATIONS = {"tabu": 10_000, "hc": None, "ils": 1_000, "vns": 1_000}
#: `lsmgpu solve`'s budget when none is given, for every algorithm (hill climbing may stop sooner, at its local optimum)
DEFAULT_SECONDS = 10.0
#: a TSP on a GPU runs the tour segments from this many cities, focused ACO below. At 60 s focused
#: ACO wins at 85,900 cities (pla85900 0.221 % against the segments' 0.936 %), the segments on every
#: uniform instance measured from 100,000 cities (0.797 % against 1.001 %; 150,000: 0.807 against
#: 1.407 %; 200,000: 0.638 against 1.656 %): docs/benchmarks/segments.md, "Where the segments take over"
SEGMENTS_FROM = 100_000
#: clustered cities (TSP.clustering() from CLUSTERED; uniform ones measure 1.0 +- 0.02) run the
#: segments only from CLUSTERED_SEGMENTS_FROM cities. At 60 s on the DIMACS generator's clustered
#: instances (gaps to the Held-Karp bound) focused ACO leads at 100,000 and 150,000 cities (6.40
#: against 7.20 %, 5.95 against 7.28 %), the two are within 0.3 points at 200,000 and 300,000,
#: and the segments lead from 400,000 (7.01 against 8.92 %, 500,000: 7.11 against 8.12 %):
#: docs/benchmarks/segments.md, "Clustered cities"
CLUSTERED, CLUSTERED_SEGMENTS_FROM = 2.0, 200_000
#: a QAP on a GPU without --starts: this many tabu starts as islands (docs/benchmarks.md, "Defaults")
QAP_GPU_STARTS, QAP_GPU_EXCHANGE = 256, 1000
#: --polish: the ILS polish chain over the same candidate lists as the search's
POLISH = {"oropt": lambda c: [OrOpt(c)], "3opt-candidates": lambda c: [CandidateThreeOpt(c)],
          "oropt+3opt": candidate_polish}


def _count(minimum: int):
    """An argparse type: an integer of at least ``minimum`` (the error names the flag)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return parse


def _candidates(text: str):
    """An argparse type: "alpha" or a count of at least 1."""
    return "alpha" if text.strip().lower() == "alpha" else _count(1)(text)


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text}")
    return value


def _number(text: str) -> float:
    """An argparse type: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def _reference(text: str):
    """An argparse type: "uniform" or a finite non-zero number."""
    if text.strip().lower() == "uniform":
        return "uniform"
    value = _number(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (gaps are relative to it)")
    return value


def _epilog() -> str:
    from .problems import shipped_names
    return ("instances: a path to a TSPLIB .tsp, a QAPLIB .dat, a permuted perceptron .ppp or a DIMACS .col "
            f"graph (with --colors K), or a shipped instance by name: {', '.join(shipped_names())}")


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line naming the flag (not the usage block first)."""

    def error(self, message):
        self.exit(2, f"lsmgpu: {message} (see {self.prog} --help)\n")


def parser() -> argparse.ArgumentParser:
    """The parser of ``lsmgpu solve`` and ``lsmgpu compare``."""
    parser = _Parser(prog="lsmgpu", description="lsmgpu: local-search metaheuristics with the neighbourhood "
                     "evaluated on the GPU.")
    sub = parser.add_subparsers(dest="command", required=True)
    solve = sub.add_parser("solve", help="solve a TSPLIB (.tsp), QAPLIB (.dat), PPP (.ppp) or DIMACS (.col) instance",
                           epilog=_epilog())
    solve.add_argument("instance", help="path of a .tsp, .dat, .ppp or .col file, or the name of a shipped instance")
    solve.add_argument("--algorithm", choices=sorted(SEARCHES),
                       default=None,
                       help="default, measured best per problem type and backend: for a TSP on a GPU faco "
                            f"(focused ACO, a thread block an ant), from {SEGMENTS_FROM:,} cities "
                            f"({CLUSTERED_SEGMENTS_FROM:,} clustered ones) segments (one tour cut "
                            "into segments improved at once, a thread block a segment); dontlook-ils: 256 ILS chains, "
                            "each whole in a thread block; else ils (over candidate lists with "
                            "the Or-opt + 3-opt polish); tabu for the rest, as 256 island starts for a QAP on a "
                            "GPU; acs / mmas: the ant colonies; ga: the genetic algorithm")
    solve.add_argument("--chains", type=_count(1), help="dontlook-ils: ILS chains (default 256 on a GPU, 1 on the CPU)")
    solve.add_argument("--ants", type=_count(1), help="acs / mmas / faco: ants an iteration (default: the colony's)")
    solve.add_argument("--colonies", type=_count(1), default=None, metavar="C",
                       help="faco: C independent colonies of --ants ants side by side, their bests merged by "
                            "partition crossover (default 1)")
    solve.add_argument("--moves", type=_count(1), default=None, metavar="M",
                       help="faco: cities an ant moves before its descent (default: the colony's, 128; 64 from "
                            "10,000 cities without the LK chain, 192 from 30,000 with it, and from 10,000 with "
                            "the ants' lists)")
    solve.add_argument("--genes", type=_count(4), help="ga: population size (default: 2,048; 128 with local search)")
    solve.add_argument("--groups", type=_count(1), default=1, help="ga: island groups (default 1)")
    solve.add_argument("--local-search", choices=["auto", "tabu", "dontlook", "none"], default=None,
                       help="acs / mmas / ga: improve every new solution with the problem's measured chain (auto, "
                            "the colonies' default), a short tabu search of 4 n iterations (tabu), don't-look 2-opt "
                            "+ Or-opt descents of tours (dontlook) or not (none: the plain colony; the GA's default)")
    solve.add_argument("--candidates", type=_candidates, metavar="K|alpha",
                       help="ils / vns / acs / mmas / faco / dontlook-ils / segments: each city's candidate cities, "
                            "its K nearest (quadrant neighbours for planar coordinates) or its 5 α-nearest after a "
                            "Held-Karp ascent (alpha, "
                            "a TSP's; the ascent counts in --seconds)")
    solve.add_argument("--lk", action=argparse.BooleanOptionalAction, default=None,
                       help="faco / dontlook-ils / segments: the descents also make LK3 moves (Lin-Kernighan's "
                            "third level: sequential 3-opt moves with two reversals); default: the method's own "
                            "(on for segments)")
    solve.add_argument("--lk-depth", type=int, default=None, metavar="D",
                       help="faco / dontlook-ils / segments: where no other move improves, the descents search "
                            "Lin-Kernighan's variable-depth move, a chain of up to D levels (0: none; at most 12, "
                            "400 with --lk-move 5; default: the method's own)")
    solve.add_argument("--lk-move", type=int, choices=[2, 5], default=None,
                       help="faco / dontlook-ils: the LK chain's levels are 2-opt moves (2) or LKH's sequential 5-opt "
                            f"basis moves (5; default for faco on a GPU from {FIVE_OPT_CITIES.start:,} to "
                            f"{FIVE_OPT_CITIES.stop - 1:,} cities with --seconds {FIVE_OPT_SECONDS:g} or more, with "
                            f"--candidates alpha, --lk-depth {FIVE_OPT_DEPTH} and --chain-alone)")
    solve.add_argument("--chain-alone", action=argparse.BooleanOptionalAction, default=None,
                       help="faco / dontlook-ils: with --lk-move 5, each check is the 5-opt chain alone, no 2-opt or "
                            "Or-opt move first (LKH's LK); default: on where the 5-opt chains are the default")
    solve.add_argument("--bridges", action=argparse.BooleanOptionalAction, default=None,
                       help="faco: where an ant's descent stands still, LKH's non-sequential bridging moves (double "
                            "bridges over the candidates) until none shortens its tour (default: on with the default "
                            f"ants' lists, --seconds {BRIDGES_SECONDS:g} or more and fewer than {BRIDGES_BELOW:,} "
                            "cities, else off)")
    solve.add_argument("--ant-lists", type=_count(0), default=None, metavar="N",
                       help="faco: after N iterations the candidate lists and penalties come from an ascent over the "
                            "edges of the ants' tours, the best and the lists they had; the colonies start again from "
                            f"the best (0: never; default: {ANT_LISTS_AFTER} with the default 5-opt chains and "
                            f"--seconds {ANT_LISTS_SECONDS:g} or more, else never)")
    solve.add_argument("--restart-after", type=_count(1), default=None, metavar="N",
                       help="faco: the colony starts again after N iterations without a better tour (default: "
                            f"{FIVE_OPT_RESTART_AFTER} with the default 5-opt chains, else the colony's own)")
    solve.add_argument("--neighbourhood", default=None,
                       choices=["swap", "2opt", "3exchange", "2opt-candidates", "oropt", "3opt-candidates"],
                       help="TSP neighbourhood (default: 2opt, and for ils candidate 2-opt; swap is the paper's "
                            "benchmark setting)")
    solve.add_argument("--polish", choices=sorted(POLISH) + ["none"], default=None,
                       help="ILS over a TSP's candidate lists: end each descent where this neighbourhood does not "
                            "improve either (default oropt+3opt: Or-opt, then candidate 3-opt)")
    solve.add_argument("--start", metavar="KIND",
                       help="TSP start tour: auto (the default: the nearest-neighbour tour from a city drawn from the "
                            "seed up to 5,000 cities, the greedy tour beyond), nearest, greedy, hilbert, strips or "
                            "random; --starts of tabu or hc begin from one tour unless it is drawn (nearest, random)")
    solve.add_argument("--colors", type=_count(2), help="number of colours, for a DIMACS .col graph")
    stop = solve.add_argument_group("stopping criteria (the first to fire ends the run)")
    stop.add_argument("--iterations", type=_count(0),
                      help="iterations: moves (tabu, hc), kicks (ils, dontlook-ils: per chain), colony iterations "
                           "(acs, mmas, faco) or generations (ga)")
    stop.add_argument("--seconds", "--time", type=_seconds, dest="seconds",
                      help=f"seconds from the command's start, reading included (default without --iterations: "
                           f"{DEFAULT_SECONDS:g})")
    stop.add_argument("--target", type=_number,
                      help="stop at this objective value or better (default: the instance's best known, if it has one)")
    stop.add_argument("--stagnation", type=_count(1), help="stop after this many iterations without a new best")
    saved = solve.add_argument_group(
        "checkpoints (over Ray, --gpus / --address: islands write one file each beside FILE)")
    saved.add_argument("--checkpoint", metavar="FILE", help="write the run's state here every --checkpoint-every "
                       "seconds and at the end (a run cut by Ctrl-C keeps the last one)")
    saved.add_argument("--checkpoint-every", type=_seconds, metavar="S",
                       help="seconds between checkpoints (default 60)")
    saved.add_argument("--resume", metavar="FILE", help="go on from this checkpoint (same algorithm, options and "
                       "instance); --iterations / --seconds then count the whole run, the checkpoint's own where not "
                       "given")
    solve.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto",
                       help="where the search runs: cuda (an NVIDIA GPU with PyCUDA), cpu (NumPy) or auto (the GPU "
                            "where there is one, else the CPU, said; default)")
    solve.add_argument("--seed", type=_count(0), default=0,
                       help="seed of the run's random numbers (default 0): the same seed repeats the same run")
    parallel = solve.add_argument_group("many starts")
    parallel.add_argument("--starts", type=_count(1), default=None,
                          help=f"independent starts (seeds spawned from --seed; default 1, {QAP_GPU_STARTS} islands "
                               "for a QAP on a GPU)")
    parallel.add_argument("--exchange-every", type=_count(1), metavar="K",
                          help="islands: every K iterations the worse half of the tabu starts restart from "
                               "kicked copies of the better half's best solutions; dontlook-ils: every K rounds "
                               f"(default {CHAINS_EXCHANGE}) the worse half of the chains go on from the better "
                               "half's best tours")
    parallel.add_argument("--gpus", type=_count(1), help="spread the starts, or a population search's islands "
                          "(acs, mmas, ga, dontlook-ils, faco), over this many Ray actors (one GPU each)")
    parallel.add_argument("--address", help="Ray cluster address (default with --gpus: start Ray here)")
    solve.add_argument("--reference", type=_reference, metavar="VALUE|uniform",
                       help="show the gap to this value in the progress bar and at the end (a known length, "
                            "an estimate); 'uniform': for a TSP of uniform random cities, 0.7124 sqrt(n A), "
                            "A the cities' bounding box (default: the instance's best known value)")
    solve.add_argument("--out", help="write the best solution here (.tour for TSP, .sln for QAP)")
    solve.add_argument("--json", metavar="FILE", help="write the run's figures here as JSON (fitness, gaps, "
                       "iterations, seconds, status, phases with the kernel builds' wait, method)")
    solve.add_argument("--plot", metavar="FILE.png",
                       help="save a picture: the tour over the cities (TSP) and the best fitness against time")
    solve.add_argument("--initial", metavar="FILE",
                       help="start from this solution (a .tour or .sln file, e.g. an earlier --out)")
    solve.add_argument("--quiet", action="store_true", help="no progress bar")

    comp = sub.add_parser("compare", help="compare neighbourhood / selection / generation variants, same seeds")
    comp.add_argument("instance")
    comp.add_argument("--algorithm", choices=sorted(searches_of(LocalSearch)), default="tabu")
    comp.add_argument("--neighbourhood", default="", help="comma-separated, e.g. swap,2opt (default: the problem's)")
    comp.add_argument("--selection", default="device", help="comma-separated: device (gpu), host")
    comp.add_argument("--generation", default="device", help="comma-separated: device (gpu), host (cpu)")
    comp.add_argument("--runs", type=_count(1), default=5)
    budget = comp.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=_count(0))
    budget.add_argument("--seconds", "--time", type=_seconds, dest="seconds",
                        help=f"seconds per run (default for hc: {DEFAULT_SECONDS:g})")
    comp.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto", help="as for solve")
    comp.add_argument("--seed", type=_count(0), default=0, help="seed of the first run (default 0)")
    comp.add_argument("--plot", help="save best fitness against time to this image file")
    return parser
