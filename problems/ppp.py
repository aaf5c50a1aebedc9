"""Permuted Perceptron Problem (Pointcheval 1995): a binary problem from cryptography.

Given an m x n matrix A of +-1 entries and a multiset S of m integers, find a vector
V in {-1, +1}^n with (AV)_j >= 0 for every row j and the multiset of the (AV)_j equal to S.
Instances are planted: A and a secret V are drawn at random, the rows j with (AV)_j < 0 are
negated, and S is the multiset of the (AV)_j (:meth:`PPP.planted`), so a solution exists.

A solution is a bit vector x (V = 2x - 1). The fitness is the standard one for local search
on the PPP (Knudsen & Meier, "Cryptanalysis of an identification scheme based on the
permuted perceptron problem", EUROCRYPT 1999; used by Luong, Melab & Talbi, GPU-based local
search, section 5):

    f(V') = 30 * sum_j (|(AV')_j| - (AV')_j) + sum_{i >= 0} |H(i) - H'(i)|

where H(i) counts the values i in S and H'(i) the rows j with (AV')_j = i. It is 0 exactly at
a solution. The neighbourhoods flip 1, 2 or 3 bits (Hamming distance 1, 2, 3).

Incremental evaluation keeps Y = AV' and D = H' - H: a move flipping bits F changes row j
by dy_j = -2 sum_{i in F} A[j, i] V'_i, so its penalty change is O(m) and its histogram change
touches only the bins its rows leave and enter (the NumPy delta). On the GPU a move costs
O(bins + m / 32) instead of O(m): the rows are kept sorted by their value and the signs
A[j, i] V'_i packed into 32-bit words in that order, so the rows of one value that a move
shifts up or down are counted by popcounts (``ppp.cu.j2``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lsmgpu.encodings import Binary
from lsmgpu.neighbourhoods import BitFlip
from lsmgpu.problem import DeviceArray, Problem
from lsmgpu.validation import check_size

from .instances import read_text

__all__ = ["PPP", "read_ppp", "PENALTY"]

#: weight of the sign penalty (Knudsen & Meier)
PENALTY = 30


def read_ppp(path) -> tuple[np.ndarray, np.ndarray]:
    """(A, S) of a ``.ppp`` file: comment lines ``c ...``, ``p ppp M N``, M lines ``a`` followed
    by N characters ``+``/``-``, one line ``s`` followed by the M values of S."""
    path = Path(path)
    shape, rows, s = None, [], None
    for number, line in enumerate(read_text(path, "PPP").splitlines(), 1):
        fields = line.split()
        if not fields or fields[0] == "c":
            continue
        bad = ValueError(f"PPP: {path.name} line {number}: not a PPP line: {line[:60]!r}")
        if fields[0] == "p":
            if len(fields) != 4 or fields[1] != "ppp" or not (fields[2].isdigit() and fields[3].isdigit()):
                raise bad
            shape = int(fields[2]), int(fields[3])
        elif fields[0] == "a":
            if len(fields) != 2 or set(fields[1]) - {"+", "-"}:
                raise bad
            rows.append(fields[1])
        elif fields[0] == "s":
            try:
                s = np.array(fields[1:], dtype=np.int64)
            except ValueError:
                raise bad from None
        else:
            raise bad
    if shape is None:
        raise ValueError(f"PPP: {path.name} has no 'p ppp M N' line")
    m, n = shape
    if len(rows) != m or any(len(r) != n for r in rows):
        raise ValueError(f"PPP: {path.name} declares A as {m} x {n} but holds {len(rows)} rows "
                         f"of lengths {sorted({len(r) for r in rows})}")
    if s is None or s.size != m:
        raise ValueError(f"PPP: {path.name} must hold the {m} values of S on an 's' line")
    a = np.array([[1 if c == "+" else -1 for c in r] for r in rows], dtype=np.int64).reshape(m, n)
    return a, s


class PPP(Problem):
    """Find V with AV >= 0 whose values form the multiset S (see the module docstring)."""

    integer = True
    template = "ppp.cu.j2"
    device_move_kinds = ("flip",)
    best_known = 0

    def __init__(self, a, s, *, distance: int = 1, name: str = "ppp"):
        a = np.asarray(a)
        if a.ndim != 2:
            raise ValueError(f"PPP: `a` must be an m x n matrix, got shape {a.shape}")
        m, n = a.shape
        check_size("PPP", n, 2)
        check_size("PPP", m, 1)
        if not np.all(np.isin(a, (-1, 1))):
            raise ValueError("PPP: the entries of `a` must be +1 or -1")
        s = np.asarray(s, dtype=np.int64).ravel()
        if s.size != m:
            raise ValueError(f"PPP: `s` must hold one value per row of `a` ({m}), got {s.size}")
        if np.any(s < 0) or np.any(s > n) or np.any((s - n) % 2):
            raise ValueError(f"PPP: the values of `s` must be products of +-1 vectors of length {n}: "
                             f"in 0..{n} with the parity of n")
        self.a, self.s, self.m, self.name = a.astype(np.int64), s, m, name
        self.target = np.bincount(s, minlength=n + 1)             # H
        self.columns = np.ascontiguousarray(self.a.T.astype(np.int8))   # n x m: a move reads columns
        self.matrix = np.ascontiguousarray(self.a.astype(np.int8))      # m x n: the words read rows
        #: slots (runs of at most 32 rows of one bin) there can be: one per occupied bin + m / 32
        self.max_slots = min(n + 1, m) + m // 32 + 1
        super().__init__(Binary(n), BitFlip(distance))

    @classmethod
    def planted(cls, m: int, n: int, seed: int, distance: int = 1) -> tuple["PPP", np.ndarray]:
        """A random instance after Pointcheval, and its secret solution as bits."""
        check_size("PPP", n, 2)
        # a stream of its own: default_rng(seed) is what a search seeded alike draws its start
        # from, and the start would then copy a row of A (a product of -n, far off the others)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x9e37,)))
        a = rng.choice(np.array([-1, 1]), size=(m, n))
        secret = rng.integers(0, 2, n)
        y = a @ (2 * secret - 1)
        a[y < 0] *= -1
        return cls(a, np.abs(y), distance=distance, name=f"ppp-{m}-{n}-s{seed}"), secret

    @classmethod
    def from_file(cls, path, distance: int = 1) -> "PPP":
        a, s = read_ppp(path)
        return cls(a, s, distance=distance, name=Path(path).stem)

    def save(self, path) -> None:
        """Write the instance as a ``.ppp`` file (see :func:`read_ppp`)."""
        lines = [f"c permuted perceptron instance {self.name}", f"p ppp {self.m} {self.n}"]
        lines += ["a " + "".join("+" if v > 0 else "-" for v in row) for row in self.a]
        lines.append("s " + " ".join(map(str, np.sort(self.s))))
        Path(path).write_text("\n".join(lines) + "\n")

    # --- fitness -------------------------------------------------------------------------------
    def products(self, x) -> np.ndarray:
        """Y = A V with V = 2x - 1."""
        return self.a @ (2 * np.asarray(x, dtype=np.int64) - 1)

    def histogram(self, y) -> np.ndarray:
        """H': how many of the values ``y`` equal 0, 1, ..., n (negative ones are not counted)."""
        return np.bincount(y[y >= 0], minlength=self.n + 1)

    def evaluate(self, x):
        y = self.products(x)
        return int(PENALTY * np.sum(np.abs(y) - y) + np.abs(self.histogram(y) - self.target).sum())

    def delta_flip(self, x, moves):
        moves = np.asarray(moves, dtype=np.int64)
        y = self.products(x)
        signed = self.columns * (2 * np.asarray(x, dtype=np.int8) - 1)[:, None]   # row i: A[:, i] V_i
        dy = -2 * signed[moves].sum(axis=1, dtype=np.int32)                         # (moves, m)
        z = y.astype(np.int32)[None, :] + dy
        penalty = PENALTY * ((np.abs(z) - z).sum(axis=1) - (np.abs(y) - y).sum())
        bins = self.n + 1
        offsets = (np.arange(len(moves), dtype=np.int64) * bins)[:, None]
        counts = np.bincount((offsets + z)[z >= 0], minlength=len(moves) * bins).reshape(len(moves), bins)
        now = np.abs(self.histogram(y) - self.target).sum()
        return penalty + np.abs(counts - self.target).sum(axis=1) - now

    def cpu_chunk(self):
        return max(1, (1 << 22) // (self.m + self.n))

    # --- the GPU -------------------------------------------------------------------------------
    def device_data(self):
        return {"columns": DeviceArray(self.columns, "readonly"), "matrix": DeviceArray(self.matrix, "readonly")}

    def solution_data(self, x):
        """The GPU's state (see ppp.cu.j2): products, histogram excess, the rows sorted by bin
        (y + n) / 2 with each bin's first row and first slot (a slot: up to 32 rows of one bin),
        the bin of each slot, the occupied bins, and the signs A[r, i] V_i of each slot's rows
        packed into one word per (slot, column)."""
        n, m = self.n, self.m
        y = self.products(x)
        bins = (y + n) // 2
        counts = np.bincount(bins, minlength=n + 1)
        order = np.argsort(bins, kind="stable")
        start = np.concatenate([[0], np.cumsum(counts)])
        slots = -(-counts // 32)
        slot = np.concatenate([[0], np.cumsum(slots)])
        slot_bin = np.zeros(self.max_slots, dtype=np.int64)
        slot_bin[:slot[-1]] = np.repeat(np.arange(n + 1), slots)
        sorted_bins = bins[order]
        offset = np.arange(m) - start[sorted_bins]                  # a sorted row's place in its bin
        position = 32 * slot[sorted_bins] + offset                   # its (slot, bit) as 32 slot + bit
        plus = np.zeros((slot[-1] * 32, n), dtype=bool)
        plus[position] = (self.a[order] * (2 * np.asarray(x, dtype=np.int64) - 1)) > 0
        words = np.zeros((self.max_slots, n), dtype=np.uint32)   # bit t of a word: byte t // 8, bit t % 8
        words[:slot[-1]] = np.packbits(plus.reshape(-1, 32, n).transpose(0, 2, 1), axis=2,
                                       bitorder="little").view("<u4")[..., 0]
        return {"y": y.astype(np.int32), "excess": (self.histogram(y) - self.target).astype(np.int32),
                "order": order.astype(np.int32), "start": start.astype(np.int32),
                "slot": slot.astype(np.int32), "slot_bin": slot_bin.astype(np.int32),
                "span": np.array([bins.min(), bins.max()], dtype=np.int32),
                "words": words.view(np.int32).ravel(),
                "cursor": np.zeros(n + 2, dtype=np.int32)}

    def refresh_items(self):
        """One item per (slot, column) sign word, rebuilt over the whole grid after each move."""
        return self.max_slots * self.n

    def lanes_per_move(self):
        """Hamming 1 has only n moves: 32 lanes split each move's bins to fill the GPU."""
        return 32 if self.neighbourhood.distance == 1 else 1

    def template_params(self):
        return {"penalty": PENALTY, "distance": self.neighbourhood.distance}

    def device_constants(self):
        return {"M": self.m}
