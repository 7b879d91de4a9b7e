#!/bin/sh
# fold_equiv.sh - folding steady launches (core/fold.h) changes no figure of the report: each
# test program (every launch path, the memory workloads, NVTX ranges, snapshots and pauses,
# findings, OOMs, copies, graphs, several threads and devices) traced with folding on (the
# default) and off (VRAMTRACE_FOLD=0), and their --json reports compared whole, less what differs
# from run to run whatever the tracer does (times, durations, pids, paths, addresses, driver
# samples, event and line counts, and the verdicts' wording, which quotes measured speeds); with
# several threads, the launch figures only.
. tests/lib.sh
need_sim
echo '*' >"$TMP/deref"
# what differs between two runs of one program regardless of folding: times, addresses, and the
# verdicts drawn from achieved bandwidths (pageable against pinned, the same memcpy on the
# simulated device: which side of the threshold a run lands on is the clock's)
norm() {
    jq -S 'if .transfer_verdicts then .transfer_verdicts |= map(select(.kind != "pin_host_buffer")) else . end | walk(if type == "object" then with_entries(select(.key | test("^(t|ts|dur|pid|pids|pids_at_peak|ppid|peak_pid|trace|traces|path|program|hostname|address|addr|value|msg|events|lines|host_ns|driver|incomplete_reason|unattributed_bytes|free_bytes|used_bytes)$|time|_ns$|_us$|seconds|wall|gbps|rate|bandwidth|^text$|^share_of") | not)) else . end)' "$1"
}
# several threads: peaks and the order of equal rows follow the interleaving; the launch figures do not
norm_mt() {
    jq -S '{launches, allocations, finding_count, sets, kernels: [.processes[].kernels[] | {name, launches}],
            transfers: (.transfers | map_values(del(.seconds, .gbps) | map_values(if type == "object" then del(.seconds, .gbps) else . end))),
            copy_sites: [.processes[].copy_sites[] | {site, bytes, count, pageable_count, d2h_waited_count}]}' "$1"
}
n=0
while IFS='|' read -r name envs cmd; do
    [ -n "$name" ] || continue
    n=$((n + 1))
    for fold in 1 0; do
        # shellcheck disable=SC2086 # envs and cmd are words
        # shellcheck disable=SC2086 # the program's arguments are words; P/ and E/ name the
        # test programs and examples (their directory may hold a space)
        set -- $cmd
        prog=$1; shift
        case $prog in P/*) prog="$PROGS/${prog#P/}" ;; E/*) prog="$EXAMPLES/${prog#E/}" ;; esac
        env VRAMTRACE_FOLD=$fold VRAMTRACE_SIM_DEREF="$TMP/deref" $envs "$VT" run --sim -q -o "$TMP/$name.$fold.jsonl" -- "$prog" "$@" \
            >"$TMP/$name.$fold.out" 2>"$TMP/$name.$fold.err" </dev/null
        "$VT" report --json "$TMP/$name.$fold.jsonl" >"$TMP/$name.$fold.json" 2>/dev/null
        case $name in mt_*) norm_mt "$TMP/$name.$fold.json" ;; *) norm "$TMP/$name.$fold.json" ;; esac >"$TMP/$name.$fold.norm" 2>/dev/null
    done
    if [ -s "$TMP/$name.0.norm" ] && cmp -s "$TMP/$name.1.norm" "$TMP/$name.0.norm"; then
        check "$name: the same report with folding on and off ($(jq -r .launches "$TMP/$name.1.json") launches)" true
    else
        check "$name: the same report with folding on and off (differences: $(diff "$TMP/$name.0.norm" "$TMP/$name.1.norm" | grep '^[<>]' | head -4 | tr '\n' ' '))" false
    fi
done <<EOF2
$(for m in chevron rt_launch rt_pending rt_coop rt_coop_tmpl rt_ex_coop drv_coop drv_ex_coop drv_multi drv_extra graph_rt graph_drv graph_join nodes_rt nodes_drv gnodes_rt gnodes_drv child_rt child_drv; do
    echo "paths_$m|VRAMTRACE_SIM_DEVICES=2|P/launch_paths_sm90 $m"; done)
$(for m in clean copies host_malloc host_struct leak leak_kinds rc oom; do echo "rt_$m||P/trace_rt $m"; done)
$(for m in pool vmm ipc graph multi reset; do echo "wl_$m|VRAMTRACE_SIM_DEVICES=2|P/wl_mem $m"; done)
drv_launch||P/trace_drv launch fatbin extra
drv_geometry||P/trace_drv geometry
rtc||P/trace_rtc 5
steady_many||P/trace_rt many
item_loop||P/item_loop
nvtx||P/nvtx_ranges
api||P/api_snapshot
cub||P/cub_reduce
small_copies||P/small_copies
staged||P/staged_copy
copy_again||P/copy_again
steps_plain||P/steps plain
steps_nvtx||P/steps nvtx
to_device||P/to_device
typed||P/typed_sites
two_gpus|VRAMTRACE_SIM_DEVICES=2|P/two_gpu_peaks
oom_retry||P/oom_retry
mt_stress4||P/rel_stress 4
mt_fold_mix||P/fold_mix
steady_sites||P/steady_sites
mt_graph_threads||P/graph_threads
ex_hostptr||E/host_pointer_bug
ex_oom||E/oom
ex_transfers||E/transfers
EOF2
check "the programs compared: over 40 ($n)" test "$n" -gt 40
folded=$(grep -l '"ev":"launches"' "$TMP"/*.1.jsonl | wc -l)
check "folding happened in 4 or more of them ($folded): the comparison is not of two unfolded runs" test "$folded" -ge 4
check_eq "copies and memsets were folded too: in small_copies and fold_mix, memsets in fold_mix" \
    "$(grep -l '"ev":"copies"' "$TMP"/small_copies.1.jsonl "$TMP"/mt_fold_mix.1.jsonl | wc -l) $(grep -c '"ev":"sets"' "$TMP"/mt_fold_mix.1.jsonl | sed 's/^[1-9][0-9]*$/some/')" "2 some"
