#!/bin/sh
# trace_fields.sh - a record has no field it should not have (issue 52: every plain cudaMemcpy
# record carried the peer copies' "src_dev":0 and nothing noticed). tests/lib.sh record_fields_bad
# over the traces of programs that copy every way: runtime and driver, pageable and pinned, d2d,
# peer copies between two simulated devices (wl_mem multi: cudaMemcpyPeer and cuMemcpyPeer, which
# must keep src_dev 0), and folded repeats (copy_again).
. "$ROOT/tests/lib.sh"
need_sim
for spec in "1|staged_copy" "2|staged_copy" "1|trace_drv" "2|wl_mem multi" "1|small_copies" "1|copy_again"; do
    devs=${spec%%|*}; prog=${spec#*|}
    # shellcheck disable=SC2086
    VRAMTRACE_SIM_DEVICES=$devs "$VT" run --sim -q -o "$TMP/t.jsonl" -- "$PROGS"/$prog >/dev/null 2>&1 </dev/null
    ncopies=$(jqs "$TMP/t.jsonl" '[.[] | select(.ev == "copy")] | length')
    bad=$(record_fields_bad "$TMP/t.jsonl" | head -3 | tr '\n' ' ')
    check "$prog on $devs device(s): $ncopies copies, no field out of place${bad:+: $bad}" sh -c '[ "$1" -gt 0 ] && [ -z "$2" ]' _ "$ncopies" "$bad"
    rm -f "$TMP/t.jsonl"
done
VRAMTRACE_SIM_DEVICES=2 "$VT" run --sim -q -o "$TMP/peer.jsonl" -- "$PROGS/wl_mem" multi >/dev/null 2>&1 </dev/null
check_eq "wl_mem multi: the peer copies keep src_dev (device 0 to 1), the others have none" \
    "$(jqs "$TMP/peer.jsonl" '[.[] | select(.ev == "copy") | "\(.api):\(.src_dev // "-")"] | unique | join(",")')" "cuMemcpyPeer:0,cudaMemcpyPeer:0"
# the check itself fails on a wrong record
printf '%s\n' '{"ev":"copy","api":"cudaMemcpy","dir":"h2d","host":"pageable","src_dev":0}' '{"ev":"copy","api":"cudaMemcpy","dir":"d2d","host":"pinned"}' \
    '{"ev":"launch","graph":false}' >"$TMP/bad.jsonl"
check_eq "the check itself: src_dev on a plain copy, host on d2d, graph false" "$(record_fields_bad "$TMP/bad.jsonl" | tr '\n' ' ')" \
    "1: src_dev on cudaMemcpy 2: host on a d2d copy 3: graph/captured false on launch "
