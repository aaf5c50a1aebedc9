#!/usr/bin/env bash
# The issue-7 report (docs/bench/h100-report/) merged from the H100 runs it is made of: every
# table and peer at commit 5a663be (docs/bench/runs-5a663be/), and the TSP quality table at
# 9afbab1 (docs/bench/runs-9afbab1/; its TSP code is 5a663be's: the library changes between them
# touch only descents on drawn neighbourhoods and Weierstrass's kick). Run from the repository root.
set -euo pipefail
R=docs/bench/runs-5a663be Q=docs/bench/runs-9afbab1
runs=($R/tables-1.json $R/tables-2.json $R/tables-3.json $R/peers-qap.json $R/peers-weierstrass.json
      "$R/peers-tsp-a.log::LSMGPU_COMMIT=5a663be python3 -m benchmarks peers-tsp --peer-tsp pr1002,u1817,pr2392 --peer-seconds 5,20 --peer-tsp-neighbourhood 2opt-candidates (stopped by timeout -s INT 200 in pr2392; pr2392 from the next run)"
      $R/peers-tsp-b.json $R/peers-tsp-pla.json $R/tsp-large.json
      $Q/q400.json $Q/q1000.json $Q/q2400.json $Q/q4461.json $Q/q11849.json $Q/q18512.json)
python -m benchmarks.report "${runs[@]}" --out docs/bench/h100-report
