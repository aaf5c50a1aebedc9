"""Ants building solutions from a pheromone model: the settings, the NumPy reference, the factory.

A colony's ants build B permutations in lock step (``construct``): at step t an ant at row r
(the previous item of a tour, or the next row of an assignment) chooses among the unvisited
items of r's candidate list, or of all items without one, with weights
w = tau[r, j]^alpha * eta[r, j]^beta:

* ACS's pseudo-random-proportional rule (``q0`` > 0): with probability q0 the item of largest
  weight, else the roulette wheel (Dorigo & Gambardella 1997, formulas (1)-(2));
* ``selection="roulette"``: item j with probability w_j / sum(w), by the roulette wheel over the
  items in their order (the candidate list's, summed in float32 as the kernel's warp does, the
  draw rounded to float32, or the visited set's listing of the unvisited, summed in float64);
* ``selection="wrs"``: weighted reservoir sampling (A-Res, Efraimidis & Spirakis): the item of
  largest key log2(u_j) / w_j, u_j uniform: the roulette's distribution in one parallel pass;
* a candidate list with no unvisited item left: the unvisited item of largest weight (ACOTSP).

Ties go to the lowest item. Random numbers are counter-based (``counter_uniform(seed,
iteration, ant, t * (n + 2) + d)``: d = 0 for ACS's q, 1 for the roulette, 2 + j for item j's
reservoir key), so the GPU's kernel (templates/skeleton/colony.cu.j2) draws the same ones and
builds the same solutions, except where the roulette over all unvisited items (no candidate
list), whose float64 sums the GPU's threads add in another order, moves a pick that falls within
rounding of a boundary.

ACS's local update (``local_update`` "atomic", "alt" or "step" with period k: every k-th chosen
edge, the closing one of a tour included) applies tau <- (1 - xi) tau + xi tau0 to the edge after
every ant's step t. The host applies the lock step's updates in ant order. On the GPU, "step" is
ACS-GPU as Skinderowicz builds it: a launch a step, the ants synchronised between steps, so its
ants equal the host's exactly. With "atomic" and "alt" the ants run unsynchronised in one launch:
"atomic" loses no update (so the matrix after a construction is the host's, exactly: an edge's
value depends only on how often it was updated), "alt" none of the atomics (ACS-GPU-Alt: lost
updates accepted by design).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..neighbourhoods.crowns import counter_uniform
from ..budget import check_deadline
from ..problem import ColonyModel
from .fallback import kernel_or_host
from .focused import warp_scan
from .pheromone import MatrixPheromone, SelectivePheromone
from .visited import TABUS, tabu_for

__all__ = ["Construction", "CpuColony", "colony_for", "SELECTIONS", "LOCAL_UPDATES", "MEMORIES"]

SELECTIONS = ("wrs", "roulette")
LOCAL_UPDATES = ("none", "atomic", "alt", "step")
MEMORIES = ("matrix", "spm")


@dataclass(frozen=True)
class Construction:
    """How the ants build: the kind of model, the node selection, the visited set (GPU), ACS's q0
    and local update, alpha and beta, the pheromone memory (``slots`` pairs a row for "spm"),
    ``warps`` per ant on the GPU (None: chosen by size); ``local_insert``: a local update on the
    selective memory stores a pair it does not hold, as the paper's Fig. 5 does (default: it
    stores nothing, since the pair's value would be tau_min again and it would push out a pair
    that a deposit made)."""

    kind: str = "successor"
    selection: str = "wrs"
    tabu: str = "ct"
    q0: float = 0.0
    alpha: float = 1.0
    beta: float = 2.0
    local_update: str = "none"
    xi: float = 0.1
    tau0: float = 1.0
    period: int = 1
    memory: str = "matrix"
    slots: int = 8
    warps: int | None = None
    local_insert: bool = False

    def __post_init__(self):
        checks = [("selection", self.selection, SELECTIONS), ("tabu", self.tabu, tuple(TABUS)),
                  ("local_update", self.local_update, LOCAL_UPDATES), ("memory", self.memory, MEMORIES)]
        for name, value, allowed in checks:
            if value not in allowed:
                raise ValueError(f"ant colony: `{name}` must be one of {allowed}, got {value!r}")
        if not isinstance(self.local_insert, (bool, np.bool_)):
            raise ValueError(f"ant colony: `local_insert` must be True or False, got {self.local_insert!r}")
        if self.local_insert and self.memory != "spm":
            raise ValueError("ant colony: `local_insert` is the selective memory's (memory='spm')")
        if self.local_update == "step" and self.memory != "matrix":
            raise ValueError("ant colony: `local_update='step'` (ACS-GPU, a launch a step) updates the pheromone "
                             "matrix; it needs memory='matrix'")
        if not 0.0 <= self.q0 <= 1.0:
            raise ValueError(f"ant colony: `q0` must be in [0, 1], got {self.q0}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"ant colony: `{name}` must be a finite number >= 0, got {value}")
        if not 0.0 <= self.xi <= 1.0:
            raise ValueError(f"ant colony: `xi` must be in [0, 1], got {self.xi}")
        if not (np.isfinite(self.tau0) and self.tau0 > 0):
            raise ValueError(f"ant colony: `tau0` must be a finite number > 0, got {self.tau0}")
        if not isinstance(self.period, (int, np.integer)) or self.period < 1:
            raise ValueError(f"ant colony: `period` must be an integer >= 1, got {self.period!r}")
        if not isinstance(self.slots, (int, np.integer)) or not 1 <= self.slots <= 32:
            raise ValueError(f"ant colony: `slots` must be an integer in [1, 32], got {self.slots!r}")
        if self.warps is not None and (not isinstance(self.warps, (int, np.integer)) or not 1 <= self.warps <= 32):
            raise ValueError(f"ant colony: `warps` must be None or an integer in [1, 32], got {self.warps!r}")


def weights_of(tau: np.ndarray, eta_beta, alpha: float) -> np.ndarray:
    """w = tau^alpha * eta^beta in float32 (the kernel's arithmetic: a power only when alpha != 1)."""
    if alpha != 1.0:
        tau = np.power(tau, np.float32(alpha), dtype=np.float32)
    return tau if eta_beta is None else (tau * eta_beta).astype(np.float32)


def lowest_best(items: np.ndarray, values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, the lowest item among the valid ones of largest value."""
    values = np.where(valid, values, -np.inf)
    top = values.max(axis=1, keepdims=True)
    hit = valid & (values == top)
    return np.where(hit, items, np.iinfo(np.int32).max).min(axis=1)


class CpuColony:
    """The colony on the host: B ants in lock step over NumPy arrays (the reference)."""

    name = "cpu"
    device = ""

    def __init__(self, model: ColonyModel, construction: Construction, n: int):
        self.model, self.c, self.n = model, construction, int(n)
        eta = model.heuristic
        self.eta_beta = None if eta is None else np.power(eta, construction.beta).astype(np.float32)
        check_deadline("the colony's pheromone was set up")
        self.candidates = model.candidates
        if construction.memory == "spm":
            self.pheromone = SelectivePheromone(self.n, construction.tau0, construction.slots)
        else:
            self.pheromone = MatrixPheromone(self.n, construction.tau0)

    # --- pheromone ---------------------------------------------------------------------------
    def fill(self, tau: float) -> None:
        self.pheromone.fill(tau)

    def cells(self, solution: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A solution's (row, item) cells in update order: a tour's edges both ways (each row its
        successor first, then its predecessor), an assignment's (i, x[i])."""
        x = np.asarray(solution, dtype=np.int64)
        if self.model.kind == "assignment":
            return np.arange(self.n), x
        after = np.roll(x, -1)
        return np.concatenate([x, after]), np.concatenate([after, x])

    def deposit(self, solution, keep: float, add: float) -> None:
        """tau <- tau * keep + add on the solution's cells (ACS global update, MMAS deposit)."""
        rows, items = self.cells(solution)
        self.pheromone.update(rows, items, keep, add)

    def evaporate(self, keep: float) -> None:
        self.pheromone.evaporate(keep)

    def clamp(self, low: float, high: float) -> None:
        self.pheromone.clamp(low, high)

    def values(self, rows, items) -> np.ndarray:
        return self.pheromone.values(rows, items)

    def matrix(self) -> np.ndarray:
        return self.pheromone.matrix()

    def memory(self):
        """A copy of the pheromone memory (MatrixPheromone or SelectivePheromone), for a checkpoint."""
        return copy.deepcopy(self.pheromone)

    def load_memory(self, memory) -> None:
        """Take back a memory written by ``memory()``."""
        self.pheromone = copy.deepcopy(memory)

    def close(self) -> None:
        """Nothing to free on the host."""

    # --- construction ------------------------------------------------------------------------
    def construct(self, seed: int, iteration: int, firsts: np.ndarray) -> np.ndarray:
        """B solutions: tours from the start items ``firsts`` (B,), or assignments visiting the
        rows in the orders ``firsts`` (B, n)."""
        firsts = np.asarray(firsts, dtype=np.int64)
        ants, n, tour = len(firsts), self.n, self.model.kind == "successor"
        x = np.empty((ants, n), dtype=np.int32)
        tabu = tabu_for(self.c.tabu, ants, n)
        everyone = np.arange(ants)
        if tour:
            x[:, 0] = firsts
            tabu.mark(firsts)
        for t in range(1, n) if tour else range(n):
            check_deadline("the ants finished their solutions")     # a step of thousands of ants: milliseconds
            rows = x[:, t - 1].astype(np.int64) if tour else firsts[:, t]
            chosen = self._choose(rows, tabu, seed, iteration, t, everyone)
            if tour:
                x[:, t] = chosen
            else:
                x[everyone, rows] = chosen
            tabu.mark(chosen)
            if (t if tour else t + 1) % self.c.period == 0:
                self._local_update(rows, chosen)
        if tour and n % self.c.period == 0:
            self._local_update(x[:, -1].astype(np.int64), x[:, 0].astype(np.int64))
        return x

    def _local_update(self, rows, items) -> None:
        if self.c.local_update == "none" or self.c.xi == 0:
            return
        keep, add = 1.0 - self.c.xi, self.c.xi * self.c.tau0
        if self.model.kind == "successor":
            rows, items = np.stack([rows, items], 1).ravel(), np.stack([items, rows], 1).ravel()
        self.pheromone.update(rows, items, keep, add, insert=self.c.local_insert)

    def _weights(self, rows: np.ndarray, items: np.ndarray) -> np.ndarray:
        tau = self.pheromone.values(rows[:, None], items)
        eta = None if self.eta_beta is None else self.eta_beta[rows[:, None], items]
        return weights_of(tau, eta, self.c.alpha)

    def _choose(self, rows, tabu, seed: int, iteration: int, t: int, ants) -> np.ndarray:
        base = t * (self.n + 2)
        if self.candidates is not None:
            items = self.candidates[rows].astype(np.int64)
            valid = ~tabu.visited(items)
        else:
            items = tabu.unvisited().astype(np.int64)
            valid = np.ones(items.shape, dtype=bool)
        w = np.where(valid, self._weights(rows, items), np.float32(0))
        chosen = self._select(items, w, valid, seed, iteration, base, ants)
        empty = ~valid.any(axis=1)
        if empty.any():          # the candidate list is used up: the best of all unvisited items
            rest = tabu.unvisited().astype(np.int64)[empty]
            chosen[empty] = lowest_best(rest, self._weights(rows[empty], rest), np.ones(rest.shape, bool))
        return chosen

    def _select(self, items, w, valid, seed, iteration, base, ants) -> np.ndarray:
        if self.c.selection == "wrs":
            u = counter_uniform(seed, iteration, ants[:, None], base + 2 + items)
            with np.errstate(divide="ignore", invalid="ignore"):
                keys = np.log2(u) / w.astype(np.float64)
            keys = np.where(w > 0, keys, -np.inf)
            chosen = lowest_best(items, keys, valid)
        else:
            u = counter_uniform(seed, iteration, ants, base + 1)
            if self.candidates is not None:     # a list: the kernel's float sums over 32 lanes, in its order
                sums = warp_scan(w)
                threshold = u.astype(np.float32) * sums[:, -1]
            else:
                sums = np.cumsum(w.astype(np.float64), axis=1)
                threshold = u * sums[:, -1]
            above = valid & (sums[:, :items.shape[1]] > threshold[:, None])
            last_valid = items.shape[1] - 1 - np.argmax(valid[:, ::-1], axis=1)
            position = np.where(above.any(axis=1), np.argmax(above, axis=1), last_valid)
            chosen = items[ants, position]
        if self.c.q0 > 0:
            greedy = counter_uniform(seed, iteration, ants, base) < self.c.q0
            chosen = np.where(greedy, lowest_best(items, w, valid), chosen)
        return chosen


def colony_for(backend, model: ColonyModel, construction: Construction, n: int, ants: int, *,
               announce: str = "the ant colony"):
    """The colony on ``backend``: the CUDA kernels where the backend has them, else the host's
    (announced by a BackendFallback warning on a backend other than the CPU)."""
    return kernel_or_host(backend, "colony", (model, construction, n, ants), lambda: CpuColony(model, construction, n),
                          announce=announce, what="the ants build")
