#!/bin/sh
# nvtx_ranges.sh - the per-range table of `vramtrace report` (docs/report.md, "Range table"):
# a hand-written two-thread trace (push/pop per thread, a start/end range seen by every thread,
# one path on two threads), the 4096-path cap, then tests/progs/nvtx_ranges traced on the
# simulated device: the recorded push/pop/start/end/mark records, peak_ranges, and the table in
# --json, text and HTML.
. "$ROOT/tests/lib.sh"
MiB=1048576
# rg JSON NAME FIELD : FIELD of the ranges[] row named NAME
rg() { printf '%s' "$1" | jq -r --arg n "$2" ".ranges[] | select(.name == \$n) | .$3"; }
row() { printf '%s' "$1" | jq -r --arg n "$2" '.ranges[] | select(.name == $n) | "\(.peak_bytes) \(.alloc_count) \(.alloc_bytes) \(.free_count) \(.free_bytes)"'; }
RANGES_SCHEMA='([$s[0].required[] as $k | has($k)] | all) and (.ranges | all(has("name") and has("peak_bytes") and has("alloc_count") and has("alloc_bytes") and has("free_count")))'

# ---- hand-written: two threads, a start/end range, one path on two threads --------------------
H='{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":7,"ppid":1,"program":"/x/ranges","argv":["ranges"],"t":1000,"wall_time":0,"hostname":"h","rank":{},"page_size":4096,"backtraces":false,"checks":"off"}'
al() { echo "{\"ev\":\"alloc\",\"t\":$1,\"dur\":1,\"tid\":$2,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"$3\",\"size\":$(($4 * MiB)),\"mem\":\"device\"}"; }
fr() { echo "{\"ev\":\"free\",\"t\":$1,\"dur\":1,\"tid\":$2,\"api\":\"cudaFree\",\"res\":0,\"dev\":0,\"addr\":\"$3\",\"size\":$(($4 * MiB)),\"mem\":\"device\"}"; }
{
    echo "$H"
    echo '{"ev":"range_push","t":1100,"tid":1,"name":"a"}'
    al 1200 1 0x1000000 10                                      # live 10, in a
    echo '{"ev":"range_start","t":1300,"tid":2,"id":5,"name":"epoch"}'   # opens at live 10
    al 1400 2 0x2000000 20                                      # live 30, in epoch only (tid 2 has no push)
    echo '{"ev":"range_push","t":1500,"tid":1,"name":"b"}'      # a > b opens at live 30
    al 1600 1 0x3000000 5                                       # live 35, in a > b, a, epoch
    echo '{"ev":"range_pop","t":1700,"tid":1}'
    echo '{"ev":"range_pop","t":1710,"tid":1}'
    fr 1800 2 0x2000000 20                                      # live 15, a free inside epoch
    echo '{"ev":"range_end","t":1900,"tid":2,"id":5}'
    fr 2000 1 0x1000000 10                                      # live 5, outside every range
    echo '{"ev":"range_push","t":2100,"tid":3,"name":"a"}'      # the path "a" again, on thread 3
    al 2200 3 0x4000000 1                                       # live 6
    echo '{"ev":"range_pop","t":2300,"tid":3}'
    echo '{"ev":"footer","t":3000,"events":17,"dropped":0,"live_bytes":6291456,"findings":0}'
} >"$TMP/two.jsonl"
j=$("$VT" report --json "$TMP/two.jsonl"); rc=$?
check_eq "hand-written: --json exits 0" "$rc" 0
check_eq "hand-written: one row per path (a on two threads is one row)" \
    "$(printf '%s' "$j" | jq -r '[.ranges[].name] | join(",")')" "epoch,a,a > b"
check_eq "hand-written: a = peak 35 MiB, 3 allocs (nested + thread 3) of 16 MiB, 0 frees" \
    "$(row "$j" a)" "$((35*MiB)) 3 $((16*MiB)) 0 0"
check_eq "hand-written: a > b = peak 35 MiB, 1 alloc of 5 MiB" "$(row "$j" 'a > b')" "$((35*MiB)) 1 $((5*MiB)) 0 0"
check_eq "hand-written: start/end range counts every thread: 2 allocs (25 MiB), 1 free (20 MiB)" \
    "$(row "$j" epoch)" "$((35*MiB)) 2 $((25*MiB)) 1 $((20*MiB))"
check_eq "hand-written: processes[0].ranges = ranges" "$(printf '%s' "$j" | jq -c '.processes[0].ranges == .ranges')" true
schema_ok "hand-written: --json validates" "$j" "$RANGES_SCHEMA"

# ---- the cap: 5000 distinct paths -> 4095 rows + "(other)" -------------------------------------
{
    echo "$H"
    awk 'BEGIN { for (i = 0; i < 5000; i++) {
        printf "{\"ev\":\"range_push\",\"t\":%d,\"tid\":1,\"name\":\"r%d\"}\n", 2000 + 2 * i, i
        if (i == 4999) printf "{\"ev\":\"alloc\",\"t\":20000,\"dur\":1,\"tid\":1,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x1000\",\"size\":4096,\"mem\":\"device\"}\n"
        printf "{\"ev\":\"range_pop\",\"t\":%d,\"tid\":1}\n", 2001 + 2 * i } }'
} >"$TMP/many.jsonl"
j=$("$VT" report --json "$TMP/many.jsonl")
check_eq "cap: 4096 rows, one (other)" "$(printf '%s' "$j" | jq -r '"\(.ranges|length) \([.ranges[]|select(.name=="(other)")]|length)"')" "4096 1"
check_eq "cap: (other) holds the allocation of a folded path" "$(row "$j" '(other)')" "4096 1 4096 0 0"
check_eq "cap: the first 4095 paths keep their rows, later ones fold" "$(rg "$j" r0 alloc_count),$(rg "$j" r4094 alloc_count),$(rg "$j" r4095 alloc_count)" "0,0,"

# ---- tests/progs/nvtx_ranges on the simulated device ------------------------------------------
need_sim
t="$TMP/nvtx.jsonl"
"$VT" run --sim -o "$t" -- "$PROGS/nvtx_ranges" >"$TMP/run.out" 2>"$TMP/run.err"; rc=$?
check_eq "nvtx_ranges runs under the tracer" "$rc,$(head -1 "$TMP/run.out")" "0,ok"
check_eq "trace: push names in order (Ex, domain registered string, wide char)" \
    "$(jqs "$t" '[.[]|select(.ev=="range_push")|.name]|join(",")')" "step 1,forward,backward,domain range,wide"
check_eq "trace: one pop per push" "$(jqs "$t" '[.[]|select(.ev=="range_pop")]|length')" 5
check_eq "trace: start/end ranges, each ended by its id (A, wide, Ex unicode with its non-ASCII letter as '?', a domain's Ex)" \
    "$(jqs "$t" '([.[]|select(.ev=="range_start")|"\(.name):\(.id)"]|join(",")) + " " + ([.[]|select(.ev=="range_end")|.id|tostring]|join(","))')" \
    "optimizer:1,wide start:2,ex start ?:3,domain start:4 1,2,3,4"
check_eq "trace: marks (A, wide, Ex unicode, a domain's Ex with a string registered wide, Ex with no message: unnamed)" \
    "$(jqs "$t" '[.[]|select(.ev=="mark")|.name]|join(",")')" "checkpoint,wide mark,ex mark,domain mark,"
check "trace: range records carry t and tid" sh -c 'tr -d "\000" <"$1" | jq -s -e "[.[]|select(.ev|test(\"^range_|^mark$\"))|(.t|type==\"number\") and (.tid|type==\"number\")]|all" >/dev/null' _ "$t"

j=$("$VT" report --json "$t"); rc=$?
check_eq "report --json exits 0" "$rc" 0
check_eq "peak_ranges = step 1 > forward" "$(printf '%s' "$j" | jq -r .peak_ranges)" "step 1 > forward"
check_eq "step 1 > forward: peak 96 MiB, 2 allocs of 96 MiB, no free" "$(row "$j" 'step 1 > forward')" "$((96*MiB)) 2 $((96*MiB)) 0 0"
check_eq "step 1 > backward: peak 48 MiB (32+16), 1 alloc of 16 MiB" "$(row "$j" 'step 1 > backward')" "$((48*MiB)) 1 $((16*MiB)) 0 0"
check_eq "step 1 (counts nested): peak 96 MiB, 3 allocs of 112 MiB, 1 free of 64 MiB" "$(row "$j" 'step 1')" \
    "$((96*MiB)) 3 $((112*MiB)) 1 $((64*MiB))"
check_eq "optimizer (start/end), domain range, wide, the other start/end ranges: no allocations, open at 48 MiB live" \
    "$(row "$j" optimizer) | $(row "$j" 'domain range') | $(row "$j" wide) | $(row "$j" 'wide start') | $(row "$j" 'ex start ?') | $(row "$j" 'domain start')" \
    "$((48*MiB)) 0 0 0 0 | $((48*MiB)) 0 0 0 0 | $((48*MiB)) 0 0 0 0 | $((48*MiB)) 0 0 0 0 | $((48*MiB)) 0 0 0 0 | $((48*MiB)) 0 0 0 0"
check_eq "nine rows, by peak" "$(printf '%s' "$j" | jq -r '[.ranges[].peak_bytes] | (length == 9 and . == (sort|reverse))')" true
schema_ok "nvtx_ranges: --json validates" "$j" "$RANGES_SCHEMA"

out=$("$VT" report "$t")
check "text: Ranges section after the peak tables" sh -c 'printf "%s\n" "$1" | sed -n "/^Allocation churn/,\$p" | grep -q "^Ranges (NVTX"' _ "$out"
check "text: step 1 > forward row" sh -c 'printf "%s\n" "$1" | grep -q "^   96.00 MiB        2  96.00 MiB        0        0 B  step 1 > forward$"' _ "$out"
check "text: step 1 > backward row" sh -c 'printf "%s\n" "$1" | grep -q "^   48.00 MiB        1  16.00 MiB        0        0 B  step 1 > backward$"' _ "$out"
n=$("$VT" report --top 2 "$t" | sed -n '/^Ranges/,/^$/p')
check_eq "text: --top 2 shows 2 rows and the rest counted" \
    "$(printf '%s\n' "$n" | grep -c 'step 1'),$(printf '%s\n' "$n" | grep -c '\.\.\. 7 more ranges')" "2,1"
"$VT" report --html "$TMP/r.html" "$t" >/dev/null; rc=$?
check_eq "html: exits 0" "$rc" 0
check "html: NVTX ranges table with the forward row" sh -c 'grep -q "<h2>NVTX ranges</h2>" "$1" && grep -q "<td class=\"n\">96.00 MiB</td><td class=\"n\">2</td><td class=\"n\">96.00 MiB</td><td class=\"n\">0</td><td class=\"n\">0 B</td><td><code>step 1 &gt; forward</code>" "$1"' _ "$TMP/r.html"
# each site carries the NVTX range its allocations were made in (the Python-visible context a
# framework pushes): the two peak sites are the cudaMalloc lines inside "step 1 > forward"
LA=$(grep -n 'cudaMalloc(&a' "$ROOT/tests/progs/nvtx_ranges.c" | cut -d: -f1); LB=$(grep -n 'cudaMalloc(&b' "$ROOT/tests/progs/nvtx_ranges.c" | cut -d: -f1)
check_eq "sites: the peak sites' NVTX range in JSON" "$(printf '%s' "$j" | jq -c '[.peak_sites[]|[.bytes,.site,.nvtx_range]]')" \
    "[[$((64*MiB)),\"main (nvtx_ranges.c:$LA)\",\"step 1 > forward\"],[$((32*MiB)),\"main (nvtx_ranges.c:$LB)\",\"step 1 > forward\"]]"
check "sites: and in the text" sh -c 'printf "%s\n" "$1" | grep -q "^   64.00 MiB  66.7%      1 alloc   main (nvtx_ranges.c:$2)  \[NVTX: step 1 > forward\]$"' _ "$out" "$LA"
