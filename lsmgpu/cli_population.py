"""The command line's population runs (``lsmgpu solve --algorithm acs | mmas | ga | dontlook-ils |
faco``): each builds its search from the parsed flags, says what runs, and returns its
SearchResult; lsmgpu.cli has checked the flags that do not apply."""
from __future__ import annotations

import sys

from .search import COLONIES, POPULATION_METHODS, DontLookILS, FocusedACO

__all__ = ["CHAINS_EXCHANGE", "FACO", "population", "chains", "focused"]

#: the don't-look ILS's islands' exchange when --exchange-every is not given (rounds)
CHAINS_EXCHANGE = 50
#: focused ACO's command-line name
FACO = "faco"


def population(args, problem, iterations, left, callbacks):
    """--algorithm acs / mmas / ga: one population method (its ants or genes are its parallelism;
    --starts, --gpus and --initial are refused by choose_method)."""
    default = "none" if args.algorithm == "ga" else "auto"
    local_search = {"none": None}.get(args.local_search or default, args.local_search or default)
    if args.algorithm == "ga":
        method = POPULATION_METHODS["ga"](problem, genes=args.genes, groups=args.groups, local_search=local_search,
                                          backend=args.backend, seed=args.seed, callbacks=callbacks)
        size = f"{method.genes} genes in {method.breeding.groups} group(s), {method.breeding.crossover}"
    else:
        method = COLONIES[args.algorithm](problem, ants=args.ants, local_search=local_search, backend=args.backend,
                                          seed=args.seed, callbacks=callbacks)
        size = f"{method.ants} ants"
    chain = repr(method.improvement) if method.improvement else (" + ".join(repr(nb) for nb in method.chain)
                                                               or "no local search")
    print(f"{method.algorithm} on {problem.name} (n = {problem.n}, {size}, {chain}), "
          f"backend {method.backend.name}", file=sys.stderr)
    return method.run(iterations, seconds=left(), target=problem.best_known)


def chains(args, problem, iterations, left, callbacks):
    """--algorithm dontlook-ils: lsmgpu.DontLookILS (--iterations: kicks a chain makes); with --gpus
    or --address its islands over Ray (lsmgpu.parallel.ray_islands)."""
    exchange = CHAINS_EXCHANGE if args.exchange_every is None else args.exchange_every
    if args.gpus or args.address:
        from .parallel.ray_islands import RayIslands
        islands = RayIslands(problem, islands=args.gpus, seed=args.seed, address=args.address, island_exchange=exchange,
                             chains=args.chains, initial=args.initial_solution, backend=args.backend)
        print(f"DontLookILS islands on {problem.name} (n = {problem.n}, {args.gpus or 'one per'} GPU(s), best tours "
              f"exchanged every {islands.exchange_every} rounds)", file=sys.stderr)
        return islands.run(iterations, seconds=left(), target=problem.best_known).best
    search = DontLookILS(problem, chains=args.chains, exchange_every=exchange, initial=args.initial_solution,
                         backend=args.backend, seed=args.seed, callbacks=callbacks)
    print(f"{search.algorithm} on {problem.name} (n = {problem.n}, {search.chains} chains, kicked segments <= "
          f"{search.span}, exchange every {exchange} rounds), backend {search.backend.name}", file=sys.stderr)
    return search.run(iterations, seconds=left(), target=problem.best_known)


def focused(args, problem, iterations, left, callbacks):
    """--algorithm faco: lsmgpu.FocusedACO (--iterations: the colony's, --ants, --initial)."""
    colony = FocusedACO(problem, ants=args.ants, initial=args.initial_solution, backend=args.backend, seed=args.seed,
                        callbacks=callbacks)
    print(f"{colony.algorithm} on {problem.name} (n = {problem.n}, {colony.ants} ants moving {colony.moves} cities "
          f"each, 2-opt + Or-opt descents), backend {colony.backend.name}", file=sys.stderr)
    return colony.run(iterations, seconds=left(), target=problem.best_known)
