"""Input checks shared by the problems: each raises ValueError naming the field."""
from __future__ import annotations

import numpy as np


def check_square(owner: str, name: str, a, dtype=None) -> np.ndarray:
    """``a`` as a finite square matrix, or ValueError "Owner: `name` must be ..."."""
    a = np.asarray(a, dtype=dtype)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{owner}: `{name}` must be a square matrix, got shape {a.shape}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: `{name}` contains NaN or infinity")
    return a


def check_size(owner: str, n: int, minimum: int) -> None:
    """Raise ValueError unless the instance has at least ``minimum`` elements."""
    if n < minimum:
        raise ValueError(f"{owner}: n must be >= {minimum}, got {n}")
