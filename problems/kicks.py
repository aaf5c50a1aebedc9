"""The TSP's iterated-local-search kicks: double bridges, across the whole tour or segment-local,
as a kicked copy or as moves of the search's neighbourhood (applied where the tour lives)."""
from __future__ import annotations

import numpy as np

__all__ = ["double_bridge_cuts", "double_bridge", "double_bridge_moves"]


def double_bridge_cuts(n: int, rng: np.random.Generator, window: int | None = None) -> tuple[int, int, int]:
    """Cut positions 1 <= a < b < c <= n of a double bridge on an n-city tour: the blocks
    B = tour[a:b] and C = tour[b:c] trade places (A B C D -> A C B D; three edges change).

    With ``window`` the kick is segment-local: the three cuts fall within ``window``
    consecutive positions from a random one (across the tour's end too: a cycle has one
    such reconnection for three cut edges, so sorting the cuts keeps the kick), so B and C
    are short and the descent that follows repairs a neighbourhood of the tour, not the
    whole of it (for large n, where a kick across the whole tour costs a long descent and
    is rarely accepted)."""
    if window is None or window >= n - 1:
        a, b, c = np.sort(rng.choice(np.arange(1, n), size=3, replace=False))
        return int(a), int(b), int(c)
    if window < 4:
        raise ValueError(f"double_bridge: `window` must be >= 4, got {window}")
    shift = int(rng.integers(n))
    offsets = rng.choice(np.arange(1, window + 1), size=3, replace=False)
    a, b, c = sorted((shift + int(o)) % n or n for o in offsets)   # cut 0 is the edge (n-1, 0): n
    return a, b, c


def double_bridge(tour: np.ndarray, rng: np.random.Generator, window: int | None = None) -> np.ndarray:
    """The double-bridge kick (see double_bridge_cuts): a kicked copy of ``tour``."""
    a, b, c = double_bridge_cuts(len(tour), rng, window)
    return np.concatenate([tour[:a], tour[b:c], tour[a:b], tour[c:]])


def double_bridge_moves(neighbourhood, tour: np.ndarray, cuts: tuple[int, int, int]) -> np.ndarray:
    """The double bridge of ``cuts`` on ``tour`` as moves of a 2-opt or block-exchange
    ``neighbourhood``, applied in order: one block exchange (Or-opt, 3-opt), or three 2-opt
    moves (A B C D -> A rev C rev B D, then each block turned back). ``tour`` is kicked in
    place by the neighbourhood's own ``apply``, move by move: the 2-opt moves are found from the
    edges they remove, as candidate 2-opt may reverse the other side of the tour, which moves
    positions."""
    a, b, c = cuts
    if neighbourhood.move_kind == "block_exchange":
        move = np.array([a, b - 1, c - 1, 0], dtype=np.int64)
        neighbourhood.apply(tour, move)
        return move[None]
    n = len(tour)
    a_end, b_first, b_last, c_first, c_last, d_first = (int(v) for v in tour[[a - 1, a, b - 1, b, c - 1, c % n]])
    removed_pairs = (((a_end, b_first), (c_last, d_first)), ((a_end, c_last), (c_first, b_last)),
                     ((c_last, b_last), (b_first, d_first)))
    moves = []
    for first, second in removed_pairs:
        p, q = sorted((_edge_position(tour, *first), _edge_position(tour, *second)))
        moves.append((p + 1, q))            # removes the edges at positions p and q
        neighbourhood.apply(tour, moves[-1])
    return np.array(moves, dtype=np.int64)


def _edge_position(tour: np.ndarray, u: int, v: int) -> int:
    """Position p of the tour edge {u, v}: {tour[p], tour[p + 1 mod n]} = {u, v}."""
    p = int(np.flatnonzero(tour == u)[0])
    return p if tour[(p + 1) % len(tour)] == v else (p - 1) % len(tour)
