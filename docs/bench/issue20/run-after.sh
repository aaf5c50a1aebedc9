# Issue 20 on the device at one commit: the kernels' speed, the startup table (with the
# `lsmgpu solve pla85900 --time 30` rows) and the defaults table.
# Usage: LSMGPU_NEW=<commit> bash docs/bench/issue20/run-after.sh   (after `source benchmarks/device.sh`)
set -u
export PYTHONUNBUFFERED=1 LSMGPU_COMMIT=$LSMGPU_NEW
python3 -W ignore -m benchmarks memory twoopt-rate --repeats 5 --data .data --out $OUT/kernels > $OUT/kernels.log 2>&1
python3 -W ignore -m benchmarks startup --startup-solve --data .data --out $OUT/startup > $OUT/startup.log 2>&1
python3 -W ignore -m benchmarks defaults --data .data --out $OUT/defaults > $OUT/defaults.log 2>&1
