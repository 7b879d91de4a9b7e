#!/bin/sh
# rel_stress.sh - 16 threads allocate, copy, memset, launch, sync and free on 4 streams: every
# call the program counted is in the trace exactly once, under the right tid, and the live-bytes
# bookkeeping ends at zero. With VT_TSAN_LIB set (make tsan-test, as rel_tsan_stress.sh) the
# ThreadSanitizer build of the library is preloaded instead and any report fails the test.
. tests/lib.sh
need_sim
THREADS=${REL_THREADS:-16}
ITERS=${REL_ITERS:-150}
name=${REL_NAME:-stress}
if [ -n "${VT_TSAN_LIB:-}" ]; then
    export VRAMTRACE_LIB="$VT_TSAN_LIB"
    VRAMTRACE_PRELOAD_FIRST=$(cc -print-file-name=libtsan.so); export VRAMTRACE_PRELOAD_FIRST
fi
T="$TMP/stress.jsonl"
"$VT" run --sim -q -o "$T" -- "$PROGS/rel_stress" "$THREADS" "$ITERS" >"$TMP/out" 2>"$TMP/err"
rc=$?
check_eq "$name: program exits 0" "$rc" 0
check_eq "$name: program saw no CUDA errors" "$(sed -n 's/^errors=//p' "$TMP/out")" 0
if [ -n "${VT_TSAN_LIB:-}" ]; then
    n=$(grep -c 'WARNING: ThreadSanitizer' "$TMP/err")
    check_eq "$name: ThreadSanitizer reports nothing" "$n" 0
    [ "$n" = 0 ] || sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY/p' "$TMP/err" | head -80
fi
check_eq "$name: one line per thread" "$(grep -c '^tid=' "$TMP/out")" "$THREADS"
# per-thread counts from the trace, in the program's own format
# (launches, copies and memsets folded by the tracer count as many as their records say: core/fold.h)
jqs "$T" 'def n(e; f): [.[] | select((.ev == e or .ev == f) and .res == 0) | .count // 1] | add // 0;
    [.[] | select(.tid != null)] | group_by(.tid)[] |
    "tid=\(.[0].tid) alloc=\(n("alloc"; "")) free=\(n("free"; "")) copy=\(n("copy"; "copies")) set=\(n("set"; "sets")) launch=\(n("launch"; "launches")) sync=\(n("sync"; ""))"' \
    | grep -v ' alloc=0 free=0 copy=0 set=0 launch=0 sync=0$' | sort >"$TMP/trace_counts"
grep '^tid=' "$TMP/out" | sort >"$TMP/prog_counts"
if cmp -s "$TMP/prog_counts" "$TMP/trace_counts"; then ok "$name: per-thread event counts in the trace equal the program's"
else not_ok "$name: per-thread counts differ"; diff "$TMP/prog_counts" "$TMP/trace_counts" | head -20; fi
total=$(awk '{for (i = 2; i <= NF; i++) { split($i, kv, "="); s += kv[2] } } END { print s }' "$TMP/prog_counts")
check_eq "$name: no other call events (each recorded once)" \
    "$(jqs "$T" '[.[] | select(.ev=="alloc" or .ev=="free" or .ev=="copy" or .ev=="set" or .ev=="launch" or .ev=="sync" or .ev=="copies" or .ev=="sets" or .ev=="launches") | select(.tid != null) | .count // 1] | add')" "$total"
check_eq "$name: no free left with res null" "$(jqs "$T" '[.[] | select(.ev=="free" and .res==null)] | length')" 0
check_eq "$name: every freed address was allocated before" \
    "$(jqs "$T" 'reduce (.[] | select(.ev=="alloc" or .ev=="free")) as $e ({live:{}, bad:0};
        if $e.ev=="alloc" then .live[$e.addr] = 1 elif .live[$e.addr] then .live[$e.addr] = null else .bad += 1 end) | .bad')" 0
check_eq "$name: footer is last" "$(jqs "$T" '.[-1].ev')" footer
check_eq "$name: footer live_bytes 0" "$(jqs "$T" '.[-1].live_bytes')" 0
check_eq "$name: footer dropped 0" "$(jqs "$T" '.[-1].dropped')" 0
check_eq "$name: footer events = lines" "$(jqs "$T" '.[-1].events')" "$(tr -d '\000' <"$T" | wc -l | tr -d ' ')"
check_eq "$name: no NUL bytes between lines" "$(tr -cd '\000' <"$T" | wc -c | tr -d ' ')" 0
check_eq "$name: report leaked_bytes 0" "$("$VT" report --json "$T" 2>/dev/null | jq -r .leaked_bytes)" 0
