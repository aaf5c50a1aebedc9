#!/usr/bin/env bash
# Device-machine set-up: PyCUDA from the carried wheels, lsmgpu in editable mode; the peers'
# wheels too where .peers is carried (elkai for LKH-3 beside lsmgpu: pip download elkai==2.0.1
# --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 --no-deps -d .peers).
# Usage (from the repository root, with .whl and .data carried): source benchmarks/device.sh
# The kernels' templates are the installed tree's (lsmgpu.templates resolves to its templates/, whatever
# PYTHONPATH says): a variant of the kernels runs from a tree of its own, sourcing this script there, with
# LSMGPU_WHEELS naming the carried wheels' folder where the tree has no .whl of its own.
wheels=${LSMGPU_WHEELS:-.whl}
if ! ls "$wheels"/*.whl >/dev/null 2>&1; then
  echo "benchmarks/device.sh: no wheels in $wheels (carry .whl, or set LSMGPU_WHEELS)" >&2
  return 1 2>/dev/null || exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$wheels"/*.whl
unset wheels
if ls .peers/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .peers/*.whl
fi
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 \
  || python3 -m pip install -q --no-index --no-deps --no-build-isolation -e .
export LSMGPU_CACHE=/tmp/lsmgpu-cache PYTHONUNBUFFERED=1
