"""Adding a problem to lsmgpu: weighted max-cut, in one Python file and one CUDA template.

Run:  python examples/maxcut.py   (tabu search on a random graph, on the best backend)
"""
import numpy as np

from lsmgpu import Binary, BitFlip, DeviceArray, Problem, TabuSearch


class MaxCut(Problem):
    """Weighted max-cut: x[i] in {0, 1} is the side of vertex i; maximise the cut weight."""

    maximize = True
    template = "maxcut.cu.j2"  # looked up next to this file, then in lsmgpu's templates/

    def __init__(self, weights):
        w = np.asarray(weights, dtype=np.float32)
        if w.ndim != 2 or w.shape[0] != w.shape[1] or not np.allclose(w, w.T):
            raise ValueError(f"MaxCut: `weights` must be a symmetric square matrix, got shape {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("MaxCut: `weights` contain NaN or infinity")
        self.w = w.copy()
        np.fill_diagonal(self.w, 0.0)
        super().__init__(Binary(len(w)), BitFlip(1))

    def evaluate(self, x):
        return float(self.w[x[:, None] != x[None, :]].sum(dtype=np.float64) / 2)

    def delta(self, x, moves):
        i = moves[:, 0]                                        # the flipped vertex of each move
        sign = np.where(x[i, None] == x[None, :], 1.0, -1.0)   # same side -> cut, cut -> same side
        return (self.w[i] * sign).sum(axis=1, dtype=np.float64)

    def device_data(self):
        return {"w": DeviceArray(self.w, policy="readonly")}

    def tabu_tenure(self):
        return (self.n // 10, self.n // 5)


def random_graph(n: int, density: float, seed: int) -> np.ndarray:
    """Symmetric weights in [1, 10) on a random fraction ``density`` of the pairs."""
    rng = np.random.default_rng(seed)
    w = np.triu(rng.uniform(1, 10, (n, n)) * (rng.random((n, n)) < density), 1)
    return w + w.T


if __name__ == "__main__":
    problem = MaxCut(random_graph(200, 0.1, seed=0))
    result = TabuSearch(problem, seed=0).run(iterations=2000)
    print(result.summary())
