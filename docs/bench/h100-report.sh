#!/usr/bin/env bash
# The issue-7 report (docs/bench/h100-report/) merged from the H100 runs it is made of: the paper's
# tables and the QAP/Weierstrass peers at 38ee6fc, the TSP peers up to 2,392 cities at 464d3d6,
# the TSP peers on pla33810/pla85900 and the TSP quality table at 9afbab1. Run from the repository root.
set -euo pipefail
H=docs/bench/h100-38ee6fc R=docs/bench/runs-9afbab1
C38="LSMGPU_COMMIT=38ee6fc python3 -m benchmarks qap tsp-swap overhead threads selection ppp-h1 ppp-h2 \
ppp-generation ppp-reduction weierstrass twoopt-rate --repeats 3 --cpu-seconds 1 --selection-iterations 50 \
(stopped at the 600 s limit of a device call in weierstrass, 18 of 20 rows; twoopt-rate not reached)"
runs=()
for table in qap tsp-swap overhead threads selection ppp-h1 ppp-h2 ppp-generation ppp-reduction weierstrass; do
  runs+=("$H/$table.csv::$C38")
done
runs+=("$H/peers-qap.csv::LSMGPU_COMMIT=38ee6fc python3 -m benchmarks peers-qap --peer-seconds 1,10,60"
       "$H/peers-weierstrass.csv::LSMGPU_COMMIT=38ee6fc python3 -m benchmarks peers-weierstrass --peer-seconds 1,10"
       "docs/bench/peers-tsp-h100.csv::LSMGPU_COMMIT=464d3d6 python3 -m benchmarks peers-tsp --peer-tsp pr1002,u1817,pr2392 --peer-seconds 5,20 --peer-tsp-neighbourhood 2opt-candidates"
       $R/peers.json $R/q400.json $R/q1000.json $R/q2400.json $R/q4461.json $R/q11849.json $R/q18512.json)
python -m benchmarks.report "${runs[@]}" --out docs/bench/h100-report
