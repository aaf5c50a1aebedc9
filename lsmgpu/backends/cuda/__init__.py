"""The PyCUDA backend: the neighbourhood generated, evaluated and reduced on the GPU.

A package of small parts (docs/architecture.md): ``driver`` (PyCUDA: context, compile cache,
launches with error checks), ``texture`` (texture objects), ``program`` (a problem's compiled
kernels, its arrays on the device by memory policy, the refresh launcher), ``evaluator`` (one
search), ``batch`` (many searches at once), ``population`` (many solutions improved at once);
this module holds the backend, the factory of both evaluators with the options a user may set.
"""
from __future__ import annotations

from ..tuning import WaveTuner
from .batch import CudaBatchEvaluator
from .colony import CudaColony
from .dontlook import CudaDontLook
from .dontlook_chains import CudaChains
from .focused import CudaFocusedAnts
from .genetic import CudaGenetic
from .segments import CudaSegmentChains
from .driver import context, cuda, device_name, warm_up
from .evaluator import CudaEvaluator
from .population import CudaPopulation

__all__ = ["CudaBackend", "CudaEvaluator", "CudaBatchEvaluator", "CudaPopulation", "CudaColony", "cuda"]


class CudaBackend:
    """Factory of CUDA evaluators, holding the options a user may set.

    ``selection``: "device" (on-GPU reduction, default) or "host" (copy all deltas back);
    ``generation``: "device" (index mappings, default) or "host" (upload the move list);
    ``memory``: {array name: "global" | "readonly" | "texture" | "shared"} overriding the
    problem's defaults; ``tune``: run the wave tuner (else ``threads``/``block`` or a default);
    ``tuner``: a WaveTuner to use; ``profile``: time the kernels with CUDA events;
    ``device``: ordinal of the GPU when no context is current.
    """

    name = "cuda"

    def __init__(self, *, selection: str = "device", generation: str = "device", memory: dict | None = None,
                 tune: bool = True, threads: int | None = None, block: int | None = None,
                 tuner: WaveTuner | None = None, profile: bool = False, device: int = 0):
        if selection not in ("device", "host"):
            raise ValueError(f"CudaBackend: `selection` must be 'device' or 'host', got {selection!r}")
        if generation not in ("device", "host"):
            raise ValueError(f"CudaBackend: `generation` must be 'device' or 'host', got {generation!r}")
        if block is not None and (block % 32 or not 32 <= block <= 1024):
            raise ValueError(f"CudaBackend: `block` must be a multiple of 32 in [32, 1024], got {block}")
        if threads is not None and threads < 1:
            raise ValueError(f"CudaBackend: `threads` must be >= 1, got {threads}")
        self.selection, self.generation, self.memory = selection, generation, dict(memory or {})
        self.tune, self.threads, self.block, self.profile = tune, threads, block, profile
        self.tuner = tuner
        self.ordinal = device
        self.device_name = device_name(device)
        warm_up(device)             # the context starts beside the caller's work, not in the constructor

    @property
    def context(self):
        """The GPU's context, current in the calling thread (made, or waited for, on first use:
        inside a run, whose budget counts it)."""
        return context(self.ordinal)

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of the GPU's memory, asked in its context."""
        self.context
        return cuda.mem_get_info()

    @staticmethod
    def probe(device: int = 0) -> str:
        """Name of the GPU the backend would use; BackendUnavailable when there is none."""
        return device_name(device)

    @property
    def device(self) -> str:
        return self.device_name

    def evaluator(self, problem, neighbourhood) -> CudaEvaluator:
        if self.tune and self.tuner is None:
            self.tuner = WaveTuner()
        return CudaEvaluator(problem, neighbourhood, self)

    def batch_evaluator(self, problem, neighbourhood, starts: int) -> CudaBatchEvaluator:
        """Evaluator of ``starts`` tabu searches at once (see lsmgpu.parallel.batch)."""
        return CudaBatchEvaluator(problem, neighbourhood, self, starts)

    def population(self, steps, rows: int) -> CudaPopulation | None:
        """``rows`` solutions of the chain ``steps`` improved together (lsmgpu.backends.population),
        or None where this backend cannot batch them (host-generated moves)."""
        if self.generation != "device":
            return None
        return CudaPopulation(steps, self, rows)

    def colony(self, model, construction, n: int, ants: int) -> CudaColony:
        """``ants`` ants building solutions of ``model`` on the GPU (lsmgpu.backends.colony)."""
        return CudaColony(model, construction, n, ants, self)

    def dontlook(self, rules, distance, rows: int) -> CudaDontLook:
        """``rows`` tours descended by don't-look bits on the GPU (lsmgpu.backends.dontlook)."""
        return CudaDontLook(rules, distance, rows, self)

    def dontlook_chains(self, rules, kicks, distance, rows: int) -> CudaChains:
        """``rows`` iterated local search chains of don't-look descents on the GPU
        (lsmgpu.backends.dontlook_chains)."""
        return CudaChains(rules, kicks, distance, rows, self)

    def segment_chains(self, rules, kicks, distance, rows: int, m: int) -> CudaSegmentChains:
        """``rows`` chains of ``m``-city tour segments on the GPU (lsmgpu.backends.segments)."""
        return CudaSegmentChains(rules, kicks, distance, rows, m, self)

    def focused_ants(self, rules, focus, distance, ants: int, beta: float) -> CudaFocusedAnts:
        """``ants`` ants of a focused ant colony walking and descending on the GPU
        (lsmgpu.backends.focused)."""
        return CudaFocusedAnts(rules, focus, distance, ants, beta, self)

    def prebuild_focused_ants(self, rules, focus, distance, ants: int, beta: float) -> None:
        """Starts building the kernels ``focused_ants`` of the same arguments will load, in the
        background (CudaFocusedAnts.prebuild)."""
        CudaFocusedAnts.prebuild(rules, focus, distance, ants, beta, self)

    def genetic(self, breeding, n: int, distance) -> CudaGenetic:
        """A genetic algorithm's population of ``n``-item permutations breeding on the GPU
        (lsmgpu.backends.genetic); ``distance``: the problem's EdgeDistance or None."""
        return CudaGenetic(breeding, n, distance, self)
