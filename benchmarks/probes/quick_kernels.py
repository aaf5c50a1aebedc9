"""Every kernel built by the compiler's fast compile (``--Ofast-compile=LEVEL`` added to every
NVRTC build, the full builds' too), as a pytest plugin or for a probe's process: the GPU suite run
with it checks the quick builds' kernels against the NumPy references (a first run launches them
until its full builds are made, driver.load_first_module).

    LSMGPU_CACHE=$(mktemp -d) python3 -m pytest -m gpu -n 14 -q -p benchmarks.probes.quick_kernels

An empty LSMGPU_CACHE keeps the quick cubins out of the cache the runs read (they are filed under
the full builds' options).
"""
from __future__ import annotations

from lsmgpu.backends.cuda import nvrtc


def build_every_kernel_quick(level: str = "min") -> None:
    """NVRTC builds every kernel of this process with ``--Ofast-compile=level``; no quick build
    first (there is no other)."""
    compile_cubin = nvrtc.compile_cubin

    def quick(source: str, arch: str, options: tuple[str, ...] = ()) -> bytes:
        options = tuple(o for o in options if not o.startswith("--Ofast-compile")) + (f"--Ofast-compile={level}",)
        return compile_cubin(source, arch, options)
    nvrtc.compile_cubin = quick
    nvrtc.fast_compile = lambda: False


def pytest_configure(config) -> None:
    """The plugin: every kernel of the test process quick (``--Ofast-compile=min``)."""
    build_every_kernel_quick()
