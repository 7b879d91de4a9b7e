#!/bin/sh
# report_perfetto.sh - `--perfetto`: valid Chrome Trace Event JSON with counters, complete events,
# instants and metadata, ts/dur in microseconds; hostile names stay valid JSON.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
"$VT" report --perfetto "$TMP/p.json" "$D/oom.jsonl" >/dev/null; rc=$?
check_eq "--perfetto exits 0" "$rc" 0
check "valid JSON with traceEvents" jq -e '.traceEvents | type == "array"' "$TMP/p.json"
q() { jq -r "$1" "$TMP/p.json"; }
check_eq "counter at the peak (3.5 GiB)" "$(q '[.traceEvents[] | select(.ph=="C" and .name=="VRAM dev 0") | .args.bytes] | max')" 3758096384
check_eq "copies as X events" "$(q '[.traceEvents[] | select(.ph=="X" and .cat=="copy")] | length')" 5
check_eq "launch named by demangled kernel" "$(q '.traceEvents[] | select(.ph=="X" and .cat=="launch") | .name')" "void attention_fwd<float, 128>(float const*, float*, int)"
check_eq "copy ts/dur in µs" "$(q '[.traceEvents[] | select(.cat=="copy")][0] | "\(.ts) \(.dur)"')" "1630000 50000"
check_eq "OOM instant" "$(q '[.traceEvents[] | select(.ph=="i" and .cat=="oom")] | length')" 1
check_eq "finding instant" "$(q '[.traceEvents[] | select(.ph=="i" and .cat=="finding")][0].name')" host_pointer
check "process_name and thread_name metadata" jq -e '([.traceEvents[] | select(.ph=="M" and .name=="process_name")] | length == 1) and ([.traceEvents[] | select(.ph=="M" and .name=="thread_name")] | length >= 1)' "$TMP/p.json"
check "NVTX push/pop as B/E" jq -e '([.traceEvents[] | select(.ph=="B")] | length) == ([.traceEvents[] | select(.ph=="E")] | length)' "$TMP/p.json"
"$VT" report --perfetto "$TMP/h.json" "$D/hostile.jsonl" >/dev/null
check "hostile names: still valid JSON" jq -e '[.traceEvents[] | select(.cat=="launch")][0].name == "</script><img src=x onerror=alert(1)>"' "$TMP/h.json"
"$VT" report --perfetto "$TMP/m.json" "$D/ranks" >/dev/null
check_eq "several traces: one process_name per trace" "$(jq '[.traceEvents[] | select(.name=="process_name")] | length' "$TMP/m.json")" 3
# what a timeline reader needs to see .item()'s pair and a survived OOM: copies say async and
# their stream, synchronisations their stream, OOMs whether the program recovered (both traces
# made here on the simulated device; counts from tests/progs/item_loop.cu and oom_retry.cu)
if [ -f "$SIM/libcudart.so.13" ] && [ -x "$PROGS/item_loop" ]; then
    "$VT" run --sim -o "$TMP/il.jsonl" -- "$PROGS/item_loop" >/dev/null 2>&1
    "$VT" report --perfetto "$TMP/il.json" "$TMP/il.jsonl" >/dev/null
    check_eq "copies: 104 async d2h ones, each with its stream" \
        "$(jq '[.traceEvents[] | select(.cat=="copy" and .args.dir=="d2h" and .args.async==true and (.args.stream|test("^0x[0-9a-f]+$")))] | length' "$TMP/il.json")" 104
    check_eq "stream synchronisations name their stream (24 + 1 + 20 + 1)" \
        "$(jq '[.traceEvents[] | select(.name=="cudaStreamSynchronize" and (.args.stream|type)=="string")] | length' "$TMP/il.json")" 46
    VRAMTRACE_SIM_MEM=1G "$VT" run --sim -o "$TMP/or.jsonl" -- "$PROGS/oom_retry" >/dev/null 2>&1
    "$VT" report --perfetto "$TMP/or.json" "$TMP/or.jsonl" >/dev/null
    check_eq "OOM instants say whether the program recovered" \
        "$(jq -c '[.traceEvents[] | select(.cat=="oom") | .args.recovered]' "$TMP/or.json")" "[true,true,false]"
else skip "perfetto stream/recovered: simulated device or test programs not built"; fi

# Every kind of event a timeline shows, each from what a program did (tests/progs/nvtx_ranges.c
# and fold_mix.cu), so that a count, a byte total or a name moved between them is seen.
if [ -f "$SIM/libcudart.so.13" ] && [ -x "$PROGS/nvtx_ranges" ] && [ -x "$PROGS/fold_mix" ]; then
    "$VT" run --sim -q -o "$TMP/nv.jsonl" -- "$PROGS/nvtx_ranges" >/dev/null 2>&1
    "$VT" report --perfetto "$TMP/nv.json" "$TMP/nv.jsonl" >/dev/null
    nv() { jq -r "$1" "$TMP/nv.json"; }
    check_eq "nvtx_ranges: the ranges in order: pushes B, pops E, start/end b/e, the mark an instant, the domain's and the wide one by name, the Ex mark with no message unnamed" \
        "$(nv '[.traceEvents[] | select(.cat=="nvtx") | "\(.ph)\(if .ph == "B" or .ph == "b" or .ph == "i" then " " + .name else "" end)"] | join(";")')" \
        "B step 1;B forward;E;B backward;E;E;b optimizer;i checkpoint;e;B domain range;E;B wide;E;b wide start;e;i wide mark;i ex mark;b ex start ?;e;i domain mark;i ;b domain start;e"
    check_eq "nvtx_ranges: the start and the end of each start/end range share their id, one id a range" \
        "$(nv '[.traceEvents[] | select(.ph=="b" or .ph=="e") | .id] | "\(unique | length) \(group_by(.) | map(length) | unique)"')" "4 [2]"
    check_eq "nvtx_ranges: each allocation and free as a call with its bytes (64, 32 MiB; free 64; 16; free 32, 16)" \
        "$(nv '[.traceEvents[] | select(.cat=="memory") | "\(.name) \(.args.bytes) \(.args.mem) dev\(.args.dev) res\(.args.res)"] | join(";")')" \
        "cudaMalloc 67108864 device dev0 res0;cudaMalloc 33554432 device dev0 res0;cudaFree 67108864 device dev0 res0;cudaMalloc 16777216 device dev0 res0;cudaFree 33554432 device dev0 res0;cudaFree 16777216 device dev0 res0"
    check_eq "nvtx_ranges: the device's live bytes after each (64, 96, 32, 48, 16, 0 MiB)" \
        "$(nv '[.traceEvents[] | select(.ph=="C" and .name=="VRAM dev 0") | .args.bytes] | map(tostring) | join(";")')" \
        "67108864;100663296;33554432;50331648;16777216;0"
    check_eq "nvtx_ranges: each counter value at the moment its call returned (ts + dur)" \
        "$(nv '[.traceEvents[] | select(.cat=="memory" or .ph=="C")] as $e | [range(0; $e | length; 2) as $i | (($e[$i].ts + $e[$i].dur) * 1000 | round) == ($e[$i + 1].ts * 1000 | round)] | all')" true
    check_eq "nvtx_ranges: the peak instant names 96 MiB; one process, named by its program; one thread, its pid" \
        "$(nv '[([.traceEvents[] | select(.cat=="peak") | .name] | join(",")), ([.traceEvents[] | select(.name=="process_name") | .args.name] | join(",")), ([.traceEvents[] | select(.name=="thread_name") | (.tid == .pid)] | map(tostring) | join(","))] | join(" / ")')" \
        "peak 96.00 MiB / nvtx_ranges / true"

    "$VT" run --sim -q -o "$TMP/fm.jsonl" -- "$PROGS/fold_mix" >/dev/null 2>&1
    "$VT" report --perfetto "$TMP/fm.json" "$TMP/fm.jsonl" >/dev/null
    fm() { jq -r "$1" "$TMP/fm.json"; }
    # 2 threads x 40 steps: scale twice and add once, a 4 KiB copy each way, a 2 KiB memset
    check_eq "fold_mix: launches, each one a slice or counted in a folded instant: scale 160, add 80" \
        "$(fm '[.traceEvents[] | select(.cat=="launch" or .cat=="launches") | {name, n: (if .cat == "launch" then 1 else .args.launches end)}] | group_by(.name) | map("\(.[0].name) \(map(.n) | add)") | join(";")')" \
        "add(float*, float const*) 80;scale(float*, float) 160"
    check_eq "fold_mix: copies, slices and folded: 160 of 655360 bytes" \
        "$(fm '[.traceEvents[] | select(.cat=="copy" or .cat=="copies") | if .cat == "copy" then [1, .args.bytes] else [.args.count, .args.bytes] end] | "\(map(.[0]) | add) \(map(.[1]) | add)"')" \
        "160 655360"
    check_eq "fold_mix: memsets, slices and folded: 80 of 163840 bytes" \
        "$(fm '[.traceEvents[] | select(.name=="cudaMemsetAsync") | if .ph == "X" then [1, .args.bytes] else [.args.count, .args.bytes] end] | "\(map(.[0]) | add) \(map(.[1]) | add)"')" \
        "80 163840"
    check_eq "fold_mix: 80 step ranges on the two threads, each closed" \
        "$(fm '[([.traceEvents[] | select(.ph=="B" and .name=="step")] | length), ([.traceEvents[] | select(.ph=="E")] | length)] | map(tostring) | join(" ")')" "80 80"
    check_eq "fold_mix: the snapshots thread 0 took, by label, each with 16 KiB live (both threads' buffers: they free after a barrier)" \
        "$(fm '[.traceEvents[] | select(.cat=="snapshot") | "\(.name) \(.args.live_bytes)"] | join(";")')" \
        "step 10 16384;step 20 16384;step 30 16384;step 40 16384"
    check_eq "fold_mix: the one finding: host_pointer, error, in scale, once" \
        "$(fm '[.traceEvents[] | select(.cat=="finding") | "\(.name) \(.args.severity) \(.args.kernel) \(.args.count)"] | join(";")')" \
        "host_pointer error scale(float*, float) 1"
    # (thread 0's host pointer faults the shared context: the calls after it, on either thread,
    # may fail with 700 and free nothing, so what stays live depends on the order; the counter
    # must follow the calls that succeeded; it is drawn at the end of each call, failed or not)
    check_eq "fold_mix: pinned host memory counted: 4 KiB a thread, at the end what the successful calls left" \
        "$(fm '[.traceEvents[] | select(.ph=="C" and .name=="pinned host") | .args.bytes] as $c | [.traceEvents[] | select(.cat=="memory" and .args.mem=="pinned" and .args.res==0) | if .name == "cudaFreeHost" then -4096 else 4096 end] as $d
               | [.traceEvents[] | select(.cat=="memory" and .args.mem=="pinned")] as $calls
               | "\($c | all(. == 4096 or . == 8192 or . == 0)) \($c[-1] == ($d | add)) \(($c | length) == ($calls | length))"')" "true true true"
    check_eq "fold_mix: a thread_name for each thread that made a call, and no other" \
        "$(fm '([.traceEvents[] | select(.name=="thread_name") | .tid] | sort) == ([.traceEvents[] | select(.ph != "M" and .tid != null) | .tid] | unique)')" true
else skip "perfetto timeline kinds: simulated device or test programs not built"; fi
