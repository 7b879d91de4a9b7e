#!/bin/sh
# report_basic.sh - `vramtrace report` on the hand-written golden trace tests/data/traces/oom.jsonl:
# the numbers in text and --json equal what the fixture allocates (see the comments in the checks).
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
export TZ=UTC
out=$("$VT" report "$D/oom.jsonl"); rc=$?
check_eq "text report exits 0" "$rc" 0
first=$(printf '%s\n' "$out" | sed -n 1p)
case "$first" in "vramtrace report: /opt/example/oom (pid 4242)"*) ok "summary first line names program and pid";; *) not_ok "first line: $first";; esac
check "summary: peak 3.50 GiB (1+1+1 GiB device + 512 MiB async)" sh -c 'printf "%s\n" "$1" | grep -q "peak VRAM     3.50 GiB at 12:53:20.400 (+400 ms)"' _ "$out"
check "OOM line: size, time, live, driver free" sh -c 'printf "%s\n" "$1" | grep -q "^OOM: cudaMalloc of 1.00 GiB failed at 12:53:20.600 (+600 ms) on dev 0 (cudaErrorMemoryAllocation 2); live 3.00 GiB; driver free 502.00 MiB of 4.00 GiB"' _ "$out"
check "OOM names the biggest holder first" sh -c 'printf "%s\n" "$1" | grep -q "held by:   2.00 GiB oom+0x1200 \[2 allocs\]"' _ "$out"
check "OOM attributed to NVTX range" sh -c 'printf "%s\n" "$1" | grep -q "in range:     forward"' _ "$out"
check "findings show demangled kernel" sh -c 'printf "%s\n" "$1" | grep -qF "kernel void attention_fwd<float, 128>(float const*, float*, int) argument 0 = 0x55d0c0a0b2a0"' _ "$out"
check "failed calls listed by name (sticky 700)" sh -c 'printf "%s\n" "$1" | grep -q "cudaDeviceSynchronize -> cudaErrorIllegalAddress (700) x1"' _ "$out"
check "managed reported separately" sh -c 'printf "%s\n" "$1" | grep -q "managed       peak 128.00 MiB"' _ "$out"
check "pinned host listed, not VRAM" sh -c 'printf "%s\n" "$1" | grep -q "pinned host   peak 64.00 MiB"' _ "$out"
# summary comes before the site table
s=$(printf '%s\n' "$out" | grep -n '^Summary' | cut -d: -f1); t=$(printf '%s\n' "$out" | grep -n '^Peak:' | cut -d: -f1)
check "summary precedes call sites" test "${s:-99}" -lt "${t:-0}"
n=$("$VT" report --top 1 "$D/oom.jsonl" | sed -n '/^Peak:/,/^$/p' | grep -c 'alloc')
check_eq "--top 1 limits the site table" "$n" 1

j=$("$VT" report --json "$D/oom.jsonl"); rc=$?
check_eq "--json exits 0" "$rc" 0
q() { printf '%s' "$j" | jq -r "$1"; }
check_eq "peak_bytes = 3*1GiB + 512MiB" "$(q .peak_bytes)" 3758096384
check_eq "peak_time_ns" "$(q .peak_time_ns)" 1400000000
check_eq "peak_sites[0] 2 GiB x2" "$(q '.peak_sites[0] | "\(.site) \(.bytes) \(.count)"')" "oom+0x1200 2147483648 2"
check_eq "peak_sites sum = peak" "$(q '[.peak_sites[].bytes] | add')" 3758096384
check_eq "oom requested/live" "$(q '.oom_events[0] | "\(.requested_bytes) \(.live_bytes) \(.free_bytes) \(.site)"')" "1073741824 3221225472 526385152 oom+0x1200"
check_eq "oom held_by[0]" "$(q '.oom_events[0].held_by[0].bytes')" 2147483648
check_eq "leaked_bytes = 2 GiB never freed" "$(q .leaked_bytes)" 2147483648
check_eq "h2d bytes/count (2x256MiB + 4KiB async)" "$(q '.transfers.h2d | "\(.bytes) \(.count)"')" "536875008 3"
check_eq "h2d pageable gbps (256MiB / 50ms)" "$(q '.transfers.h2d.pageable.gbps')" 5.36871
check_eq "d2h bytes" "$(q '.transfers.d2h.bytes')" 134217728
check_eq "d2d gbps" "$(q '.transfers.d2d.gbps')" 1073.74
check_eq "finding" "$(q '.findings[0] | "\(.kind) \(.arg_index) \(.address) \(.site)"')" "host_pointer 0 0x55d0c0a0b2a0 oom+0x1600"
check_eq "finding kernel demangled" "$(q '.findings[0].kernel')" "void attention_fwd<float, 128>(float const*, float*, int)"
check_eq "managed/host peaks" "$(q '"\(.managed_peak_bytes) \(.host_pinned_peak_bytes)"')" "134217728 67108864"

# schema: python3 jsonschema when installed, else the required keys (and the structure check below)
schema_ok "--json validates against docs/report-schema.json" "$j" '[$s[0].required[] as $k | has($k)] | all'
check "schema structure (jq)" sh -c 'printf "%s" "$1" | jq -e "
  (.peak_bytes|type==\"number\") and (.peak_time_ns|type==\"number\") and (.leaked_bytes|type==\"number\") and
  (.peak_sites|all(has(\"site\") and has(\"bytes\") and has(\"count\"))) and
  (.oom_events|all(has(\"requested_bytes\") and has(\"live_bytes\") and has(\"site\"))) and
  ([.transfers.h2d,.transfers.d2h,.transfers.d2d]|all(has(\"bytes\") and has(\"count\") and has(\"seconds\") and has(\"gbps\"))) and
  (.findings|all(has(\"kind\") and has(\"kernel\") and has(\"arg_index\") and has(\"address\") and has(\"site\")))" >/dev/null' _ "$j"
# every required key of the schema is present (schema and output agree)
check "schema required keys present" sh -c 'printf "%s" "$1" | jq -e --slurpfile s "$2" "[\$s[0].required[] as \$k | has(\$k)] | all" >/dev/null' _ "$j" "$ROOT/docs/report-schema.json"

# --bandwidth: achieved vs reference, pageable flagged with the measured factor
cat >"$TMP/bw.json" <<'B'
{"results":[{"name":"h2d_pinned","gbps":25.0},{"name":"h2d_pageable","gbps":9.5},{"name":"d2h_pinned","gbps":26.0},{"name":"d2d_copy"}],"pcie":{"gen":5,"width":16,"theoretical_gbps":63.0}}
B
b=$("$VT" report --bandwidth "$TMP/bw.json" "$D/oom.jsonl"); rc=$?
check_eq "--bandwidth exits 0" "$rc" 0
check "pageable h2d flagged: 5.37 GB/s is 21% of the pinned reference 25.0" sh -c 'printf "%s\n" "$1" | grep -q "^       -> verdict: pageable h2d copies run at 21% of pinned (25.0 GB/s, the reference): pin the host buffer"' _ "$b"
check "achieved as a share of the reference: 26.84 of 25.0 GB/s" sh -c 'printf "%s\n" "$1" | grep -q "^  h2d  pinned    256.00 MiB in      1 copy, 10 ms, 26.84 GB/s = 107% of h2d_pinned 25.0 GB/s$"' _ "$b"
check "PCIe line" sh -c 'printf "%s\n" "$1" | grep -q "PCIe gen 5 x16: theoretical 63.0 GB/s"' _ "$b"
echo 'not json' >"$TMP/badbw.json"
"$VT" report --bandwidth "$TMP/badbw.json" "$D/oom.jsonl" >/dev/null 2>"$TMP/e"; rc=$?
check_eq "bad --bandwidth file: exit 2" "$rc" 2

# synthetic churn trace: peak equals the generator's own bookkeeping
if command -v python3 >/dev/null; then
    want=$(python3 "$D/gen_synth.py" 20000 "$TMP/synth.jsonl" | sed 's/peak_bytes=//')
    check_eq "synthetic trace peak_bytes" "$("$VT" report --json "$TMP/synth.jsonl" | jq .peak_bytes)" "$want"
else skip "python3 missing: synthetic trace"; fi

# ---- only out-of-memory results are OOMs (issue 35) ---------------------------------------------
# tests/data/traces/fail_nodriver.jsonl: three failed allocations, 35 (cudaErrorInsufficientDriver),
# 1 (cudaErrorInvalidValue) and 2 (CUDA_ERROR_OUT_OF_MEMORY, 1 TiB): one OOM, three failed calls.
j=$("$VT" report --json "$D/fail_nodriver.jsonl")
check_eq "failed allocations: only the out-of-memory one is an OOM (count, requested bytes)" \
    "$(printf '%s' "$j" | jq -r '"\(.oom_count) \([.oom_events[].requested_bytes]|join(","))"')" "1 1099511627776"
check_eq "... all three are failed calls, with their results" \
    "$(printf '%s' "$j" | jq -r '"\(.failed_calls) \(.allocations.failed) \([.errors[]|"\(.api)=\(.res)"]|join(","))"')" \
    "3 3 cudaMalloc=35,cudaMalloc=1,cuMemAlloc_v2=2"
check "... and the text says so" sh -c '"$1" report "$2" | grep -q "^  OOM           1 allocation failed for lack of memory (2 more failed otherwise: see failed calls)$"' _ "$VT" "$D/fail_nodriver.jsonl"

# ---- OOM "held by" counts what the site holds then, not what it ever allocated (issue 35) -------
# tests/data/traces/oom_held.jsonl: one site allocates 3 x 2 MiB, frees two, then an 8 GiB
# cudaMalloc fails: the site holds 2 MiB in 1 allocation.
check_eq "OOM held_by: the site's live bytes and live allocations" \
    "$("$VT" report --json "$D/oom_held.jsonl" | jq -r '.oom_events[0].held_by | map("\(.site) \(.bytes) \(.count)") | join(";")')" \
    "oom+0x1200 2097152 1"
check "... in the text too" sh -c '"$1" report "$2" | grep -q "^  held by:   2.00 MiB oom+0x1200 \[1 alloc\]$"' _ "$VT" "$D/oom_held.jsonl"

# ---- a device reset frees the device's allocations even when their frees were lost (issue 35) ---
MiB=1048576
# tests/data/traces/reset_lost.jsonl: 1 GiB on dev 0, 512 MiB on dev 1, a 2 MiB VMM handle on dev
# 0; a reset of dev 0 with no free records before it; 1 GiB on dev 0 again. Live at most: 1 GiB +
# 512 MiB + 2 MiB (dev 0: 1026 MiB), not 2.5 GiB; the reset freed 1 allocation of 1 GiB; dev 1's
# memory and the VMM handle stay (freed later by the program: nothing leaks).
check_eq "reset: peak, per-device peaks, leaks, the reset's frees" \
    "$("$VT" report --json "$D/reset_lost.jsonl" | jq -c '[.peak_bytes, [.processes[0].devices[]|.peak_bytes], .leaked_bytes, [.processes[0].resets[]|[.dev,.freed_count,.freed_bytes]]]')" \
    "[$((1024*MiB + 512*MiB + 2*MiB)),[$((1026*MiB)),$((512*MiB))],0,[[0,1,$((1024*MiB))]]]"

# ---- an alloc record at an address still live: a warning, and sums that still add up (issue 35) --
# tests/data/traces/dup_alloc.jsonl: 1 MiB at one address recorded twice with no free between
# (line 4), a 2 MiB VMM handle recorded twice, then one free of each. At most 1 + 2 MiB were ever
# live (not 6): the older record counts as freed at the newer one (4 allocations, 4 frees), 0 left.
check_eq "duplicate alloc: peak, device peak, leaks, allocations/frees, duplicates" \
    "$("$VT" report --json "$D/dup_alloc.jsonl" | jq -c '[.peak_bytes, .processes[0].devices[0].peak_bytes, .leaked_bytes, .allocations.count, .allocations.frees, .processes[0].duplicate_allocs]')" \
    "[$((3*MiB)),$((3*MiB)),0,4,4,2]"
check_eq "duplicate alloc: the text warns with the first one's line and address" \
    "$("$VT" report "$D/dup_alloc.jsonl" | grep -c '^  warning: 2 allocations recorded where one was still live (first: line 4, 0x7f0000000000): a free missing from the trace')" 1

# ---- a caching allocator seen from below: the report says it sees segments, not tensors -------
# tests/data/traces/torch_segments.jsonl: a 20 MiB cudaMalloc whose stack goes through PyTorch's
# libc10_cuda.so (a CUDACachingAllocator segment); oom_held.jsonl has no such library.
check_eq "caching allocator: named from the library on the stack; none without it" \
    "$("$VT" report --json "$D/torch_segments.jsonl" | jq -r '.processes[0].caching_allocator') $("$VT" report --json "$D/oom_held.jsonl" | jq -r '.processes[0].caching_allocator')" \
    "PyTorch (c10 CUDACachingAllocator) null"
check "caching allocator: the text notes that the tracer sees segments, not tensors" sh -c \
    '"$1" report "$2" | grep -q "^  note          PyTorch (c10 CUDACachingAllocator) allocated here: the tracer sees the segments it reserves from CUDA, not the$"' _ "$VT" "$D/torch_segments.jsonl"

# ---- CUDA errors by name, from each API's own enum (issue 35) ------------------------------------
# fail_nodriver.jsonl: cudaMalloc -> 35, cudaMalloc -> 1, cuMemAlloc_v2 -> 2. The runtime and the
# driver number some errors differently (35 is cudaErrorInsufficientDriver, not a driver code).
check_eq "error names: runtime and driver enums" \
    "$("$VT" report --json "$D/fail_nodriver.jsonl" | jq -r '[.errors[]|"\(.api)=\(.name)"]|join(",")')" \
    "cudaMalloc=cudaErrorInsufficientDriver,cudaMalloc=cudaErrorInvalidValue,cuMemAlloc_v2=CUDA_ERROR_OUT_OF_MEMORY"
check "error names: the text line" sh -c '"$1" report "$2" | grep -q "^  failed calls  3: cudaMalloc -> cudaErrorInsufficientDriver (35) x1, cudaMalloc -> cudaErrorInvalidValue (1) x1, cuMemAlloc_v2 -> CUDA_ERROR_OUT_OF_MEMORY (2) x1$"' _ "$VT" "$D/fail_nodriver.jsonl"
if [ -r /usr/local/cuda/include/cuda.h ] && [ -r /usr/local/cuda/include/driver_types.h ]; then
    (cd "$TMP" && mkdir -p tools/report && python3 "$ROOT/tools/gen-cuda-errors.py" /usr/local/cuda/include)
    check "error names: the committed table is what the installed toolkit's headers give" cmp -s "$TMP/tools/report/cuda_errors.c" "$ROOT/tools/report/cuda_errors.c"
else skip "error names: no CUDA headers to compare the table with"; fi

# ---- numbers in plain words (issue 36) -----------------------------------------------------------
# tests/data/traces/repeat_rows.jsonl: five 160 MiB cudaMalloc from one site at +1..+5 us, one 4 KiB
# cudaMallocAsync from another at +92 us; the trace spans 1.4 ms.
out=$("$VT" report "$D/repeat_rows.jsonl")
check "durations in a readable unit: the trace's 1.4 ms" sh -c 'printf "%s\n" "$1" | grep -q "^  trace .*repeat_rows.jsonl: 9 events, 1.4 ms$"' _ "$out"
check "identical largest rows once with their count, at the first one's time (+1 us)" sh -c 'printf "%s\n" "$1" | grep -q "^  5 × 160.00 MiB device   cudaMalloc         first 12:53:20.000 (+1 µs)  (no backtrace)$"' _ "$out"
check "a single row as it is (+92 us), its size and time under the others'" sh -c 'printf "%s\n" "$1" | grep -q "^        4.00 KiB async    cudaMallocAsync          12:53:20.000 (+92 µs)  0x1234$"' _ "$out"
check_eq "1 alloc, 5 allocs" "$(printf '%s\n' "$out" | grep -c -e '^         5 allocs 800.00 MiB total  (no backtrace)$' -e '^         1 alloc    4.00 KiB total  0x1234$')" 2

# ---- leaks: stream-ordered memory never freed is a leak; leaks[] lists leaks, not peak sites ----
# tests/data/traces/leak_async.jsonl: site 0x1100 takes 4 MiB (the peak's biggest) and frees it;
# site 0x1300 takes 1 MiB with cudaMallocAsync and never frees it.
check_eq "leak: the cudaMallocAsync block never freed, and only it" \
    "$("$VT" report --json "$D/leak_async.jsonl" | jq -r '"\(.leaked_bytes) \(.leaked_count) " + (.leaks | map("\(.site) \(.bytes) \(.count)") | join(";"))')" \
    "1048576 1 oom+0x1300 1048576 1"
