"""Solution encodings: what a solution vector is, how to check one and draw a random one."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Encoding", "Binary", "Discrete", "Permutation", "Real"]


@dataclass(frozen=True)
class Encoding:
    """Base of the encodings; ``n`` is the length of a solution vector."""

    n: int

    dtype = np.int32

    def __post_init__(self):
        if not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise ValueError(f"{type(self).__name__}: `n` must be a positive integer, got {self.n!r}")

    def random(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random solution."""
        raise NotImplementedError

    def validate(self, x) -> np.ndarray:
        """Return ``x`` as a fresh array of this encoding's dtype, or raise ValueError."""
        x = np.asarray(x)
        if x.shape != (self.n,):
            raise ValueError(f"{type(self).__name__}: solution must have shape ({self.n},), got {x.shape}")
        if x.dtype.kind not in "biuf":
            raise ValueError(f"{type(self).__name__}: solution must hold real numbers, got {x.dtype} entries")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{type(self).__name__}: solution contains NaN or infinity")
        if np.issubdtype(self.dtype, np.integer) and not np.all(x == np.round(x)):
            raise ValueError(f"{type(self).__name__}: solution must hold integers")
        return np.array(x, dtype=self.dtype)


@dataclass(frozen=True)
class Discrete(Encoding):
    """A vector over the alphabet {0, ..., k-1} (e.g. graph colouring with k colours)."""

    k: int = 2

    def __post_init__(self):
        super().__post_init__()
        if self.k < 2:
            raise ValueError(f"Discrete: alphabet size `k` must be >= 2, got {self.k}")

    def random(self, rng):
        return rng.integers(0, self.k, self.n).astype(self.dtype)

    def validate(self, x):
        x = super().validate(x)
        if x.min() < 0 or x.max() >= self.k:
            raise ValueError(f"{type(self).__name__}: values must lie in [0, {self.k - 1}]")
        return x


@dataclass(frozen=True)
class Binary(Discrete):
    """A bit vector (k = 2)."""

    k: int = 2

    def __post_init__(self):
        super().__post_init__()
        if self.k != 2:
            raise ValueError("Binary: k is always 2")


@dataclass(frozen=True)
class Permutation(Encoding):
    """A permutation of 0..n-1 (QAP assignment, TSP tour)."""

    def random(self, rng):
        return rng.permutation(self.n).astype(self.dtype)

    def validate(self, x):
        x = super().validate(x)
        if not np.array_equal(np.sort(x), np.arange(self.n)):
            raise ValueError(f"Permutation: solution is not a permutation of 0..{self.n - 1}")
        return x


@dataclass(frozen=True)
class Real(Encoding):
    """A real vector in the box [low, high]^n."""

    low: float = -1.0
    high: float = 1.0

    dtype = np.float64

    def __post_init__(self):
        super().__post_init__()
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"Real: need finite low < high, got [{self.low}, {self.high}]")

    def random(self, rng):
        return rng.uniform(self.low, self.high, self.n)

    def validate(self, x):
        x = super().validate(x)
        if x.min() < self.low or x.max() > self.high:
            raise ValueError(f"Real: values must lie in [{self.low}, {self.high}]")
        return x
