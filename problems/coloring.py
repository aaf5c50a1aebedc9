"""Graph colouring (k colours): minimise the number of edges whose ends share a colour.

A solution gives each vertex a colour in {0, ..., k-1} (Discrete encoding); the neighbourhood
recolours one vertex, (k-1) n moves (ValueChange: move (v, o) gives v colour (x[v] + 1 + o) % k).
The delta is TabuCol's: with gamma[v, c] = number of neighbours of v coloured c, recolouring v
from c to c' changes the conflicts by gamma[v, c'] - gamma[v, c]. On the GPU the gamma table is
solution-derived state, updated along v's adjacency list by the template's apply_state block.
Defaults follow TabuCol (Hertz & de Werra 1987; Galinier & Hao 1999): tenure L + 0.6 F(s) with
L uniform in [0, 9] and F(s) the current number of conflicts.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lsmgpu.encodings import Discrete
from lsmgpu.neighbourhoods import ValueChange
from lsmgpu.problem import DeviceArray, Problem
from lsmgpu.validation import check_size

from .instances import read_text

__all__ = ["GraphColoring", "read_dimacs", "random_graph"]


def read_dimacs(path) -> tuple[int, np.ndarray]:
    """(n, edges as an (m, 2) array of 0-based vertices) from a DIMACS ``.col`` file."""
    path = Path(path)
    n, edges = None, []
    for number, line in enumerate(read_text(path, "GraphColoring").splitlines(), 1):
        fields = line.split()
        if not fields or fields[0] == "c":
            continue
        try:
            if fields[0] == "p":
                if len(fields) < 4 or fields[1] not in ("edge", "col"):
                    raise ValueError
                n = int(fields[2])
            elif fields[0] == "e":
                edges.append((int(fields[1]) - 1, int(fields[2]) - 1))
            else:
                raise ValueError
        except (ValueError, IndexError):
            raise ValueError(f"GraphColoring: {path.name} line {number}: not DIMACS: {line!r}") from None
    if n is None:
        raise ValueError(f"GraphColoring: {path.name} has no 'p edge N M' line")
    e = np.array(edges, dtype=np.int64).reshape(-1, 2)
    if e.size and (e.min() < 0 or e.max() >= n):
        raise ValueError(f"GraphColoring: {path.name} has an edge outside vertices 1..{n}")
    return n, e


def random_graph(n: int, density: float, seed: int, planted_colors: int | None = None) -> np.ndarray:
    """Edges of a seeded G(n, p) graph; with ``planted_colors`` = k, only edges between
    different classes of a hidden k-colouring, so the graph is k-colourable."""
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < density
    if planted_colors:
        hidden = rng.integers(0, planted_colors, n)
        keep &= hidden[i] != hidden[j]
    return np.stack([i[keep], j[keep]], axis=1)


class GraphColoring(Problem):
    """Colour the ``n`` vertices of a graph given by ``edges`` with ``k`` colours."""

    integer = True
    template = "coloring.cu.j2"
    device_move_kinds = ("value",)

    def __init__(self, n: int, edges, k: int, *, name: str = "coloring"):
        check_size("GraphColoring", n, 2)
        if not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"GraphColoring: `k` must be an integer >= 2, got {k!r}")
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if e.size and (e.min() < 0 or e.max() >= n):
            raise ValueError(f"GraphColoring: `edges` must join vertices 0..{n - 1}")
        e = e[e[:, 0] != e[:, 1]]
        e = np.unique(np.sort(e, axis=1), axis=0)               # simple graph: no loops, no repeats
        self.edges, self.k, self.name = e, int(k), name
        both = np.concatenate([e, e[:, ::-1]])
        order = np.lexsort((both[:, 1], both[:, 0]))
        self.neighbours = both[order, 1].astype(np.int32)          # CSR adjacency
        self.offsets = np.searchsorted(both[order, 0], np.arange(n + 1)).astype(np.int32)
        super().__init__(Discrete(n, k=self.k), ValueChange())

    @classmethod
    def from_file(cls, path, k: int) -> "GraphColoring":
        n, edges = read_dimacs(path)
        return cls(n, edges, k, name=Path(path).stem)

    def gamma(self, x: np.ndarray) -> np.ndarray:
        """gamma[v, c]: how many neighbours of v have colour c (TabuCol's table)."""
        g = np.zeros((self.n, self.k), dtype=np.int64)
        e = self.edges
        np.add.at(g, (e[:, 0], x[e[:, 1]]), 1)
        np.add.at(g, (e[:, 1], x[e[:, 0]]), 1)
        return g

    def evaluate(self, x):
        e = self.edges
        return int(np.count_nonzero(x[e[:, 0]] == x[e[:, 1]]))

    def delta_value(self, x, moves):
        v = moves[:, 0]
        g = self.gamma(x)
        return g[v, self.neighbourhood.new_values(x, moves)] - g[v, x[v]]

    def tabu_tenure(self):
        def tabucol(conflicts, rng):
            return int(rng.integers(0, 10)) + int(0.6 * conflicts)
        return tabucol

    def device_data(self):
        # global: 2 % faster than readonly, 3 % than texture on the H100 (benchmarks `memory` table)
        return {"offsets": DeviceArray(self.offsets, "global"),
                "adjacent": DeviceArray(self.neighbours if self.neighbours.size else np.zeros(1, np.int32),
                                        "global")}

    def solution_data(self, x):
        return {"gamma": self.gamma(x).astype(np.int32).ravel()}
