#!/usr/bin/env bash
# Device-machine set-up: PyCUDA from the carried wheels, lsmgpu in editable mode.
# Usage (from the repository root, with .whl and .data carried): source benchmarks/device.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 \
  || python3 -m pip install -q --no-index --no-deps --no-build-isolation -e .
export LSMGPU_CACHE=/tmp/lsmgpu-cache PYTHONUNBUFFERED=1
