#!/bin/sh
# rel_preloads.sh - the tracer beside another CUDA preload (docs/reliability.md "Other preloads"):
# a second interposer that wraps cudaMalloc/cuMemAlloc_v2 and forwards to the next definition
# (tests/shim/vtshim.c: dlsym(RTLD_NEXT) or a dlopen handle) works as it does alone, each of its
# wrappers runs once per call, and the tracer still records every call.
. tests/lib.sh
need_sim
SHIM="$ROOT/$BUILD/tests/libvtshim.so"
RT="$PROGS/sim_basic"
DRV="$PROGS/trace_drv"
alone() { env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$SHIM")" "$@"; }
counts() { grep '^vtshim ' "$1"; }
rcs() { grep '^rc ' "$1" | tr '\n' ';'; }

for how in next handle; do
    h=0; [ $how = handle ] && h=1
    # runtime API: sim_basic roundtrip makes two cudaMalloc and two cudaFree
    VTSHIM_HANDLE=$h alone "$RT" roundtrip >"$TMP/rt-alone.out" 2>"$TMP/rt-alone.err"
    check_eq "$how: the runtime program with the shim alone exits 0" "$?" 0
    check_eq "$how: ... and the shim counts 2 cudaMalloc, 3 cudaFree (a, b, the managed buffer)" "$(counts "$TMP/rt-alone.err")" \
        "vtshim cudaMalloc=2 cudaFree=3 cuMemAlloc_v2=0 cuMemFree_v2=0"
    # `vramtrace run` puts the tracer first, the user's preload after it
    VTSHIM_HANDLE=$h LD_PRELOAD="$(preload "$SHIM")" "$VT" run --sim -q -o "$TMP/rt-$how.jsonl" -- "$RT" roundtrip \
        >"$TMP/rt-$how.out" 2>"$TMP/rt-$how.err"
    check_eq "$how: under the tracer the runtime program still exits 0 (was SIGSEGV, 139)" "$?" 0
    check "$how: ... with the same output" cmp -s "$TMP/rt-alone.out" "$TMP/rt-$how.out"
    check_eq "$how: ... the shim's wrappers ran once per call" "$(counts "$TMP/rt-$how.err")" \
        "vtshim cudaMalloc=2 cudaFree=3 cuMemAlloc_v2=0 cuMemFree_v2=0"
    check_eq "$how: ... and the trace has both 1 MiB allocations and the three cudaFree" \
        "$(jqs "$TMP/rt-$how.jsonl" '[.[]|select(.ev=="alloc" and .api=="cudaMalloc")|.size]|join(",")');$(jqs "$TMP/rt-$how.jsonl" '[.[]|select(.ev=="free" and .api=="cudaFree")|"\(.mem) \(.size)"]|join(",")')" \
        "1048576,1048576;device 1048576,device 1048576,managed 4096"
    # driver API: trace_drv mem makes three cuMemAlloc (the third too big: 2) and three cuMemFree
    # (the third a double free: 1)
    VTSHIM_HANDLE=$h alone "$DRV" mem >"$TMP/drv-alone.out" 2>"$TMP/drv-alone.err"
    check_eq "$how: the driver program with the shim alone exits 0, shim counts 3 and 3" \
        "$?:$(counts "$TMP/drv-alone.err")" "0:vtshim cudaMalloc=0 cudaFree=0 cuMemAlloc_v2=3 cuMemFree_v2=3"
    VTSHIM_HANDLE=$h LD_PRELOAD="$(preload "$SHIM")" "$VT" run --sim -q -o "$TMP/drv-$how.jsonl" -- "$DRV" mem \
        >"$TMP/drv-$how.out" 2>"$TMP/drv-$how.err"
    check_eq "$how: under the tracer the driver program exits 0 with the same return codes" \
        "$?:$(rcs "$TMP/drv-$how.out")" "0:$(rcs "$TMP/drv-alone.out")"
    check_eq "$how: ... the shim's wrappers ran once per call" "$(counts "$TMP/drv-$how.err")" \
        "vtshim cudaMalloc=0 cudaFree=0 cuMemAlloc_v2=3 cuMemFree_v2=3"
    check_eq "$how: ... and the trace has the three allocations (1 MiB, 8 KiB, 4 TiB failing with 2)" \
        "$(jqs "$TMP/drv-$how.jsonl" '[.[]|select(.ev=="alloc" and .api=="cuMemAlloc_v2")|"\(.size):\(.res)"]|join(",")')" "1048576:0,8192:0,4398046511104:2"
done

# the user's preload ahead of the tracer (LD_PRELOAD set by hand): the shim wraps the tracer
env VTSHIM_HANDLE=0 LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$SHIM" "$ROOT/$BUILD/libvramtrace.so")" \
    VRAMTRACE_OUTPUT="$TMP/first.jsonl" VRAMTRACE_QUIET=1 "$RT" roundtrip >"$TMP/first.out" 2>"$TMP/first.err"
check_eq "shim first, tracer second: exits 0, the shim counts 2 and 3" "$?:$(counts "$TMP/first.err")" \
    "0:vtshim cudaMalloc=2 cudaFree=3 cuMemAlloc_v2=0 cuMemFree_v2=0"
check_eq "shim first: the trace has both allocations" \
    "$(jqs "$TMP/first.jsonl" '[.[]|select(.ev=="alloc" and .api=="cudaMalloc")|.size]|join(",")')" "1048576,1048576"
