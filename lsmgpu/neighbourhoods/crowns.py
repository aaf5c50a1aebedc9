"""The crowns neighbourhood of real vectors (Luong et al.) and its counter-based numbers."""
from __future__ import annotations

import numpy as np

from ..encodings import Real
from .base import Neighbourhood

__all__ = ["Crowns", "counter_uniform"]


def counter_uniform(seed: int, step: int, index, draw) -> np.ndarray:
    """Counter-based uniform numbers in [0, 1): a SplitMix64 hash of (seed, step, index, draw).

    Stateless, so the CPU and the GPU (same hash in ``templates/skeleton/random.cu.j2``)
    draw the same numbers for a neighbour without sharing a generator. ``index`` and ``draw``
    broadcast (NumPy rules): one call can give every draw of many neighbours.
    """
    def mix(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        key = mix(np.uint64(seed) * golden + np.uint64(step))
        z = mix(key ^ (np.asarray(index, dtype=np.uint64) * golden + np.asarray(draw, dtype=np.uint64)))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


class Crowns(Neighbourhood):
    """Real-vector neighbourhood of ``m`` points in concentric rings (Luong et al.).

    Neighbour q lies in ring q: at a distance drawn uniformly in [q h, (q+1) h] from x,
    h = radius / m (radius 1/n by default, as in the paper), along a random direction u/|u|;
    then clipped to the box. The numbers come from :func:`counter_uniform` keyed on
    (seed, step, q), so a neighbour is reproducible and the neighbourhood changes every
    iteration (``static = False``). Each component of u is a sum of four uniforms minus 2
    (bell-shaped, near normal, so the direction is near isotropic): with only additions,
    products, a division and a square root, all correctly rounded, the GPU computes the
    same points bit for bit (``templates/moves/crowns.cu.j2``), which a logarithm or a
    cosine would not guarantee. Moves are the neighbour points themselves.
    """

    move_kind = device_code = "crowns"
    static = False
    drawn = True
    encodings = (Real,)

    def __init__(self, m: int = 10_000, radius: float | None = None, seed: int = 0):
        if not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"Crowns: `m` must be an integer >= 1, got {m!r}")
        if radius is not None and not radius > 0:
            raise ValueError(f"Crowns: `radius` must be > 0, got {radius}")
        self.m, self.radius, self.seed = int(m), radius, seed

    @property
    def arity(self):
        return self.n

    @property
    def size(self):
        return self.m

    @property
    def max_radius(self) -> float:
        """The outer radius: ``radius`` or, by default, 1/n as in the paper."""
        return self.radius if self.radius is not None else 1.0 / self.n

    @property
    def ring_width(self) -> float:
        """h: the width of one ring."""
        return self.max_radius / self.m

    def displacement(self, index, step: int) -> np.ndarray:
        """The offset of each neighbour from the current point, shape (len(index), n). A
        neighbour's 4 n + 1 numbers come from one broadcast hash call (a call per number cost
        1.7 ms for the one move a step applies at n = 10), summed in the GPU's order."""
        q = np.asarray(index, dtype=np.int64)
        n = self.n
        draws = counter_uniform(self.seed, step, q[:, None], np.arange(4 * n + 1))
        four = draws[:, :4 * n].reshape(len(q), n, 4)
        u = ((four[..., 0] + four[..., 1]) + four[..., 2]) + four[..., 3] - 2.0
        norm2 = np.zeros(len(q))
        for d in range(n):                       # sequential, in the GPU's order
            norm2 = norm2 + u[:, d] * u[:, d]
        norm = np.sqrt(norm2)
        direction = u / np.where(norm > 0, norm, 1.0)[:, None]
        r = (q + draws[:, 4 * n]) * self.ring_width
        return direction * r[:, None]

    def device_constants(self):
        """Its seed and doubles, copied bit for bit into the kernel's constants."""
        return {"CROWNS_SEED": np.uint64(int(self.seed) % 2**64), "CROWNS_H": float(self.ring_width),
                "CROWNS_LOW": float(self.encoding.low), "CROWNS_HIGH": float(self.encoding.high)}

    def decode(self, index, step=0):
        raise TypeError("Crowns: neighbours depend on the current point; use moves(x, index, step)")

    def moves(self, x, index, step=0) -> np.ndarray:
        """The neighbour points of ``x`` for the given indices and iteration."""
        e = self.encoding
        return np.clip(x[None, :] + self.displacement(index, step), e.low, e.high)

    def random_moves(self, rng, count):
        raise TypeError("Crowns: random moves depend on the current point")

    def kick(self, x, rng, strength):
        """A kicked copy of ``x``: ``strength`` distinct coordinates redrawn uniformly in the box.
        Crowns have no point-free random moves (neighbours depend on the current point), and a jump
        of one crown radius stays in the basin a descent has just left; the descent after the kick
        re-optimises the redrawn coordinates (on a sum over coordinates such as Weierstrass's, while
        the others keep their values)."""
        if not isinstance(strength, (int, np.integer)) or not 1 <= strength <= self.n:
            raise ValueError(f"Crowns: kick `strength` must be an integer in [1, n = {self.n}], got {strength!r}")
        y = np.array(x, dtype=np.float64, copy=True)
        chosen = rng.choice(self.n, size=int(strength), replace=False)
        y[chosen] = rng.uniform(self.encoding.low, self.encoding.high, len(chosen))
        return y

    def apply(self, x, move):
        x[:] = move

    # --- tabu attributes: (axis, direction) of a move's largest step ---------------------
    def tabu_shape(self):
        """(n, 2): a move adds the attribute (d, s), d the coordinate it changes most (the lowest
        such d on a tie) and s = 1 when it increases it, else 0; applying it forbids (d, 1 - s),
        the step back along that axis. A continuous tabu search then keeps walking away from the
        points it has just left (Luong et al. run tabu search on the Weierstrass function)."""
        return (self.n, 2)

    @staticmethod
    def _main_step(x, points):
        """Each point's (axis, direction) of its largest change from ``x``: shape (m, 2)."""
        step = np.asarray(points, dtype=np.float64) - np.asarray(x, dtype=np.float64)[None, :]
        axis = np.argmax(np.abs(step), axis=1)
        return np.stack([axis, step[np.arange(len(step)), axis] > 0], axis=1).astype(np.int64)

    def added(self, x, moves):
        return self._main_step(x, moves)[:, None, :]

    def removed(self, x, move):
        axis, up = self._main_step(x, np.asarray(move)[None, :])[0]
        return np.array([[axis, 1 - up]], dtype=np.int64)

    def __repr__(self):
        return f"Crowns(m={self.m}, radius={self.max_radius if self.encoding else self.radius})"
