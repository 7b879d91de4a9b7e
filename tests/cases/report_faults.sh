#!/bin/sh
# report_faults.sh - the report when memory runs out, and what it leaves behind (issue 52: a NULL
# dereference when an allocation failed at start-up, and per-process state leaked at teardown,
# went unseen: nothing in the suite failed an allocation or looked for leaks).
# 1. Every allocation the report's own code makes is made to fail in turn (tests/shim/failalloc.c,
#    VT_FAIL_ALLOC_AT=1, 2, ... until the count is not reached): each run ends with status 0 (the
#    failure was survived), or 1 with one line naming the failure; never a signal.
# 2. Reports in every format end with nothing leaked (valgrind's memcheck; LeakSanitizer under
#    make SAN=1 test).
. "$ROOT/tests/lib.sh"
# relative to the checkout (run.sh runs from there): the argument lists are split at spaces, and
# the checkout's path may have one
cd "$ROOT" || exit 1
D=tests/data/traces
SHIM="$ROOT/$BUILD/tests/libfailalloc.so"
CASES="oom|$D/oom.jsonl
json|--json $D/oom.jsonl
html+perfetto|--html $TMP/r.html --perfetto $TMP/r.pf.json $D/oom.jsonl
ranks|$D/ranks
combined+gates|--fail-on=oom,leak,growth --max-peak=device:1G $D/gpu_share
diff|--diff --json --max-increase=5% $D/ranks/rank0.jsonl $D/ranks/rank2.jsonl
torch|$D/torch_segments.jsonl
hostile|$D/hostile.jsonl"

if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    skip "allocation failures: not under the sanitizer build (its runtime owns malloc; the shim is never called)"
elif [ ! -f "$SHIM" ]; then
    not_ok "allocation failures: $SHIM not built"
else
    SHIM_PRELOAD=$(preload "$SHIM")   # through a link when the checkout's path has a space
    printf '%s\n' "$CASES" | while IFS='|' read -r name args; do
        n=1; bad=""
        while [ "$n" -lt 5000 ]; do
            # shellcheck disable=SC2086
            VT_FAIL_ALLOC_AT=$n LD_PRELOAD="$SHIM_PRELOAD" "$VT" report $args >/dev/null 2>"$TMP/err"
            rc=$?
            grep -q 'not reached' "$TMP/err" && break
            lines=$(grep -vc '^vt-failalloc: ' "$TMP/err")
            if [ "$rc" -ge 128 ]; then bad="allocation $n: killed by signal $((rc - 128))"; break; fi
            # a gate may trip on what was read (3); else 0, or 1 and one line of why
            if [ "$rc" != 0 ] && [ "$rc" != 3 ] && { [ "$rc" != 1 ] || [ "$lines" != 1 ]; }; then
                bad="allocation $n: status $rc, $(grep -v '^vt-failalloc: ' "$TMP/err" | head -2 | tr '\n' ' ')"; break
            fi
            n=$((n + 1))
        done
        check "$name: each of its $((n - 1)) allocations failed in turn: survived, or status 1 with one line${bad:+ ($bad)}" \
            sh -c '[ -z "$1" ] && [ "$2" -gt 50 ]' _ "$bad" "$n"
    done
fi

# A section the report cannot sort for want of memory says so, never shows as empty: the copy
# sites of a trace with 16 copies from one stack, in each format, with each allocation failed in
# turn. Each run shows the one site (its label "?" where symbolizing it ran out of memory), or
# says the sites are unknown; and some run says so.
sync_d2h_trace 16 0 >"$TMP/copies16.jsonl"
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ] || [ ! -f "$SHIM" ]; then
    skip "copy sites under failed allocations: no shim here (see above)"
else
    for fmt in text html json; do
        n=1; bad=""; unknown=0
        while [ "$n" -lt 5000 ]; do
            rm -f "$TMP/cs.html"
            case $fmt in
            text) VT_FAIL_ALLOC_AT=$n LD_PRELOAD="$SHIM_PRELOAD" "$VT" report "$TMP/copies16.jsonl" >"$TMP/cs.out" 2>"$TMP/err"
                  got=$(sed -n '/^Copy sites (by bytes)/{p;n;p;}' "$TMP/cs.out" | tr '\n' '|') ;;
            html) VT_FAIL_ALLOC_AT=$n LD_PRELOAD="$SHIM_PRELOAD" "$VT" report --html "$TMP/cs.html" "$TMP/copies16.jsonl" >/dev/null 2>"$TMP/err"
                  # each section of the page on a line of its own: the copy sites' ones
                  got=$( [ -f "$TMP/cs.html" ] && sed 's/<section>/\n<section>/g' "$TMP/cs.html" | grep '^<section><h2>Copy sites</h2>' | tr '\n' '|') ;;
            json) VT_FAIL_ALLOC_AT=$n LD_PRELOAD="$SHIM_PRELOAD" "$VT" report --json "$TMP/copies16.jsonl" >"$TMP/cs.out" 2>"$TMP/err"
                  got=$(jq -c '.processes[0].copy_sites | if . == null then null else map([.site, .count]) end' "$TMP/cs.out" 2>/dev/null) ;;
            esac
            grep -q 'not reached' "$TMP/err" && break
            case "$got" in
            "") ;;   # the report stopped (status 1, checked above) or wrote no section at all
            *"|"*"|"*"|"*) bad="allocation $n: two sections: $got"; break ;;
            "Copy sites (by bytes): unknown (the report ran out of memory for them)|"*|null|\
            "<section><h2>Copy sites</h2><p>Unknown: the report ran out of memory for them.</p></section>|") unknown=$((unknown + 1)) ;;
            # its label "?" where symbolizing it ran out of memory
            "Copy sites (by bytes):|        64 B     16 copies    16 µs  16 pageable     "[0?]*"|"|\
            "<section><h2>Copy sites</h2><table>"*'<td class="n">64 B</td><td class="n">16</td>'*"</section>|"|'[["0x401234",16]]'|'[["?",16]]') ;;
            *) bad="allocation $n: $got"; break ;;
            esac
            n=$((n + 1))
        done
        check "$fmt: copy sites with each allocation failed in turn: the one site or 'unknown', never an empty list${bad:+ ($bad)}" \
            sh -c '[ -z "$1" ] && [ "$2" -gt 0 ]' _ "$bad" "$unknown"
    done
fi

if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    leaks() { ASAN_OPTIONS=detect_leaks=1:exitcode=99 "$@"; }
    how="LeakSanitizer"
elif command -v valgrind >/dev/null 2>&1; then
    leaks() { valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$@"; }
    how="valgrind"
else
    skip "leaks at exit: NOT TESTED - no valgrind here"
    exit 0
fi
printf '%s\n' "$CASES" | while IFS='|' read -r name args; do
    # shellcheck disable=SC2086
    leaks "$VT" report $args >/dev/null 2>"$TMP/leak.err"
    rc=$?
    check "$name: nothing leaked at exit ($how; status $rc)" sh -c '[ "$1" != 99 ] && ! grep -q "definitely lost\|indirectly lost\|detected memory leaks" "$2"' _ "$rc" "$TMP/leak.err"
done
