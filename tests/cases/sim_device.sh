#!/bin/sh
# sim_device.sh - the simulated CUDA device (tests/sim) behaves like a GPU for unmodified
# nvcc-built programs: ABI/loading, memory, OOM, sticky illegal-address errors, routing.
. tests/lib.sh
need_sim
run() { env LD_LIBRARY_PATH="$SIM" "$@"; }
B="$PROGS/sim_basic"
v() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

out=$(run "$B" roundtrip 2>"$TMP/err")
check "nvcc -cudart shared program loads the sim without version warnings" \
    sh -c "! grep -q 'no version information' '$TMP/err'"
for k in meminfo_delta_ok roundtrip memset attr_device attr_unregistered attr_host attr_managed \
         managed_host_visible attr_registered freed elapsed; do
    check_eq "roundtrip: $k" "$(v "$out" $k)" 1
done
check_eq "HostToDevice copy into host memory is invalid" "$(v "$out" bad_copy)" 1
check_eq "compute capability 9.0" "$(v "$out" cc)" 9.0

out=$(VRAMTRACE_SIM_MEM=4G run "$B" oom)
check_eq "4G device holds 8 x 512 MiB chunks" "$(v "$out" chunks)" 8
check_eq "OOM is cudaErrorMemoryAllocation" "$(v "$out" err)" 2
check_eq "allocation works again after freeing" "$(v "$out" after_free)" 0

# param-layout-dependent checks need the fatbin parser (src/fatbin/fatbin.c)
layout=$(run "$B" paraminfo)
if [ "$(v "$layout" rc)" != 0 ]; then
    skip "host-pointer launch checks: no kernel layouts (fatbin parser not built yet)"
else
    check_eq "cudaFuncGetParamInfo offset" "$(v "$layout" off)" 8
    check_eq "cudaFuncGetParamInfo size" "$(v "$layout" size)" 16
    check_eq "cudaFuncGetParamInfo past the end" "$(v "$layout" past_end)" 1
    # What k_struct(int a, Pair s) dereferences, from its source: s.p, at s's offset 8 (the int
    # padded to Pair's alignment 8) + offsetof(Pair, p) 0. A kernel the table does not name is
    # taken to use its top-level 8-byte parameters only (k_ptr's d).
    printf '# kernel offsets\n_Z8k_structi4Pair 8\n' >"$TMP/deref"
    for m in hostptr hoststruct; do
        out=$(VRAMTRACE_SIM_DEREF="$TMP/deref" run "$B" $m)
        check_eq "$m: launch returns success" "$(v "$out" launch)" 0
        check_eq "$m: sync returns 700" "$(v "$out" sync)" 700
        check_eq "$m: error is sticky" "$(v "$out" later)" 700
    done
    # the tracer, reading the kernel's PTX, names the same word the table says the kernel uses
    VRAMTRACE_SIM_DEREF="$TMP/deref" "$VT" run --sim -o "$TMP/hs.jsonl" -- "$B" hoststruct >/dev/null 2>&1
    check_eq "hoststruct traced: one error, k_struct argument 1 (s) at its offset 0 (s.p)" \
        "$(jqs "$TMP/hs.jsonl" '[.[]|select(.ev=="finding")|"\(.kind) \(.severity) \(.arg) \(.offset)"]|join(";")')" "host_pointer error 1 0"
    out=$(run "$B" hoststruct)
    check_eq "hoststruct without the table: a struct member is not taken as used" "$(v "$out" sync)" 0
    printf '_Z8k_structi4Pair\n' >"$TMP/deref_none"
    out=$(VRAMTRACE_SIM_DEREF="$TMP/deref_none" run "$B" hoststruct)
    check_eq "hoststruct, the table saying k_struct uses nothing: no fault" "$(v "$out" sync)" 0
    printf '* 0\n' >"$TMP/deref_star"
    out=$(VRAMTRACE_SIM_DEREF="$TMP/deref_star" run "$B" hostptr)
    check_eq "hostptr, '* 0' covering every kernel: word 0 (k_ptr's d) faults" "$(v "$out" sync)" 700
    out=$(VRAMTRACE_SIM_DEREF="$TMP/nonexistent" run "$B" hostptr 2>"$TMP/deref_err"; echo "rc=$?")
    check_eq "a missing table stops the program (exit 97) with a message" \
        "$(v "$out" rc) $(grep -c 'VRAMTRACE_SIM_DEREF=.*cannot open' "$TMP/deref_err")" "97 1"
    out=$(VRAMTRACE_SIM_DEVICES=2 run "$B" nopeer)
    check_eq "device 1's memory in a device-0 kernel without peer access: sync returns 700" "$(v "$out" sync)" 700
    VRAMTRACE_SIM_DEVICES=2 "$VT" run --sim -o "$TMP/np.jsonl" -- "$B" nopeer >/dev/null 2>&1
    check_eq "... and the tracer, which does not share the sim's rule, calls it a wrong_device error" \
        "$(jqs "$TMP/np.jsonl" '[.[]|select(.ev=="finding")|"\(.kind) \(.severity) \(.arg)"]|join(";")')" "wrong_device error 0"
    out=$(VRAMTRACE_SIM_DEVICES=2 run "$B" peer)
    check_eq "... after cudaDeviceEnablePeerAccess(1): enabled, sync returns 0" "$(v "$out" enable) $(v "$out" sync)" "0 0"
    out=$(VRAMTRACE_SIM_PAGEABLE=1 run "$B" hostptr)
    check_eq "pageable-access device accepts host pointers" "$(v "$out" sync)" 0
fi
for m in devptr pinned managed; do
    out=$(run "$B" $m)
    check_eq "$m: launch and sync clean" "$(v "$out" launch),$(v "$out" sync),$(v "$out" later)" 0,0,0
done
out=$(VRAMTRACE_SIM_NO_PARAMINFO=1 run "$B" paraminfo)
check_eq "VRAMTRACE_SIM_NO_PARAMINFO=1 gives cudaErrorNotSupported" "$(v "$out" rc)" 801

out=$(VRAMTRACE_SIM_DEVICES=2 run "$B" devices)
check_eq "two devices" "$(v "$out" count)" 2
check_eq "cudaSetDevice(1)" "$(v "$out" set1)" 0
check_eq "allocation lands on device 1" "$(v "$out" dev_of_alloc)" 1
check_eq "cudaSetDevice(count) is invalid" "$(v "$out" set_bad)" 101

out=$(run "$B" threads)
check_eq "16 threads alloc/copy/free" "$(v "$out" thread_errors)" 0

out=$(run "$PROGS/sim_procaddr")
for k in memalloc_v2 meminfo_v2 self ptsz unknown drv_roundtrip attr_dev; do
    check_eq "driver: $k" "$(v "$out" $k)" 1
done
check_eq "driver: calls before cuInit fail" "$(v "$out" before_init)" 3
check_eq "driver: unknown pointer attribute is INVALID_VALUE" "$(v "$out" attr_unknown)" 1

if [ -x "$EXAMPLES/host_pointer_bug" ]; then
    out=$(run "$EXAMPLES/host_pointer_bug" 2>&1)
    check "example host_pointer_bug reports an illegal address" sh -c "printf '%s' '$out' | grep -q 'illegal memory access'"
    check "example host_pointer_bug fixed runs clean" run "$EXAMPLES/host_pointer_bug" fixed
    check "example oom exits 0 on a 4G device" env VRAMTRACE_SIM_MEM=4G LD_LIBRARY_PATH="$SIM" "$EXAMPLES/oom"
    check "example transfers runs" run "$EXAMPLES/transfers"
fi
