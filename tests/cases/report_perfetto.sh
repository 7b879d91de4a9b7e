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
