"""Rendering the CUDA kernels: one Jinja2 environment.

A kernel is the engine skeleton (``templates/skeleton/evaluate.cu.j2``) extended by the
problem's template (beside the problem's module), with the neighbourhood's move code
(``templates/moves/<device_code>.cu.j2``), rendered with what decides the code baked in (the
types, the problem's ``template_params()``, the neighbourhood's ``device_params()``, the memory
policies, each input array's ``load(name, index)`` expression; docs/architecture.md) and the
instance's sizes left out: ``N``, the neighbourhood size, the tabu matrix, array lengths, the
problem's ``device_constants()`` and the neighbourhood's (e.g. the crowns' seed) are
``__constant__`` variables set for each instance when its module is loaded
(:meth:`KernelSpec.constants`). So every instance of one kind of problem and neighbourhood
renders the same source, and a second instance, or a second crowns seed, starts without nvcc.
Rendering uses ``StrictUndefined``, so a template that names an unknown variable fails with a
clear message instead of emitting broken CUDA.

The compiled templates are cached in the cache folder (lsmgpu/cubins.py), beside the cubins,
so a second process renders without Jinja2's compiler either.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2
import numpy as np

from .backends.base import TENURE_BLOCK
from .cubins import cache_dir
from .encodings import Discrete
from .errors import KernelCompileError
from .problem import MEMORY_POLICIES, Problem

__all__ = ["render", "render_skeleton", "KernelSpec", "DeviceConstant", "template_names", "TEMPLATE_DIR"]

TEMPLATE_DIR = Path(str(resources.files("lsmgpu.templates")))

CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int32): "int",
          np.dtype(np.int64): "long long", np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
          np.dtype(np.uint64): "unsigned long long"}

#: solutions up to this many bytes are staged in shared memory by every block
SHARED_SOLUTION_BYTES = 32 * 1024
#: shared memory a block may use without opting in (CUDA's default dynamic limit)
SHARED_LIMIT_BYTES = 48 * 1024


def template_names() -> list[str]:
    """All templates shipped in the package, relative to the templates folder."""
    return sorted(str(p.relative_to(TEMPLATE_DIR)) for p in TEMPLATE_DIR.rglob("*.cu.j2"))


@dataclass(frozen=True)
class ArraySpec:
    """One input array as the template sees it."""

    name: str
    ctype: str
    policy: str
    length: int
    #: derived from the solution and rewritten on the GPU by the problem's apply_state block
    state: bool = False

    @property
    def shared_bytes(self) -> int:
        nbytes = self.length * {"float": 4, "double": 8, "int": 4, "long long": 8}.get(self.ctype, 1)
        return (nbytes + 15) // 16 * 16

    @property
    def length_name(self) -> str:
        """Its length's device constant (set per instance: lengths are not in the source)."""
        return f"LEN_{self.name}"

    @property
    def param(self) -> str:
        if self.policy == "texture":
            return f"unsigned long long arr_{self.name}"
        const = "" if self.policy == "global" or self.state else "const "
        return f"{const}{self.ctype}* __restrict__ arr_{self.name}"

    @property
    def decl(self) -> str:
        if self.policy == "texture":
            return f"unsigned long long {self.name}"
        const = "" if self.policy == "global" else "const "
        return f"{const}{self.ctype}* {self.name}"

    def load(self, index: str) -> str:
        """The expression that reads element ``index`` as the memory policy asks."""
        if self.policy == "readonly":
            return f"__ldg(&d.{self.name}[{index}])"
        if self.policy == "texture":
            return f"tex_{self.ctype.replace(' ', '')}(d.{self.name}, {index})"
        return f"d.{self.name}[{index}]"


@dataclass(frozen=True)
class DeviceConstant:
    """An instance number of the kernel: a ``__constant__`` set when its module is loaded, or,
    ``baked``, a literal in the source (Neighbourhood.baked_constants)."""

    name: str
    value: np.generic
    baked: bool = False

    @property
    def ctype(self) -> str:
        return CTYPES[self.value.dtype]

    @property
    def literal(self) -> str:
        """The value as a C literal of its type (exact: doubles by repr)."""
        wide = self.value.dtype.itemsize == 8
        suffix = {"u": "ULL", "i": "LL"}.get(self.value.dtype.kind, "") if wide else ""
        return f"(({self.ctype}){self.value.item()!r}{suffix})"


def _constant(owner: str, name: str, value) -> DeviceConstant:
    """``value`` as a typed device constant: Python ints as long long, floats as double."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{owner}: device constant {name!r} must be a number, got {value!r}")
    value = np.int64(value) if isinstance(value, int) else np.float64(value) if isinstance(value, float) else value
    if value.dtype not in CTYPES:
        raise TypeError(f"{owner}: device constant {name!r} has unsupported dtype {value.dtype}")
    return DeviceConstant(name, value)


@dataclass(frozen=True)
class KernelSpec:
    """Everything that decides a kernel's source: the problem, its neighbourhood and options."""

    problem: Problem
    memory: tuple[tuple[str, str], ...] = ()
    generation: str = "device"
    #: threads per move in place of the problem's lanes_per_move() (the batch kernels fill the
    #: GPU with many starts' moves and need fewer lanes)
    lanes_override: int | None = None

    def arrays(self) -> list[ArraySpec]:
        """The problem's device arrays, then its solution-derived (state) arrays."""
        return list(self._arrays)

    @functools.cached_property
    def _arrays(self) -> tuple[ArraySpec, ...]:
        """arrays(), worked out once per spec (device_data() and solution_data() are O(n) and
        every part of the context asks)."""
        problem = self.problem
        data = {name: (arr.array, arr.policy) for name, arr in problem.device_data().items()}
        sample = problem.encoding.random(np.random.default_rng(0))
        state = {name: np.asarray(a) for name, a in problem.solution_data(sample).items()}
        overrides = dict(self.memory)
        unknown = set(overrides) - set(data) - set(state)
        if unknown:
            raise ValueError(f"memory: {problem.name} has no device array named {sorted(unknown)}; "
                             f"it has {sorted(data) + sorted(state)}")
        if set(data) & set(state):
            raise ValueError(f"{problem.name}: device_data() and solution_data() share names "
                             f"{sorted(set(data) & set(state))}")
        specs = []
        for name, (array, policy) in data.items():
            policy = overrides.get(name, policy)
            self._check(name, array, policy)
            specs.append(ArraySpec(name, CTYPES[array.dtype], policy, int(array.size)))
        for name, array in state.items():
            policy = overrides.get(name, "readonly")
            self._check(name, array, policy)
            if policy not in ("global", "readonly"):
                raise ValueError(f"memory: solution-derived array {name!r} is rewritten on the GPU; "
                                 f"its policy must be 'global' or 'readonly', got {policy!r}")
            specs.append(ArraySpec(name, CTYPES[array.dtype], policy, int(array.size), state=True))
        return tuple(specs)

    def _check(self, name: str, array: np.ndarray, policy: str) -> None:
        if policy not in MEMORY_POLICIES:
            raise ValueError(f"memory: policy of {name!r} must be one of {MEMORY_POLICIES}, got {policy!r}")
        if array.dtype not in CTYPES:
            raise TypeError(f"{self.problem.name}: device array {name!r} has unsupported dtype {array.dtype}")
        if policy == "texture" and array.size >= 2**27:
            raise ValueError(f"memory: {name!r} has {array.size} elements, more than a 1D texture holds (2^27)")

    def shared_bytes(self) -> int:
        """Dynamic shared memory per block: shared-policy arrays, then the solution if it fits."""
        total = sum(a.shared_bytes for a in self.arrays() if a.policy == "shared")
        if total > SHARED_LIMIT_BYTES:
            raise ValueError(f"memory: shared-policy arrays of {self.problem.name} need {total} bytes, "
                             f"more than the {SHARED_LIMIT_BYTES} a block gets; use 'readonly' or 'texture'")
        return total + (self._solution_bytes() if self.shared_solution(total) else 0)

    def _solution_bytes(self) -> int:
        itemsize = np.dtype(self.problem.encoding.dtype).itemsize
        return (self.problem.n * itemsize + 15) // 16 * 16

    def shared_solution(self, arrays_bytes: int | None = None) -> bool:
        if arrays_bytes is None:
            arrays_bytes = sum(a.shared_bytes for a in self.arrays() if a.policy == "shared")
        sol = self._solution_bytes()
        return sol <= SHARED_SOLUTION_BYTES and arrays_bytes + sol <= SHARED_LIMIT_BYTES

    def lanes(self) -> int:
        lanes = self.lanes_override or self.problem.lanes_per_move()
        if lanes not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"{self.problem.name}.lanes_per_move() must be 1, 2, 4, 8, 16 or 32, got {lanes}")
        return lanes

    def context(self) -> dict:
        problem, nb = self.problem, self.problem.neighbourhood
        arrays = self.arrays()
        by_name = {a.name: a for a in arrays}

        def load(name: str, index: str) -> str:
            if name not in by_name:
                raise KeyError(f"template of {problem.name} loads unknown array {name!r}; "
                               f"device_data() has {sorted(by_name)}")
            return by_name[name].load(index)

        integer = problem.integer
        context = dict(
            problem_kind=type(problem).__name__, sense=problem.sense,
            device_code=nb.device_code, move_kind=nb.move_kind, lanes=self.lanes(),
            tour_moves=nb.device_decoded, device_decoded=nb.device_decoded, tenure_block=TENURE_BLOCK,
            constants=self.constants(),
            fitness_type="long long" if integer else "double",
            fitness_max="0x7fffffffffffffffLL" if integer else "__longlong_as_double(0x7ff0000000000000LL)",
            sol_type="double" if np.dtype(problem.encoding.dtype).kind == "f" else "int",
            arrays=arrays, state_arrays=[a for a in arrays if a.state],
            textures=any(a.policy == "texture" for a in arrays),
            shared_solution=self.shared_solution(), generation=self.generation,
            refreshes=_refresh_items(problem, arrays) > 0,
            load=load)
        context.update(nb.device_params())
        clash = set(context) & set(problem.template_params())
        if clash:
            raise ValueError(f"{problem.name}.template_params() redefines engine names {sorted(clash)}")
        context.update(problem.template_params())
        return context


    def constants(self) -> list[DeviceConstant]:
        """The instance's values the kernel reads from ``__constant__`` memory: the engine's
        (N, the neighbourhood size NB_SIZE, the tabu matrix's TABU_COLS and TABU_SIZE, the
        values per position K, the host's ints per move ARITY, REFRESH_ITEMS, each array's
        LEN_<name>), then the neighbourhood's and the problem's ``device_constants()``."""
        problem, nb = self.problem, self.problem.neighbourhood
        shape = _tabu_shape(nb)
        engine = {"N": problem.n, "NB_SIZE": nb.size,
                  "TABU_COLS": shape[1] if shape else 1, "TABU_SIZE": shape[0] * shape[1] if shape else 1,
                  "K": np.int32(problem.encoding.k if isinstance(problem.encoding, Discrete) else 2),
                  "ARITY": np.int32(max(1, nb.arity)),
                  "REFRESH_ITEMS": problem.refresh_items()}
        engine.update({a.length_name: a.length for a in self.arrays()})
        found = [_constant(problem.name, name, value) for name, value in engine.items()]
        for owner, extra in ((repr(nb), nb.device_constants()), (problem.name, problem.device_constants())):
            clash = set(extra) & {c.name for c in found}
            if clash:
                raise ValueError(f"{owner}.device_constants() redefines {sorted(clash)}")
            found += [_constant(owner, name, value) for name, value in extra.items()]
        unknown = set(nb.baked_constants) - {c.name for c in found}
        if unknown:
            raise ValueError(f"{nb!r}.baked_constants names no device constant: {sorted(unknown)}")
        return [DeviceConstant(c.name, c.value, c.name in nb.baked_constants) for c in found]


def _refresh_items(problem: Problem, arrays: list[ArraySpec]) -> int:
    """The problem's refresh_items(), checked: a refresh needs state arrays to write."""
    items = problem.refresh_items()
    if not isinstance(items, (int, np.integer)) or items < 0:
        raise ValueError(f"{problem.name}.refresh_items() must be a non-negative int, got {items!r}")
    if items and not any(a.state for a in arrays):
        raise ValueError(f"{problem.name}.refresh_items() is {items} but solution_data() declares no state to refresh")
    return int(items)


def _tabu_shape(nb) -> tuple[int, int] | None:
    """The neighbourhood's tabu matrix shape, or None where it has none or it would be too large."""
    try:
        return nb.tabu_shape()
    except ValueError:  # e.g. 2-opt beyond the size where a tabu matrix is sensible
        return None


def _environment(problem: Problem) -> jinja2.Environment:
    """The Jinja2 environment over the problem's template folders and the engine's."""
    return _environment_of(tuple(str(d) for d in problem.template_dirs()))


@functools.lru_cache(maxsize=None)
def _environment_of(dirs: tuple[str, ...]) -> jinja2.Environment:
    """One environment per folder list: its parsed templates are reused (reloaded when a file
    changes), and their compiled code is kept in lsmgpu's cache folder, so that a new process
    renders in milliseconds instead of parsing every template again (0.14 s on the H100 machine)."""
    loader = jinja2.FileSystemLoader(list(dirs) + [str(TEMPLATE_DIR)])
    folder = os.path.join(cache_dir(), "jinja")
    os.makedirs(folder, exist_ok=True)
    return jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, trim_blocks=False,
                              keep_trailing_newline=True, autoescape=False,
                              bytecode_cache=jinja2.FileSystemBytecodeCache(folder))


def render(problem: Problem, *, memory: dict | None = None, generation: str = "device",
           lanes: int | None = None) -> str:
    """CUDA source of ``problem``'s kernels (its default neighbourhood, the given policies;
    ``lanes``: threads per move instead of the problem's own choice)."""
    if problem.template is None:
        raise TypeError(f"{problem.name} has no CUDA template (set the class attribute `template`)")
    reason = problem.unsupported(problem.neighbourhood, "cuda")
    if reason:
        raise TypeError(reason)
    if generation not in ("device", "host"):
        raise ValueError(f"`generation` must be 'device' or 'host', got {generation!r}")
    if generation == "host" and not problem.neighbourhood.static:
        raise ValueError(f"generation='host' uploads a list of integer moves; {problem.neighbourhood!r} draws "
                         "new moves every iteration: use generation='device'")
    spec = KernelSpec(problem, tuple(sorted((memory or {}).items())), generation, lanes)
    try:
        template = _environment(problem).get_template(problem.template)
        return template.render(**spec.context())
    except jinja2.TemplateNotFound as exc:
        raise KernelCompileError(f"{problem.name}: template {exc.name!r} not found next to the problem "
                                 f"or in {TEMPLATE_DIR}") from None
    except jinja2.UndefinedError as exc:
        raise KernelCompileError(f"{problem.name}: template {problem.template!r} uses an undefined name: "
                                 f"{exc.message}") from None
    except jinja2.TemplateSyntaxError as exc:
        raise KernelCompileError(f"{problem.name}: syntax error in template {exc.name or problem.template!r} "
                                 f"line {exc.lineno}: {exc.message}") from None


def render_fragment(problem: Problem, name: str, **context) -> str:
    """CUDA source of one template file of ``problem``'s folders (e.g. the TSP's distance
    functions, tsp_distance.cu.j2) rendered with ``context``, for the engine's own kernels."""
    return _environment(problem).get_template(name).render(**context)


def render_skeleton(name: str, **context) -> str:
    """CUDA source of one of the engine's own templates (``templates/skeleton/<name>``, e.g. the
    ant colonies' kernels) rendered with ``context``, the options that decide its code."""
    return _environment_of(()).get_template(f"skeleton/{name}").render(**context)
