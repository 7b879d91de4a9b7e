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
        r=$(env LD_LIBRARY_PATH="$SIM" "$P" runtime 2>"$TMP/r.err")
        t=$(env VRAMTRACE_SIM_DEVICES=2 LD_LIBRARY_PATH="$SIM" "$P" two_devices 2>"$TMP/t.err")
        l=$(env LD_LIBRARY_PATH="$SIM" "$P" library 2>"$TMP/l.err")
        g=$(env LD_LIBRARY_PATH="$SIM" "$P" graph 2>"$TMP/g.err")
        k=$(env LD_LIBRARY_PATH="$SIM" "$P" link 2>"$TMP/k.err")
        m=$(env LD_LIBRARY_PATH="$SIM" "$P" vmm 2>"$TMP/m.err")
    else
        d=$("$VT" run --sim -q -o "$TMP/d.jsonl" -- "$P" driver 2>"$TMP/d.err")
        e=$("$VT" run --sim -q -o "$TMP/e.jsonl" -- "$P" entrypoint 2>"$TMP/e.err")
        r=$("$VT" run --sim -q -o "$TMP/r.jsonl" -- "$P" runtime 2>"$TMP/r.err")
        t=$(VRAMTRACE_SIM_DEVICES=2 "$VT" run --sim -q -o "$TMP/t.jsonl" -- "$P" two_devices 2>"$TMP/t.err")
        l=$("$VT" run --sim -q -o "$TMP/l.jsonl" -- "$P" library 2>"$TMP/l.err")
        g=$("$VT" run --sim -q -o "$TMP/g.jsonl" -- "$P" graph 2>"$TMP/g.err")
        k=$("$VT" run --sim -q -o "$TMP/k.jsonl" -- "$P" link 2>"$TMP/k.err")
        m=$("$VT" run --sim -q -o "$TMP/m.jsonl" -- "$P" vmm 2>"$TMP/m.err")
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
    # module variables the PTX declares: g_buf (.b8 [64]) and g_one (.f32): 64 and 4 bytes, the
    # module's lookup the same address; a float stored there reads back; CUDA_ERROR_NOT_FOUND (500)
    # for a name not declared and for a unified function (none is modelled)
    check_eq "$how: cuLibraryGetGlobal g_buf 64 B, g_one 4 B; cuModuleGetGlobal the same" \
        "$(v "$d" global_buf) $(v "$d" global_one) $(v "$d" module_global) $(v "$d" global_roundtrip)" "0:64:1 0:4 0:4:1 1"
    check_eq "$how: missing global 500; cuLibraryGetManaged g_buf 64 B; unified function 500" \
        "$(v "$d" global_missing) $(v "$d" managed) $(v "$d" unified_missing)" "500 0:64 500"
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
    # --- runtime calls (each forwards to its driver entry point) ---
    # priorities: the sim's range is 0 (least) to -5 (greatest); a stream made at -3 keeps it
    check_eq "$how: cudaDeviceGetStreamPriorityRange, cudaStreamGetPriority" "$(v "$r" prio_range) $(v "$r" stream_prio)" "0:0:-5 0:-3"
    # capture bookkeeping: none while idle (updating then is cudaErrorIllegalState, 401); while
    # capturing, status active, an id and the graph; a flag other than add/set is invalid (1)
    check_eq "$how: cudaStreamGetCaptureInfo idle; UpdateCaptureDependencies idle: 401" "$(v "$r" capinfo_idle) $(v "$r" update_deps_idle)" "0:0 401"
    check_eq "$how: cudaStreamGetCaptureInfo capturing: active, an id, the graph, no dependencies" "$(v "$r" capinfo_rc) $(v "$r" capinfo)" "0 1:1:1:0"
    check_eq "$how: cudaStreamUpdateCaptureDependencies capturing: 0; flag 7: 1" "$(v "$r" update_deps) $(v "$r" update_deps_badflag)" "0 1"
    check_eq "$how: a host function in a capture is not modelled (900) and the capture still ends" "$(v "$r" hostfn_in_capture) $(v "$r" end_capture)" "900 0"
    # the thread's capture mode starts global (0); an exchange hands back the previous one
    check_eq "$how: cudaThreadExchangeStreamCaptureMode: global, then relaxed (2)" "$(v "$r" mode_first) $(v "$r" mode_second)" "0:0 0:2"
    check_eq "$how: cudaLaunchHostFunc runs the function once (adds 2)" "$(v "$r" hostfn) $(v "$r" hostfn_ran)" "0 2"
    check_eq "$how: cudaStreamAddCallback: run with cudaSuccess and its stream; flags 1: invalid" \
        "$(v "$r" callback) $(v "$r" callback_ran) $(v "$r" callback_badflags)" "0 4:0:1 1"
    check_eq "$how: cudaDeviceGetPCIBusId: device 0's bus id; device 9: 101" "$(v "$r" pci_bus) $(v "$r" pci_bus_bad)" "0:0000:10:00.0 101"
    # IPC event handles: only of an event made interprocess with timing disabled
    check_eq "$how: cudaIpcGetEventHandle of a timed event: 1; of an interprocess one: 0, opened, recorded" \
        "$(v "$r" ipc_timed) $(v "$r" ipc_get) $(v "$r" ipc_open) $(v "$r" ipc_record)" "1 0 0:1 0"
    # user objects: flags must be NoDestructorSync; the destructor runs when the last of 1 + 2
    # (the graph's) references is released, with its pointer (adds 7)
    check_eq "$how: cudaUserObjectCreate flags 0: 1; created, retained by a graph" "$(v "$r" uo_badflags) $(v "$r" uo_create) $(v "$r" uo_graph_retain)" "1 0 0"
    check_eq "$how: ... destroyed only when the graph's references go" "$(v "$r" uo_alive) $(v "$r" uo_destroyed)" "0 7"
    check_eq "$how: graph memory: used 0; the high mark reset to 0; set to 5 or the current: 1" \
        "$(v "$r" gmem_get) $(v "$r" gmem_reset) $(v "$r" gmem_set_nonzero) $(v "$r" gmem_set_current)" "0:0 0 1 1"
    check_eq "$how: cudaMemPrefetchAsync of managed memory to device 0 and host: 0; of cudaMalloc memory: 1" \
        "$(v "$r" prefetch) $(v "$r" prefetch_host) $(v "$r" prefetch_not_managed)" "0 0 1"
    check_eq "$how: cudaMemAdvise of managed memory: 0; of cudaMalloc memory: 1" \
        "$(v "$r" advise) $(v "$r" advise_read_mostly) $(v "$r" advise_not_managed)" "0 0 1"
    check_eq "$how: cudaMemPoolSetAccess: the owner read-write: 0; the owner none: 101" "$(v "$r" pool_access) $(v "$r" pool_access_owner_none)" "0 101"
    check_eq "$how: cudaDeviceGetP2PAttribute of a device with itself: 101" "$(v "$r" p2p_same_device)" 101
    check_eq "$how: cudaProfilerStart/Stop: 0; no error left after the expected ones were read" "$(v "$r" profiler) $(v "$r" last_error)" "0:0 0"
    check_eq "$how: two devices: P2P access supported, rank 0; device 2 of 2: 101" \
        "$(v "$t" p2p_access) $(v "$t" p2p_rank) $(v "$t" p2p_bad_device)" "0:1 0:0 101"
    # --- cudaLibrary*: the PTX through the runtime; k_b launched as a cudaKernel_t ---
    check_eq "$how: cudaLibraryLoadData, 2 kernels, enumerated, k_b found; k_none: cudaErrorSymbolNotFound (500)" \
        "$(v "$l" rlib_load) $(v "$l" rlib_count) $(v "$l" rlib_enumerate) $(v "$l" rlib_kernel) $(v "$l" rlib_kernel_missing)" "0 0:2 0 0 500"
    check_eq "$how: cudaLibraryGetGlobal g_buf 64 B, GetManaged g_one 4 B, GetUnifiedFunction 500" \
        "$(v "$l" rlib_global) $(v "$l" rlib_managed) $(v "$l" rlib_unified)" "0:64:1 0:4 500"
    # k_b stores through p: with device memory nothing faults; with a malloc'd buffer the next
    # sync is cudaErrorIllegalAddress (700), as on a GPU
    check_eq "$how: k_b launched by its cudaKernel_t: device buffer 0/0, host buffer 0/700" \
        "$(v "$l" rlib_launch) $(v "$l" rlib_sync) $(v "$l" rlib_launch_host) $(v "$l" rlib_sync_host)" "0 0 0 700"
    check_eq "$how: cudaKernelSetAttributeForDevice: device 0 ok, device 9: 101" "$(v "$l" rlib_setattr) $(v "$l" rlib_setattr_bad_device)" "0 101"
    check_eq "$how: cudaLibraryLoadFromFile: 2 kernels; a missing file: cudaErrorFileNotFound (301); cudaLibraryUnload 0" \
        "$(v "$l" rlib_file_load) $(v "$l" rlib_file_count) $(v "$l" rlib_file_missing) $(v "$l" rlib_unload)" "0 0:2 301 0"
    # --- graphs by hand: memset 0x5a over 4096 B, a 1D copy of it to the host, a 3D-form copy of
    # its first 1024 B; then a captured memset + copy ---
    check_eq "$how: memset, 1D copy and 3D copy nodes added" "$(v "$g" memset_node) $(v "$g" copy_node) $(v "$g" copy3d_node)" "0 0 0"
    check_eq "$how: cudaGraphGetNodes: 3, in the order added; dependencies: none (not modelled)" \
        "$(v "$g" nodes_count) $(v "$g" nodes) $(v "$g" deps)" "0:3 0:3:1 0:0"
    check_eq "$how: uploaded and launched: all 4096 + 1024 host bytes 0x5a, byte 1024 of the second untouched" \
        "$(v "$g" upload) $(v "$g" graph_launch) $(v "$g" graph_ran)" "0 0 1:0"
    check_eq "$how: two conditional handles, distinct; a captured graph has 2 nodes" "$(v "$g" cond_handles) $(v "$g" captured_nodes)" "0:1 0:2"
    check_eq "$how: cudaStreamBeginCaptureToGraph: the copy appended to the graph's memset, the same graph ended" \
        "$(v "$g" capture_to_graph) $(v "$g" capture_to_graph_nodes)" "0 1:2"
    # --- the JIT linker: nothing added is CUDA_ERROR_INVALID_IMAGE (200); a missing file
    # CUDA_ERROR_FILE_NOT_FOUND (301); the linked PTX loads and has k_a ---
    check_eq "$how: cuLinkCreate, empty complete 200, add 0, missing file 301" \
        "$(v "$k" link_create) $(v "$k" link_empty) $(v "$k" link_add) $(v "$k" link_add_missing_file)" "0 200 0 301"
    check_eq "$how: cuLinkComplete gives an image that loads, with k_a; destroyed" \
        "$(v "$k" link_complete) $(v "$k" link_load) $(v "$k" link_function) $(v "$k" link_destroy)" "0:1 0 0 0"
    # --- VMM as PyTorch's expandable segments use it (tests/progs/sim_apis.c, vmm) ---
    # two handles mapped side by side are one range: a memset across the seam succeeds and writes
    # every byte; cuStreamWriteValue32 writes its word in stream order
    check_eq "$how: cuMemsetD8 across two adjacent mappings; cuStreamWriteValue32" \
        "$(v "$m" seam_memset) $(v "$m" write_value32)" "0:1 0:abcd1234"
    # cuMemRetainAllocationHandle: the handle mapped there, given back by cuMemRelease; an address
    # no mapping holds is CUDA_ERROR_INVALID_VALUE (1)
    check_eq "$how: cuMemRetainAllocationHandle finds the second handle; cuMemRelease gives it back; unmapped: 1" \
        "$(v "$m" retain) $(v "$m" retain_release) $(v "$m" retain_unmapped)" "0:1 0 1"
    # properties: PINNED (1) on DEVICE (1) 0, with the POSIX fd handle type (1) it was made with
    check_eq "$how: cuMemGetAllocationPropertiesFromHandle: pinned, device 0, POSIX fd type" "$(v "$m" props)" "0:1:1:0:1"
    # a POSIX fd export imports to a handle that maps the same memory (the word written above);
    # a handle made without that type: 1; the fabric type: CUDA_ERROR_NOT_SUPPORTED (801)
    check_eq "$how: export as a file descriptor, import, the import aliases the memory" \
        "$(v "$m" export) $(v "$m" import) $(v "$m" import_aliases)" "0:1 0:1 abcd1234"
    check_eq "$how: export of a handle made without the type: 1; as a fabric handle: 801" \
        "$(v "$m" export_not_requested) $(v "$m" export_fabric)" "1 801"
    # what the simulated GPU has not: multicast and SM partitions (801); no green context exists
    check_eq "$how: cuMulticastCreate 801, cuDeviceGetDevResource 801, cuGreenCtxDestroy(NULL) 1" \
        "$(v "$m" multicast) $(v "$m" dev_resource) $(v "$m" green_destroy_none)" "801 801 1"
    check_eq "$how: cuLogsRegisterCallback and cuLogsUnregisterCallback; everything unmapped and released" \
        "$(v "$m" logs) $(v "$m" cleanup)" "0:0 1"
    # NVML beside the driver: one device, found by the driver's PCI bus id; an unknown bus is
    # NVML_ERROR_NOT_FOUND (6), fabric info NVML_ERROR_NOT_SUPPORTED (3); the driver's version
    check_eq "$how: NVML loads; init, 1 device, the bus id's device, unknown bus 6, fabric 3, driver version" \
        "$(v "$m" nvml_loads) $(v "$m" nvml_init) $(v "$m" nvml_count) $(v "$m" nvml_by_bus) $(v "$m" nvml_unknown_bus) $(v "$m" nvml_fabric) $(v "$m" nvml_driver)" \
        "1 0 0:1 0:1 6 3 0:1"
    [ $how = traced ] && check_eq "traced: the memset across adjacent mappings is no out-of-bounds finding (no finding at all)" \
        "$(jqs "$TMP/m.jsonl" '[.[]|select(.ev=="finding")]|length')" 0
done

# the tracer on the library kernel: exactly one finding, k_b's argument 1 (p), the malloc'd buffer
# (heap, or an anonymous mapping under ASan's allocator)
check_eq "traced library: one host-pointer error, k_b argument 1" \
    "$(jqs "$TMP/l.jsonl" '[.[]|select(.ev=="finding")|"\(.kind) \(.severity) \(.arg)"]|join(";")')" "host_pointer error 1"

# __device__ float table[64] and __constant__ int coeffs[4] (tests/progs/sim_symbols.cu), the
# usual symbol calls; values from the program's arithmetic and CUDA's documented errors
S="$PROGS/sim_symbols"
for how in plain traced; do
    if [ $how = plain ]; then y=$(env LD_LIBRARY_PATH="$SIM" "$S" 2>"$TMP/y.err")
    else y=$("$VT" run --sim -q -o "$TMP/y.jsonl" -- "$S" 2>"$TMP/y.err"); fi
    check_eq "$how: cudaGetSymbolSize: table 256 B, coeffs 16 B" "$(v "$y" size_table) $(v "$y" size_coeffs)" "0:256 16"
    check_eq "$how: cudaMemcpyToSymbol then FromSymbol: 3 5 7 11 back" "$(v "$y" to_symbol) $(v "$y" from_symbol) $(v "$y" roundtrip)" "0 0 3:5:7:11"
    check_eq "$how: ... at byte offset 8: 13 17 back" "$(v "$y" to_offset) $(v "$y" from_offset) $(v "$y" offset_values)" "0 0 13:17"
    # 16 bytes at offset 4 of a 16-byte variable: cudaErrorInvalidValue (1); DeviceToHost into a
    # symbol: cudaErrorInvalidMemcpyDirection (21); a host array: cudaErrorInvalidSymbol (13)
    check_eq "$how: past the end 1, wrong direction 21, not a symbol 13" "$(v "$y" past_end) $(v "$y" bad_direction) $(v "$y" not_symbol)" "1 21 13"
    check_eq "$how: cudaGetSymbolAddress: device memory (type 2)" "$(v "$y" address) $(v "$y" address_type)" "0:1 2"
    check_eq "$how: async copies and a kernel given the symbol's address: no fault" \
        "$(v "$y" to_symbol_async) $(v "$y" launch) $(v "$y" sync) $(v "$y" from_symbol_async) $(v "$y" table0)" "0 0 0 0 1"
done
# the trace: the six copies the program made (16 + 8 + 256 B each way), at their lines, no finding
check_eq "traced symbols: h2d copies (bytes, line)" \
    "$(jqs "$TMP/y.jsonl" '[.[]|select(.ev=="copy" and .dir=="h2d")|.size]|join(" ")')" "16 8 256"
check_eq "traced symbols: d2h copies" "$(jqs "$TMP/y.jsonl" '[.[]|select(.ev=="copy" and .dir=="d2h")|.size]|join(" ")')" "16 8 256"
"$VT" report "$TMP/y.jsonl" >"$TMP/y.rep" 2>&1
check_eq "traced symbols: copy sites at the program's lines 24 25 29 30 52 57, findings 0" \
    "$(grep -o 'sim_symbols.cu:[0-9]*' "$TMP/y.rep" | sort -u | sed 's/.*://' | sort -n | tr '\n' ' ')$(grep -c '^  findings      0 errors, 0 warnings$' "$TMP/y.rep")" "24 25 29 30 52 57 1"

# NVRTC looks cuGetExportTable up in libcuda.so.1: without it every NVRTC program crashed on the
# simulated device (SIGSEGV), with or without the tracer
if [ -x "$PROGS/nvrtc_gen" ]; then
    env LD_LIBRARY_PATH="$SIM" "$PROGS/nvrtc_gen" "$TMP/a.ptx" "$TMP/b.ptx" >/dev/null 2>&1
    check_eq "NVRTC on the simulated driver: exit 0, PTX with kernel scale" "$?:$(grep -c '.entry .*scale' "$TMP/a.ptx")" 0:1
else
    skip "NVRTC: nvrtc_gen not built (no libnvrtc)"
fi
