#!/bin/sh
# sim_apis.sh - entry points frameworks and samples call (issue 46 slice 1), on the simulated
# device, with and without the tracer: each answer is what the CUDA documentation says it is.
. tests/lib.sh
need_sim
P="$PROGS/sim_apis"
v() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | head -1; }
for how in plain traced; do
    if [ $how = plain ]; then
        d=$(env LD_LIBRARY_PATH="$SIM" "$P" driver 2>"$TMP/d.err")
        e=$(env LD_LIBRARY_PATH="$SIM" "$P" entrypoint 2>"$TMP/e.err")
    else
        d=$("$VT" run --sim -q -o "$TMP/d.jsonl" -- "$P" driver 2>"$TMP/d.err")
        e=$("$VT" run --sim -q -o "$TMP/e.jsonl" -- "$P" entrypoint 2>"$TMP/e.err")
    fi
    # a library of two PTX kernels: both counted and enumerated
    check_eq "$how: cuLibraryGetKernelCount counts the image's 2 kernels" "$(v "$d" kernel_count_rc):$(v "$d" kernel_count)" 0:2
    check_eq "$how: cuLibraryEnumerateKernels hands out k_a and k_b" "$(v "$d" enumerate_rc):$(v "$d" enumerated)" 0:11
    # cuKernelGetAttribute: the function's attribute on a device; CUDA_ERROR_INVALID_DEVICE (101)
    # for an ordinal past the count, CUDA_ERROR_INVALID_HANDLE (400) for what is not a kernel
    check_eq "$how: cuKernelGetAttribute(MAX_THREADS_PER_BLOCK) = 1024" "$(v "$d" kattr_rc):$(v "$d" kattr_max_threads)" 0:1024
    check_eq "$how: cuKernelGetAttribute on device 57: 101; on a non-kernel: 400" "$(v "$d" kattr_bad_device):$(v "$d" kattr_bad_kernel)" 101:400
    check_eq "$how: cuKernelSetAttribute, cuKernelSetCacheConfig succeed" "$(v "$d" kset_rc):$(v "$d" kcache_rc)" 0:0
    # NVIDIA's private tables are not served: CUDA_ERROR_NOT_SUPPORTED (801), the table NULL
    check_eq "$how: cuGetExportTable: 801, table NULL" "$(v "$d" export_table_rc):$(v "$d" export_table_null)" 801:1
    # 132 SMs x 2048 threads: blocks of 1024 -> 2 per SM, 264 blocks fill the device; 256 -> 8 per SM
    check_eq "$how: cuOccupancyMaxPotentialBlockSize: 264 blocks of 1024" "$(v "$d" occ_rc):$(v "$d" occ)" 0:264:1024
    check_eq "$how: ... with a 256-thread limit: 1056 blocks of 256" "$(v "$d" occ_limit256)" 1056:256
    check_eq "$how: cuOccupancyMaxActiveBlocksPerMultiprocessor(128 threads) = 16" "$(v "$d" active_rc):$(v "$d" active_128)" 0:16
    check_eq "$how: the library unloads" "$(v "$d" lib_unload)" 0
    # cudaGetDriverEntryPoint: a symbol the driver lacks is cudaSuccess, NULL and
    # cudaDriverEntryPointSymbolNotFound (1); one newer than the version asked for,
    # cudaDriverEntryPointVersionNotSufficent (2); no sticky last error either way
    check_eq "$how: cudaGetDriverEntryPoint(cuMemAlloc): found" "$(v "$e" found_rc):$(v "$e" found)" 0:1:0
    check_eq "$how: ... a missing symbol: cudaSuccess, NULL, status 1, no last error" \
        "$(v "$e" missing_rc):$(v "$e" missing):$(v "$e" missing_last_error)" 0:1:1:0
    check_eq "$how: ... cuKernelGetAttribute at version 11000: cudaSuccess, NULL, status 2, no last error" \
        "$(v "$e" too_new_rc):$(v "$e" too_new):$(v "$e" too_new_last_error)" 0:1:2:0
    check_eq "$how: ... a NULL symbol: cudaErrorInvalidValue (1)" "$(v "$e" null_symbol_rc)" 1
done

# NVRTC looks cuGetExportTable up in libcuda.so.1: without it every NVRTC program crashed on the
# simulated device (SIGSEGV), with or without the tracer
if [ -x "$PROGS/nvrtc_gen" ]; then
    env LD_LIBRARY_PATH="$SIM" "$PROGS/nvrtc_gen" "$TMP/a.ptx" "$TMP/b.ptx" >/dev/null 2>&1
    check_eq "NVRTC on the simulated driver: exit 0, PTX with kernel scale" "$?:$(grep -c '.entry .*scale' "$TMP/a.ptx")" 0:1
else
    skip "NVRTC: nvrtc_gen not built (no libnvrtc)"
fi
