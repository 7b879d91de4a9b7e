#!/bin/sh
# trace_names.sh - the writer and the reader share include/vramtrace/trace.h: real traces of
# programs that between them write every record kind (pools, VMM, IPC, graphs, two devices,
# a device reset, NVTX, a host-pointer finding, an OOM, copies, the program API's snapshot, pause and step) hold only kinds and top-level keys the header
# lists, every listed kind appears in them, the report reads them all, the keys the reader matches
# are listed fields, and docs/trace-format.md has a section for every kind.
. tests/lib.sh
need_sim
CHECKER="$ROOT/$BUILD/tests/unit/test_report_format"
H="$ROOT/include/vramtrace/trace.h"
[ -x "$CHECKER" ] || { not_ok "trace_names: $CHECKER not built"; exit 0; }

# the header's lists, from the compiler (not re-stated here)
list() { printf '#include <vramtrace/trace.h>\n#define F(k) %s\n%s(F)\n' "$2" "$1" | cc -E -P -I"$ROOT/include" - | tr -s ' \n' '\n\n' | sed '/^$/d' | sort -u; }
list VT_TRACE_FIELDS 'k' >"$TMP/fields"
list VT_TRACE_EVENTS 'VT_EVN_##k' | tr -d '"' >"$TMP/events"
check_eq "trace.h lists 34 record kinds" "$(wc -l <"$TMP/events" | tr -d ' ')" 34

run() { # run NAME PROGRAM ARGS... : traced on the simulated device (two devices) -> $TMP/NAME.jsonl
    n=$1; shift
    VRAMTRACE_SIM_DEVICES=2 "$VT" run --sim -o "$TMP/$n.jsonl" -- "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
    [ -s "$TMP/$n.jsonl" ] || not_ok "trace_names: $n wrote no trace: $(tail -1 "$TMP/$n.err")"
}
for m in pool vmm ipc graph multi reset; do run "wl_$m" "$PROGS/wl_mem" "$m"; done
run nvtx "$PROGS/nvtx_ranges"
run hostptr "$EXAMPLES/host_pointer_bug"
run oom "$EXAMPLES/oom"
run transfers "$EXAMPLES/transfers"
run api "$PROGS/api_snapshot"
run steps "$PROGS/steps" api # vramtrace_step(): step
run steady "$PROGS/fold_mix" # repeated launches, copies, memsets: folded counts (launches, copies, sets)
# a Python program: its stacks' code objects (pycode)
command -v python3 >/dev/null && run py python3 "$ROOT/tests/pylayout/alloc.py"
traces=$(ls "$TMP"/*.jsonl)
ntraces=$(echo "$traces" | wc -l | tr -d ' ')
check_eq "14 traces written" "$ntraces" 14

# shellcheck disable=SC2086
"$CHECKER" $traces >"$TMP/check.out" 2>&1
check_eq "every line's kind and keys are in trace.h ($ntraces traces)" \
    "$(grep -c '^ok - ' "$TMP/check.out"),$(grep -c '^not ok' "$TMP/check.out")" "$ntraces,0"
grep '^not ok' "$TMP/check.out" | head -5

# shellcheck disable=SC2086
cat $traces | tr -d '\000' | jq -r .ev | sort -u >"$TMP/seen"
check_eq "the traces hold every record kind trace.h lists" "$(comm -23 "$TMP/events" "$TMP/seen" | tr '\n' ' ')" ""

for t in $traces; do
    "$VT" report --json "$t" >"$TMP/r.json" 2>"$TMP/r.err" || { not_ok "report reads $(basename "$t"): $(head -1 "$TMP/r.err")"; continue; }
    ok "report reads $(basename "$t")"
done

# the keys the reader matches are format fields (a misspelt key would be silently never read)
grep -o 'KEY("[a-z_]*")' "$ROOT/tools/report/reader_fields.c" | sed 's/KEY("\(.*\)")/\1/' | sort -u >"$TMP/rkeys"
check "the reader matches at least 40 keys" test "$(wc -l <"$TMP/rkeys")" -ge 40
check_eq "every key the reader matches is in trace.h" "$(comm -23 "$TMP/rkeys" "$TMP/fields" | tr '\n' ' ')" ""

# docs/trace-format.md has a section (### heading naming it in backquotes) for every kind
missing=""
while read -r e; do
    grep -q "^###.*\`$e\`" "$ROOT/docs/trace-format.md" || missing="$missing $e"
done <"$TMP/events"
check_eq "docs/trace-format.md documents every record kind" "$missing" ""
