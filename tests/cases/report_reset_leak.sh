#!/bin/sh
# report_reset_leak.sh - memory the program never freed that a device reset released (issue 50
# slice 5): Compute Sanitizer reports it as leaked; the report shows it in the Leaks section on a
# line of its own, outside the leak total (docs/report.md). tests/progs/reset_leak.cu: 1 MiB
# (KEPT_A) and 2 x 2 MiB (KEPT_B) never freed, 4 KiB freed (FREED), 64 KiB managed never freed,
# then the reset (cudaDeviceReset, or cuDevicePrimaryCtxReset), then 8 KiB never freed (LEAK).
. tests/lib.sh
need_sim
SRC="$ROOT/tests/progs/reset_leak.cu"
line() { grep -n "// $1\$" "$SRC" | cut -d: -f1; }
A=$(line KEPT_A) B=$(line KEPT_B) L=$(line LEAK)
M=1048576
for mode in rt drv; do
    api=cudaDeviceReset; [ $mode = drv ] && api=cuDevicePrimaryCtxReset
    "$VT" run --sim -q -o "$TMP/$mode.jsonl" -- "$PROGS/reset_leak" $mode >"$TMP/$mode.out" 2>&1
    check_eq "$mode: the program's calls all succeeded" "$?:$(cat "$TMP/$mode.out")" "0:rc=0"
    "$VT" report "$TMP/$mode.jsonl" >"$TMP/$mode.txt" 2>/dev/null
    check_eq "$mode: text: the leak (8 KiB at LEAK), then the reset's line (5 MiB in 3, 64 KiB managed) with its sites" \
        "$(sed -n '/^Leaks/,/^$/p' "$TMP/$mode.txt" | sed '/^$/d')" \
"Leaks (at exit, no successful free): 8.00 KiB VRAM in 1 allocations
    8.00 KiB      1 alloc   main (reset_leak.cu:$L)
  released by $api, never freed by the program (not in the total): 5.00 MiB VRAM in 3 allocations, 64.00 KiB managed
      4.00 MiB      2 allocs  main (reset_leak.cu:$B)
      1.00 MiB      1 alloc   main (reset_leak.cu:$A)"
    "$VT" report --json "$TMP/$mode.jsonl" >"$TMP/$mode.json" 2>/dev/null
    check_eq "$mode: json: leaked_bytes is the leak alone; reset_released the rest, by site" \
        "$(jq -c '.processes[0] | [.leaked_bytes, .reset_released]' "$TMP/$mode.json")" \
        "[8192,{\"bytes\":$((5 * M)),\"count\":3,\"managed_bytes\":65536,\"sites\":[{\"site\":\"main (reset_leak.cu:$B)\",\"bytes\":$((4 * M)),\"count\":2},{\"site\":\"main (reset_leak.cu:$A)\",\"bytes\":$M,\"count\":1}]}]"
    schema_ok "$mode: the report validates against docs/report-schema.json" "$(cat "$TMP/$mode.json")" '[$s[0].required[] as $k | has($k)] | all'
    "$VT" report --html "$TMP/$mode.html" "$TMP/$mode.jsonl" >/dev/null 2>&1
    check_eq "$mode: html: its own section, beside the leaks" \
        "$(grep -o "<h2>Released by $api, never freed by the program: 5.00 MiB in 3 allocations (not counted as leaked)</h2>" "$TMP/$mode.html" | wc -l)" 1
    check_eq "$mode: --fail-on=leak counts the leak only" \
        "$("$VT" report --fail-on=leak "$TMP/$mode.jsonl" 2>&1 >/dev/null | sed 's/: pid.*: not/: not/')" \
        "vramtrace report: --fail-on=leak: not freed at exit: 8.00 KiB VRAM in 1 allocation"
done
# no reset: no such line
"$VT" run --sim -q -o "$TMP/none.jsonl" -- "$PROGS/trace_rt" leak >/dev/null 2>&1
check_eq "no reset: no 'released by' line, reset_released empty" \
    "$("$VT" report "$TMP/none.jsonl" | grep -c 'released by'):$("$VT" report --json "$TMP/none.jsonl" | jq -c '.processes[0].reset_released')" \
    "0:{\"bytes\":0,\"count\":0,\"managed_bytes\":0,\"sites\":[]}"
