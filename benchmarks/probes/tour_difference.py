"""What separates lsmgpu's tours from LKH-3's: the places where the two differ, their size and reach.

Remove the edges two tours share and the rest falls into connected components (the pieces partition
crossover works on, lsmgpu/search/partition.py). A component's *k* is how many of tour A's edges it
holds, its *gain* A's length there less B's, its *span* the shortest stretch of A's tour that holds
all its cities (near 0: a local change; a large share of n: cities far apart along the tour, close
in space), and *alone* whether B's edges there, put in A alone, make a tour: then B is a k-opt move
of A away there. A component that is not a move alone needs another one with it, as the two halves
of a double bridge (two components of k 2), the non-sequential moves that a chain of sequential
ones does not make. The probe reads the tours that
``python -m benchmarks depth ... --depth-tours FILE.npz`` kept and compares each lsmgpu tour with
LKH-3's of the same instance: how much of LKH's lead lies in components of each k, how far they
reach, how many pairs of small components make a tour together (local non-sequential moves), and
how many of LKH's edges lie outside A's 10 quadrant candidates (edges no move of lsmgpu's descents
can add). With ``best`` last, B is instead the shortest other tour of the instance in the file,
whoever made it (an lsmgpu run that reached the optimum, say); the
largest component where B is shorter is shown too (its k, cities, gain, span, whether a move alone).
It needs no GPU.

    python -m benchmarks.probes.tour_difference FILE.npz .data/tsplib [best]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from lsmgpu.problems import TSP

#: the k of a component, in bins: 2-3 (2- and 3-opt), 4-5, 6-9, 10-19, 20 or more
K_BINS = ((2, 3), (4, 5), (6, 9), (10, 19), (20, None))


def _edges(tour: np.ndarray) -> np.ndarray:
    """(n, 2): the tour's edges, each (lower city, higher city)."""
    pairs = np.stack([tour, np.roll(tour, -1)], axis=1)
    return np.sort(pairs, axis=1)


def _only(edges: np.ndarray, other: np.ndarray, n: int) -> np.ndarray:
    """The rows of ``edges`` that ``other`` lacks."""
    return edges[~np.isin(edges[:, 0] * n + edges[:, 1], other[:, 0] * n + other[:, 1])]


def differences(a: np.ndarray, b: np.ndarray, dist) -> list[dict]:
    """The components of tours ``a`` and ``b``'s differing edges: for each, its cities, k (a's edges
    in it), gain (their length less b's edges' there) and span (cities in the shortest stretch of
    a's tour holding all of them). ``dist(u, v)``: lengths of the edges (u[i], v[i])."""
    n = len(a)
    ea, eb = _edges(a), _edges(b)
    only_a, only_b = _only(ea, eb, n), _only(eb, ea, n)
    both = np.concatenate([only_a, only_b])
    if not len(both):
        return []
    graph = coo_matrix((np.ones(len(both)), (both[:, 0], both[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    position = np.empty(n, dtype=np.int64)
    position[a] = np.arange(n)
    length_a = dist(only_a[:, 0], only_a[:, 1]).astype(np.float64)
    length_b = dist(only_b[:, 0], only_b[:, 1]).astype(np.float64)
    rows = []
    for component in np.unique(label[both[:, 0]]):
        in_a, in_b = label[only_a[:, 0]] == component, label[only_b[:, 0]] == component
        cities = np.unique(np.concatenate([only_a[in_a].ravel(), only_b[in_b].ravel()]))
        places = np.sort(position[cities])
        gaps = np.diff(np.append(places, places[0] + n))
        rows.append(dict(cities=len(cities), k=int(in_a.sum()), gain=float(length_a[in_a].sum() - length_b[in_b].sum()),
                         span=int(n - gaps.max() + 1), alone=_one_tour(n, ea, only_a[in_a], only_b[in_b]),
                         removed=only_a[in_a], added=only_b[in_b]))
    return rows


def small_pairs(rows: list[dict], a: np.ndarray, k_max: int = 9) -> tuple[int, float]:
    """Pairs of components of k at most ``k_max`` that are no move alone but make a tour of ``a``
    together (the two halves of a double bridge, or of a non-sequential move like it): (how many,
    their gain where positive)."""
    n, edges = len(a), _edges(a)
    small = [row for row in rows if row["k"] <= k_max and not row["alone"]]
    pairs = [first["gain"] + second["gain"] for i, first in enumerate(small) for second in small[i + 1:]
             if _one_tour(n, edges, np.concatenate([first["removed"], second["removed"]]),
                          np.concatenate([first["added"], second["added"]]))]
    return len(pairs), sum(gain for gain in pairs if gain > 0)


def _one_tour(n: int, edges: np.ndarray, removed: np.ndarray, added: np.ndarray) -> bool:
    """Whether ``edges`` (a tour's) without ``removed`` and with ``added`` are one tour (every
    city keeps two edges, so one connected piece is one cycle)."""
    kept = np.concatenate([_only(edges, removed, n), added])
    graph = coo_matrix((np.ones(len(kept)), (kept[:, 0], kept[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[0] == 1


def outside_candidates(a: np.ndarray, b: np.ndarray, candidates: np.ndarray) -> tuple[int, int]:
    """(b's edges that a lacks, those of them with neither end among the other's candidates)."""
    n = len(a)
    only_b = _only(_edges(b), _edges(a), n)
    u, v = only_b[:, 0], only_b[:, 1]
    inside = (candidates[u] == v[:, None]).any(axis=1) | (candidates[v] == u[:, None]).any(axis=1)
    return len(only_b), int((~inside).sum())


def summary(rows: list[dict], n: int) -> dict:
    """The components where b is shorter: their count, the share of their gain in each k-bin
    (K_BINS), of it in components spanning more than a tenth of the tour, and of it in components
    that are no move alone."""
    better = [row for row in rows if row["gain"] > 0]
    total = sum(row["gain"] for row in better) or 1.0
    shares = {}
    for low, high in K_BINS:
        inside = [row["gain"] for row in better if row["k"] >= low and (high is None or row["k"] <= high)]
        shares[f"k {low}-{high}" if high else f"k {low}+"] = round(100 * sum(inside) / total, 1)
    far = sum(row["gain"] for row in better if row["span"] > n // 10)
    together = sum(row["gain"] for row in better if not row["alone"])
    return dict(components=len(rows), b_shorter=len(better), gain=round(sum(row["gain"] for row in rows)),
                **shares, far_pct=round(100 * far / total, 1), not_alone_pct=round(100 * together / total, 1))


def main(tours_file: str, data: str, against: str = "lkh") -> None:
    """Each lsmgpu tour of ``tours_file`` against B: the shortest LKH-3 tour of its instance and
    budget, or with ``against`` "best" the shortest other tour of its instance, any maker's."""
    if against not in ("lkh", "best"):
        raise SystemExit(f"tour_difference: the last argument is 'lkh' or 'best', not {against!r}")
    tours = np.load(tours_file)
    keys = list(tours.keys())
    print("instance | A (lsmgpu) | A gap % | B | B gap % | components | B shorter in | "
          + " | ".join(f"% of B's lead, k {low}-{high}" if high else f"% of B's lead, k {low}+" for low, high in K_BINS)
          + " | % of it spanning > n/10 | % of it in no move alone | pairs of k <= 9 making a tour together"
          " (their gain) | B's edges A lacks | of them outside A's quadrant-10 lists | the largest place B is shorter")
    for key in keys:
        instance, strategy, seed, budget = key.split("|")
        if strategy.startswith("LKH-3"):
            continue
        if against == "best":
            peers = [k for k in keys if k.startswith(f"{instance}|") and k != key]
        else:
            peers = [k for k in keys if k.startswith(f"{instance}|LKH-3") and k.endswith(f"|{budget}")]
        if not peers:
            continue
        problem = TSP.from_file(Path(data) / f"{instance}.tsp")
        a = tours[key].astype(np.int64)
        maker = min(peers, key=lambda k: problem.evaluate(tours[k].astype(np.int64)))
        b = tours[maker].astype(np.int64)
        rows = differences(a, b, problem.dist)
        largest = max(rows, key=lambda row: row["gain"], default=None)
        named = "LKH-3" if against == "lkh" else "{1}, seed {2}".format(*maker.split("|"))
        digest = summary(rows, problem.n)
        lacked, outside = outside_candidates(a, b, problem.candidate_lists(10))
        pairs, pairs_gain = small_pairs(rows, a)
        print(f"{instance} | {strategy}, seed {seed}, {budget} s | {_gap(problem, a)} | {named} | "
              f"{_gap(problem, b)} | {digest['components']} | {digest['b_shorter']} | "
              + " | ".join(str(value) for name, value in digest.items() if name.startswith("k "))
              + f" | {digest['far_pct']} | {digest['not_alone_pct']} | {pairs} ({pairs_gain:.0f})"
              + f" | {lacked} | {outside} | {_described(largest)}", flush=True)


def _gap(problem, tour) -> str:
    """The tour's gap above the optimum in %, or "-" where none is known."""
    gap = problem.gap(problem.evaluate(tour))
    return "-" if gap is None else f"{100 * gap:.3f}"


def _described(row: dict | None) -> str:
    """A component in words: its k, cities, gain, span and whether it is a move alone."""
    if row is None or row["gain"] <= 0:
        return "none"
    return (f"k {row['k']}, {row['cities']} cities, gain {row['gain']:.0f}, span {row['span']}, "
            + ("a move alone" if row["alone"] else "no move alone"))


if __name__ == "__main__":
    main(*sys.argv[1:4])
