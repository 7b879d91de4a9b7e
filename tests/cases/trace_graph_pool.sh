#!/bin/sh
# trace_graph_pool.sh - cudaMallocFromPoolAsync inside a stream capture (issue 52: its capture path
# could hide a failed call and not record the allocation when the graph runs; only the uncaptured
# call was tested). tests/progs/wl_mem graph_pool: a captured call with no pointer to fill fails
# (the status the program prints), then 1 MiB from the default pool, freed in the same graph,
# launched 3 times: each launch allocates and frees that 1 MiB at the address the capture gave.
. "$ROOT/tests/lib.sh"
need_sim
"$VT" run --sim -q -o "$TMP/gp.jsonl" -- "$PROGS/wl_mem" graph_pool >"$TMP/gp.out" 2>"$TMP/gp.err"
check_eq "the program: exit 0, every call but the bad one succeeded" \
    "$?:$(grep -v -e '^bad=' -e '^addr=' "$TMP/gp.out" | grep -vc '=0$')" "0:0"
bad=$(sed -n 's/^bad=//p' "$TMP/gp.out"); addr=$(sed -n 's/^addr=//p' "$TMP/gp.out")
check "the bad call failed (cudaErrorInvalidValue, 1)" test "$bad" = 1
check_eq "two graph_alloc records: the failure with its status and no address, then 1 MiB at the capture's address" \
    "$(jqs "$TMP/gp.jsonl" '[.[] | select(.ev == "graph_alloc") | "\(.api):\(.res):\(.addr // "-"):\(.size)"] | join(" ")')" \
    "cudaMallocFromPoolAsync:$bad:-:1048576 cudaMallocFromPoolAsync:0:$addr:1048576"
check_eq "each of the 3 launches allocates and frees it" \
    "$(jqs "$TMP/gp.jsonl" '[.[] | select((.ev == "alloc" or .ev == "free") and .api == "cudaGraphLaunch") | "\(.ev):\(.addr):\(.size)"] | join(" ")')" \
    "alloc:$addr:1048576 free:$addr:1048576 alloc:$addr:1048576 free:$addr:1048576 alloc:$addr:1048576 free:$addr:1048576"
check_eq "the report: peak 1 MiB, nothing leaked, the failed call counted" \
    "$("$VT" report --json "$TMP/gp.jsonl" | jq -c '[.peak_bytes, .leaked_bytes, [.errors[] | "\(.api):\(.res)"]]')" \
    "[1048576,0,[\"cudaMallocFromPoolAsync:$bad\"]]"
