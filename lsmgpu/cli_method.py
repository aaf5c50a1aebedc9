"""The method ``lsmgpu solve`` runs where the flags leave it open (the measured best per problem
type, size, budget and backend), and the flags that do not apply to the method chosen."""
from __future__ import annotations

from .backends import cuda_available
from .cli_parser import CLUSTERED, CLUSTERED_SEGMENTS_FROM, QAP_GPU_EXCHANGE, QAP_GPU_STARTS, SEGMENTS_FROM
from .cli_population import CHAINS, FACO, SEGMENTS, choose_five_opt
from .search import SEARCHES, PopulationSearch

__all__ = ["choose_method"]


def choose_method(args, problem) -> None:
    """Fill in --algorithm and --starts where not given, with what measured best for the problem
    type and backend (docs/benchmarks.md, "Defaults"): for a TSP on a GPU focused ACO, from
    SEGMENTS_FROM cities (with coordinates; CLUSTERED_SEGMENTS_FROM where TSP.clustering() is
    CLUSTERED or more) the tour segments (focused ACO of FIVE_OPT_CITIES cities run for
    FIVE_OPT_SECONDS or more with the 5-opt chains alone over the α-nearest, restarts, the ants'
    lists and their moved cities: ``choose_five_opt``, also where --algorithm faco is given; islands of
    either over the GPUs with --gpus), on the CPU the don't-look ILS chain where the TSP has coordinates
    (its 5-opt chains too where the budget allows: ``choose_five_opt``, also where --algorithm
    dontlook-ils is given; none of them
    with --starts, --neighbourhood or --polish, which they do not take; with --checkpoint and
    --resume alike, so a resumed run picks what the checkpointed one did), else an ILS; for a
    QAP on a GPU, 256 tabu starts as islands exchanging every 1,000 iterations; else one tabu
    search."""
    on_gpu, why = cuda_available() if args.backend != "cpu" else (False, "--backend cpu")
    if args.backend == "cuda" and not on_gpu:
        raise ValueError(f"--backend cuda: {why}")
    tsp = type(problem).__name__ == "TSP"
    tour_search = tsp and problem.n >= 8                 # a TSP that focused ACO and the don't-look ILS take
    if args.algorithm is None and tour_search and not any((args.starts, args.neighbourhood, args.polish)):
        if on_gpu:
            cut = problem.n >= SEGMENTS_FROM and problem.coords is not None and not problem.gpu_matrix
            if cut and problem.n < CLUSTERED_SEGMENTS_FROM and problem.clustering() >= CLUSTERED:
                cut = False                          # focused ACO holds its lead further on clustered cities
            args.algorithm = SEGMENTS if cut else FACO
        elif problem.coords is not None:             # the chain's candidate lists come from them
            args.algorithm = CHAINS
    if tour_search and (args.algorithm == FACO and on_gpu or args.algorithm == CHAINS and not on_gpu):
        choose_five_opt(args, problem)                # given or chosen: the method's measured defaults alike
    if args.algorithm is None:
        args.algorithm = "ils" if tsp else "tabu"
        if type(problem).__name__ == "QAP" and args.starts is None and on_gpu:
            args.starts = QAP_GPU_STARTS
            if args.exchange_every is None:
                args.exchange_every = QAP_GPU_EXCHANGE
    population_search = issubclass(SEARCHES[args.algorithm], PopulationSearch)
    if population_search and args.algorithm not in (CHAINS, FACO):
        _refuse(args, ("--starts", "--exchange-every"),
                f"applies to the local searches, not to --algorithm {args.algorithm}")
    if args.algorithm == CHAINS:
        _refuse(args, ("--starts", "--neighbourhood", "--polish"),
                f"does not apply to --algorithm {CHAINS} (one search of --chains chains, 2-opt + Or-opt descents)")
    for name, what in ((FACO, "a colony"), (SEGMENTS, "one tour's segments")):
        if args.algorithm == name:
            _refuse(args, ("--starts", "--neighbourhood", "--polish", "--exchange-every"),
                    f"does not apply to --algorithm {name} ({what}, 2-opt + Or-opt descents)")
    if args.chains is not None and args.algorithm != CHAINS:
        raise ValueError(f"--chains applies to --algorithm {CHAINS}")
    if args.ants is not None and args.algorithm not in ("acs", "mmas", FACO):
        raise ValueError("--ants applies to --algorithm acs, mmas or faco")
    if (args.genes is not None or args.groups != 1) and args.algorithm != "ga":
        raise ValueError("--genes and --groups apply to --algorithm ga")
    if args.local_search is not None and args.algorithm not in ("acs", "mmas", "ga"):
        raise ValueError("--local-search applies to --algorithm acs, mmas or ga")
    if args.lk is not None and args.algorithm not in (FACO, CHAINS, SEGMENTS):
        raise ValueError(f"--lk / --no-lk apply to --algorithm {FACO}, {CHAINS} or {SEGMENTS}")
    if args.lk_depth is not None and args.algorithm not in (FACO, CHAINS, SEGMENTS):
        raise ValueError(f"--lk-depth applies to --algorithm {FACO}, {CHAINS} or {SEGMENTS}")
    if args.lk_move is not None and args.algorithm not in (FACO, CHAINS):
        raise ValueError(f"--lk-move applies to --algorithm {FACO} or {CHAINS}")
    if args.chain_alone is not None and args.algorithm not in (FACO, CHAINS):
        raise ValueError(f"--chain-alone / --no-chain-alone apply to --algorithm {FACO} or {CHAINS}")
    if args.algorithm != FACO:
        _refuse(args, ("--restart-after", "--colonies", "--moves", "--bridges", "--ant-lists"),
                f"applies to --algorithm {FACO}")
    if args.candidates is not None and args.algorithm not in ("ils", "vns", "acs", "mmas", FACO, CHAINS, SEGMENTS):
        raise ValueError(f"--candidates applies to --algorithm ils, vns, acs, mmas, {FACO}, {CHAINS} or {SEGMENTS}")
    if args.starts is None:
        args.starts = 1


def _refuse(args, flags, why: str) -> None:
    """A ValueError naming the first of ``flags`` (options) given: "<flag> <why>"."""
    for flag in flags:
        if getattr(args, flag.lstrip("-").replace("-", "_")) is not None:
            raise ValueError(f"{flag} {why}")
