"""The Weierstrass function: a continuous, nowhere differentiable benchmark (real vectors).

Two forms, both minimised over the box [low, high]^n (default [-1, 1]):

* ``form="luong"`` (Luong, Melab & Talbi, GPU-based local search, Table 5):
  W(x) = sum_k sum_{i=1..terms} b^(-i h) sin(b^i x_k), with h = 0.25 and 100 terms as in the
  paper and b = 2 (b > 1, 0 < h < 1 are the function's conditions);
* ``form="cec"`` (CEC 2005 benchmark F11, without the rotation): with z = x - o,
  f(x) = sum_k sum_{i=0..terms-1} a^i cos(2 pi b^i (z_k + 0.5)) - n sum_i a^i cos(pi b^i),
  a = 0.5, b = 3, 21 terms; its minimum is 0, at x = o, a seeded shift inside the box.

The neighbourhood is :class:`~lsmgpu.Crowns` (``m`` points in rings up to radius 1/n); the
points are drawn by counter-based random numbers, so the CPU and the GPU evaluate the same
neighbours. ``precision="float32"`` evaluates the function in single precision on both
backends (the points stay double); ``"float64"`` in double. A delta is the full value of the
neighbour minus that of the current point: every coordinate moves, so there is nothing to
reuse. On the GPU the current value is solution-derived state, refreshed by apply_state.
"""
from __future__ import annotations

import math

import numpy as np

from lsmgpu.encodings import Real
from lsmgpu.neighbourhoods import Crowns
from lsmgpu.problem import DeviceArray, Problem
from lsmgpu.validation import check_size

__all__ = ["Weierstrass"]

FORMS = ("luong", "cec")
PRECISIONS = {"float32": np.float32, "float64": np.float64}


class Weierstrass(Problem):
    """Weierstrass function of ``n`` variables, searched with ``m`` crowns neighbours."""

    integer = False
    template = "weierstrass.cu.j2"
    device_move_kinds = ("crowns",)

    def __init__(self, n: int, *, form: str = "luong", b: float | None = None, h: float = 0.25,
                 a: float = 0.5, terms: int | None = None, precision: str = "float64", m: int = 10_000,
                 radius: float | None = None, seed: int = 0, shift_seed: int = 0,
                 low: float = -1.0, high: float = 1.0):
        check_size("Weierstrass", n, 1)
        if form not in FORMS:
            raise ValueError(f"Weierstrass: `form` must be one of {FORMS}, got {form!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"Weierstrass: `precision` must be one of {sorted(PRECISIONS)}, got {precision!r}")
        b = (2.0 if form == "luong" else 3.0) if b is None else b
        terms = (100 if form == "luong" else 21) if terms is None else terms
        if not (np.isfinite(b) and b > 1):
            raise ValueError(f"Weierstrass: `b` must be > 1, got {b}")
        if not 0 < h < 1:
            raise ValueError(f"Weierstrass: `h` must lie in (0, 1), got {h}")
        if not 0 < a < 1:
            raise ValueError(f"Weierstrass: `a` must lie in (0, 1), got {a}")
        if not isinstance(terms, (int, np.integer)) or terms < 1:
            raise ValueError(f"Weierstrass: `terms` must be an integer >= 1, got {terms!r}")
        if not isinstance(m, (int, np.integer)) or m < n:
            raise ValueError(f"Weierstrass: `m` (neighbours) must be an integer >= n = {n}, got {m!r}")
        self.form, self.precision, self.real = form, precision, PRECISIONS[precision]
        i = np.arange(1, terms + 1) if form == "luong" else np.arange(terms)
        with np.errstate(over="ignore"):
            weights, frequencies = self._series(form, a, b, h, i)
        self.weights = weights.astype(self.real)
        with np.errstate(over="ignore"):
            self.frequencies = frequencies.astype(self.real)
        if not np.all(np.isfinite(self.frequencies)):
            raise ValueError(f"Weierstrass: b^terms overflows {precision} ({b}^{terms}); use fewer `terms`")
        box = Real(n, low=low, high=high)
        if form == "cec":
            rng = np.random.default_rng(shift_seed)
            centre, half = (low + high) / 2, (high - low) / 2
            self.shift = centre + rng.uniform(-0.8 * half, 0.8 * half, n)
            self.offset = float(n * np.sum(weights * np.cos(math.pi * b ** i.astype(np.float64))))
            self.best_known = 0.0
        else:
            self.shift, self.offset = np.zeros(n), 0.0
        self.name = f"weierstrass-{form}-{n}-{precision}"
        super().__init__(box, Crowns(m=m, radius=radius, seed=seed))

    @staticmethod
    def _series(form, a, b, h, i):
        """(weights, frequencies) of the terms i: b^-ih, b^i (Luong) or a^i, 2 pi b^i (CEC)."""
        i = i.astype(np.float64)
        if form == "luong":
            return b ** (-i * h), b ** i
        return a ** i, 2 * math.pi * b ** i

    def values(self, points: np.ndarray) -> np.ndarray:
        """W of each row of ``points`` (shape (p, n)), in the problem's precision, as float64."""
        z = (np.atleast_2d(points) - self.shift).astype(self.real)
        if self.form == "cec":
            z = z + self.real(0.5)
        total = np.zeros(z.shape, dtype=self.real)
        trig = np.sin if self.form == "luong" else np.cos
        for w, c in zip(self.weights, self.frequencies):
            total += w * trig(c * z)
        return total.sum(axis=1, dtype=np.float64) - self.offset

    def evaluate(self, x):
        return float(self.values(x)[0])

    def delta_crowns(self, x, moves):
        return self.values(moves) - self.values(x)[0]

    def cpu_chunk(self):
        return 1 << 14

    def device_data(self):
        return {"weights": DeviceArray(self.weights, "readonly"),
                "frequencies": DeviceArray(self.frequencies, "readonly"),
                "shift": DeviceArray(self.shift.astype(np.float64), "readonly")}

    def solution_data(self, x):
        return {"current": np.array([self.evaluate(x)], dtype=np.float64)}

    def template_params(self):
        return {"real": "float" if self.real is np.float32 else "double", "form": self.form,
                "terms": len(self.weights), "offset": repr(self.offset)}

    def tabu_tenure(self):
        """Half the 2 n (axis, direction) attributes of the crowns moves, at least one."""
        return max(1, self.n // 2)
