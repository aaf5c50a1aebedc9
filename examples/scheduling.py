"""A user's permutation problem solved by the ant colonies: single-machine scheduling with total
weighted completion time, in one Python file (no CUDA: the colonies' kernels are lsmgpu's).

Job i goes to position x[i]; the cost is sum_i w_i C_i, C_i the completion time of job i. The
ants build assignments (job -> position); the heuristic favours putting a job near its rank by
Smith's ratio w / p (which is optimal here, so the result can be checked).

Run:  python examples/scheduling.py   (MMAS with a swap descent on every ant, on the best backend)
"""
import numpy as np

from lsmgpu import ColonyModel, MaxMinAntSystem, Permutation, Problem, Swap


class Scheduling(Problem):
    """One machine, jobs with processing times ``p`` and weights ``w``: minimise sum w_i C_i."""

    def __init__(self, p, w):
        self.p, self.w = np.asarray(p, float), np.asarray(w, float)
        if self.p.shape != self.w.shape or self.p.ndim != 1 or (self.p <= 0).any() or (self.w <= 0).any():
            raise ValueError("Scheduling: `p` and `w` must be positive vectors of one length")
        super().__init__(Permutation(len(self.p)), Swap())

    def evaluate(self, x):
        order = np.argsort(x)                          # jobs in position order
        return float((self.w[order] * np.cumsum(self.p[order])).sum())

    def delta_swap(self, x, moves):
        """Cost changes of exchanging the positions of jobs i and j (for the local search)."""
        base, out = self.evaluate(x), np.empty(len(moves))
        for k, (i, j) in enumerate(moves):
            y = x.copy()
            y[[i, j]] = y[[j, i]]
            out[k] = self.evaluate(y) - base
        return out

    def colony_model(self, candidates=None):
        """Assignments job -> position; eta[job, position] high near the job's Smith rank."""
        rank = np.argsort(np.argsort(-self.w / self.p))
        eta = 1.0 / (1.0 + np.abs(np.arange(len(self.p))[None, :] - rank[:, None]))
        return ColonyModel("assignment", heuristic=eta)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    problem = Scheduling(rng.integers(1, 100, 40), rng.integers(1, 20, 40))
    smith = np.argsort(np.argsort(-problem.w / problem.p))         # the optimum, for the check
    result = MaxMinAntSystem(problem, local_search=Swap(), seed=0).run(seconds=10, target=problem.evaluate(smith))
    print(result.summary())
    print(f"optimum (Smith's rule): {problem.evaluate(smith):g}")
