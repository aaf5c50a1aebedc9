"""The ant colonies: constructions against the selection rules' definitions (chi-square on a fixed
pheromone state), the visited sets against a set, the selective memory against a dictionary
model, the pheromone updates against NumPy, whole runs (quality, seeds, budgets, Ctrl-C, errors);
on the GPU, the kernels against the host reference."""
import itertools
import time
from collections import OrderedDict

import numpy as np
import pytest
from scipy.stats import chisquare

from lsmgpu import AntColonySystem, MaxMinAntSystem, Problem
from lsmgpu.backends.colony import Construction, CpuColony, colony_for
from lsmgpu.backends.pheromone import MatrixPheromone, SelectivePheromone, update_value
from lsmgpu.backends.visited import TABUS
from lsmgpu.encodings import Binary, Permutation
from lsmgpu.cubins import nvcc_compile
from lsmgpu.kernels import render_skeleton
from lsmgpu.neighbourhoods import Swap, BitFlip
from lsmgpu.problem import ColonyModel
from lsmgpu.problems import QAP, TSP

VARIANTS = list(itertools.product(["wrs", "roulette"], ["bt", "lc", "ct"], [None, 6]))


def small_tsp(n=30, seed=3):
    return TSP(np.round(np.random.default_rng(seed).uniform(0, 1000, (n, 2))), name=f"tsp{n}")


def is_permutation(x):
    return np.array_equal(np.sort(x, axis=-1), np.broadcast_to(np.arange(x.shape[-1]), x.shape))


# --- the visited sets -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(TABUS))
def test_visited_sets_equal_a_set(name):
    """After every mark, ``visited`` and the listed unvisited items equal a Python set's."""
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 33):
        orders = np.array([rng.permutation(n) for _ in range(4)])
        tabu = TABUS[name](4, n)
        everyone = np.tile(np.arange(n), (4, 1))
        for step in range(n):
            tabu.mark(orders[:, step])
            for ant in range(4):
                seen = set(orders[ant, :step + 1].tolist())
                assert set(tabu.unvisited()[ant].tolist()) == set(range(n)) - seen
                assert tabu.visited(everyone)[ant].tolist() == [i in seen for i in range(n)]


def test_compact_tabu_is_one_array_and_matches_the_papers_check():
    """CT keeps one n-entry array; an item u is visited exactly when entries[u] > u."""
    tabu = TABUS["ct"](1, 8)
    for u in (2, 5, 7, 0):
        tabu.mark(np.array([u]))
    assert tabu.entries.shape == (1, 8)
    assert [bool(tabu.entries[0, u] > u) for u in range(8)] == [u in (0, 2, 5, 7) for u in range(8)]


# --- pheromone memories ---------------------------------------------------------------------------
def test_matrix_update_applies_each_occurrence_in_float32():
    """Matrix update applies each occurrence in float32."""
    memory = MatrixPheromone(5, 0.5)
    rows, items = np.array([1, 1, 2, 1]), np.array([3, 3, 4, 3])
    memory.update(rows, items, 0.9, 0.01)
    expected = np.float32(0.5)
    for _ in range(3):
        expected = np.float32(np.float32(expected * np.float32(0.9)) + np.float32(0.01))
    assert memory.tau[1, 3] == expected
    assert memory.tau[2, 4] == update_value(np.float32(0.5), 0.9, 0.01)
    assert memory.tau[0, 0] == np.float32(0.5)


def test_selective_memory_equals_a_dictionary_model():
    """Random updates: the SPM reads as a per-row ordered dict holding the `slots` most recently
    added items (an update of a held item keeps its place), tau_min elsewhere."""
    rng = np.random.default_rng(7)
    n, slots, tau_min = 12, 3, 0.25
    memory = SelectivePheromone(n, tau_min, slots)
    model = [OrderedDict() for _ in range(n)]
    for _ in range(400):
        row, item = int(rng.integers(n)), int(rng.integers(n))
        keep, add = float(rng.uniform(0.5, 1)), float(rng.uniform(0, 0.1))
        memory.update(np.array([row]), np.array([item]), keep, add)
        record = model[row]
        if item in record:
            record[item] = update_value(record[item], keep, add)
        else:
            if len(record) == slots:
                record.popitem(last=False)
            record[item] = update_value(np.float32(tau_min), keep, add)
        dense = np.full((n, n), np.float32(tau_min), dtype=np.float32)
        for r, rec in enumerate(model):
            for i, tau in rec.items():
                dense[r, i] = tau
        assert np.array_equal(memory.matrix(), dense)
    rows = rng.integers(n, size=20)
    items = rng.integers(n, size=20)
    assert np.array_equal(memory.values(rows, items), memory.matrix()[rows, items])
    before = memory.matrix()
    free = next(i for i in range(n) if i not in model[0])
    memory.update(np.array([0]), np.array([free]), 0.9, 0.1 * tau_min, insert=False)   # a local update
    assert np.array_equal(memory.matrix(), before)


# --- construction: permutations and the choice rules ----------------------------------------------
@pytest.mark.parametrize("selection,tabu,candidates", VARIANTS)
def test_every_constructed_tour_and_assignment_is_a_permutation(selection, tabu, candidates):
    """Every constructed tour and assignment is a permutation."""
    tsp, qap = small_tsp(), QAP.from_file(QAP.shipped("tai12a"))
    for local in ("none", "atomic"):
        for memory in ("matrix", "spm"):
            c = Construction(selection=selection, tabu=tabu, q0=0.3, local_update=local, memory=memory, tau0=1e-4)
            tours = CpuColony(tsp.colony_model(candidates), c, tsp.n).construct(5, 2, np.arange(20) % tsp.n)
            assert is_permutation(tours) and np.array_equal(tours[:, 0], np.arange(20) % tsp.n)
            orders = np.array([np.random.default_rng(k).permutation(12) for k in range(9)])
            c = Construction(kind="assignment", selection=selection, tabu=tabu, local_update=local, memory=memory)
            assert is_permutation(CpuColony(qap.colony_model(), c, 12).construct(5, 2, orders))


def first_choices(construction, model, tau, ants=40_000, backend="cpu"):
    """The item every ant picks after item 0 (one step of the rule on a fixed pheromone state)."""
    n = model.heuristic.shape[0]
    if backend == "cpu":
        colony = CpuColony(model, construction, n)
        colony.pheromone.tau[:] = tau
        return colony.construct(11, 0, np.zeros(ants, np.int64))[:, 1]
    from lsmgpu.backends.cuda.driver import cuda
    colony = gpu_colony(model, construction, n, ants)
    try:
        cuda.memcpy_htod(colony.tau, np.ascontiguousarray(tau, dtype=np.float32))
        return colony.construct(11, 0, np.zeros(ants, np.int64))[:, 1]
    finally:
        colony.close()


BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def state(n=7, seed=2):
    rng = np.random.default_rng(seed)
    eta = rng.uniform(0.2, 1.0, (n, n))
    tau = rng.uniform(0.1, 1.0, (n, n)).astype(np.float32)
    return eta, tau


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("selection", ["wrs", "roulette"])
@pytest.mark.parametrize("alpha,beta", [(1.0, 2.0), (0.7, 3.0)])
def test_choice_frequencies_follow_the_mmas_probabilities(selection, alpha, beta, backend):
    """p(j) = tau^alpha eta^beta / sum over the unvisited (MMAS paper eq. 1): chi-square, both
    node selections (reservoir sampling draws the roulette's distribution)."""
    eta, tau = state()
    c = Construction(selection=selection, alpha=alpha, beta=beta)
    got = np.bincount(first_choices(c, ColonyModel("successor", eta), tau, backend=backend), minlength=7)[1:]
    w = tau[0, 1:].astype(np.float64) ** alpha * eta[0, 1:] ** beta
    assert chisquare(got, w / w.sum() * got.sum()).pvalue > 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("selection", ["wrs", "roulette"])
def test_choice_frequencies_follow_acs_rules(selection, backend):
    """ACS (formulas (1)-(2)): the largest tau eta^beta with probability q0, else the roulette."""
    eta, tau = state()
    q0, beta = 0.6, 3.0
    got = np.bincount(first_choices(Construction(selection=selection, q0=q0, beta=beta),
                                    ColonyModel("successor", eta), tau, backend=backend), minlength=7)[1:]
    w = tau[0, 1:].astype(np.float64) * eta[0, 1:] ** beta
    p = (1 - q0) * w / w.sum()
    p[np.argmax(w)] += q0
    assert chisquare(got, p * got.sum()).pvalue > 1e-3


def test_candidate_list_bounds_the_choice_and_falls_back_to_the_best_of_the_rest():
    """With a candidate list the first choice is among the list (probabilities over it); a
    list whose items are all visited gives the unvisited item of largest weight."""
    eta, tau = state(n=9)
    cand = np.tile(np.array([[1, 2, 3]], np.int32), (9, 1))
    model = ColonyModel("successor", eta, cand)
    got = np.bincount(first_choices(Construction(), model, tau), minlength=9)
    assert got[4:].sum() == 0
    w = tau[0, 1:4] * eta[0, 1:4] ** 2.0
    assert chisquare(got[1:4], w / w.sum() * got.sum()).pvalue > 1e-3
    tours = CpuColony(model, Construction(), 9).construct(3, 0, np.zeros(50, np.int64))
    colony = CpuColony(model, Construction(), 9)
    for tour in tours:                     # steps after the list ran out take the best weight left
        for t in range(4, 8):
            rest = np.setdiff1d(np.arange(9), tour[:t])
            prev = tour[t - 1]
            weights = colony.pheromone.tau[prev, rest] * colony.eta_beta[prev, rest]
            if np.isin(cand[prev], tour[:t]).all():
                assert tour[t] == rest[np.argmax(weights)]


def test_acs_local_update_equals_the_update_applied_once_per_traversal():
    """ACS's local update (period 1): an edge's tau is tau0 moved towards tau0 once per ant that
    took it, both directions; the closing edge included."""
    tsp = small_tsp(12)
    c = Construction(q0=0.5, local_update="atomic", xi=0.1, tau0=0.002)
    colony = CpuColony(tsp.colony_model(None), c, tsp.n)
    colony.pheromone.tau[:] = np.float32(0.01)
    tours = colony.construct(1, 0, np.arange(12))
    reference = MatrixPheromone(tsp.n, 0.01)
    for k in range(12):
        rows, items = CpuColony(tsp.colony_model(None), c, tsp.n).cells(tours[k])
        reference.update(rows, items, 0.9, 0.1 * 0.002)
    assert np.array_equal(colony.pheromone.tau, reference.tau)


# --- whole runs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["eil51", "berlin52"])
@pytest.mark.parametrize("colony", [MaxMinAntSystem, AntColonySystem])
def test_colonies_with_local_search_reach_the_optimum(name, colony):
    """Colonies with local search reach the optimum."""
    tsp = TSP.from_file(TSP.shipped(name))
    result = colony(tsp, local_search="auto", backend="cpu", seed=0).run(seconds=20, target=tsp.best_known)
    assert result.status == "target" and result.fitness == tsp.best_known
    assert is_permutation(result.solution) and tsp.evaluate(result.solution) == result.fitness


@pytest.mark.parametrize("colony", [MaxMinAntSystem, AntColonySystem])
def test_plain_colonies_improve_and_are_reproducible(colony):
    """Plain colonies improve and are reproducible."""
    tsp = TSP.from_file(TSP.shipped("eil51"))
    runs = [colony(tsp, backend="cpu", seed=4, ants=20).run(iterations=30) for _ in range(2)]
    assert np.array_equal(runs[0].solution, runs[1].solution)
    assert list(runs[0].history) == list(runs[1].history)
    assert runs[0].history[-1] < runs[0].history[0]          # better than the nearest-neighbour start
    assert runs[0].fitness < 1.15 * tsp.best_known
    assert runs[0].iterations == 30 and runs[0].status == "iterations"


def test_mmas_on_the_qap_with_a_swap_descent():
    """MMAS on the QAP with a swap descent."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    result = MaxMinAntSystem(qap, local_search=Swap(), backend="cpu", seed=1).run(seconds=10, target=qap.best_known)
    assert result.fitness == qap.best_known


def test_mmas_keeps_tau_within_its_bounds_and_restarts():
    """MMAS keeps tau within its bounds and restarts."""
    tsp = small_tsp(20)
    mmas = MaxMinAntSystem(tsp, backend="cpu", seed=0, ants=10)
    mmas.RESTART_AFTER = 0
    mmas.run(iterations=300)
    tau = mmas.colony.matrix()
    assert tau.min() >= np.float32(mmas.tau_min) and tau.max() <= np.float32(mmas.tau_max)
    assert mmas.restart_iteration > 0                        # the branching factor fell: restarted


def test_callbacks_ctrl_c_and_budgets():
    """Callbacks ctrl c and budgets."""
    tsp = TSP.from_file(TSP.shipped("eil51"))
    seen = []

    def stop_at_five(state):
        seen.append(state.iteration)
        if state.iteration == 5:
            raise KeyboardInterrupt

    result = MaxMinAntSystem(tsp, backend="cpu", seed=0, callbacks=stop_at_five).run(iterations=50)
    assert result.status == "interrupted" and seen == [1, 2, 3, 4, 5] and is_permutation(result.solution)
    result = AntColonySystem(tsp, backend="cpu", seed=0, callbacks=lambda s: s.iteration >= 3).run(iterations=50)
    assert result.status == "callback" and result.iterations == 3
    assert AntColonySystem(tsp, backend="cpu", seed=0).run(stagnation=5).status == "stagnation"
    result = AntColonySystem(tsp, backend="cpu", seed=0).run(seconds=0.5)
    assert result.status == "seconds"
    with pytest.raises(ValueError, match="budget"):
        AntColonySystem(tsp, backend="cpu").run()


class Ordering(Problem):
    """A user's permutation problem: place n jobs, cost = sum of position x weight (assignment)."""

    def __init__(self, weights):
        self.weights = np.asarray(weights, float)
        super().__init__(Permutation(len(weights)), Swap())

    def evaluate(self, x):
        return float((self.weights * (np.asarray(x) + 1)).sum())


def test_a_users_permutation_problem_gets_the_colonies_without_code():
    """A users permutation problem gets the colonies without code."""
    problem = Ordering(np.arange(1, 9))
    best = float((np.arange(1, 9) * np.arange(8, 0, -1)).sum())
    result = MaxMinAntSystem(problem, backend="cpu", seed=0, ants=32).run(iterations=300, target=best)
    assert result.fitness == best


class MaxOrdering(Ordering):
    maximize = True


@pytest.mark.parametrize("make,error,match", [
    (lambda: MaxMinAntSystem(MaxOrdering(np.ones(5)), backend="cpu"), ValueError, "maximises"),
    (lambda: AntColonySystem(_binary(), backend="cpu"), TypeError, "permutations"),
    (lambda: AntColonySystem(small_tsp(), candidates=40, backend="cpu"), ValueError, "candidates"),
    (lambda: AntColonySystem(small_tsp(), q0=1.5, backend="cpu"), ValueError, "q0"),
    (lambda: AntColonySystem(small_tsp(), memory="hash", backend="cpu"), ValueError, "memory"),
    (lambda: MaxMinAntSystem(small_tsp(), selection="dice", backend="cpu"), ValueError, "selection"),
    (lambda: MaxMinAntSystem(small_tsp(), tabu="set", backend="cpu"), ValueError, "tabu"),
    (lambda: MaxMinAntSystem(small_tsp(), rho=0, backend="cpu"), ValueError, "rho"),
    (lambda: MaxMinAntSystem(small_tsp(), p_best=1, backend="cpu"), ValueError, "p_best"),
    (lambda: MaxMinAntSystem(small_tsp(), ants=0, backend="cpu"), ValueError, "ants"),
    (lambda: MaxMinAntSystem(small_tsp(), alpha=float("nan"), backend="cpu"), ValueError, "alpha"),
    (lambda: MaxMinAntSystem(small_tsp(), local_search="yes", backend="cpu"), ValueError, "local_search"),
    (lambda: AntColonySystem(small_tsp(), warps=64, backend="cpu"), ValueError, "warps"),
])
def test_bad_options_are_named(make, error, match):
    """Bad options are named."""
    with pytest.raises(error, match=match):
        make()


def _binary():
    class Bits(Problem):
        def __init__(self):
            super().__init__(Binary(6), BitFlip())

        def evaluate(self, x):
            return float(x.sum() + 1)
    return Bits()


def test_colony_model_checks_its_arrays():
    """Colony model checks its arrays."""
    with pytest.raises(ValueError, match="heuristic"):
        ColonyModel("successor", np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="candidates"):
        ColonyModel("successor", None, np.zeros((3, 40), np.int32))
    with pytest.raises(ValueError, match="kind"):
        ColonyModel("tree")


# --- the kernels: compiled here, run on the GPU --------------------------------------------------
RENDERS = [dict(KIND="successor", SELECTION="wrs", TABU="ct", GREEDY=False, LOCAL_UPDATE="none", MEMORY="matrix",
                HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=True, SHARED_TABU=True, CHOICE=True),
           dict(KIND="successor", SELECTION="roulette", TABU="lc", GREEDY=True, LOCAL_UPDATE="none", MEMORY="matrix",
                HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=False, SHARED_TABU=True, CHOICE=True),
           dict(KIND="successor", SELECTION="roulette", TABU="lc", GREEDY=True, LOCAL_UPDATE="atomic",
                MEMORY="matrix", HAS_ETA=True, HAS_CAND=False, ALPHA_ONE=False, SHARED_TABU=False, CHOICE=False),
           dict(KIND="successor", SELECTION="roulette", TABU="bt", GREEDY=True, LOCAL_UPDATE="alt", MEMORY="spm",
                HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=True, SHARED_TABU=True, CHOICE=False),
           dict(KIND="assignment", SELECTION="wrs", TABU="bt", GREEDY=True, LOCAL_UPDATE="alt", MEMORY="spm",
                HAS_ETA=False, HAS_CAND=False, ALPHA_ONE=True, SHARED_TABU=True, CHOICE=False),
           dict(KIND="assignment", SELECTION="roulette", TABU="ct", GREEDY=False, LOCAL_UPDATE="none",
                MEMORY="matrix", HAS_ETA=False, HAS_CAND=False, ALPHA_ONE=False, SHARED_TABU=False, CHOICE=True),
           dict(KIND="successor", SELECTION="roulette", TABU="ct", GREEDY=False, LOCAL_UPDATE="none",
                MEMORY="matrix", HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=True, SHARED_TABU=True, CHOICE=True,
                SHARED_LISTS=True),
           dict(KIND="successor", SELECTION="wrs", TABU="bt", GREEDY=True, LOCAL_UPDATE="none", MEMORY="matrix",
                HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=False, SHARED_TABU=True, CHOICE=True, SHARED_LISTS=True),
           dict(KIND="successor", SELECTION="roulette", TABU="ct", GREEDY=True, LOCAL_UPDATE="step", MEMORY="matrix",
                HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=True, SHARED_TABU=False, CHOICE=False),
           dict(KIND="successor", SELECTION="wrs", TABU="lc", GREEDY=True, LOCAL_UPDATE="step", MEMORY="matrix",
                HAS_ETA=True, HAS_CAND=False, ALPHA_ONE=True, SHARED_TABU=False, CHOICE=False),
           dict(KIND="assignment", SELECTION="wrs", TABU="bt", GREEDY=False, LOCAL_UPDATE="step", MEMORY="matrix",
                HAS_ETA=False, HAS_CAND=False, ALPHA_ONE=True, SHARED_TABU=False, CHOICE=False),
           dict(KIND="successor", SELECTION="wrs", TABU="ct", GREEDY=True, LOCAL_UPDATE="atomic", MEMORY="spm",
                HAS_ETA=True, HAS_CAND=True, ALPHA_ONE=True, SHARED_TABU=True, CHOICE=False, LOCAL_INSERT=True)]


@pytest.mark.nvcc
@pytest.mark.parametrize("options", RENDERS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_colony_kernels_compile_for_sm90(options):
    """Colony kernels compile for sm90."""
    options = {"SHARED_LISTS": False, **options}
    assert nvcc_compile(render_skeleton("colony.cu.j2", SLOTS=8, LIST_ITEM="unsigned short", **options))
    if options["CHOICE"] and options["HAS_CAND"]:          # beyond 65,536 items
        assert nvcc_compile(render_skeleton("colony.cu.j2", SLOTS=8, LIST_ITEM="int", **options))


def gpu_colony(model, construction, n, ants):
    from lsmgpu.backends import resolve
    return colony_for(resolve("cuda"), model, construction, n, ants)


@pytest.mark.parametrize("ants,lists,tabu,sms,limit,want", [
    (1002, 192_384, 4008, 132, 232_448, 8),       # pr1002, cl 32, m = n on an H100: one wave of 126 blocks
    (1002, 192_384, 4008, 132, 200_000, 0),       # the lists fit, their ants' visited sets not
    (16, 192_384, 4008, 132, 232_448, 1),          # fewer ants than multiprocessors: an ant a block
    (100_000, 1_000, 100, 132, 232_448, 32),       # at most 1,024 threads
    (2392, 459_264, 9568, 132, 232_448, 0)])       # pr2392's lists do not fit
def test_ants_per_block_spread_the_ants_in_one_wave_where_the_lists_fit(ants, lists, tabu, sms, limit, want):
    """Ants per block spread the ants in one wave where the lists fit."""
    from lsmgpu.backends.cuda.colony import KERNEL_SHARED, ants_per_block, shared_list_bytes
    assert shared_list_bytes(1002, 32) == 192_384 and shared_list_bytes(70_000, 32) == 70_000 * 32 * 8
    got = ants_per_block(ants, lists, tabu, sms, limit)
    assert got == want
    if got:
        assert lists + got * tabu + KERNEL_SHARED <= limit and (got == 32 or -(-ants // got) <= sms)


@pytest.mark.gpu
@pytest.mark.parametrize("selection,tabu,candidates,share_lists",
                         [v + (share,) for v in VARIANTS for share in (True, False) if v[2] or share])
def test_gpu_builds_the_hosts_solutions(selection, tabu, candidates, share_lists, monkeypatch):
    """Same counter-based draws, same tours: exactly with reservoir sampling (each key computed
    alike) and with the roulette over a candidate list (the host sums in the warp's float order);
    the roulette over all unvisited items sums in another order on the GPU (runs of items per
    thread, in double), which may move a pick that falls within rounding of a boundary: at least
    95 % of the tours. MMAS's one-warp ants with candidate lists run several a block reading the
    lists from shared memory (301 ants: 3 a block on 132 multiprocessors, the last block's spare
    warps idle), or a block each reading them from global memory."""
    from lsmgpu.backends.cuda import colony as cuda_colony
    monkeypatch.setattr(cuda_colony, "SHARE_LISTS", share_lists)
    tsp = small_tsp(200)
    model = tsp.colony_model(candidates)
    ants = 301
    for q0 in (0.0, 0.4):
        c = Construction(selection=selection, tabu=tabu, q0=q0, beta=2.0)
        starts = np.arange(ants) % tsp.n
        cpu = CpuColony(model, c, tsp.n)
        rng = np.random.default_rng(0)
        tau = rng.uniform(0.1, 1.0, (tsp.n, tsp.n)).astype(np.float32)
        cpu.pheromone.tau[:] = tau
        gpu = gpu_colony(model, c, tsp.n, ants)
        try:
            from lsmgpu.backends.cuda.driver import cuda
            assert (gpu.per_block > 0) == (share_lists and candidates is not None)
            cuda.memcpy_htod(gpu.tau, tau)
            got, want = gpu.construct(99, 3, starts), cpu.construct(99, 3, starts)
        finally:
            gpu.close()
        assert is_permutation(got)
        same = (got == want).all(axis=1).mean()
        assert same == 1.0 if selection == "wrs" or candidates else same >= 0.95


@pytest.mark.gpu
@pytest.mark.parametrize("alpha", [1.0, 1.5])
def test_gpu_precomputed_weights_equal_the_hosts(alpha):
    """MMAS's ants read tau^alpha * eta^beta computed once a construction (n x n, and the n x k
    candidates as 2-byte items beside their weights): the host's float32 products, bit for bit with alpha 1; with another alpha
    within powf's error (CUDA's powf: 2 ulp; NumPy's: the C library's)."""
    from lsmgpu.backends.colony import weights_of
    from lsmgpu.backends.cuda.driver import cuda
    tsp = small_tsp(150)
    model = tsp.colony_model(12)
    c = Construction(alpha=alpha, beta=2.5)
    tau = np.random.default_rng(1).uniform(0.01, 1.0, (tsp.n, tsp.n)).astype(np.float32)
    gpu = gpu_colony(model, c, tsp.n, 32)
    try:
        assert gpu.precomputed
        cuda.memcpy_htod(gpu.tau, tau)
        gpu.construct(1, 0, np.arange(32))
        choice, items = np.empty_like(tau), np.empty(model.candidates.shape, np.uint16)
        listed = np.empty(model.candidates.shape, np.float32)
        cuda.memcpy_dtoh(choice, gpu.choice)
        cuda.memcpy_dtoh(items, gpu.cand_items)
        cuda.memcpy_dtoh(listed, gpu.cand_weights)
    finally:
        gpu.close()
    assert np.array_equal(items, model.candidates)
    want = weights_of(tau, CpuColony(model, c, tsp.n).eta_beta, alpha)
    listed_want = np.take_along_axis(want, model.candidates.astype(np.int64), axis=1)
    if alpha == 1.0:
        assert np.array_equal(choice, want) and np.array_equal(listed, listed_want)
    else:
        np.testing.assert_allclose(choice, want, rtol=1e-6)
        np.testing.assert_allclose(listed, listed_want, rtol=1e-6)
        assert np.array_equal(listed, np.take_along_axis(choice, model.candidates.astype(np.int64), axis=1))


@pytest.mark.gpu
@pytest.mark.parametrize("candidates", [None, 8])
def test_gpu_ties_go_to_the_lowest_item_as_on_the_host(candidates):
    """Every weight equal and q0 = 1 (always the largest weight): every step is a tie, which the
    warp and block maxima must break to the lowest item, as the host does."""
    n = 300
    cand = None if candidates is None else np.stack([(np.arange(n) + 7 * j + 1) % n for j in range(candidates)], 1)
    model = ColonyModel("successor", candidates=cand)
    c = Construction(q0=1.0, tau0=0.5)
    starts = np.arange(64) * 3
    gpu = gpu_colony(model, c, n, 64)
    try:
        got = gpu.construct(4, 0, starts)
    finally:
        gpu.close()
    assert np.array_equal(got, CpuColony(model, c, n).construct(4, 0, starts))


@pytest.mark.gpu
def test_gpu_assignments_equal_the_hosts():
    """GPU assignments equal the hosts."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    orders = np.array([np.random.default_rng(k).permutation(12) for k in range(64)])
    for selection in ("wrs", "roulette"):
        c = Construction(kind="assignment", selection=selection, tau0=0.01)
        gpu = gpu_colony(qap.colony_model(), c, 12, 64)
        try:
            got = gpu.construct(5, 1, orders)
        finally:
            gpu.close()
        assert np.array_equal(got, CpuColony(qap.colony_model(), c, 12).construct(5, 1, orders))


@pytest.mark.gpu
@pytest.mark.parametrize("memory", ["matrix", "spm"])
def test_gpu_pheromone_updates_equal_the_hosts(memory):
    """Deposit (both directions of every edge, in the host's order per row), evaporation and
    bounds: the same float32 bits."""
    tsp = small_tsp(50)
    model = tsp.colony_model(8)
    c = Construction(memory=memory, tau0=0.003)
    cpu, gpu = CpuColony(model, c, tsp.n), gpu_colony(model, c, tsp.n, 4)
    rng = np.random.default_rng(3)
    try:
        for k in range(30):
            tour = rng.permutation(tsp.n)
            keep, add = float(rng.uniform(0.5, 1)), float(rng.uniform(0, 0.01))
            cpu.deposit(tour, keep, add)
            gpu.deposit(tour, keep, add)
            if memory == "matrix" and k % 3 == 0:
                for colony in (cpu, gpu):
                    colony.evaporate(0.8)
                    colony.clamp(0.001, 0.004)
        assert np.array_equal(gpu.matrix(), cpu.matrix())
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_atomic_local_update_loses_nothing():
    """ACS-GPU's local update (atomic CAS): after a construction each edge's tau equals tau0's
    update applied once per traversal of the GPU's own tours (any order gives the same value)."""
    tsp = small_tsp(300)
    model = tsp.colony_model(16)
    c = Construction(q0=0.9, local_update="atomic", xi=0.1, tau0=0.01, beta=3.0)
    gpu = gpu_colony(model, c, tsp.n, 256)
    try:
        tours = gpu.construct(8, 0, np.zeros(256, np.int64))       # every ant from city 0: many shared edges
        got = gpu.matrix()
    finally:
        gpu.close()
    reference = CpuColony(model, c, tsp.n)
    for tour in tours:
        reference.pheromone.update(*reference.cells(tour), 0.9, 0.1 * 0.01)
    assert is_permutation(tours)
    assert np.array_equal(got, reference.pheromone.tau)


@pytest.mark.gpu
def test_gpu_alt_and_spm_local_updates_build_valid_tours():
    """GPU alt and SPM local updates build valid tours."""
    tsp = small_tsp(300)
    for memory, local in (("matrix", "alt"), ("spm", "alt"), ("spm", "atomic")):
        c = Construction(q0=0.9, local_update=local, memory=memory, xi=0.1, tau0=0.01, period=2)
        gpu = gpu_colony(tsp.colony_model(32), c, tsp.n, 64)
        try:
            assert is_permutation(gpu.construct(8, 0, np.arange(64)))
        finally:
            gpu.close()


@pytest.mark.gpu
def test_gpu_visited_set_in_global_memory():
    """An instance whose list-compression tabu exceeds the shared memory: scratch rows in global."""
    n = 30_000
    c = Construction(kind="assignment", tabu="lc", tau0=1.0)
    gpu = gpu_colony(ColonyModel("assignment"), c, n, 2)
    try:
        assert not gpu.shared_tabu
        orders = np.array([np.random.default_rng(k).permutation(n) for k in range(2)])
        assert is_permutation(gpu.construct(1, 0, orders))
    finally:
        gpu.close()


@pytest.mark.gpu
def test_gpu_mmas_runs_are_reproducible():
    """No atomics race in MMAS's kernels: a seed gives the same run (ACS's local updates race
    between unsynchronised ants, so its GPU runs are not bit-reproducible)."""
    tsp = TSP.from_file(TSP.shipped("kroA100"))
    runs = [MaxMinAntSystem(tsp, backend="cuda", seed=3, ants=64).run(iterations=20) for _ in range(2)]
    assert np.array_equal(runs[0].solution, runs[1].solution) and list(runs[0].history) == list(runs[1].history)


@pytest.mark.gpu
@pytest.mark.parametrize("colony", [MaxMinAntSystem, AntColonySystem])
def test_gpu_colonies_with_local_search(colony):
    """GPU colonies with local search."""
    tsp = TSP.from_file(TSP.shipped("kroA100"))
    result = colony(tsp, local_search="auto", backend="cuda", seed=0).run(seconds=20, target=tsp.best_known)
    assert result.backend == "cuda" and is_permutation(result.solution)
    assert result.fitness <= 1.01 * tsp.best_known


def test_no_iteration_starts_that_would_end_past_the_seconds(monkeypatch):
    """Iterations of 0.4 s and more, a 1 s budget: none starts that would end past it (the third
    would end at ~1.2 s), the run returns within its second (less an iteration's jitter)."""
    problem = TSP.from_file(TSP.shipped("berlin52"))
    colony = MaxMinAntSystem(problem, backend="cpu", seed=0)
    iterate = MaxMinAntSystem._iterate

    def slow(self):
        time.sleep(0.4)
        iterate(self)

    monkeypatch.setattr(MaxMinAntSystem, "_iterate", slow)
    result = colony.run(seconds=1.0)
    assert result.status == "seconds" and result.iterations in (1, 2)


def test_acs_gpu_step_mode_is_the_hosts_lock_step():
    """local_update="step" (ACS-GPU, a launch a construction step) needs the pheromone matrix, and
    on the host it is the lock step every local update already runs: the same tours and matrix as
    "atomic" there."""
    with pytest.raises(ValueError, match="memory='matrix'"):
        Construction(local_update="step", memory="spm")
    tsp = small_tsp(40)
    model = tsp.colony_model(8)
    built = {}
    for local in ("atomic", "step"):
        colony = CpuColony(model, Construction(q0=0.7, local_update=local, xi=0.1, tau0=0.01, period=3), tsp.n)
        built[local] = colony.construct(5, 2, np.arange(16) % tsp.n), colony.matrix()
    assert all(np.array_equal(a, b) for a, b in zip(built["atomic"], built["step"]))
    runs = [AntColonySystem(tsp, backend="cpu", seed=1, ants=8, local_update=local).run(iterations=5)
            for local in ("atomic", "step")]
    assert runs[0].fitness == runs[1].fitness and list(runs[0].history) == list(runs[1].history)


@pytest.mark.gpu
@pytest.mark.parametrize("selection,candidates,period", [("wrs", 8, 1), ("roulette", 8, 3), ("wrs", None, 2)])
def test_gpu_acs_step_mode_equals_the_host_exactly(selection, candidates, period):
    """ACS-GPU with the ants synchronised per step: the GPU's tours and pheromone matrix after a
    construction equal the host's lock step exactly (every ant reads the matrix of the steps before
    its own; the step's updates are atomic and their order does not change an edge's value), for
    tours and for assignments."""
    tsp = small_tsp(120)
    model = tsp.colony_model(candidates) if candidates else ColonyModel("successor", tsp.colony_model(8).heuristic)
    c = Construction(selection=selection, q0=0.6, local_update="step", xi=0.1, tau0=0.01, period=period, beta=3.0)
    starts = np.arange(48) % 5                         # shared start cities: many shared edges
    gpu = gpu_colony(model, c, tsp.n, 48)
    try:
        got, matrix = gpu.construct(9, 1, starts), gpu.matrix()
    finally:
        gpu.close()
    host = CpuColony(model, c, tsp.n)
    assert np.array_equal(got, host.construct(9, 1, starts)) and np.array_equal(matrix, host.matrix())
    qap = QAP.from_file(QAP.shipped("tai12a"))
    orders = np.array([np.random.default_rng(k).permutation(12) for k in range(32)])
    c = Construction(kind="assignment", local_update="step", xi=0.2, tau0=0.01, period=period)
    gpu = gpu_colony(qap.colony_model(), c, 12, 32)
    try:
        got, matrix = gpu.construct(3, 0, orders), gpu.matrix()
    finally:
        gpu.close()
    host = CpuColony(qap.colony_model(), c, 12)
    assert np.array_equal(got, host.construct(3, 0, orders)) and np.array_equal(matrix, host.matrix())


@pytest.mark.gpu
def test_gpu_acs_step_runs_equal_the_cpus():
    """A seeded AntColonySystem with local_update="step" runs the same on the GPU as on the CPU."""
    tsp = TSP.from_file(TSP.shipped("kroA100"))
    runs = [AntColonySystem(tsp, backend=b, seed=4, ants=32, local_update="step").run(iterations=8)
            for b in ("cpu", "cuda")]
    assert runs[0].fitness == runs[1].fitness and np.array_equal(runs[0].solution, runs[1].solution)


def test_fig5_local_updates_store_the_edges_the_ants_take():
    """local_insert (the paper's Fig. 5): on the selective memory, ACS's local updates store a pair
    for an edge they do not find; without it they store none (a construction alone leaves the
    memory empty). Every stored pair is an edge an ant took; the option is the selective memory's."""
    with pytest.raises(ValueError, match="local_insert"):
        Construction(local_insert=True, memory="matrix")
    with pytest.raises(ValueError, match="True or False"):
        Construction(local_insert="yes", memory="spm")
    tsp = small_tsp(60)
    model = tsp.colony_model(8)
    starts = np.arange(12) * 5
    held = {}
    for insert in (False, True):
        c = Construction(q0=0.5, local_update="atomic", memory="spm", xi=0.1, tau0=0.01, local_insert=insert)
        colony = CpuColony(model, c, tsp.n)
        tours = colony.construct(2, 0, starts)
        items = colony.pheromone.items
        held[insert] = int((items >= 0).sum())
        taken = {(int(u), int(v)) for tour in tours for u, v in zip(tour, np.roll(tour, -1))}
        taken |= {(v, u) for u, v in taken}
        assert all((row, int(item)) in taken for row in range(tsp.n) for item in items[row] if item >= 0)
    assert held[False] == 0 < held[True]
    result = AntColonySystem(tsp, backend="cpu", seed=0, ants=8, memory="spm", local_insert=True).run(iterations=3)
    assert result.fitness == tsp.evaluate(result.solution)


@pytest.mark.gpu
def test_gpu_fig5_local_updates_store_only_taken_edges():
    """On the GPU, the selective memory's Fig. 5 local updates store pairs, each an edge an ant took
    (the ants race on a row's record, so which pairs stay may differ from the host's)."""
    tsp = small_tsp(200)
    model = tsp.colony_model(16)
    c = Construction(q0=0.5, local_update="atomic", memory="spm", xi=0.1, tau0=0.01, local_insert=True)
    gpu = gpu_colony(model, c, tsp.n, 64)
    try:
        tours = gpu.construct(3, 0, np.arange(64) % tsp.n)
        items = gpu.memory().items
    finally:
        gpu.close()
    assert is_permutation(tours) and (items >= 0).sum() > 0
    taken = {(int(u), int(v)) for tour in tours for u, v in zip(tour, np.roll(tour, -1))}
    taken |= {(v, u) for u, v in taken}
    assert all((row, int(item)) in taken for row in range(tsp.n) for item in items[row] if item >= 0)
