#!/bin/sh
# bandwidth_sim.sh - `vramtrace bandwidth` against the simulated device (build/sim/libcuda.so.1):
# the GPU is reported as simulated and every GPU row is marked simulated; host rows are not.
. tests/lib.sh
[ -x "$VT" ] || { not_ok "bandwidth_sim: $VT not built"; exit 1; }
if [ ! -f "$SIM/libcuda.so.1" ]; then
    skip "bandwidth_sim: simulated device not built ($SIM/libcuda.so.1)"
    exit 0
fi
LD_LIBRARY_PATH="$SIM" "$VT" bandwidth --size 64M --trials 3 --host-size 8M --json -o "$TMP/sim.json" 2>"$TMP/err"
rc=$?
check_eq "sim run exits 0" "$rc" 0
check "sim: valid JSON" jq -e . "$TMP/sim.json"
check "sim: gpu.sim is true and the name says simulated" jq -e '.gpu.sim == true and (.gpu.name | ascii_downcase | contains("simulated"))' "$TMP/sim.json"
check "sim: copy rows present" jq -e '[.results[].name] | contains(["h2d_pageable","d2h_pageable","d2d_copy"])' "$TMP/sim.json"
check "sim: every GPU row marked simulated" jq -e '[.results[] | select(.name | startswith("host_ddr") | not) | .simulated] | length > 0 and all' "$TMP/sim.json"
check "sim: host rows not simulated" jq -e '[.results[] | select(.name | startswith("host_ddr")) | .simulated] | length == 2 and (any | not)' "$TMP/sim.json"
LD_LIBRARY_PATH="$SIM" "$VT" bandwidth --size 64M --trials 3 --no-host >"$TMP/sim.txt" 2>>"$TMP/err"
check "sim: table marks the GPU simulated" grep -q '^GPU:  .*\[simulated\]' "$TMP/sim.txt"
check "sim: table marks rows simulated" grep -q 'host->device, pageable .*\[simulated\]' "$TMP/sim.txt"
