# Issue 20 on the device: the GPU suite, then the kernels' speed before (29f135e, in .ab/before)
# and after (this tree): `memory` and `twoopt-rate` tables, each tree installed apart.
# Usage: LSMGPU_NEW=<commit> bash docs/bench/issue20/run-ab.sh   (carry .whl .data .ab)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 ROOT=$PWD
for tree in before after; do
  src=$([ $tree = before ] && echo .ab/before || echo .)
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/$tree $src >/dev/null 2>&1
  mkdir -p /tmp/bench-$tree && cp -r $src/benchmarks /tmp/bench-$tree/
done
tables() {  # tree, commit
  (cd /tmp/bench-$1 && LSMGPU_CACHE=/tmp/cache-$1 LSMGPU_COMMIT=$2 PYTHONPATH=/tmp/site:/tmp/$1 \
     python3 -W ignore -m benchmarks memory twoopt-rate --repeats 5 --data $ROOT/.data --out $OUT/$1 > $OUT/$1.log 2>&1)
}
tables before 29f135e
tables after $LSMGPU_NEW
