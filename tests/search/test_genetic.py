"""The genetic algorithm: the jump indices against brute force, BCSCX / ARX / SCX / OX against plain
transcriptions of their definitions, the fixed places of rivals, partners and children, mutation,
migration, whole runs (quality, seeds, budgets, Ctrl-C, errors); on the GPU, the kernels against
the host reference."""
import itertools

import numpy as np
import pytest

from lsmgpu import GeneticAlgorithm, Problem
from lsmgpu.backends.crossover import JumpIndices, arx_privilege, construct, order_crossover, sequential_crossover
from lsmgpu.backends.genetic import Breeding, CpuGenetic, children_of, genetic_for, migration
from lsmgpu.encodings import Binary
from lsmgpu.cubins import nvcc_compile
from lsmgpu.kernels import render_skeleton
from lsmgpu.neighbourhoods import BitFlip
from lsmgpu.problems import TSP


def small_tsp(n=30, seed=3, **options):
    return TSP(np.round(np.random.default_rng(seed).uniform(0, 1000, (n, 2))), name=f"tsp{n}", **options)


def is_permutation(x):
    return np.array_equal(np.sort(x, axis=-1), np.broadcast_to(np.arange(x.shape[-1]), x.shape))


# --- plain transcriptions of the definitions (linear scans, no jump indices) -----------------------
def plain_neighbours(parent, visited, item):
    """The first unvisited item after and before ``item`` in the circular ``parent``."""
    n, i = len(parent), list(parent).index(item)
    after = next((parent[(i + s) % n] for s in range(1, n) if not visited[parent[(i + s) % n]]), item)
    before = next((parent[(i - s) % n] for s in range(1, n) if not visited[parent[(i - s) % n]]), item)
    return after, before


def plain_child(p0, p1, dist, who):
    """Kang et al.'s constructive crossover from item 0: ``who(k)`` recommends position k (0, 1 or
    2 = both parents, BCSCX); the nearest candidate taken, the first listed on ties."""
    n = len(p0)
    visited = np.zeros(n, bool)
    child, current = [0], 0
    for k in range(1, n):
        visited[current] = True
        cands = [*plain_neighbours(p0, visited, current), *plain_neighbours(p1, visited, current)]
        side = who(k)
        cands = cands if side == 2 else cands[2 * side:2 * side + 2]
        current = min(cands, key=lambda c: (dist[current, c], cands.index(c)))
        child.append(current)
    return np.array(child)


def plain_scx(p0, p1, dist):
    """SCX as Kang et al. state it (their section 2.1): from node 0, each parent offers its first
    unvisited node after the current one, scanning to its end, else the first unvisited of the
    template 0, 1, ..., n - 1; the parent 0's offer a is taken if d(p, a) < d(p, b), else b."""
    n = len(p0)
    visited = np.zeros(n, bool)
    child, current = [0], 0
    for _ in range(1, n):
        visited[current] = True
        offers = []
        for parent in (list(p0), list(p1)):
            after = [c for c in parent[parent.index(current) + 1:] if not visited[c]]
            offers.append(after[0] if after else next(c for c in range(n) if not visited[c]))
        a, b = offers
        current = a if dist[current, a] < dist[current, b] else b
        child.append(current)
    return np.array(child)


def plain_ox(p0, p1, lo, hi):
    n = len(p0)
    child = [None] * n
    child[lo:hi + 1] = p0[lo:hi + 1]
    rest = [p1[(hi + 1 + s) % n] for s in range(n) if p1[(hi + 1 + s) % n] not in set(p0[lo:hi + 1])]
    for s, item in enumerate(rest):
        child[(hi + 1 + s) % n] = item
    return np.array(child)


# --- the operators -------------------------------------------------------------------------------
def test_jump_indices_find_the_first_unvisited_item_both_ways():
    """Jump indices find the first unvisited item both ways."""
    rng = np.random.default_rng(0)
    for n in (2, 3, 9, 40):
        parents = np.array([rng.permutation(n) for _ in range(3)])
        jumps = JumpIndices(parents)
        visited = np.zeros((3, n), bool)
        orders = np.array([rng.permutation(n) for _ in range(3)])
        for t in range(n):
            items = orders[:, t]
            visited[np.arange(3), items] = True
            after, before = jumps.visit(items)
            for r in range(3):
                assert (after[r], before[r]) == plain_neighbours(parents[r], visited[r], items[r])


@pytest.mark.parametrize("seed", range(6))
def test_bcscx_and_arx_equal_their_definitions(seed):
    """BCSCX and ARX equal their definitions."""
    rng = np.random.default_rng(seed)
    tsp = small_tsp(12 + seed, seed=seed)
    n = tsp.n
    dist = tsp.matrix.astype(np.int64)
    p0, p1 = np.array([rng.permutation(n) for _ in range(2)]), np.array([rng.permutation(n) for _ in range(2)])
    lo, hi = np.array([2, 5]), np.array([7, n - 1])
    bcscx = construct(p0, p1, tsp.dist, np.full((2, n - 1), 2, np.int8))
    for first in (0, 1):
        arx = construct(p0, p1, tsp.dist, arx_privilege(2, n, np.array([first, first]), lo, hi))
        for r in range(2):
            who = (lambda k, r=r: 1 - first if lo[r] <= k < hi[r] else first)
            assert np.array_equal(arx[r], plain_child(p0[r], p1[r], dist, who))
    for r in range(2):
        assert np.array_equal(bcscx[r], plain_child(p0[r], p1[r], dist, lambda k: 2))


@pytest.mark.parametrize("seed", range(6))
def test_scx_equals_its_definition(seed):
    """SCX equals Kang et al.'s statement of it, the template's fallback and the ties included
    (a matrix with few distinct lengths makes ties common)."""
    rng = np.random.default_rng(seed)
    n = 5 + 4 * seed
    dist = rng.integers(1, 4, (n, n))
    dist = dist + dist.T
    tsp = TSP(matrix=dist)
    p0, p1 = np.array([rng.permutation(n) for _ in range(4)]), np.array([rng.permutation(n) for _ in range(4)])
    children = sequential_crossover(p0, p1, tsp.dist)
    for r in range(4):
        assert np.array_equal(children[r], plain_scx(p0[r], p1[r], tsp.matrix))
        assert is_permutation(children[r])


def test_order_crossover_equals_its_definition():
    """Order crossover equals its definition."""
    rng = np.random.default_rng(2)
    for n in (4, 9, 25):
        p0, p1 = np.array([rng.permutation(n) for _ in range(5)]), np.array([rng.permutation(n) for _ in range(5)])
        a, b = rng.integers(0, n, 5), rng.integers(0, n, 5)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        children = order_crossover(p0, p1, lo, hi)
        for r in range(5):
            assert np.array_equal(children[r], plain_ox(p0[r], p1[r], lo[r], hi[r]))


# --- the generation ------------------------------------------------------------------------------
def test_children_sit_where_the_paper_puts_them():
    """Parents i (even) and i + 1 of each group: the child at i/2 + g/2, the second at i/2 + 3g/4."""
    for crossover in ("bcscx", "arx", "scx"):
        slots, first, role = children_of(Breeding(crossover, genes=64, groups=2))
        g = 32
        for s, f, r in zip(slots, first, role):
            group, i = divmod(int(f), g)
            assert i % 2 == 0 and i < g // 2
            assert s == group * g + i // 2 + (g // 2 if r == 0 else 3 * g // 4)
        assert len(slots) == (32 if crossover == "arx" else 16)


def test_fixed_rivals_keep_the_better_at_the_front_and_ties_stay():
    """Fixed rivals keep the better at the front and ties stay."""
    genetic = CpuGenetic(Breeding("ox", genes=16, groups=2), 5)
    rng = np.random.default_rng(3)
    genes = np.array([rng.permutation(5) for _ in range(16)], dtype=np.int32)
    values = rng.integers(0, 4, 16).astype(float)
    genetic.load(genes, values)
    genetic.compete()
    for group in range(2):
        for j in range(4):
            slot, rival = group * 8 + j, group * 8 + j + 4
            expected = rival if values[rival] < values[slot] else slot
            assert np.array_equal(genetic.genes[slot], genes[expected]) and genetic.values[slot] == values[expected]


@pytest.mark.parametrize("crossover", ["bcscx", "arx", "hybrid", "scx", "ox"])
def test_every_child_is_a_permutation_and_the_mutation_rate_holds(crossover):
    """Every child is a permutation and the mutation rate holds."""
    tsp = small_tsp(25)
    b = Breeding(crossover, mutation=0.3, genes=256, groups=2)
    genetic = CpuGenetic(b, tsp.n, tsp.dist)
    rng = np.random.default_rng(4)
    genetic.load(np.array([rng.permutation(25) for _ in range(256)], dtype=np.int32))
    slots = genetic.breed(7, 0)
    assert is_permutation(genetic.genes) and len(set(slots)) == len(slots)
    before = genetic.genes[slots].copy()
    mutated = 0
    for generation in range(1, 6):
        again = CpuGenetic(b, tsp.n, tsp.dist)
        again.load(genetic.genes.copy(), genetic.values.copy())
        plain = CpuGenetic(Breeding(crossover, mutation=0.0, genes=256, groups=2), tsp.n, tsp.dist)
        plain.load(genetic.genes.copy(), genetic.values.copy())
        again.breed(7, generation), plain.breed(7, generation)
        mutated += int((again.genes[slots] != plain.genes[slots]).any(axis=1).sum())
        diff = again.genes[slots] != plain.genes[slots]
        for row in np.flatnonzero(diff.any(axis=1)):          # a mutation reverses one segment
            where = np.flatnonzero(diff[row])
            segment = slice(where[0], where[-1] + 1)
            assert np.array_equal(again.genes[slots][row][segment], plain.genes[slots][row][segment][::-1])
    trials = 5 * len(slots)
    assert abs(mutated - 0.3 * trials) < 4 * np.sqrt(0.3 * 0.7 * trials) + 0.05 * trials   # short reversals can be no-ops
    assert before.shape == genetic.genes[slots].shape


def test_migration_sends_each_groups_best_to_another_groups_worst():
    """Migration sends each groups best to another groups worst."""
    b = Breeding("ox", genes=32, groups=4)
    values = np.random.default_rng(5).permutation(32).astype(float)
    for generation in range(20):
        dst, src = migration(values, b, 9, generation)
        for d, s in zip(dst, src):
            assert d // 8 != s // 8
            assert values[s] == values[(s // 8) * 8:(s // 8) * 8 + 8].min()
            assert values[d] == values[(d // 8) * 8:(d // 8) * 8 + 8].max()


def test_host_tour_lengths_are_the_problems_fitness():
    """Host tour lengths are the problems fitness."""
    tsp = small_tsp(40)
    genetic = CpuGenetic(Breeding("hybrid", genes=8), tsp.n, tsp.dist)
    tours = np.array([np.random.default_rng(k).permutation(40) for k in range(8)], dtype=np.int32)
    genetic.load(tours)
    assert np.array_equal(genetic.values, [tsp.fitness(t) for t in tours])


# --- whole runs ----------------------------------------------------------------------------------
def test_memetic_ga_reaches_berlin52_within_2_percent_in_seconds(berlin52):
    """Memetic GA reaches berlin52 within 2 percent in seconds."""
    result = GeneticAlgorithm(berlin52, genes=32, local_search="auto", backend="cpu", seed=0).run(
        seconds=5, target=berlin52.best_known)
    assert result.fitness <= 1.02 * berlin52.best_known and is_permutation(result.solution)
    assert result.fitness == berlin52.fitness(result.solution)


def test_plain_ga_improves_on_random_tours_every_crossover(berlin52):
    """Plain GA improves on random tours every crossover."""
    for crossover in ("bcscx", "arx", "hybrid", "scx", "ox"):
        result = GeneticAlgorithm(berlin52, genes=128, crossover=crossover, backend="cpu", seed=1).run(60)
        assert result.history[0] > 2.5 * berlin52.best_known > result.fitness / 1.25 or crossover == "ox"
        assert result.fitness < result.history[0]


def test_qap_gets_order_crossover_and_a_memetic_optimum(nug12):
    """QAP gets order crossover and a memetic optimum."""
    ga = GeneticAlgorithm(nug12, genes=32, local_search="auto", backend="cpu", seed=0)
    assert ga.breeding.crossover == "ox"
    result = ga.run(50, target=nug12.best_known)
    assert result.fitness == nug12.best_known and result.status == "target"


def test_seeded_runs_are_reproducible_and_seeds_differ(berlin52):
    """Seeded runs are reproducible and seeds differ."""
    runs = [GeneticAlgorithm(berlin52, genes=64, groups=2, exchange_every=2, backend="cpu", seed=s).run(15)
            for s in (4, 4, 5)]
    assert np.array_equal(runs[0].solution, runs[1].solution) and np.array_equal(runs[0].history, runs[1].history)
    assert not np.array_equal(runs[0].history, runs[2].history)


def test_callbacks_budgets_and_ctrl_c(berlin52):
    """Callbacks budgets and ctrl c."""
    seen = []

    def stop_at_four(state):
        seen.append(state.iteration)
        if state.iteration == 4:
            raise KeyboardInterrupt

    result = GeneticAlgorithm(berlin52, genes=16, backend="cpu", seed=0, callbacks=stop_at_four).run(100)
    assert result.status == "interrupted" and seen == [1, 2, 3, 4] and is_permutation(result.solution)
    assert GeneticAlgorithm(berlin52, genes=16, backend="cpu", seed=0).run(3).iterations == 3
    with pytest.raises(ValueError, match="budget|iterations|seconds"):
        GeneticAlgorithm(berlin52, genes=16, backend="cpu").run()


def test_initial_genes_given_or_from_the_problem(berlin52):
    """Given genes start the population (the first is the run's start); "problem" starts from the
    problem's start solution (nearest neighbour for a TSP)."""
    genes = np.array([np.random.default_rng(k).permutation(52) for k in range(8)])
    result = GeneticAlgorithm(berlin52, genes=8, initial=genes, backend="cpu", seed=0).run(1)
    # the first gene is the run's start (recorded before the set-up), then the best of them all
    assert result.history[0] == berlin52.fitness(genes[0])
    assert min(result.history[:2]) == min(berlin52.fitness(g) for g in genes)
    ga = GeneticAlgorithm(berlin52, genes=8, initial="problem", backend="cpu", seed=0)
    assert ga.run(1).history[0] < 1.5 * berlin52.best_known


def test_one_initial_solution_seeds_the_population_with_kicked_copies(berlin52):
    """``initial`` = one tour: it is the first gene and the run's start, the others are copies of it
    with one random kick each (Problem.perturb), so they differ from it and from random tours."""
    tour = np.random.default_rng(5).permutation(52)
    ga = GeneticAlgorithm(berlin52, genes=8, initial=tour, backend="cpu", seed=0)
    result = ga.run(iterations=0)
    assert result.history[0] == berlin52.fitness(tour) and np.array_equal(result.solution, tour)
    blocks = np.concatenate(list(GeneticAlgorithm(berlin52, genes=8, initial=tour, seed=0)._gene_blocks()))
    assert blocks.shape == (8, 52) and np.array_equal(blocks[0], tour)
    kicked = [int((g != tour).sum()) for g in blocks[1:]]
    assert all(0 < k < 52 for k in kicked)                 # a kick, not a fresh random tour


class Bits(Problem):
    def __init__(self):
        super().__init__(Binary(8), BitFlip())

    def evaluate(self, x):
        return float(x.sum())


def test_bad_settings_are_named(berlin52, nug12):
    """Bad settings are named."""
    with pytest.raises(ValueError, match="multiple of 4 x `groups`"):
        GeneticAlgorithm(berlin52, genes=24, groups=4)
    with pytest.raises(ValueError, match="edge distance"):
        GeneticAlgorithm(nug12, crossover="arx")
    with pytest.raises(ValueError, match="`crossover`"):
        GeneticAlgorithm(berlin52, crossover="pmx")
    with pytest.raises(ValueError, match="`mutation`"):
        GeneticAlgorithm(berlin52, mutation=1.5)
    with pytest.raises(ValueError, match=r"`initial` must be one solution of 52 or have shape \(16, 52\)"):
        GeneticAlgorithm(berlin52, genes=16, initial=np.zeros((3, 52), int))
    with pytest.raises(ValueError, match="`initial` row 0"):
        GeneticAlgorithm(berlin52, genes=4, initial=np.zeros((4, 52), int))
    with pytest.raises(TypeError, match="permutations"):
        GeneticAlgorithm(Bits())
    with pytest.raises(ValueError, match="`exchange_every`"):
        GeneticAlgorithm(berlin52, exchange_every=0)
    with pytest.raises(ValueError, match="`lanes`"):
        GeneticAlgorithm(berlin52, lanes=8)


# --- the GPU kernels -----------------------------------------------------------------------------
def distances():
    """An EdgeDistance of each kind the TSP gives: integer coordinates, real ones, a matrix."""
    coords = small_tsp(20)
    real = TSP(np.random.default_rng(1).uniform(0, 100, (20, 2)))
    matrix = TSP(matrix=coords.matrix)
    return {"int-coords": coords, "real-coords": real, "matrix": matrix}


RENDERS = [(dict(CROSSOVER=c, LANES=lanes), kind) for c, lanes, kind in itertools.product(
    ["bcscx", "arx", "hybrid", "scx", "ox"], [1, 32], ["int-coords", "real-coords", "matrix", "none"])
    if kind != "none" or c == "ox"]       # the constructive crossovers need a distance


@pytest.mark.nvcc
@pytest.mark.parametrize("options,kind", RENDERS, ids=lambda o: str(o.get("CROSSOVER", "")) + str(o.get("LANES", ""))
                         if isinstance(o, dict) else o)
def test_genetic_kernels_compile_for_sm90(options, kind):
    """Genetic kernels compile for sm90."""
    device = None if kind == "none" else distances()[kind].edge_distance().device_source()
    assert nvcc_compile(render_skeleton("genetic.cu.j2", DISTANCE=device, **options))


def gpu_breeder(breeding, n, distance):
    from lsmgpu.backends import resolve
    return genetic_for(resolve("cuda"), breeding, n, distance)


@pytest.mark.gpu
@pytest.mark.parametrize("crossover,lanes", list(itertools.product(["bcscx", "arx", "hybrid", "scx", "ox"], [1, 32])))
@pytest.mark.parametrize("kind", ["int-coords", "real-coords", "matrix"])
def test_gpu_breeds_the_hosts_children(crossover, lanes, kind):
    """Same draws, same children, same lengths: generation after generation, exactly."""
    problem = distances()[kind]
    distance = problem.edge_distance()
    b = Breeding(crossover, mutation=0.4, genes=64, groups=2, lanes=lanes)
    rng = np.random.default_rng(6)
    genes = np.array([rng.permutation(problem.n) for _ in range(64)], dtype=np.int32)
    host = CpuGenetic(b, problem.n, None if crossover == "ox" else distance.between)
    gpu = gpu_breeder(b, problem.n, None if crossover == "ox" else distance)
    try:
        values = np.array([problem.fitness(g) for g in genes], dtype=float)
        host.load(genes, values)
        gpu.load(genes, values)
        for generation in range(4):
            slots = host.breed(21, generation)
            assert np.array_equal(gpu.breed(21, generation), slots)
            if crossover == "ox":           # lengths from the host, as the search does
                lengths = [problem.fitness(x) for x in host.genes[slots]]
                host.set_rows(slots, None, lengths)
                gpu.set_rows(slots, None, lengths)
            assert np.array_equal(gpu.rows(np.arange(64)), host.genes)
            assert np.array_equal(gpu.value_array(), host.values)
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_lengths_and_row_copies_equal_the_hosts():
    """GPU lengths and row copies equal the hosts."""
    problem = distances()["int-coords"]
    b = Breeding("hybrid", genes=16, groups=4)
    gpu = gpu_breeder(b, problem.n, problem.edge_distance())
    try:
        genes = np.array([np.random.default_rng(k).permutation(problem.n) for k in range(16)], dtype=np.int32)
        gpu.load(genes)
        assert np.array_equal(gpu.value_array(), [problem.fitness(g) for g in genes])
        host = CpuGenetic(b, problem.n, problem.dist)
        host.load(genes)
        host.copy_rows([3, 5, 3], [1, 3, 7]), gpu.copy_rows([3, 5, 3], [1, 3, 7])
        assert np.array_equal(gpu.rows(range(16)), host.genes) and np.array_equal(gpu.value_array(), host.values)
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_runs_are_reproducible_and_memetic_on_kroa100():
    """GPU runs are reproducible and memetic on kroa100."""
    tsp = TSP.from_file(TSP.shipped("kroA100"))
    runs = [GeneticAlgorithm(tsp, genes=256, groups=4, backend="cuda", seed=3).run(30) for _ in range(2)]
    assert np.array_equal(runs[0].solution, runs[1].solution) and runs[0].backend == "cuda"
    cpu = GeneticAlgorithm(tsp, genes=256, groups=4, backend="cpu", seed=3).run(30)
    assert np.array_equal(cpu.solution, runs[0].solution)
    memetic = GeneticAlgorithm(tsp, genes=64, local_search="auto", backend="cuda", seed=0).run(30, target=tsp.best_known)
    assert memetic.fitness <= 1.01 * tsp.best_known


def test_initial_2opt_genes_are_the_random_genes_descended():
    """initial="2opt" (Kang et al.'s preprocessing): the first genes are the seeded random genes,
    each descended by don't-look 2-opt; no candidate 2-opt move improves any of them, and their
    values are their lengths. A QAP's are swap local optima."""
    from lsmgpu.backends.dontlook import check_city
    from lsmgpu.problems import QAP
    from lsmgpu.search import DontLookDescent
    problem = TSP.from_file(TSP.shipped("kroA100"))
    every = np.arange(16)
    searches = {kind: GeneticAlgorithm(problem, genes=16, seed=5, backend="cpu", initial=kind)
                for kind in ("random", "2opt")}
    for search in searches.values():
        search.start(1)
    drawn, got = (searches[k].breeder.rows(every) for k in ("random", "2opt"))
    rules = DontLookDescent(segment=0).bound(problem)
    rows = DontLookDescent(segment=0).population(searches["2opt"].backend, problem, 16, None)
    rows.load(drawn)
    rows.descend(np.ones(16, bool))
    in_order = lambda genes: genes[np.lexsort(genes.T[::-1])]                   # noqa: E731 (the breeder orders its slots)
    assert np.array_equal(in_order(got), in_order(rows.solutions()))
    assert np.array_equal(searches["2opt"].breeder.value_array(), [problem.evaluate(x) for x in got])
    between = problem.edge_distance().between
    for x in got.astype(np.int64):
        pos = np.empty_like(x)
        pos[x] = np.arange(len(x))
        assert all(check_city(c, x, pos, rules, between) is None for c in range(problem.n))
    qap = QAP.from_file(QAP.shipped("nug12"))
    search = GeneticAlgorithm(qap, genes=8, seed=1, backend="cpu", initial="2opt")
    search.start(1)
    moves = qap.neighbourhood.decode(np.arange(qap.neighbourhood.size))
    for x in search.breeder.rows(np.arange(8)):
        assert np.all(qap.delta(x, moves) >= 0)


@pytest.mark.gpu
def test_gpu_initial_2opt_equals_the_cpu():
    """The GPU's descended first genes and the seeded run from them equal the CPU's."""
    problem = TSP.from_file(TSP.shipped("kroA100"))
    runs = [GeneticAlgorithm(problem, genes=32, seed=2, backend=b, initial="2opt").run(10) for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)
    assert np.array_equal(runs[0].history, runs[1].history)
