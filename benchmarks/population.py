"""The population level's tables (issue 21): batched descents, and the batched ILS against one chain.

``descents``: B random solutions to a local optimum of a chain (TSP: candidate 2-opt + Or-opt; QAP:
swap), batched (lsmgpu.parallel.improve on CUDA: one launch a step for all rows) against the same
descents one after another on the GPU (the single-solution evaluators; a subset of the rows where all
of them would take minutes, reported as a rate). Each row of the subset is checked equal to its
batched row (same local optimum), and every fitness against the host's evaluation. With
``--descent-dontlook`` the TSP rows are also descended by the don't-look descent (DontLookDescent:
2-opt + Or-opt over the same kind of candidate lists, each row a thread block that checks only the
cities whose edges changed) in one launch for all rows against one row a launch, rows checked equal.

``batch-ils``: lsmgpu's default TSP ILS (candidate 2-opt + Or-opt + 3-opt, double-bridge kicks) as
one chain against ``--ils-starts`` chains batched as islands (``exchange_every``), at each budget of
``--ils-seconds``, from seed 0, all from the instance's greedy tour; LKH-3 (elkai, one run, its own time to its tour) in a process on the
GPU machine's CPUs at the same time.

``dontlook-ils``: lsmgpu.DontLookILS (chains of local double-bridge kicks and don't-look 2-opt +
Or-opt descents, each whole in a GPU block) from the same greedy tour and seed, for each
``--dlils-configs`` entry chains:kick_segment:exchange_every[:segment] (exchange 0: none; segment:
the descent's longest Or-opt segment, DontLookILS's default when left out) and each count of
``--dlils-merge`` (the best chains' tours an exchange merges by partition crossover; 0: none;
default: DontLookILS's), each ``--dlils-spread`` (the chains' kick segments spread from
kick_segment / spread to kick_segment * spread; default: DontLookILS's), each ``--dlils-walk``
(walk kicks' steps, 0: segment kicks; default: DontLookILS's), each ``--dlils-walk-share`` (the
share of the chains that walk-kick) and each ``--dlils-seed``
at each budget; ``merged`` counts the exchanges whose merge was shorter than the best, ``merge_s``
their host time.

    python -m benchmarks descents --data .data --out $OUT
    python -m benchmarks batch-ils --ils-seconds 10,60 --data .data --out $OUT
    python -m benchmarks dontlook-ils --dlils-seconds 10,60 --data .data --out $OUT

``ray-islands``: lsmgpu.parallel.ray_islands.RayIslands, one island of ``--islands-method``
(dontlook-ils: 256 chains, faco, acs, mmas, ga) per GPU, or per ``--islands-share`` of one (0.5:
two islands a GPU), exchanging best tours at the method's period, for each island count of
``--islands-gpus``, the ILS and FACO from the greedy tour, seed 0, at ``--islands-seconds``: gap,
work a second over all islands (kicks, ant tours, children) and its ratio to one island. Ray and the
actors are started before the first row (started inside a row's run, its rate would pay Ray's
start and inflate the 2-GPU ratio: 2.95-3.26x measured that way), and one island's one iteration
on each instance builds the kernels into the cache first (built inside the 1-GPU row, they gave
pla85900 a 2.68x "ratio" on 2 GPUs).

    python -m benchmarks ray-islands --islands-gpus 1,2 --islands-seconds 60 --data .data --out $OUT
    python -m benchmarks ray-islands --islands-method faco --islands-share 0.5 --islands-gpus 1,2 --data .data
"""
from __future__ import annotations

import itertools
import statistics
import time

import numpy as np

from lsmgpu import DontLookILS, IteratedLocalSearch, MultiStart
from lsmgpu.backends.population import EvaluatorPopulation
from lsmgpu.neighbourhoods import OrOpt
from lsmgpu.parallel import improve
from lsmgpu.problems import QAP, TSP
from lsmgpu.problems.tsp import greedy_tour

from .peers import _length, cpu_peers, lkh

#: (folder, name, rows batched, rows one after another) of the descents table
DESCENTS = (("tsplib", "pr2392", 1024, 16), ("tsplib", "rl11849", 256, 4), ("qaplib", "tai100a", 64, 64))


def chain_of(problem):
    """The descents' chain: candidate 2-opt + Or-opt for the TSP, the problem's own (swap) else."""
    if isinstance(problem, TSP):
        candidates = problem.neighbourhood.candidates
        return [problem.neighbourhood, OrOpt(candidates)]
    return [problem.neighbourhood]


def table_descents(args, path_of, emit) -> list[dict]:
    """Batched against one-after-another descents on the GPU (see the module docstring)."""
    if getattr(args, "backend_choice", "cuda") != "cuda":
        raise SystemExit("benchmarks: table 'descents' compares two ways of using the GPU; it needs the GPU")
    from lsmgpu.backends.cuda import CudaBackend
    from lsmgpu.backends.cuda.population import CudaPopulation
    rows = []
    for folder, name, batch, alone in DESCENTS:
        if args.quick:
            batch, alone = 8, 2
        path = path_of(folder, name)
        problem = (TSP.from_file(path, neighbourhood="2opt-candidates") if folder == "tsplib"
                   else QAP.from_file(path))
        chain = chain_of(problem)
        rng = np.random.default_rng(0)
        xs = np.stack([problem.encoding.random(rng) for _ in range(batch)])
        steps = [problem.with_neighbourhood(nb) for nb in chain]
        improve(problem, xs[:2], chain, backend="cuda")                 # kernels built, tuned
        for waves in [float(w) for w in args.descent_waves.split(",")]:
            times = []
            for _ in range(max(1, args.repeats)):
                population = CudaPopulation(steps, CudaBackend(), batch, waves)
                t0 = time.perf_counter()
                population.load(xs)
                made, _, _ = population.descend(np.ones(batch, bool))
                solutions = population.solutions()
                times.append(time.perf_counter() - t0)
                population.close()
            fitness = np.array([problem.evaluate(x) for x in solutions])
            batched = statistics.median(times)
            rows.append(dict(table="descents", instance=problem.name, n=problem.n, strategy="batched",
                             chain=" + ".join(repr(nb) for nb in chain), rows=batch, waves=waves,
                             seconds=round(batched, 3), descents_per_s=round(batch / batched, 1),
                             mean_moves=round(float(made.mean()), 1), mean_fitness=round(float(fitness.mean()), 1)))
            emit(rows[-1])
        population = EvaluatorPopulation(CudaBackend(), steps, alone)
        population.load(xs[:alone])
        t0 = time.perf_counter()
        population.descend(np.ones(alone, bool))
        sequential = time.perf_counter() - t0
        same = np.array_equal(population.solutions(), solutions[:alone])
        population.close()
        best = max(r["descents_per_s"] for r in rows if r["instance"] == problem.name)
        rows.append(dict(table="descents", instance=problem.name, n=problem.n, strategy="one after another",
                         chain=rows[-1]["chain"], rows=alone, seconds=round(sequential, 3),
                         descents_per_s=round(alone / sequential, 2), equal_to_batched=same,
                         batched_x=round(best / (alone / sequential), 1)))
        emit(rows[-1])
        if folder == "tsplib" and args.descent_dontlook:
            rows += _dontlook_descents(TSP.from_file(path), xs, alone, max(1, args.repeats), emit)   # its ILS lists
    return rows


def _dontlook_descents(problem, xs, alone: int, repeats: int, emit) -> list[dict]:
    """The rows ``xs`` by don't-look descents on the GPU, all in one launch a round (median of
    ``repeats``) against the first ``alone`` one a launch; each of those equal to its batched row."""
    from lsmgpu.backends import resolve
    from lsmgpu.search import DontLookDescent
    backend, rules, distance = resolve("cuda"), DontLookDescent().bound(problem), problem.edge_distance()

    def descended(tours):
        rows = backend.dontlook(rules, distance, len(tours))
        t0 = time.perf_counter()
        rows.load(tours)
        made, _, _ = rows.descend(np.ones(len(tours), bool))
        out = rows.solutions(), made, time.perf_counter() - t0
        rows.close()
        return out

    descended(xs[:2])                                                   # the kernel built
    runs = [descended(xs) for _ in range(repeats)]
    solutions, made, _ = runs[-1]
    batched = statistics.median(seconds for _, _, seconds in runs)
    alone_runs = [descended(xs[k:k + 1]) for k in range(alone)]
    sequential = sum(seconds for _, _, seconds in alone_runs)
    same = all(np.array_equal(run[0][0], solutions[k]) for k, run in enumerate(alone_runs))
    assert all(problem.evaluate(x) < problem.evaluate(x0) for x, x0 in zip(solutions[:4], xs[:4]))
    chain = f"don't-look 2-opt + Or-opt (k={rules.k}, segments <= {rules.segment})"
    rows = [dict(table="descents", instance=problem.name, n=problem.n, strategy="batched", chain=chain,
                 rows=len(xs), seconds=round(batched, 3), descents_per_s=round(len(xs) / batched, 1),
                 mean_moves=round(float(made.mean()), 1)),
            dict(table="descents", instance=problem.name, n=problem.n, strategy="one after another", chain=chain,
                 rows=alone, seconds=round(sequential, 3), descents_per_s=round(alone / sequential, 2),
                 equal_to_batched=same, batched_x=round((len(xs) / batched) / (alone / sequential), 1))]
    for row in rows:
        emit(row)
    return rows


def table_batch_ils(args, path_of, emit) -> list[dict]:
    """One ILS chain against batched islands at equal time, LKH-3 beside (see the module docstring)."""
    backend = getattr(args, "backend_choice", "cuda")
    rows = []
    budgets = [float(s) for s in args.ils_seconds.split(",")]
    starts = [int(s) for s in args.ils_starts.split(",")]
    every = int(args.ils_every)
    with cpu_peers(1) as pool:
        for name in args.ils_instances.split(","):
            problem = TSP.from_file(path_of("tsplib", name))
            peer = pool.submit(lkh, problem, args.peer_lkh_limit) if args.ils_lkh else None
            # every run starts from the greedy tour, made once (B nearest-neighbour tours of d18512,
            # 16 s each on the host, would spend the batch's budget before its first kick)
            start = greedy_tour(problem.coords)
            IteratedLocalSearch(problem, seed=0, backend=backend, initial=start).run(iterations=2)   # build, tune
            MultiStart(IteratedLocalSearch, problem, starts=2, seed=0, backend=backend, initial=start).run(iterations=1)
            for seconds in budgets:
                for chains in starts:
                    if chains == 1:
                        result = IteratedLocalSearch(problem, seed=0, backend=backend, initial=start).run(seconds=seconds)
                        label, work = "one ILS chain", f"{result.iterations} kicks"
                    else:
                        result = MultiStart(IteratedLocalSearch, problem, starts=chains, seed=0, backend=backend,
                                            exchange_every=every, initial=start).run(seconds=seconds)
                        label = f"batched ILS, {chains} islands (exchange every {every})"
                        work = f"{sum(r.iterations for r in result.runs if r is not None)} kicks"
                    assert problem.evaluate(result.solution) == result.fitness
                    rows.append(dict(table="batch-ils", instance=problem.name, n=problem.n, strategy=label, backend=backend,
                                     budget_s=seconds, seconds=round(result.seconds, 2), length=int(result.fitness),
                                     gap_pct=round(100 * problem.gap(result.fitness), 3), work=work))
                    emit(rows[-1])
            if peer is not None:
                tour, used = peer.result()
                length = _length(problem, tour)
                rows.append(dict(table="batch-ils", instance=problem.name, n=problem.n, strategy="LKH-3 (elkai, 1 run)",
                                 budget_s=None, seconds=round(used, 2), length=length,
                                 gap_pct=None if length is None else round(100 * problem.gap(length), 3),
                                 work="its own time" if length is not None else "no tour in its time"))
                emit(rows[-1])
    return rows



def table_dontlook_ils(args, path_of, emit) -> list[dict]:
    """DontLookILS configurations at equal time from the greedy tour (see the module docstring)."""
    backend = getattr(args, "backend_choice", "cuda")
    budgets = [float(s) for s in args.dlils_seconds.split(",")]
    configs = [(tuple(int(v) for v in c.split(":")) + (None,))[:4] for c in args.dlils_configs.split(",")]
    merges = [None if m == "default" else int(m) for m in args.dlils_merge.split(",")]
    spreads = [None if m == "default" else float(m) for m in args.dlils_spread.split(",")]
    walks = [None if m == "default" else int(m) for m in args.dlils_walk.split(",")]
    shares = [float(m) for m in args.dlils_walk_share.split(",")]
    seeds = [int(seed) for seed in str(args.dlils_seed).split(",")]
    rows = []
    for name in args.dlils_instances.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        start = greedy_tour(problem.coords)
        DontLookILS(problem, chains=2, backend=backend, initial=start, seed=0).run(iterations=1)     # the build
        for seconds in budgets:
            for (chains, segment, every, or_segment), merge, spread, walk, share, seed in itertools.product(
                    configs, merges, spreads, walks, shares, seeds):
                options = dict(walk_share=share) if spread is None else dict(kick_spread=spread, walk_share=share)
                options.update({} if walk is None else dict(kick_walk=walk))
                search = DontLookILS(problem, chains=chains, kick_segment=segment, exchange_every=every or None,
                                     segment=or_segment, merge=merge, backend=backend, initial=start,
                                     seed=seed, **options)
                result = search.run(seconds=seconds)
                assert problem.evaluate(result.solution) == result.fitness
                kicks, checks = search.counters["kicks"], search.counters["checks"]
                spans = search.spans
                label = f"DontLookILS, {chains} chains, segments <= {spans.min()}..{spans.max()}, "
                label += f"exchange every {every or 'never'}"
                label += f", Or-opt <= {search.rules.segment}" if search.rules.segment != 3 else ""
                label += f", merging {search.merge}" if search.merge > 1 else ""
                walkers = int((search.walks > 0).sum())
                label += f", walk kicks of {search.kick_walk} steps on {walkers} chains" if walkers else ""
                rows.append(dict(table="dontlook-ils", instance=problem.name, n=problem.n, strategy=label,
                                 seed=seed, chains=chains, kick_segment=segment,
                                 kick_spans=f"{spans.min()}..{spans.max()}", kick_walk=search.kick_walk,
                                 walk_chains=walkers,
                                 exchange_every=every,
                                 or_segment=search.rules.segment,
                                 backend=backend,
                                 budget_s=seconds,
                                 seconds=round(result.seconds, 2), length=int(result.fitness),
                                 gap_pct=round(100 * problem.gap(result.fitness), 3), kicks=int(kicks.sum()),
                                 kicks_per_chain=int(kicks.mean()), checks_per_s=round(checks.sum() / result.seconds),
                                 rounds=search.rounds, merge=search.merge, merged=search.merged,
                                 merge_s=round(search.merge_seconds, 2)))
                emit(rows[-1])
    return rows


def table_ray_islands(args, path_of, emit) -> list[dict]:
    """RayIslands on 1, 2, ... GPUs (see the module docstring)."""
    import ray

    from lsmgpu.parallel.ray_islands import RayIslands
    from lsmgpu.search import SEARCHES
    seconds, method, share = float(args.islands_seconds), args.islands_method, float(args.islands_share)
    if not ray.is_initialized():          # Ray's start (seconds) is not the first row's to pay
        ray.init(ignore_reinit_error=True, log_to_driver=False)
    rows = []
    for name in args.islands_instances.split(","):
        problem = TSP.from_file(path_of("tsplib", name))
        start = greedy_tour(problem.coords)
        options = dict(initial=start) if method in ("dontlook-ils", "faco") else {}
        backend = getattr(args, "backend_choice", "cuda")
        RayIslands(problem, method=method, islands=1, gpus_per_island=share, seed=0, backend=backend,
                   **options).run(iterations=1)         # the kernel builds are not the first row's to pay
        one = None
        for count in (int(g) for g in args.islands_gpus.split(",")):
            islands = RayIslands(problem, method=method, islands=count, gpus_per_island=share, seed=0,
                                 backend=backend, **options)
            islands.start_actors()             # the actors' start-up is not the row's to pay
            result = islands.run(seconds=seconds)
            assert problem.evaluate(result.solution) == result.fitness and not result.lost
            made, unit = result.work
            rate = made / result.seconds
            one = rate if count == 1 else one
            rows.append(dict(table="ray-islands", instance=problem.name, n=problem.n, method=SEARCHES[method].__name__,
                             strategy=f"RayIslands, {count} island(s) of {share:g} GPU", islands=count,
                             gpu_share=share, budget_s=seconds, seconds=round(result.seconds, 2),
                             length=int(result.fitness), gap_pct=round(100 * problem.gap(result.fitness), 3),
                             work=made, unit=unit, per_s=round(rate, 1),
                             vs_one=round(rate / one, 2) if one else "", migrants=sum(islands.migrants),
                             devices=" | ".join(sorted({r.device for r in result.runs if r is not None}))))
            emit(rows[-1])
    return rows
