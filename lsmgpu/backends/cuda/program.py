"""A problem's kernels on one GPU: the compiled module, its launch geometry, its arrays.

:class:`Program` renders the problem's template for its neighbourhood (lsmgpu.kernels),
compiles it once per kind (driver.compile_module: memory and disk cache), loads it with the
instance's sizes in its constant memory (driver.load_module) and holds what every launch needs:
threads per move (lanes), moves per thread group (chunk), shared memory, the fitness and
solution types. :class:`DeviceArrays` uploads the problem's input arrays, each as its memory
policy asks (global, read-only, texture, shared), and holds its solution-derived arrays, one
copy per solution searched (one for a single search, B for a batch). :class:`Refresh` launches
the problem's grid-wide ``refresh`` kernel. The single and the batched evaluator are built on
these three (docs/architecture.md).
"""
from __future__ import annotations

import hashlib

import numpy as np

from ...kernels import KernelSpec, render
from .driver import cuda, launch, load_module, pack, resident_threads
from .texture import TextureObject

__all__ = ["Program", "DeviceArrays", "Refresh"]


class Program:
    """The kernels of ``problem`` over its neighbourhood, compiled for the current device.

    ``memory``: array name -> policy overrides; ``lanes``: threads per move in place of the
    problem's own choice (the batch kernels fill the GPU with many solutions' moves)."""

    def __init__(self, problem, options, memory: dict | None = None, lanes: int | None = None):
        device = options.context.get_device()
        self.problem, self.options = problem, options
        self.resident_threads = resident_threads(device)
        self.multiprocessors = device.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
        memory = options.memory if memory is None else memory
        self.spec = KernelSpec(problem, tuple(sorted(memory.items())), options.generation, lanes)
        self.source = render(problem, memory=memory, generation=options.generation, lanes=lanes)
        self.shared_bytes = self.spec.shared_bytes()
        self.lanes = self.spec.lanes()
        major, minor = device.compute_capability()
        self.module = load_module(self.source, f"sm_{major}{minor}", self.spec.constants())
        self.size = problem.neighbourhood.size
        # moves per chunk: step through consecutive moves once there are more than two per
        # resident thread group (decoding an index costs more than stepping to the next)
        groups = self.resident_threads // self.lanes
        self.chunk = int(min(32, max(1, self.size // (2 * groups))))
        #: threads the neighbourhood can keep busy: one group of lanes per chunk
        self.units = -(-self.size // self.chunk) * self.lanes
        self.integer = problem.integer
        self.fitness_char = "q" if self.integer else "d"
        self.fitness_dtype = np.dtype(problem.fitness_dtype)
        #: a reduction candidate: signed delta and move index
        self.candidate = np.dtype([("s", self.fitness_dtype), ("idx", np.int64)])
        self.sol_dtype = np.dtype(np.float64 if np.dtype(problem.encoding.dtype).kind == "f" else np.int32)
        self.digest = hashlib.sha1(self.source.encode()).hexdigest()[:16]

    def function(self, name: str):
        return self.module.get_function(name)


class DeviceArrays:
    """The problem's arrays on the device: its inputs (shared by every solution) and its
    solution-derived arrays, ``copies`` of each, end to end (one per solution searched).
    ``args`` are the kernel arguments in the template's order, ``chars`` their pack format.
    ``shared``: another problem's arrays (a neighbourhood chain) whose solution-derived arrays of the
    same name, type and size these use too, so that a solution moves between the chain's
    neighbourhoods without a copy."""

    def __init__(self, program: Program, copies: int = 1, shared: "DeviceArrays | None" = None):
        problem = program.problem
        data = problem.device_data()
        sample = problem.solution_data(problem.encoding.random(np.random.default_rng(0)))
        self.problem, self.copies = problem, int(copies)
        self.specs = program.spec.arrays()
        self._buffers, self._textures, self.args, self.chars = [], [], [], ""
        #: solution-derived arrays: name -> (buffer, dtype, elements per copy)
        self.state: dict[str, tuple] = {}
        for a in self.specs:
            host = np.asarray(sample[a.name]) if a.state else data[a.name].array
            if a.state:
                held = shared.state.get(a.name) if shared is not None else None
                if held is not None and held[1:] == (host.dtype, host.size) and shared.copies == self.copies:
                    buf = held[0]
                else:
                    buf = cuda.mem_alloc(self.copies * max(1, host.size) * host.dtype.itemsize)
                self.state[a.name] = (buf, host.dtype, host.size)
            else:
                buf = cuda.to_device(np.ascontiguousarray(host))
            self._buffers.append(buf)
            if a.policy == "texture":
                texture = TextureObject(int(buf), host.dtype, host.size)
                self._textures.append(texture)
                self.args.append(np.uint64(texture.handle))
                self.chars += "Q"
            else:
                self.args.append(np.intp(int(buf)))
                self.chars += "P"

    def upload_state(self, xs, first: int = 0, rows=None) -> None:
        """The solution-derived arrays of the solutions ``xs``, as copies first, first + 1, ...
        (or as the copies ``rows``, one per solution)."""
        records = [self.problem.solution_data(x) for x in xs]
        for name, (buf, dtype, length) in self.state.items():
            arrays = [np.asarray(r[name], dtype=dtype).ravel() for r in records]
            if any(a.size != length for a in arrays):
                raise ValueError(f"{self.problem.name}.solution_data: {name!r} changed size from {length}")
            row_bytes = length * dtype.itemsize
            if rows is None:
                cuda.memcpy_htod(int(buf) + first * row_bytes, np.ascontiguousarray(np.concatenate(arrays)))
                continue
            for k, array in zip(rows, arrays):
                cuda.memcpy_htod(int(buf) + int(k) * row_bytes, np.ascontiguousarray(array))

    def same_layout(self, other: "DeviceArrays") -> bool:
        """Whether ``other`` holds solution-derived arrays of the same names, types and sizes."""
        return {k: v[1:] for k, v in other.state.items()} == {k: v[1:] for k, v in self.state.items()}

    def copy_state_from(self, other: "DeviceArrays") -> None:
        """Copy ``other``'s solution-derived arrays (copy 0) on the device."""
        for name, (buf, dtype, length) in self.state.items():
            cuda.memcpy_dtod(buf, other.state[name][0], length * dtype.itemsize)

    def close(self) -> None:
        for texture in self._textures:
            texture.close()
        self._textures = []


class Refresh:
    """Launcher of the problem's grid-wide ``refresh`` kernel (Problem.refresh_items) over
    ``starts`` solutions laid end to end from ``xs``."""

    def __init__(self, program: Program, arrays: DeviceArrays, xs, starts: int):
        items = program.problem.refresh_items()
        self.function = program.function("refresh")
        self.args = pack("Pi" + arrays.chars, int(xs), int(starts), *(int(a) for a in arrays.args))
        self.grid = int(min(-(-starts * items // 256), 4 * program.resident_threads // 256))

    @classmethod
    def of(cls, program: Program, arrays: DeviceArrays, xs, starts: int) -> "Refresh | None":
        """The launcher, or None when the problem has nothing to refresh."""
        return cls(program, arrays, xs, starts) if program.problem.refresh_items() else None

    def __call__(self) -> None:
        """Queue one refresh behind the launches before it."""
        launch(self.function, "refresh", (self.grid, 1), 256, self.args)
