"""Benchmarks: run on a GPU machine with `python -m benchmarks TABLE... [--data DIR] [--out DIR]`.

The harness and the probes time fully built kernels after their warm-up runs: importing this package
turns lsmgpu's quick builds first off for its process and the processes it starts
(``LSMGPU_QUICK_BUILDS=0`` where the environment does not set it; lsmgpu/backends/cuda/driver.py,
``quick_builds``). A row that runs as a user's run does takes the user's default back: the
children of ``depth.user_environment`` (`lsmgpu solve` in a process of its own, the overrun and
start-up tables' children) and the probes that run as a user's first run (cold_run, fast_build).
"""
import os

os.environ.setdefault("LSMGPU_QUICK_BUILDS", "0")
