"""`lsmgpu solve` with its kernels built quick first (driver.load_first_module), fully optimised
alone, or all by the compiler's fast compile (``--Ofast-compile=LEVEL``: fewer optimisations, a
build several times faster): what a first run gains in time and what the runs lose in speed.

    python -m benchmarks.probes.fast_build DATA NAME[,NAME...] SECONDS WAY[,WAY...]

WAY: ``first`` (the runs' builds: quick first where no full build is held), ``full`` (fully
optimised builds alone) or ``min``, ``mid``, ``max`` (every build with ``--Ofast-compile=WAY``).
For each instance and way, in a process of its own with both kernel caches empty (lsmgpu's and
CUDA's compute cache, where NVRTC keeps its builds): ``lsmgpu solve DATA/NAME.tsp --seconds SECONDS
--seed 0``, a first run that builds its kernels inside its budget, then the same run again in that
process, its kernels built: the seconds waited for builds, the iterations and the gap of each.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from ..depth import user_environment


def child(path: str, seconds: str, way: str) -> None:
    """The two runs of one way, in this process; one JSON line of their figures."""
    from lsmgpu import cli
    from lsmgpu.backends.cuda import nvrtc

    from .quick_kernels import build_every_kernel_quick
    os.environ["LSMGPU_QUICK_BUILDS"] = "1"          # a user's default, not the harness's (benchmarks/__init__.py)
    if way == "full":
        nvrtc.fast_compile = lambda: False
    elif way != "first":
        build_every_kernel_quick(way)
    rows = []
    for run in ("first", "built"):
        with tempfile.NamedTemporaryFile(suffix=".json") as figures:
            cli.main(["solve", path, "--seconds", seconds, "--seed", "0", "--quiet", "--json", figures.name])
            made = json.load(open(figures.name))
        rows.append(dict(run=run, build=made["timings"].get("build", 0.0), iterations=made["iterations"],
                         gap=100 * made["gap"], seconds=made["seconds"], algorithm=made["algorithm"]))
    print(json.dumps(rows))


def main(data: str, names: str, seconds: str, ways: str) -> None:
    print(f"lsmgpu solve --seconds {seconds} --seed 0, each way in a process of its own, both caches empty")
    print(f"{'instance':10s} {'way':5s} {'run':6s} {'build s':>8s} {'iterations':>10s} {'gap %':>7s} {'seconds':>8s}")
    for name in names.split(","):
        for way in ways.split(","):
            with tempfile.TemporaryDirectory() as folder:
                done = subprocess.run([sys.executable, "-m", __spec__.name, "--child", f"{data}/{name}.tsp", seconds,
                                       way], env=user_environment(folder), check=True, capture_output=True, text=True)
            for row in json.loads(done.stdout.strip().splitlines()[-1]):
                print(f"{name:10s} {way:5s} {row['run']:6s} {row['build']:8.2f} {row['iterations']:10d} "
                      f"{row['gap']:7.3f} {row['seconds']:8.2f}  {row['algorithm']}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(*sys.argv[2:5])
    else:
        main(*sys.argv[1:5])
