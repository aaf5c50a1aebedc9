"""Small integer test problems for the move codes the shipped problems do not use:
bit flips at Hamming distance 1, 2, 3 and value changes over k values."""
import numpy as np

from lsmgpu import Binary, BitFlip, DeviceArray, Discrete, Problem, ValueChange


class LinearBits(Problem):
    """f(x) = sum_i w_i x_i + c * (number of adjacent equal bits): integer, with interactions."""

    integer = True
    template = "linear_bits.cu.j2"

    def __init__(self, w, c=3, distance=1):
        self.w = np.asarray(w, dtype=np.int32)
        self.c = int(c)
        super().__init__(Binary(len(self.w)), BitFlip(distance))

    def evaluate(self, x):
        return int(self.w @ x + self.c * np.count_nonzero(x[1:] == x[:-1]))

    def delta(self, x, moves):
        return np.array([self._delta_one(x, m) for m in moves], dtype=np.int64)

    def _delta_one(self, x, move):
        y = x.copy()
        y[move] = 1 - y[move]
        return self.evaluate(y) - self.evaluate(x)

    def device_data(self):
        return {"w": DeviceArray(self.w, "readonly")}

    def template_params(self):
        return {"c": self.c}


class ValueTable(Problem):
    """f(x) = sum_i t[i, x_i]: discrete vector over k values, table t of n x k integers."""

    integer = True
    template = "value_table.cu.j2"

    def __init__(self, table):
        self.t = np.asarray(table, dtype=np.int32)
        super().__init__(Discrete(self.t.shape[0], k=self.t.shape[1]), ValueChange())

    def evaluate(self, x):
        return int(self.t[np.arange(self.n), x].sum())

    def delta(self, x, moves):
        i = moves[:, 0]
        new = self.neighbourhood.new_values(x, moves)
        return self.t[i, new].astype(np.int64) - self.t[i, x[i]]

    def device_data(self):
        return {"t": DeviceArray(self.t, "readonly")}


class Faulty(LinearBits):
    """LinearBits whose kernel writes through a null pointer when it applies a move (``fault`` =
    "apply"): the GPU faults after the selection record is written."""

    template = "faulty.cu.j2"

    def template_params(self):
        return {"c": self.c, "fault": "apply"}
