"""How α's ties are broken, and what it changes: each city's 5 α-nearest with ties of α going to the
shorter edge (the plain length c(i, j), `alpha_candidates`' order) or to the edge shorter under the penalties
(c(i, j) + π_i + π_j, LKH-3's order, `alpha_candidates(penalised_ties=True)`), and the share of the best known tour's
edges each holds. Most of a clustered instance's edges have α 0 (rl5915's best tour: 94 %), so the
tie-break, not α, orders most lists there.

The reference tour of each instance is the shortest of every tour of it in the ``--depth-tours``
files given (LKH-3's or lsmgpu's, whoever made it). Counts, the same on every machine; each row also
gives the share of cities whose list the two orders sort differently and the share whose five
differ as a set.

    python -m benchmarks.probes.alpha_ties .data/tsplib pr1002,rl5915 docs/bench/issue43/*.npz
"""
from __future__ import annotations

import sys

import numpy as np

from benchmarks.depth import coverage
from lsmgpu.problems import TSP
from problems.alpha import alpha_candidates

#: the lists' length, as the searches take them
K = 5


def tours_by_instance(files: list[str]) -> dict[str, list[np.ndarray]]:
    """Every tour of the ``--depth-tours`` files, by instance (the first part of each key)."""
    found: dict[str, list[np.ndarray]] = {}
    for name in files:
        with np.load(name) as tours:
            for key in tours.files:
                found.setdefault(key.split("|")[0], []).append(tours[key].astype(np.int64))
    return found


def main(data: str, names: str, files: list[str]) -> None:
    tours = tours_by_instance(files)
    print("instance | reference length (gap %) | ties by length % | ties by penalised length % "
          "| lists sorted otherwise % | lists of another set %")
    for name in names.split(","):
        tsp = TSP.from_file(f"{data}/{name}.tsp")
        candidates = [t for t in tours.get(name, []) if len(t) == tsp.n]
        if not candidates:
            raise SystemExit(f"no tour of {name} in {files}")
        lengths = [tsp.evaluate(t) for t in candidates]
        shortest = int(np.argmin(lengths))
        reference, best = candidates[shortest], lengths[shortest]
        plain, run = alpha_candidates(tsp, K)
        penalised, _ = alpha_candidates(tsp, K, run, penalised_ties=True)
        other_set = np.mean([set(a) != set(b) for a, b in zip(plain.tolist(), penalised.tolist())])
        gap = tsp.gap(best)
        shown = "?" if gap is None else f"{100 * gap:.4f}"
        print(f"{name} | {best} ({shown}) | {100 * coverage(reference, plain):.2f} "
              f"| {100 * coverage(reference, penalised):.2f} | {100 * (plain != penalised).any(1).mean():.1f} "
              f"| {100 * other_set:.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
