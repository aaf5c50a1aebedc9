"""B solutions improved together on one GPU: the CUDA backend's population (lsmgpu/backends/population.py
says what a population does; :class:`~lsmgpu.backends.population.EvaluatorPopulation` is the reference).

Each neighbourhood of the chain has its program (kernels built once per kind) and its input arrays;
the rows' solutions, their signed fitness, and their solution-derived arrays (one copy per row)
are held once, shared by the chain's neighbourhoods where those arrays have the same layout (the
TSP's candidate 2-opt, Or-opt and candidate 3-opt all keep tour positions, edge lengths and
coordinates), so a solution passes from one neighbourhood to the next where it lies.

A descent step is one launch of ``descend_batch`` over (blocks per row) x (rows): every active row's
neighbourhood evaluated, each row's improving move chosen by a segmented reduction and applied by
its last block, a row without one switched off (templates/skeleton/evaluate.cu.j2). The host
queues launches in chunks and reads the rows' active flags between them. Rows at different levels
of the chain descend in rounds, one neighbourhood's launches for the rows at its level. ILS kicks
(``kick_batch``: the problem's template makes the moves from the host's draws) and the keep / go
back of accepted solutions (``copy_rows``) run on the GPU too: per ILS iteration only the draws go
up and the rows' fitness comes back.
"""
from __future__ import annotations

import time

import numpy as np

from ..tuning import default_configuration
from .driver import cuda, download, launch, pack, resident_threads, synchronize
from .program import DeviceArrays, Program, Refresh
from .batch import batch_lanes

__all__ = ["CudaPopulation", "population_bytes"]

#: descent launches queued between two looks at the rows' active flags (the first chunks are
#: short: a descent after an ILS kick takes a few moves; one from a random tour thousands)
CHUNKS = (2, 4, 8, 16, 32, 64)
#: threads of a descent launch, in waves of the GPU's resident threads, shared evenly by the rows
#: (at least 256 each)
WAVES = 1
#: of the GPU's free memory, what a population may take (the rest: kernels, the tuner, other work)
MEMORY_SHARE = 0.9


def population_bytes(steps, rows: int) -> int:
    """Device memory ``rows`` rows of the chain ``steps`` hold: current, home and best solutions,
    two copies (current, home) of each distinct solution-derived array, and per-row bookkeeping."""
    problem = steps[0]
    itemsize = 8 if np.dtype(problem.encoding.dtype).kind == "f" else 4
    state = {}
    for step in steps:
        sample = step.solution_data(step.encoding.random(np.random.default_rng(0)))
        for name, array in sample.items():
            state[name] = max(state.get(name, 0), np.asarray(array).nbytes)
    return rows * (3 * problem.n * itemsize + 2 * sum(state.values()) + 4096)


class CudaPopulation:
    """``rows`` solutions of the chain ``steps`` (the problem over each neighbourhood) on one GPU."""

    backend = "cuda"

    def __init__(self, steps, options, rows: int, waves: float = WAVES):
        self.steps, self.rows = list(steps), int(rows)
        self.problem = problem = self.steps[0]
        self.sense, self.n = problem.sense, problem.n
        self.device = options.device
        need, (free, _) = population_bytes(self.steps, self.rows), options.memory_info()
        if need > MEMORY_SHARE * free:
            fit = int(MEMORY_SHARE * free // max(1, need // self.rows))
            raise ValueError(f"population: {self.rows:,} solutions of {problem.name} need {need / 2**30:,.2f} GiB of "
                             f"GPU memory; {free / 2**30:,.1f} GiB are free, room for about {fit:,}")
        B = self.rows
        resident = resident_threads(options.context.get_device())
        self.levels = []
        shared = None
        for step in self.steps:
            # the kernels rewrite the solution-derived arrays and read them in one launch (kicks):
            # coherent global loads, not the read-only cache
            sample = step.solution_data(step.encoding.random(np.random.default_rng(0)))
            memory = {**options.memory, **{name: "global" for name in sample}}
            program = Program(step, options, memory, batch_lanes(step, step.neighbourhood, B, resident))
            arrays = DeviceArrays(program, copies=B, shared=shared)
            shared = shared or arrays
            self.levels.append(_Level(program, arrays, B, waves))
        main = self.levels[0]
        self.sol_dtype, self.ftype = main.program.sol_dtype, main.program.fitness_dtype
        row_bytes = self.n * self.sol_dtype.itemsize
        self.xs, self.home, self.best = (cuda.mem_alloc(B * row_bytes) for _ in range(3))
        #: the buffers each level's kernels read and write: where a level holds one another level's
        #: kernels do not, its copy goes stale when they move a row, and is uploaded from the host
        #: when the row comes to it (stale[l][k])
        self.holds = [{int(buf) for buf, _, _ in level.arrays.state.values()} for level in self.levels]
        self.stale = [np.zeros(B, bool) for _ in self.levels]
        self.home_state = {name: cuda.mem_alloc(B * length * dtype.itemsize)
                           for name, (_, dtype, length) in main.arrays.state.items()}
        self.current = cuda.mem_alloc(B * 8)
        self.home_value = np.zeros(B, self.ftype)
        self.active = cuda.mem_alloc(B * 4)
        self.made = cuda.mem_alloc(B * 4)
        self.ticket = cuda.to_device(np.zeros(B, np.uint32))
        self.first_found = cuda.to_device(np.full(B, np.iinfo(np.uint64).max, np.uint64))
        self.partial = cuda.mem_alloc(B * max(level.blocks for level in self.levels) * main.program.candidate.itemsize)
        self.select = cuda.mem_alloc(B * 4)
        self.draws = None
        for level in self.levels:
            level.bind(self)
        self.copy_rows = main.program.function("copy_rows")
        self.kicks = "kick_batch" in main.program.source
        if self.kicks:
            self.kick_function = main.program.function("kick_batch")
        self.timings = {"descent": 0.0, "kick": 0.0}

    # --- rows in and out -------------------------------------------------------------------------
    def load(self, xs) -> None:
        xs = np.ascontiguousarray(xs, dtype=self.sol_dtype)
        for buffer in (self.xs, self.home, self.best):
            cuda.memcpy_htod(buffer, xs)
        values = np.array([self.sense * self.problem.fitness(x) for x in xs], dtype=self.ftype)
        cuda.memcpy_htod(self.current, values)
        self.home_value = values.copy()
        self._upload_state(np.arange(self.rows), xs)
        self._copy_state(self.home_state, self._main_state(), np.ones(self.rows, bool))

    def set_rows(self, rows, xs, values, home: bool = False) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        xs = np.ascontiguousarray(xs, dtype=self.sol_dtype)
        values = np.asarray(values, dtype=self.ftype)
        row_bytes = self.n * self.sol_dtype.itemsize
        current = self.values()
        current[rows] = values
        cuda.memcpy_htod(self.current, current)
        targets = (self.xs, self.home) if home else (self.xs,)
        if np.array_equal(rows, np.arange(self.rows)):
            for buffer in targets:
                cuda.memcpy_htod(buffer, xs)
        else:
            for k, x in zip(rows, xs):
                for buffer in targets:
                    cuda.memcpy_htod(int(buffer) + int(k) * row_bytes, x)
        self._upload_state(rows, xs)
        if home:
            self.home_value[rows] = values
            mask = np.zeros(self.rows, bool)
            mask[rows] = True
            self._copy_state(self.home_state, self._main_state(), mask)

    def values(self) -> np.ndarray:
        return download(self.current, self.rows, self.ftype)

    def _download(self, buffer) -> np.ndarray:
        return download(buffer, (self.rows, self.n), self.sol_dtype).astype(self.problem.encoding.dtype)

    def solutions(self) -> np.ndarray:
        return self._download(self.xs)

    def home_solutions(self) -> np.ndarray:
        return self._download(self.home)

    def best_solutions(self) -> np.ndarray:
        return self._download(self.best)

    # --- the descent -----------------------------------------------------------------------------
    def descend(self, rows, rule: str = "best", deadline: float | None = None):
        """See lsmgpu.backends.population: (moves made, moves evaluated, finished) per row."""
        t0 = time.perf_counter()
        rows = np.asarray(rows, bool)
        level = np.where(rows, 0, -1)
        made = np.zeros(self.rows, np.int64)
        evaluated = np.zeros(self.rows, np.int64)
        last = len(self.levels) - 1
        try:
            while (level >= 0).any():
                for l, stage in enumerate(self.levels):
                    at = level == l
                    if not at.any():
                        continue
                    self._bring(l, at)
                    count, finished = stage.descend(at, rule == "first", deadline)
                    made += count
                    evaluated += (count + at) * stage.program.size
                    if not finished:
                        return made, evaluated, False
                    self._mark_moved(at & (count > 0), by=l)
                    if l == 0:
                        level[at] = 1 if last else -1
                    else:
                        level[at & (count > 0)] = 0
                        level[at & (count == 0)] = l + 1 if l < last else -1
            self._bring(0, rows)
            return made, evaluated, True
        finally:
            self.timings["descent"] += time.perf_counter() - t0

    def _bring(self, l: int, rows) -> None:
        """Make the rows' solution-derived arrays at level ``l`` current (an upload from the host
        where another level with arrays of its own moved them)."""
        stale = np.flatnonzero(rows & self.stale[l])
        if stale.size:
            xs = self.solutions()[stale]
            self.levels[l].arrays.upload_state(xs, rows=stale)
            self.stale[l][stale] = False

    # --- the ILS's moves of whole rows -----------------------------------------------------------
    def kick(self, draws, rows) -> None:
        """One kick unit per row in ``rows`` on the GPU (kick_batch), from its draws."""
        if not self.kicks:
            raise TypeError(f"{self.problem.name}: its template has no kick block for {self.problem.neighbourhood!r}")
        t0 = time.perf_counter()
        table = np.array(draws, dtype=np.int32, copy=True).reshape(self.rows, -1)
        table[~np.asarray(rows, bool), 0] = -1
        if self.draws is None:
            self.draws = cuda.mem_alloc(table.nbytes)
        cuda.memcpy_htod(self.draws, table)
        main = self.levels[0]
        launch(self.kick_function, "kick_batch", (self.rows, 1), 256,
               pack("PPP" + main.arrays.chars, int(self.xs), int(self.draws), int(self.current), *main.args))
        if main.refresh:
            main.refresh()
        self._mark_moved(np.asarray(rows, bool))
        self.timings["kick"] += time.perf_counter() - t0

    def keep(self, accepted, rejected) -> None:
        """home <- current on the accepted rows, current <- home on the rejected ones (solutions,
        their solution-derived arrays and fitness)."""
        accepted, rejected = np.asarray(accepted, bool), np.asarray(rejected, bool)
        values = self.values()
        self.home_value[accepted] = values[accepted]
        values[rejected] = self.home_value[rejected]
        cuda.memcpy_htod(self.current, values)
        choice = np.where(accepted, 1, np.where(rejected, 0, -1)).astype(np.int32)
        cuda.memcpy_htod(self.select, choice)
        pairs = [(self.home, self.xs, self.n * self.sol_dtype.itemsize)]
        pairs += [(self.home_state[name], buf, length * dtype.itemsize)
                  for name, (buf, dtype, length) in self._main_state().items()]
        for home, live, row_bytes in pairs:
            self._copy(home, live, row_bytes, 1)
            self._copy(live, home, row_bytes, 0)
        if self.levels[0].refresh:
            self.levels[0].refresh()
        self._mark_moved(rejected)

    def save_best(self, rows) -> None:
        cuda.memcpy_htod(self.select, np.asarray(rows, bool).astype(np.int32))
        self._copy(self.best, self.xs, self.n * self.sol_dtype.itemsize, 1)

    def _copy(self, dst, src, row_bytes: int, want: int) -> None:
        words = row_bytes // 4
        grid = (int(min(8, -(-words // 256))), self.rows)
        launch(self.copy_rows, "copy_rows", grid, 256, pack("PPqPi", int(dst), int(src), words, int(self.select), want))

    def _main_state(self) -> dict:
        return self.levels[0].arrays.state

    def _copy_state(self, dst: dict, src: dict, rows) -> None:
        cuda.memcpy_htod(self.select, np.asarray(rows, bool).astype(np.int32))
        for name, (buf, dtype, length) in src.items():
            self._copy(dst[name], buf, length * dtype.itemsize, 1)

    def _upload_state(self, rows, xs) -> None:
        """The rows' solution-derived arrays computed on the host and uploaded, at every level
        that holds buffers of its own (the first level's serve the others)."""
        for l, level in enumerate(self.levels):
            if l == 0 or self.holds[l] - self.holds[0]:
                level.arrays.upload_state(xs, rows=rows)
            if level.refresh:
                level.refresh()
            self.stale[l][np.asarray(rows, dtype=np.int64)] = False

    def _mark_moved(self, rows, by: int = 0) -> None:
        """Rows changed by level ``by``'s kernels: the buffers of other levels that it does not
        hold are stale for them."""
        for l in range(len(self.levels)):
            if l != by and self.holds[l] - self.holds[by]:
                self.stale[l] |= rows

    def close(self) -> None:
        synchronize("the population's last launches")
        for level in self.levels:
            level.arrays.close()


class _Level:
    """One neighbourhood of the chain: its program, its arrays and its launch geometry."""

    def __init__(self, program: Program, arrays: DeviceArrays, rows: int, waves: float):
        self.program, self.arrays, self.rows = program, arrays, rows
        share = max(256, int(waves * program.resident_threads) // rows)
        threads, self.block = default_configuration(min(program.units, share), program.resident_threads)
        self.blocks = threads // self.block
        groups = threads // program.lanes
        self.chunk = int(min(32, max(1, program.size // groups)))
        self.function = program.function("descend_batch")
        self.args = [int(a) for a in arrays.args]
        self.refresh = None

    def bind(self, population: CudaPopulation) -> None:
        """The launch arguments over the population's buffers."""
        p = population
        self.population = p
        self.refresh = Refresh.of(self.program, self.arrays, p.xs, self.rows)
        self.head = (int(p.xs),)
        self.tail = (int(p.current), int(p.active), int(p.made), self.chunk, int(p.partial), int(p.ticket),
                     int(p.first_found))

    def descend(self, rows, first: bool, deadline: float | None):
        """Descent steps of this neighbourhood for the rows in ``rows`` until none of them has an
        improving move (or ``deadline``): (moves made per row, finished)."""
        p = self.population
        cuda.memcpy_htod(p.active, rows.astype(np.int32))
        cuda.memset_d32(p.made, 0, self.rows)
        args = pack("Pi" + "PPPqPPP" + self.arrays.chars, *self.head, 1 if first else 0, *self.tail, *self.args)
        active = np.empty(self.rows, np.int32)
        finished = True
        for chunk in _chunks():
            for _ in range(chunk):
                launch(self.function, "descend_batch", (self.blocks, self.rows), self.block, args,
                       self.program.shared_bytes)
                if self.refresh:
                    self.refresh()
            cuda.memcpy_dtoh(active, p.active)
            if not active.any():
                break
            if deadline is not None and time.perf_counter() >= deadline:
                finished = False
                break
        made = download(p.made, self.rows, np.int32)
        return made.astype(np.int64), finished


def _chunks():
    """Launches per chunk: growing, then CHUNKS[-1] for ever."""
    yield from CHUNKS
    while True:
        yield CHUNKS[-1]
