# on the device: install both trees, then alternate them
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 ROOT=$PWD
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/old .ab/old >/dev/null 2>&1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/new . >/dev/null 2>&1
ls /tmp/old/lsmgpu /tmp/new/lsmgpu | head -3
for round in 1 2 3; do
  for tree in old new; do
    (cd /tmp && LSMGPU_CACHE=/tmp/cache-$tree PYTHONPATH=/tmp/site:/tmp/$tree python3 -W ignore $ROOT/.ab/ab.py $ROOT/.data $tree) | tee -a $OUT/ab.jsonl
  done
done
