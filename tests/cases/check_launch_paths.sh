#!/bin/sh
# check_launch_paths.sh - issue 34's detection matrix: every launch path x pointer kind x build
# (sm_90, sm_80, --compress-mode=none, -rdc=true, --default-stream per-thread). tests/progs/matrix/launch_paths.cu launches one
# kernel through one path per mode with a live device buffer, a heap buffer and a freed device
# buffer, and prints the findings (kind, severity, kernel, argument, value, allocation, device)
# and the launch records (API, device) the trace must hold, from what it does. The kernel never
# dereferences its argument (VRAMTRACE_SIM_DEREF says so), so the device never faults: the
# verdicts are the tracer's alone.
. tests/lib.sh
need_sim
echo '*' >"$TMP/deref"
found() {
    jqs "$TMP/$1.jsonl" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k
        | .[] | select(.ev=="finding" and .msg)
        | "expect \(.kind) \(.severity) \(if .k then $k[.k|tostring] else "-" end) \(.arg // "-") \(.offset // "-") \(.value) \(.alloc.addr // "-") \(.alloc.size // "-") \(.alloc.mem // "-") \(.dev)"'
}
# each launch once, a folded record (core/fold.h) as many times as it counts; sorted (folded
# counts are written after the lines that follow them)
launches() { jqs "$TMP/$1.jsonl" '.[] | select(.ev=="launch" or .ev=="launches") | "launch \(.api) \(.dev) \(if .captured then "captured" elif .graph then "graph" else "-" end)" as $l | range(.count // 1) | $l' | sort; }
want() { grep "^$2 " "$TMP/$1.out"; }
# The per-thread default stream build calls the _ptsz form of an API where its headers map the
# name to one (cuda.h, cuda_runtime_api.h, crt/device_functions.h's __cudaLaunchKernel_ptsz).
# What it calls is what the binary imports (nm -D -u), not the tracer's idea: a launch line's API
# becomes NAME_ptsz when the build imports that. (CUDA 13.0's cuda_device_runtime_api.h defines
# its own static cudaGraphLaunch_ptsz, which calls cudaGraphLaunch: that one stays plain.)
as_called() {
    nm -D -u "$P" | awk '{ sub(/@.*/, "", $2); print $2 }' >"$TMP/imports"
    awk 'NR == FNR { have[$1] = 1; next } have[$2 "_ptsz"] { $2 = $2 "_ptsz" } { print }' "$TMP/imports" -
}
cells=0 misses=0
for build in sm90 sm80 none rdc ptsz; do
    P="$PROGS/launch_paths_$build"
    [ -x "$P" ] || { skip "launch_paths_$build: not built"; continue; }
    for mode in chevron rt_launch rt_pending rt_coop rt_coop_tmpl rt_ex_coop drv_coop drv_ex_coop drv_multi drv_multi64 drv_extra graph_rt graph_drv graph_join nodes_rt nodes_drv gnodes_rt gnodes_drv child_rt child_drv capset_rt capset_drv clone_rt clone_drv withparams_rt withparams_drv tograph_rt tograph_drv cnodes_rt cnodes_drv snodes_rt snodes_drv cond_rt cond_drv fcopies_rt fcopies_drv galloc_rt galloc_drv calloc_rt calloc_drv; do
        n=$build.$mode devs=2
        case $mode in drv_multi64) devs=64 ;; esac   # one entry per device, up to the tracer's 64
        env VRAMTRACE_SIM_DEREF="$TMP/deref" VRAMTRACE_SIM_DEVICES=$devs \
            "$VT" run --sim -o "$TMP/$n.jsonl" -- "$P" "$mode" >"$TMP/$n.out" 2>"$TMP/$n.err"
        rc=$?
        cells=$((cells + 1))
        got=$(found $n | tr '\n' ';') exp=$(want $n expect | tr '\n' ';')
        [ "$got" = "$exp" ] || misses=$((misses + 1))
        check_eq "$n: every finding, exactly (live: none, heap: host_pointer, freed: use_after_free naming it)" "$got" "$exp"
        check_eq "$n: every launch recorded once, by its API, on its device" \
            "$(launches $n | tr '\n' ';')" "$(want $n launch | as_called | sort | tr '\n' ';')"
        check_eq "$n: every launch succeeded and the program ran to the end (exit 0)" \
            "$(grep -c '^rc [a-z0-9]* [^0]' "$TMP/$n.out") $(grep -c "^done $mode 0$" "$TMP/$n.out") $rc" "0 1 0"
        # (With an error pending the tracer does not ask the runtime for the kernel's handle: the
        # query could leave an error of its own. The layout then comes from the image.)
        # (cnodes_* and snodes_* launch no kernel.)
        case $mode in rt_pending|cnodes_*|snodes_*|cond_*|fcopies_*) ;; *) check_eq "$n: every kernel's layout came from the driver (cuFuncGetParamInfo / cuKernelGetParamInfo)" \
            "$(jqs "$TMP/$n.jsonl" '[.[]|select(.ev=="kernel")|.layout]|unique|join(",")')" paraminfo ;; esac
        case $mode in rt_pending)
            check_eq "$n: the program's pending error survives the traced launch" \
                "$(sed -n 's/^pending //p' "$TMP/$n.out")" "$(sed -n 's/^expect_pending //p' "$TMP/$n.out")"
        esac
        case $mode in nodes_*|gnodes_*|child_*|capset_*|clone_*|withparams_*|tograph_*|cond_*|drv_extra)
            "$VT" report --json "$TMP/$n.jsonl" >"$TMP/$n.json" 2>/dev/null
            check_eq "$n: each finding counts its checks: when the node changed and at every launch" \
                "$(jq -r '[.findings[]|"count \(.kind) \(.count)"]|join(";")' "$TMP/$n.json")" "$(want $n count | tr '\n' ';' | sed 's/;$//')"
        esac
        case $mode in galloc_*|calloc_*)
            check_eq "$n: each launch allocated and freed the node's memory (graph allocs, frees by the launch API)" \
                "$(jqs "$TMP/$n.jsonl" '[([.[]|select(.ev=="alloc" and .graph==true)]|length), ([.[]|select(.ev=="free" and (.api|test("GraphLaunch")))]|length)]|map(tostring)|join(" ")')" \
                "$(want $n graph_alloc | cut -d' ' -f2) $(want $n graph_alloc | cut -d' ' -f2)"
        esac
        case $mode in graph_*|nodes_*|gnodes_*|child_*|capset_*|clone_*|withparams_*|tograph_*|cnodes_*|snodes_*|cond_*|galloc_*|calloc_*)
            "$VT" report --json "$TMP/$n.jsonl" >"$TMP/$n.json" 2>/dev/null
            check_eq "$n: the report counts each replay's launches, copies and memsets, not the captured ones" \
                "$(jq -r '"report launches \(.launches);report graph_launches \(.graph.launches);report graph_copies \(.graph.copies);report graph_sets \(.graph.sets);report captured \(.graph.captured);report h2d_count \(.transfers.h2d.count);report set_count \(.sets.count);"' "$TMP/$n.json")" \
                "$(want $n report | tr '\n' ';')"
            grep -q '^report_bytes ' "$TMP/$n.out" && check_eq "$n: the bytes the replays copied and set" \
                "$(jq -r '"report_bytes h2d \(.transfers.h2d.bytes) set \(.sets.bytes)"' "$TMP/$n.json")" "$(want $n report_bytes)"
            if [ $build = sm90 ]; then # the text's heading of the Kernels section, from the same counts
                l=$(want $n report | sed -n 's/^report launches //p') g=$(want $n report | sed -n 's/^report graph_launches //p')
                case "$l:$g" in
                    0:*) w= ;;
                    *:0) w="Kernels ($l launch$([ "$l" = 1 ] || echo es)):" ;;
                    *) w="Kernels ($l launch$([ "$l" = 1 ] || echo es), $g of them by graph launches):" ;;
                esac
                check_eq "$n: the text's Kernels heading (launches, those by graph launches)" \
                    "$("$VT" report "$TMP/$n.jsonl" 2>/dev/null | grep '^Kernels')" "$w"
            fi
        esac
    done
done
check_eq "the matrix: $cells cells, no verdict missed" "$misses" 0
