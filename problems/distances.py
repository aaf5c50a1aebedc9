"""TSPLIB distance functions, vectorised: rounded exactly as TSPLIB 95 prescribes.

Computed in float64 with correctly rounded square roots, so the CUDA kernels, which use
the same double-precision formulas, give the same integers.
"""
from __future__ import annotations

import numpy as np

__all__ = ["distance", "geo_radians"]

_PI = 3.141592          # TSPLIB's own value of pi for GEO
_EARTH = 6378.388


def geo_radians(coords: np.ndarray) -> np.ndarray:
    """GEO coordinates (DDD.MM degrees.minutes) to radians, TSPLIB style."""
    deg = np.trunc(coords)
    minutes = coords - deg
    return _PI * (deg + 5.0 * minutes / 3.0) / 180.0


def distance(kind: str, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Integer distances between point arrays ``p`` and ``q`` (shape (..., 2)).

    For GEO, ``p`` and ``q`` must already be in radians (:func:`geo_radians`).
    """
    if kind == "GEO":
        q1 = np.cos(p[..., 1] - q[..., 1])
        q2 = np.cos(p[..., 0] - q[..., 0])
        q3 = np.cos(p[..., 0] + q[..., 0])
        d = np.trunc(_EARTH * np.arccos(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)) + 1.0)
        return d.astype(np.int64)
    dx = p[..., 0] - q[..., 0]
    dy = p[..., 1] - q[..., 1]
    if kind == "EUC_2D":
        return np.floor(np.sqrt(dx * dx + dy * dy) + 0.5).astype(np.int64)
    if kind == "CEIL_2D":
        return np.ceil(np.sqrt(dx * dx + dy * dy)).astype(np.int64)
    if kind == "ATT":
        r = np.sqrt((dx * dx + dy * dy) / 10.0)
        t = np.floor(r + 0.5)
        return (t + (t < r)).astype(np.int64)
    raise ValueError(f"TSP: unknown distance type {kind!r}")
