"""The ``lsmgpu`` command: ``lsmgpu solve INSTANCE`` runs a search on a TSPLIB or QAPLIB file."""
from __future__ import annotations

import json
import logging
import signal
import sys
import time

import numpy as np

from tqdm import tqdm

from .backends import cuda_available
from .checkpoint import checkpoint_settings
from .errors import BackendUnavailable, KernelCompileError
from .cli_method import choose_method
from .cli_parser import DEFAULT_ITERATIONS, DEFAULT_SECONDS, POLISH, parser
from .cli_population import combined_result, population, run_search
from .plotting import plot_result, pyplot
from .progress import ProgressBar
from .search import SEARCHES, PopulationSearch
from .validation import check_writable


def compare_command(args) -> int:
    from .comparison import compare, format_table, plot

    split = lambda text: [v.strip() for v in text.split(",") if v.strip()]  # noqa: E731
    iterations, seconds = args.iterations, args.seconds
    if iterations is None and seconds is None:
        iterations = DEFAULT_ITERATIONS[args.algorithm]
        seconds = DEFAULT_SECONDS if iterations is None else None
    try:
        rows = compare(args.instance, neighbourhoods=split(args.neighbourhood) or [None],
                       selections=split(args.selection), generations=split(args.generation),
                       algorithm=args.algorithm, runs=args.runs, seed=args.seed, iterations=iterations,
                       seconds=seconds, backend=args.backend)
    except (ValueError, TypeError, OSError, BackendUnavailable, KernelCompileError) as exc:
        print(f"lsmgpu: {exc}", file=sys.stderr)
        return 2
    print(format_table(rows))
    if args.plot:
        plot(rows, args.plot)
        print(f"plot written to {args.plot}")
    return 0


def _polish_option(args, problem) -> dict:
    """ILS's keywords from --polish: by default Or-opt then 3-opt for an ILS over candidate lists
    (the ILS's own default where neither --neighbourhood nor --polish is given: problem.default_ils(),
    over --candidates lists where given)."""
    sized = {} if args.candidates is None else {"candidates": args.candidates}     # with a polish: the ILS refuses
    if args.polish is None and (args.algorithm != "ils" or not args.neighbourhood):
        return sized
    chosen = problem.neighbourhood if args.neighbourhood else problem.default_ils().get("neighbourhood")
    candidates = getattr(chosen, "candidates", None)
    if args.polish is not None and (args.algorithm != "ils" or candidates is None):
        raise ValueError("--polish applies to --algorithm ils over candidate lists "
                         "(--neighbourhood 2opt-candidates, oropt or 3opt-candidates)")
    if candidates is None:
        return sized
    polish = [] if args.polish == "none" else POLISH[args.polish or "oropt+3opt"](candidates)
    return {**sized, "neighbourhood": chosen, "polish": polish}


#: exit codes of an interrupted run: 128 + the signal's number
EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}
#: where no optimum is known, the gap to the problem's lower bound is printed up to this many
#: cities, BOUND_CITIES_GPU where a GPU answers (the TSP's Held-Karp bound takes an O(n^2)
#: spanning tree: seconds at 20,000 cities on the host; with the GPU's trees 0.9 s at 18,512
#: cities, 4.8 s at 85,900 on the H100 machine: benchmarks/probes/ascent_trees.py)
BOUND_CITIES, BOUND_CITIES_GPU = 20_000, 100_000

#: whether SIGTERM (not Ctrl-C) stopped the running command
_TERMINATED = [False]


def _sigterm(signum, frame):
    """SIGTERM (a job scheduler's stop, a container's shutdown), delivered like Ctrl-C so that
    every search returns its best so far; the flag remembers which it was."""
    _TERMINATED[0] = True
    raise KeyboardInterrupt


def _stopped_by() -> str:
    """The signal that interrupted the command."""
    return "SIGTERM" if _TERMINATED[0] else "SIGINT"


def _load_problem(args):
    """The problem of ``args.instance`` with the neighbourhood and options the flags ask for."""
    from .problems import load, resolve_path
    path = resolve_path(args.instance)
    if args.colors is not None and path.suffix != ".col":
        raise ValueError(f"--colors applies to a DIMACS .col graph, not to {path.name}")
    if args.start is not None and path.suffix != ".tsp":
        raise ValueError(f"--start applies to a TSPLIB .tsp, not to {path.name}")
    options = {} if args.start is None else {"start": args.start}     # TSP checks the kind's name
    if path.suffix == ".tsp" and args.neighbourhood:
        options["neighbourhood"] = args.neighbourhood
    elif path.suffix == ".col":
        if args.colors is None:
            raise ValueError("a .col graph needs --colors K")
        options["colors"] = args.colors
    problem = load(path, **options)
    if path.suffix == ".dat" and args.neighbourhood == "3exchange":
        from .neighbourhoods import ThreeExchange
        problem = problem.with_neighbourhood(ThreeExchange())
    elif path.suffix == ".dat" and args.neighbourhood not in (None, "swap"):
        raise ValueError(f"QAP supports swap and 3exchange, not {args.neighbourhood!r}")
    return problem


def solve(args) -> int:
    """``lsmgpu solve``: exit 0 when the run ends by its budget, 2 for bad input (one line, no
    traceback), 130 / 143 when Ctrl-C / SIGTERM stopped it (the best so far printed and written)."""
    try:
        check_writable(args.out, "--out")
        check_writable(args.plot, "--plot")
        check_writable(args.json, "--json")
        check_writable(args.checkpoint, "--checkpoint")
        # the --resume file read once, first: a missing or foreign file is named before any work
        args.resume_settings = checkpoint_settings(args.resume, "--resume") if args.resume is not None else None
        if args.plot:
            pyplot()                  # matplotlib missing: say so now, not after the search
        if args.backend != "cpu":            # the GPU's context starts while the instance is read
            from .backends.cuda.driver import warm_up
            warm_up()
        problem = args.problem = _load_problem(args)
        args.initial_solution = None if args.initial is None else problem.read_solution(args.initial)
        if args.iterations is None and args.seconds is None and args.resume is None:
            args.seconds = DEFAULT_SECONDS            # before the method: the budget chooses it too
        choose_method(args, problem)
        check_one_search(args)
        args.reference_value = _reference_value(args, problem)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        print(f"lsmgpu: {exc}", file=sys.stderr)
        return 2
    try:
        result = _run(args, problem, args.iterations)
    except (ValueError, TypeError, BackendUnavailable, KernelCompileError) as exc:
        print(f"lsmgpu: {exc}", file=sys.stderr)
        return 2
    if result is None:
        return 2
    return _report(args, problem, result)


def check_one_search(args) -> None:
    """--stagnation is refused with --gpus islands (each island runs until the budget's end), and
    --checkpoint-every without --checkpoint."""
    if args.stagnation is not None and (args.gpus or args.address) and args.starts == 1:
        raise ValueError("--stagnation is not taken by islands over --gpus (they run to the budget's end)")
    if args.checkpoint_every is not None and not args.checkpoint:
        raise ValueError("--checkpoint-every needs --checkpoint FILE")


def _reference_value(args, problem) -> float | None:
    """--reference's value: the number given, or for "uniform" the TSP's uniform estimate."""
    if args.reference != "uniform":
        return args.reference
    if not hasattr(problem, "uniform_length"):
        raise ValueError(f"--reference uniform applies to a TSP, not to {problem.name}")
    return problem.uniform_length()


def _gap(args, problem):
    """fitness -> its gap (0.01 = 1 %) to --reference where given, else to the best known value
    (None where there is none): what the progress bar shows."""
    reference = getattr(args, "reference_value", None)
    if reference is None:
        return problem.gap
    return lambda fitness: problem.sense * (fitness - reference) / abs(reference)


def _bound_cities() -> int:
    """The most cities whose lower bound the report computes (BOUND_CITIES, BOUND_CITIES_GPU)."""
    return BOUND_CITIES_GPU if cuda_available()[0] else BOUND_CITIES


def _value(problem, value) -> str:
    """An objective value as printed: exactly for an integer objective, with full precision otherwise."""
    value = float(value)
    return f"{int(value):,}".replace(",", "") if problem.integer and value.is_integer() else repr(value)


def _report(args, problem, result) -> int:
    """Print the best solution's figures, write --out and --plot; the exit code."""
    print(f"best fitness: {_value(problem, result.fitness)}")
    gap = problem.gap(result.fitness)
    if gap is not None:
        print(f"gap to best known {_value(problem, problem.best_known)}: {100 * gap:.2f} %")
    if (reference := getattr(args, "reference_value", None)) is not None:
        print(f"gap to reference {reference:.10g}: {100 * _gap(args, problem)(result.fitness):.2f} %")
    where = f"{result.backend} ({result.device})" if result.device else result.backend
    note = "" if result.iterations or result.status != "seconds" else (
        " (the budget went to the set-up and the first descent)" if result.evaluations else
        " (the budget ended in the set-up or the first iteration)")
    print(f"{result.iterations} iterations{note}, {result.evaluations:,} evaluations, {result.seconds:.2f} s "
          f"on {where}, stopped by {result.status}")
    if result.backend == "cuda":
        from .backends.cuda.driver import build_note, builds_under_way
        if said := build_note(result):
            print(f"lsmgpu: {said}", file=sys.stderr)
        if running := builds_under_way():
            print(f"lsmgpu: the process ends when the {running} kernel build(s) still running end (kept for "
                  f"the next run)", file=sys.stderr)
    if args.out:
        problem.write_solution(result.solution, args.out)
        print(f"solution written to {args.out}")
    if args.plot:
        plot_result(problem, result, args.plot)
        print(f"picture written to {args.plot}")
    if args.json:
        _write_figures(args, problem, result, gap)
        print(f"figures written to {args.json}")
    args.reported = True                  # Ctrl-C from here on (the bound below) keeps this report
    if gap is None and result.status != "interrupted" and problem.n <= _bound_cities() \
            and (bound := problem.lower_bound()) is not None:
        gap = 100 * problem.sense * (result.fitness - bound) / abs(bound)
        print(f"gap to lower bound {_value(problem, bound)}: {gap:.2f} %")
    if result.status == "interrupted":
        print(f"lsmgpu: interrupted ({_stopped_by()}); the best solution so far is above"
              + (f" and in {args.out}" if args.out else ""), file=sys.stderr)
        return EXIT_CODES[_stopped_by()]
    return 0


def _write_figures(args, problem, result, gap) -> None:
    """--json: the result's figures (SearchResult.figures), the instance's size, its best known
    value and the gap to it, and the gap to --reference, as fractions (0.01 = 1 %; None where
    there is nothing to compare with)."""
    reference = getattr(args, "reference_value", None)
    figures = dict(result.figures(), instance=str(args.instance), n=int(problem.n),
                   best_known=None if problem.best_known is None else float(problem.best_known),
                   gap=None if gap is None else float(gap),
                   reference=reference,
                   reference_gap=None if reference is None else float(_gap(args, problem)(result.fitness)))
    with open(args.json, "w") as file:
        json.dump(figures, file, indent=1)
        file.write("\n")


def _run(args, problem, iterations):
    """The search the flags ask for (one, or many starts); its best SearchResult, or None on an
    error already reported. --time counts from the command's start (args.t0): reading the
    instance and building the search (a GPU context, kernels) come out of it."""
    t0 = args.t0
    left = (lambda: None) if args.seconds is None else (lambda: max(0.0, args.seconds - (time.perf_counter() - t0)))
    bar = lambda: [] if args.quiet else [ProgressBar(iterations, args.seconds, _gap(args, problem))]      # noqa: E731
    if issubclass(SEARCHES[args.algorithm], PopulationSearch):
        return population(args, problem, iterations, left, [] if args.gpus or args.address else bar())
    if args.starts > 1 or args.gpus or args.address:
        return _many_starts(args, problem, iterations, left)
    callbacks = bar()
    search = SEARCHES[args.algorithm](problem, backend=args.backend, seed=args.seed, callbacks=callbacks,
                                        initial=args.initial_solution, **_polish_option(args, problem))
    polish = "".join(f" + {p.neighbourhood!r}" for p in getattr(search, "polish", []))
    print(f"{search.algorithm} on {problem.name} (n = {problem.n}, {search.neighbourhood!r}{polish}), "
          f"backend {search.backend.name}", file=sys.stderr)
    for callback in callbacks:
        callback.show()
    return run_search(args, search, iterations, left)


def _many_starts(args, problem, iterations, left):
    """--starts: MultiStart here, or RayMultiStart with --gpus / --address; one bar over the starts.
    Returns the best start's SearchResult (None on an error already reported)."""
    from .parallel.multistart import MultiStart
    options = dict(starts=args.starts, seed=args.seed, backend=args.backend)
    if args.initial_solution is not None:                  # RayMultiStart draws every start's own
        options["initial"] = args.initial_solution
    if args.candidates is not None:
        options["candidates"] = args.candidates
    if args.exchange_every is not None:
        options["exchange_every"] = args.exchange_every
    if args.gpus or args.address:
        from .parallel.distributed import RayMultiStart
        runner = RayMultiStart(args.algorithm, problem, workers=args.gpus, address=args.address, **options)
    else:
        runner = MultiStart(args.algorithm, problem, **options)
    print(f"{args.starts} starts of {args.algorithm} on {problem.name} (n = {problem.n}, "
          f"{problem.neighbourhood!r})", file=sys.stderr)
    batched = getattr(runner, "batched", False)
    bar = None
    if not args.quiet:   # batched starts advance together: one bar over their iterations
        bar = (tqdm(total=iterations, unit="it", file=sys.stderr) if batched
               else tqdm(total=args.starts, unit="start", file=sys.stderr))
    hooks = {}
    if bar is not None and batched:
        def on_chunk(done, best):
            bar.update(done - bar.n)
            bar.set_postfix(best=f"{best:.10g}")
        hooks["on_chunk"] = on_chunk
    elif bar is not None:
        hooks["progress"] = lambda k, r: bar.update()
    budget = dict(target=problem.best_known if args.target is None else args.target, stagnation=args.stagnation,
                  checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every, **hooks)
    try:
        multi = (runner.resume(args.resume, iterations=iterations, seconds=args.seconds, **budget) if args.resume
                 else runner.run(iterations, seconds=left(), **budget))
    finally:
        if bar is not None:
            bar.close()
    return combined_result(problem, multi, "start")


def _start_result(args, problem):
    """What an interrupt before the search had a solution writes: the problem's start solution
    (the search's own first step), with status "interrupted"."""
    from .result import SearchResult
    x = args.initial_solution if getattr(args, "initial_solution", None) is not None else \
        problem.start_solution(np.random.default_rng(args.seed))
    fitness = problem.fitness(x)
    return SearchResult(solution=x, fitness=fitness, iterations=0, evaluations=1,
                        seconds=time.perf_counter() - args.t0, history=np.array([fitness]), improvements=[],
                        backend=args.backend, device="", status="interrupted", algorithm=str(args.algorithm),
                        problem=problem.name)


def main(argv=None) -> int:
    """The command; SIGTERM is handled like Ctrl-C from here on (reading the instance included)."""
    t0 = time.perf_counter()
    _TERMINATED[0] = False
    previous = signal.signal(signal.SIGTERM, _sigterm)
    args = None
    try:
        try:
            args = parser().parse_args(argv)
        except SystemExit as exit:           # --help, or a bad flag (said in one line): its exit code
            return exit.code
        args.t0 = t0
        logging.basicConfig(level=logging.INFO, format="lsmgpu: %(message)s")
        return compare_command(args) if args.command == "compare" else solve(args)
    except KeyboardInterrupt:
        problem = getattr(args, "problem", None)
        if getattr(args, "reported", False):         # while the lower bound was computed: reported above
            return EXIT_CODES[_stopped_by()]
        if problem is None:
            print(f"lsmgpu: interrupted ({_stopped_by()}) before a solution existed; nothing written", file=sys.stderr)
            return EXIT_CODES[_stopped_by()]
        return _report(args, problem, _start_result(args, problem))
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
