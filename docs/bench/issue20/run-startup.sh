# Issue 20 on the device, after run-ab.sh's installs (/tmp/site, /tmp/before, /tmp/after):
# the kernels' speed again at this commit, then the startup table for both trees.
# Usage: LSMGPU_NEW=<commit> bash docs/bench/issue20/run-startup.sh [--startup-solve]
set -u
export PYTHONUNBUFFERED=1 ROOT=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
rm -rf /tmp/after /tmp/bench-after
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/after . >/dev/null 2>&1
[ -d /tmp/before ] || python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/before .ab/before >/dev/null 2>&1
mkdir -p /tmp/bench-after && cp -r benchmarks /tmp/bench-after/
cd /tmp/bench-after
export PYTHONPATH=/tmp/site:/tmp/after LSMGPU_COMMIT=$LSMGPU_NEW
for tree in after before; do
  python3 -W ignore -m benchmarks startup "$@" --startup-label $([ $tree = before ] && echo 29f135e || echo $LSMGPU_NEW) \
    --startup-path /tmp/site:/tmp/$tree --data $ROOT/.data --out $OUT/startup-$tree > $OUT/startup-$tree.log 2>&1
done
