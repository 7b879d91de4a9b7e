#!/bin/sh
# graph_threads.sh - graphs replayed on four threads while the main thread makes and destroys its
# own (tests/progs/graph_threads.cu; issue 48): replays read the node sets side by side, a
# destroy is not kept waiting behind them, and replayed kernel nodes fold. Numbers from the
# program: 4 workers x 500 replays x 16 nodes + 50 graphs x 2 nodes launched once = 32100 kernel
# nodes run, 4 x 16 + 50 x 2 = 164 launches captured, no finding.
. tests/lib.sh
need_sim
for mode in fold nofold; do
    envs=; [ $mode = nofold ] && envs=VRAMTRACE_FOLD=0
    rm -f "$TMP/$mode.jsonl"
    env $envs timeout 120 "$VT" run --sim -q -o "$TMP/$mode.jsonl" -- "$PROGS/graph_threads" >"$TMP/$mode.out" 2>&1
    check_eq "$mode: the program ran to its end, every call succeeded" "$(cat "$TMP/$mode.out")" "rc=0"
    check_eq "$mode: 32100 launches, all replayed kernel nodes; 164 captured; no finding" \
        "$("$VT" report --json "$TMP/$mode.jsonl" | jq -c '[.launches, .graph.launches, .graph.captured, .finding_errors, .finding_warnings]')" \
        "[32100,32100,164,0,0]"
done
check_eq "nofold: a launch line per replayed node" "$(jqs "$TMP/nofold.jsonl" '[.[]|select(.ev=="launch" and .graph)]|length')" 32100
check_eq "fold: replayed nodes counted in launches records marked graph, with the lines they keep, 32100" \
    "$(jqs "$TMP/fold.jsonl" '[.[]|select((.ev=="launch" or .ev=="launches") and .graph)|.count // 1]|add')" 32100
check "fold: the trace is a small fraction of the unfolded one" sh -c 'test $(wc -c <"$1") -lt $(($(wc -c <"$2") / 20))' _ "$TMP/fold.jsonl" "$TMP/nofold.jsonl"
