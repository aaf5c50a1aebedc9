"""Quadratic assignment problem (QAPLIB format), swap neighbourhood with the O(n) delta.

Cost of an assignment p (facility i at location p[i]):  sum_{i,j} a[i, j] * b[p[i], p[j]],
with a and b the two matrices of a QAPLIB ``.dat`` file in file order.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lsmgpu.encodings import Permutation
from lsmgpu.neighbourhoods import Swap, ThreeExchange
from lsmgpu.problem import DeviceArray, Problem
from lsmgpu.validation import check_number, check_size, check_square

from .instances import read_text, shipped

__all__ = ["QAP", "read_qaplib", "read_solution"]


def _integers(path: Path, what: str) -> np.ndarray:
    """Every whitespace-separated token of the file as int64; ValueError naming the file, the line
    and the token that is not an integer or does not fit in 64 bits."""
    text = read_text(path, "QAP")
    try:
        return np.array(text.split(), dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    for number, line in enumerate(text.splitlines(), 1):
        for token in line.split():
            try:
                value = int(token)
            except ValueError:
                raise ValueError(f"QAP: {Path(path).name} is not a QAPLIB {what} file: line {number} holds "
                                 f"{token!r}, not an integer") from None
            if not -2**63 <= value < 2**63:
                raise ValueError(f"QAP: {Path(path).name} line {number}: the entry {token} does not fit in "
                                 "64 bits") from None
    raise ValueError(f"QAP: {Path(path).name} is not a QAPLIB {what} file")


def read_qaplib(path) -> tuple[np.ndarray, np.ndarray]:
    """The matrices (a, b) of a QAPLIB ``.dat`` file: n, then a, then b, row by row."""
    tokens = _integers(path, ".dat")
    if tokens.size == 0:
        raise ValueError(f"QAP: {Path(path).name} is empty")
    n = int(tokens[0])
    if n < 1:
        raise ValueError(f"QAP: {Path(path).name} declares n = {n}")
    if tokens.size != 1 + 2 * n * n:
        raise ValueError(f"QAP: {Path(path).name} declares n = {n}, so 2 n^2 = {2 * n * n} matrix entries, "
                         f"but holds {tokens.size - 1} (truncated or wrong n)")
    a = tokens[1:1 + n * n].reshape(n, n)
    b = tokens[1 + n * n:].reshape(n, n)
    return a, b


def read_solution(path) -> tuple[int, np.ndarray]:
    """(objective value, 0-based permutation) of a QAPLIB ``.sln`` file."""
    tokens = _integers(path, ".sln")
    if tokens.size < 2 or tokens.size != 2 + tokens[0]:
        raise ValueError(f"QAP: {Path(path).name} is not a QAPLIB solution (n, value, then n indices)")
    return int(tokens[1]), tokens[2:] - 1


class QAP(Problem):
    """Quadratic assignment: place n facilities (flows ``a``) on n locations (distances ``b``).

    ``best_known`` is the QAPLIB optimum or best known value when a ``.sln`` file is next
    to the instance. The default tabu tenure is Taillard's robust tabu search range
    [0.9 n, 1.1 n] (E. Taillard, Parallel Computing 17, 1991).
    """

    integer = True
    template = "qap.cu.j2"
    device_move_kinds = ("swap", "three")
    #: smallest n for which delta_table=None turns the table on
    TABLE_MIN_N = 50

    def __init__(self, a, b, *, name: str = "QAP", best_known: int | None = None, neighbourhood=None,
                 delta_table: bool | None = None):
        a = check_square("QAP", "a", a)
        b = check_square("QAP", "b", b)
        if a.shape != b.shape:
            raise ValueError(f"QAP: `a` and `b` must have one shape, got {a.shape} and {b.shape}")
        check_size("QAP", a.shape[0], 4)
        for label, m in (("a", a), ("b", b)):
            if not np.all(m == np.round(m)):
                raise ValueError(f"QAP: `{label}` must hold integers")
        self.a = np.ascontiguousarray(a, dtype=np.int64)
        self.b = np.ascontiguousarray(b, dtype=np.int64)
        bound = int(np.abs(self.a).max()) * int(np.abs(self.b).max()) * self.a.shape[0] ** 2
        if bound >= 2**62:
            raise ValueError("QAP: entries too large for 64-bit costs")
        self._float_exact = bound < 2**53
        self._float = (self.a.astype(np.float64), self.b.astype(np.float64)) if self._float_exact else None
        self.name, self.best_known = name, check_number("QAP", "best_known", best_known)
        if delta_table not in (None, True, False):
            raise ValueError(f"QAP: `delta_table` must be None, True or False, got {delta_table!r}")
        self._delta_table = delta_table
        super().__init__(Permutation(self.a.shape[0]), neighbourhood or Swap())

    @classmethod
    def from_file(cls, path, neighbourhood=None, delta_table: bool | None = None) -> "QAP":
        """Read a QAPLIB ``.dat``; take the best known value from a ``.sln`` beside it."""
        path = Path(path)
        a, b = read_qaplib(path)
        sln = path.with_suffix(".sln")
        best = read_solution(sln)[0] if sln.is_file() else None
        return cls(a, b, name=path.stem, best_known=best, neighbourhood=neighbourhood, delta_table=delta_table)

    @staticmethod
    def shipped(name: str) -> Path:
        """Path of a QAPLIB instance bundled with lsmgpu (e.g. "tai12a")."""
        return shipped(name if name.endswith(".dat") else f"{name}.dat")

    def evaluate(self, p):
        return int((self.a * self.b[np.ix_(p, p)]).sum())

    def delta_swap(self, p, moves):
        """Swap deltas (see _position_delta)."""
        pos = moves[:, :2]
        return self._position_delta(p, pos, p[pos[:, ::-1]])

    def delta_three(self, p, moves):
        """3-exchange deltas (see _position_delta)."""
        return self._position_delta(p, *ThreeExchange.targets(p, moves))

    def _position_delta(self, p, pos, new):
        """Deltas of moves that give positions ``pos`` the locations ``new`` (m, q): O(n^3) once
        per call, O(q^2) per move.

        A move gives the q positions P new locations p'. With R = a b[:, p]^T and
        C = a^T b[p, :], the change of the terms with exactly one end in P is
        R[r, p'_r] - R[r, p_r] + C[r, p'_r] - C[r, p_r] for r in P, minus those terms' wrong
        share from the other ends in P, plus the exact change of the P x P block.
        """
        a, b = self.a, self.b
        old = p[pos]
        rows, cols = self._products(p)
        d = (rows[pos, new] - rows[pos, old] + cols[pos, new] - cols[pos, old]).sum(axis=1)
        q = pos.shape[1]
        for u in range(q):
            for v in range(q):
                r, s_, pr, ps, nr, ns = pos[:, u], pos[:, v], old[:, u], old[:, v], new[:, u], new[:, v]
                d -= a[r, s_] * (b[nr, ps] - b[pr, ps]) + a[s_, r] * (b[ps, nr] - b[ps, pr])
                d += a[r, s_] * (b[nr, ns] - b[pr, ps])
        return d

    def _products(self, p):
        """(a b[:, p]^T, a^T b[p, :]): through BLAS in float64 where every sum is exact
        (|a| |b| n < 2^53, all of QAPLIB), else in int64 (NumPy's slow integer product)."""
        a, b = self.a, self.b
        if self._float_exact:
            af, bf = self._float
            rows, cols = af @ bf[:, p].T, af.T @ bf[p, :]
            return rows.astype(np.int64), cols.astype(np.int64)
        return a @ b[:, p].T, a.T @ b[p, :]

    def tabu_tenure(self):
        return (max(1, int(0.9 * self.n)), max(1, int(np.ceil(1.1 * self.n))))

    def tabu_forced_after(self):
        """Taillard's robust tabu search: a move that puts a facility back on a location it
        has not held for 2 n^2 iterations is taken first."""
        return 2 * self.n * self.n

    def read_solution(self, path) -> np.ndarray:
        """The assignment of a QAPLIB ``.sln`` file (n, value, the 1-based permutation), checked
        against this instance (ValueError naming the file)."""
        value, p = read_solution(path)
        if len(p) != self.n:
            raise ValueError(f"QAP: {Path(path).name} assigns {len(p)} facilities, {self.name} has {self.n}")
        return self.checked_solution(p, path)

    def write_solution(self, p, path) -> None:
        """Write ``p`` as a QAPLIB ``.sln`` file (n, cost, 1-based permutation)."""
        Path(path).write_text(f"{self.n} {self.evaluate(np.asarray(p))}\n" + " ".join(str(v + 1) for v in p) + "\n")

    @property
    def delta_table(self) -> bool:
        """Whether the CUDA kernel reads swap deltas from Taillard's table (see the class)."""
        swap = self.neighbourhood.move_kind == "swap"
        wanted = self.n >= self.TABLE_MIN_N if self._delta_table is None else self._delta_table
        return swap and wanted

    def solution_data(self, p):
        """With the delta table: the table of every swap's delta (entry r * n + s, r < s), the
        last swap applied (r, s, serial number) with the vectors of its O(1) corrections, and
        each entry's stamp (the serial it is current for); see qap.cu.j2. Uploaded as "no swap
        yet, serial 1" with an empty table: the refresh the engine launches after every upload
        builds every entry on the GPU (O(n) each), so a new solution costs no O(n^3) here."""
        if not self.delta_table:
            return {}
        n = self.n
        return {"swap_deltas": np.zeros(n * n, dtype=np.int64), "last_swap": np.array([-1, -1, 1], dtype=np.int32),
                "swap_rows": np.zeros(4 * n, dtype=np.int64), "stamps": np.zeros(n * n, dtype=np.int32)}

    def swap_delta_table(self, p) -> np.ndarray:
        """The n x n table the GPU keeps (entry r * n + s = delta of swap (r, s), r < s; 0 below
        the diagonal), computed afresh (tests compare the GPU's incremental table with it)."""
        n = self.n
        table = np.zeros(n * n, dtype=np.int64)
        moves = Swap().bind(self.encoding).decode(np.arange(n * (n - 1) // 2, dtype=np.int64))
        table[moves[:, 0] * n + moves[:, 1]] = self.delta(np.asarray(p), moves)
        return table

    def refresh_items(self):
        """With the delta table: one item per (i, j) of the n x n table (rounded up to whole
        warps) for the O(1) updates, then a warp (32 items) for each of the 2 n entries
        recomputed in O(n)."""
        if not self.delta_table:
            return 0
        return -(-self.n * self.n // 32) * 32 + 2 * self.n * 32

    def lanes_per_move(self):
        """Swap with the delta table: one thread per move (a lookup). Otherwise one warp lane
        per ~4 facilities, up to a warp: an O(n) move split (tai100a without the table:
        4,950 moves on 158,400 threads instead of 4,950)."""
        if self.delta_table:
            return 1
        lanes = 1
        while lanes < 32 and lanes * 4 < self.n:
            lanes *= 2
        return lanes

    def template_params(self):
        symmetric = (np.array_equal(self.a, self.a.T) and np.array_equal(self.b, self.b.T)
                     and not np.diag(self.a).any() and not np.diag(self.b).any())
        return {"symmetric": symmetric, "delta_table": self.delta_table}

    def device_data(self):
        # int32 in the kernel: QAPLIB entries fit, deltas are summed in 64 bits
        if max(np.abs(self.a).max(), np.abs(self.b).max()) >= 2**31:
            raise ValueError("QAP: the CUDA kernel needs entries below 2^31")
        return {"a": DeviceArray(self.a.astype(np.int32), "readonly"),
                "b": DeviceArray(self.b.astype(np.int32), "readonly")}
