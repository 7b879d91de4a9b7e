#!/bin/sh
# bandwidth_json.sh - the `vramtrace bandwidth --json` document (docs/bandwidth.md): schema, host
# DDR figures, PCIe facts from the sysfs fixtures in tests/data/sysfs.
. tests/lib.sh
[ -x "$VT" ] || { not_ok "bandwidth_json: $VT not built"; exit 1; }
command -v jq >/dev/null 2>&1 || { skip "bandwidth_json: jq not installed"; exit 0; }

# The schema every document must satisfy (also used by bandwidth_sim.sh).
SCHEMA='
  def num: type == "number";
  def names: ["h2d_pageable","h2d_pinned","d2h_pageable","d2h_pinned","d2d_copy","vram_read",
              "vram_write","vram_copy","vram_triad","host_ddr_copy","host_ddr_triad"];
  .version == 1
  and (.gpu == null or (.gpu | (.name | type == "string") and (.sim | type == "boolean")
        and (.theoretical_gbps == null or (.theoretical_gbps | num))
        and (.mem_clock_khz | num) and (.bus_width_bits | num)))
  and (.pcie == null or (.pcie | (.gen | num) and (.width | num) and (.gts | num)
        and (.theoretical_gbps | num) and (.source | IN("sysfs_current","sysfs_max"))))
  and (.results | type == "array")
  and all(.results[]; (.name | IN(names[])) and (.gbps | num) and .gbps > 0 and (.bytes | num)
        and .bytes > 0 and (.trials | num) and .trials >= 1 and (.median_ms | num) and .median_ms > 0
        and (.simulated | type == "boolean")
        and ((has("theoretical_gbps") | not) or ((.theoretical_gbps | num) and (.pct_of_theoretical | num))))
  and ([.results[].name] | length == (unique | length))
  and (.notes | type == "array")'

"$VT" bandwidth --no-gpu --sysfs-root "$ROOT/tests/data/sysfs/gen5" --host-size 32M --trials 3 --json \
    -o "$TMP/bw.json" 2>"$TMP/err"
check_eq "--json -o FILE exits 0" "$?" 0
check "document is valid JSON" jq -e . "$TMP/bw.json"
check "document matches the schema" jq -e "$SCHEMA" "$TMP/bw.json"
check_eq "gpu is null with --no-gpu" "$(jq -c .gpu "$TMP/bw.json")" "null"
check_eq "pcie from the gen5 fixture" "$(jq -c '.pcie | [.gen, .width, .gts, .source]' "$TMP/bw.json")" \
    '[5,16,32,"sysfs_max"]'
check "pcie theoretical ~63 GB/s" jq -e '(.pcie.theoretical_gbps - 63.0) | fabs < 0.1' "$TMP/bw.json"
check_eq "rows: host DDR copy and triad" "$(jq -r '[.results[].name] | join(",")' "$TMP/bw.json")" \
    "host_ddr_copy,host_ddr_triad"
check "host DDR copy GB/s in (0.1, 2000)" jq -e '.results[0].gbps > 0.1 and .results[0].gbps < 2000' "$TMP/bw.json"
check "host DDR triad GB/s positive" jq -e '.results[1].gbps > 0.1' "$TMP/bw.json"
check "host rows: traffic 2 and 3 arrays, 3 trials, not simulated" jq -e \
    '.results[0].bytes == 2 * 33554432 and .results[1].bytes == 3 * 33554432 and all(.results[]; .trials == 3 and .simulated == false)' \
    "$TMP/bw.json"
check "host rows have no theoretical" jq -e 'all(.results[]; has("pct_of_theoretical") | not)' "$TMP/bw.json"
check "host facts" jq -e '.host.threads >= 1 and .host.array_bytes == 33554432' "$TMP/bw.json"

# PCIe alone (--no-host): the idle Gen4 fixture is described by its max link; --device picks the
# N-th NVIDIA display device by bus id; sysfs without NVIDIA devices gives pcie null.
"$VT" bandwidth --no-gpu --no-host --json --sysfs-root "$ROOT/tests/data/sysfs/gen4" >"$TMP/g4.json" 2>/dev/null
check_eq "gen4 fixture: Gen4 x16 31.5 GB/s" "$(jq -c '.pcie | [.gen, .width, (.theoretical_gbps*10|round/10), .bus_id]' "$TMP/g4.json")" \
    '[4,16,31.5,"0000:01:00.0"]'
check "gen4 fixture: schema, no rows" jq -e "($SCHEMA) and (.results == [])" "$TMP/g4.json"
"$VT" bandwidth --no-gpu --no-host --json --device 1 --sysfs-root "$ROOT/tests/data/sysfs/multi" >"$TMP/m.json" 2>/dev/null
check_eq "multi fixture: --device 1 is 0000:c1:00.0" "$(jq -r '.pcie.bus_id' "$TMP/m.json")" "0000:c1:00.0"
"$VT" bandwidth --no-gpu --no-host --json --sysfs-root "$ROOT/tests/data/sysfs/gen6" >"$TMP/g6.json" 2>/dev/null
check_eq "gen6 fixture: Gen6 x16 121 GB/s" "$(jq -c '.pcie | [.gen, .width, (.theoretical_gbps|round)]' "$TMP/g6.json")" '[6,16,121]'
"$VT" bandwidth --no-gpu --no-host --json --sysfs-root "$TMP" >"$TMP/none.json" 2>/dev/null
check_eq "no NVIDIA device in sysfs: pcie null" "$(jq -c .pcie "$TMP/none.json")" "null"
