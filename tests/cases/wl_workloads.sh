#!/bin/sh
# wl_workloads.sh - "real workload" allocation paths traced on the simulated device: stream-ordered
# pools and trimming, VMM (entry points from cudaGetDriverEntryPointByVersion, one handle mapped
# twice), IPC mappings, graph memory nodes (capture and explicit), two devices, and
# cuKernelGetParamInfo on a cudaKernel_t. Live bytes are recomputed from each trace (counted
# allocs minus successful frees, per device) and checked against what the program did.
. tests/lib.sh
need_sim
LIB="$ROOT/$BUILD/libvramtrace.so"
P="$PROGS/wl_mem"
v() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -1; }
trace() { # trace MODE [ENV=...] : runs wl_mem MODE under the tracer -> $TMP/MODE.jsonl, $TMP/MODE.out
    m=$1; shift
    rm -f "$TMP/$m.jsonl"
    env "$@" VRAMTRACE_QUIET=1 VRAMTRACE_BACKTRACE=0 VRAMTRACE_OUTPUT="$TMP/$m.jsonl" LD_PRELOAD="$(preload "$LIB")" \
        LD_LIBRARY_PATH="$SIM" "$P" $m >"$TMP/$m.out" 2>"$TMP/$m.err"
}
# per-device {"live":..,"peak":..} from counted records
LIVE='reduce (.[] | select((.ev=="alloc" or .ev=="free") and .res==0 and
        (.mem=="device" or .mem=="async" or .mem=="vmm"))) as $e ({};
        ($e.dev|tostring) as $d | .[$d].live = ((.[$d].live // 0) + (if $e.ev=="alloc" then $e.size else -$e.size end))
        | .[$d].peak = ([(.[$d].peak // 0), .[$d].live] | max))'
MiB=1048576

# ---- pools -------------------------------------------------------------------------------------
trace pool
o="$TMP/pool.out"; t="$TMP/pool.jsonl"
check_eq "pool: freed block stays reserved (cudaMemGetInfo sees 12 MiB)" "$(v $o reserved_mib),$(v $o used_mib),$(v $o meminfo_used_mib)" 12,8,12
check_eq "pool: a same-size allocation reuses the block" "$(v $o reuse),$(v $o meminfo_after_reuse_mib)" 1,12
check_eq "pool: TrimTo(0) releases the unused blocks only" "$(v $o reserved_after_trim_mib),$(v $o meminfo_after_trim_mib)" 4,4
check_eq "pool: own pool, threshold 0 gives memory back at sync" "$(v $o mine_reserved_after_sync),$(v $o pool_destroy)" 0,0
check_eq "pool: 5 async allocs, 5 frees in the trace" \
    "$(jqs $t '[.[]|select(.ev=="alloc" and .mem=="async")]|length'),$(jqs $t '[.[]|select(.ev=="free" and .mem=="async" and .res==0)]|length')" 5,5
check_eq "pool: cudaMallocFromPoolAsync recorded" "$(jqs $t '[.[]|select(.api=="cudaMallocFromPoolAsync")]|.[0].size')" $MiB
check_eq "pool: live peak from the trace is 12 MiB, nothing left" "$(jqs $t "$LIVE"' | ."0" | "\(.peak),\(.live)"')" "$((12*MiB)),0"
check_eq "pool: pool_trim records with the reservation around the call" \
    "$(jqs $t '[.[]|select(.ev=="pool_trim")]|map("\(.keep):\(.reserved_before)>\(.reserved_after)")|join(" ")')" \
    "0:$((12*MiB))>$((4*MiB)) 0:$((4*MiB))>0"
check_eq "pool: footer live_bytes 0" "$(jqs $t '.[]|select(.ev=="footer")|.live_bytes')" 0
check_eq "pool: report peak_bytes" "$("$VT" report --json "$t" | jq .peak_bytes)" $((12*MiB))
# The report's pool model against what the program asked the pool (reserved_mib etc. above): at
# each snapshot, live + kept free = the pool's reserved memory (12, 12, 4, 0 MiB).
check_eq "pool: snapshots (label, live MiB, kept free by the pool MiB)" \
    "$("$VT" report --json "$t" | jq -c '[.snapshots[]|[.label,.live_bytes/1048576,.pool_kept_free_bytes/1048576]]')" \
    '[["b freed, synced",8,4],["reused",12,0],["trimmed",4,0],["end",0,0]]'
check_eq "pool: the threshold set (pool_attr) and the device's pool view: reserved at most 12 MiB" \
    "$(grep '"ev":"pool_attr"' $t | sed 's/.*"api":"\([^"]*\)".*"dev":\([0-9]*\).*"release_threshold":\([0-9]*\).*/\1:\2:\3/') $("$VT" report --json "$t" | jq -c '.processes[0].devices[0].pool|[.reserved_peak_bytes,.kept_free_bytes]')" \
    "cudaMemPoolSetAttribute:0:18446744073709551615 [$((12*MiB)),0]"
# cudaMemGetInfo saw exactly the pools' reservations: nothing unattributed at any of its 5 calls.
check_eq "pool: driver view: 5 queries, never any unattributed memory (the pool's kept blocks are known)" \
    "$("$VT" report --json "$t" | jq -c '.processes[0].devices[0].driver|[.samples,.max_unattributed.unattributed_bytes]')" "[5,0]"
check "pool: the text shows the kept memory at the snapshot" sh -c '"$1" report "$2" | grep -q "^  \"b freed, synced\" at .*: 8.00 MiB live (+4.00 MiB kept free by stream-ordered pools)$"' _ "$VT" "$t"

# Two processes one after another on one GPU (the same program twice): combined by time, the
# device held at most 12 MiB at once (one process), not the 24 MiB their peaks sum to.
mkdir -p "$TMP/seq"
cp "$t" "$TMP/seq/1.jsonl"
trace pool
cp "$TMP/pool.jsonl" "$TMP/seq/2.jsonl"
check_eq "pool twice in sequence: device 0000:10:00.0 (the simulated bus id), 12 MiB at once by 1 of 2 processes, peaks sum to 24" \
    "$("$VT" report --json "$TMP/seq" | jq -c '[.combined.by_time, (.combined.devices[]|[.pci,.peak_bytes,(.pids_at_peak|length),.processes,.sum_of_peaks_bytes])]')" \
    "[true,[\"0000:10:00.0\",$((12*MiB)),1,2,$((24*MiB))]]"

# ---- VMM ---------------------------------------------------------------------------------------
trace vmm
o="$TMP/vmm.out"; t="$TMP/vmm.jsonl"
check_eq "vmm: granularity 2 MiB, physical memory counted at cuMemCreate" "$(v $o gran),$(v $o after_create_mib),$(v $o after_map_mib)" 2097152,4,4
check_eq "vmm: one handle mapped at two addresses aliases" "$(v $o map),$(v $o aliased),$(v $o sync)" 0,0,1,0
check_eq "vmm: released while mapped stays until the last unmap" \
    "$(v $o after_release_mib),$(v $o after_unmap1_mib),$(v $o after_unmap2_mib),$(v $o end_mib)" 4,4,0,0
check_eq "vmm: 2 vmm allocs with handles, 3 maps, 3 unmaps" \
    "$(jqs $t '[.[]|select(.ev=="alloc" and .mem=="vmm" and .handle)]|length'),$(jqs $t '[.[]|select(.ev=="map")]|length'),$(jqs $t '[.[]|select(.ev=="unmap")]|length')" 2,3,3
check_eq "vmm: counted once per handle (peak 4 MiB, not 8)" "$(jqs $t "$LIVE"' | ."0" | "\(.peak),\(.live)"')" "$((4*MiB)),0"
check_eq "vmm: kernel on the second mapping raises no finding" "$(jqs $t '[.[]|select(.ev=="finding")]|length')" 0
check_eq "vmm: the report counts the handle once, until its last unmap (peak 4 MiB, nothing leaked)" \
    "$("$VT" report --json "$t" | jq -c '[.peak_bytes, .processes[0].devices[0].peak_bytes, .leaked_bytes]')" "[$((4*MiB)),$((4*MiB)),0]"

# vectorAddMMAP's order: three 2 MiB handles, each released right after its cuMemMap; the first
# mapping unmapped alone, the other two by one cuMemUnmap over both. Physical memory is held from
# cuMemCreate to the last unmap: 6 MiB while mapped, then 4 MiB, then 0 (the simulated driver's
# cudaMemGetInfo agrees). The report and the tracer's own count (snapshot tracer_live_bytes) match.
trace vmm_early
o="$TMP/vmm_early.out"; t="$TMP/vmm_early.jsonl"
check_eq "vmm_early: the driver holds 6, then 4, then 0 MiB" "$(v $o rc),$(v $o mapped_mib),$(v $o after_unmap1_mib),$(v $o after_unmap23_mib)" 0,6,4,0
check_eq "vmm_early: report peak 6 MiB on dev 0, nothing leaked" \
    "$("$VT" report --json "$t" | jq -c '[.peak_bytes, .processes[0].devices[0].peak_bytes, .leaked_bytes]')" "[$((6*MiB)),$((6*MiB)),0]"
check_eq "vmm_early: snapshots (label, report live, tracer live)" \
    "$("$VT" report --json "$t" | jq -c '[.snapshots[]|[.label,.live_bytes,.tracer_live_bytes]]')" \
    "[[\"mapped\",$((6*MiB)),$((6*MiB))],[\"unmapped one\",$((4*MiB)),$((4*MiB))],[\"unmapped all\",0,0]]"
check_eq "vmm_early: exit footer live_bytes 0" "$(jqs $t '.[]|select(.ev=="footer")|.live_bytes')" 0
# The one cuMemUnmap took both mappings: a kernel on the third one is a use after free.
trace vmm_early WL_USE_UNMAPPED=1
check_eq "vmm_early: a launch on a mapping the wide unmap removed (illegal address 700 from the device)" \
    "$(v $o use_unmapped) $(jqs $t '[.[]|select(.ev=="finding")|"\(.kind):\(.severity):\(.arg):\(.alloc.mem):\(.alloc.size)"]|join(" ")')" \
    "700 use_after_free:error:0:vmm_map:$((2*MiB))"

# ---- device reset ------------------------------------------------------------------------------
# 64 MiB device + 4 MiB stream-ordered + 1 MiB managed + a 2 MiB VMM handle live; cudaDeviceReset
# frees the first three (CUDA's context and device allocations), not the VMM handle (cuMemCreate
# memory belongs to no context: cuCtxDestroy's documentation); 64 MiB again. VRAM live: 70, then
# 2, then 66 MiB; the peak is 70 MiB, not 134.
trace reset
o="$TMP/reset.out"; t="$TMP/reset.jsonl"
check_eq "reset: the driver holds 70, then 2, then 66 MiB" \
    "$(v $o rc),$(v $o before_mib),$(v $o reset),$(v $o after_reset_mib),$(v $o again_mib),$(v $o end_mib)" 0,70,0,2,66,0
check_eq "reset: report peak 70 MiB (not the 134 MiB allocated), 1 MiB managed apart, nothing leaked" \
    "$("$VT" report --json "$t" | jq -c '[.peak_bytes, .managed_peak_bytes, .leaked_bytes, .allocations.bytes]')" \
    "[$((70*MiB)),$MiB,0,$((134*MiB))]"
check_eq "reset: one reset event, dev 0, 3 allocations and 68 MiB of VRAM freed" \
    "$("$VT" report --json "$t" | jq -c '[.processes[0].reset_count, (.processes[0].resets[]|[.api,.dev,.freed_count,.freed_bytes])]')" \
    "[1,[\"cudaDeviceReset\",0,3,$((68*MiB))]]"
check_eq "reset: snapshots (label, report live, tracer live)" \
    "$("$VT" report --json "$t" | jq -c '[.snapshots[]|[.label,.live_bytes,.tracer_live_bytes]]')" \
    "[[\"before reset\",$((70*MiB)),$((70*MiB))],[\"after reset\",$((2*MiB)),$((2*MiB))],[\"allocated again\",$((66*MiB)),$((66*MiB))]]"
check_eq "reset: the text summary names it" "$("$VT" report "$t" | grep -c 'reset  *cudaDeviceReset dev 0 at .*: 3 allocations (68.00 MiB of VRAM) freed')" 1

# ---- memory nobody allocated -------------------------------------------------------------------
# A 1 GiB device of which 300 MiB is held by someone else (VRAMTRACE_SIM_FOREIGN_MEM: another
# process, the context). The program holds 64 MiB, asks cudaMemGetInfo (364 MiB used), then a
# 1 GiB cudaMalloc fails (the tracer asks the driver then: 660 MiB free). Both times the driver's
# used memory is 300 MiB more than the program's 64 MiB.
trace foreign VRAMTRACE_SIM_MEM=1G VRAMTRACE_SIM_FOREIGN_MEM=300M VRAMTRACE_MEMINFO_INTERVAL_MS=0
o="$TMP/foreign.out"; t="$TMP/foreign.jsonl"
check_eq "foreign: the driver counts 364 of 1024 MiB used; the 1 GiB request fails (2)" "$(v $o rc),$(v $o used_mib),$(v $o total_mib),$(v $o big)" 0,364,1024,2
check_eq "foreign: dev 0 driver view: 2 queries, the last used 364 MiB with 64 MiB live, 300 MiB unattributed" \
    "$("$VT" report --json "$t" | jq -c '.processes[0].devices[0].driver | [.samples, .last.used_bytes, .last.live_bytes, .last.unattributed_bytes]')" \
    "[2,$((364*MiB)),$((64*MiB)),$((300*MiB))]"
check_eq "foreign: sampling off (VRAMTRACE_MEMINFO_INTERVAL_MS=0): no vramtrace_sample record" "$(jqs $t '[.[]|select(.api=="vramtrace_sample")]|length')" 0
check_eq "foreign: at the OOM: 660 MiB free, 64 MiB live on the device, 300 MiB unattributed" \
    "$("$VT" report --json "$t" | jq -c '[.oom_count, (.oom_events[0]|.free_bytes, .live_device_bytes, .unattributed_bytes)]')" \
    "[1,$((660*MiB)),$((64*MiB)),$((300*MiB))]"
# Sampling on, one per 10 ms: the first allocation starts the interval, the OOM takes no sample
# (it asks the driver itself), the 16 MiB allocation 20 ms later takes one: 380 MiB used, 80 live.
cp "$t" "$TMP/foreign_nosample.jsonl"
trace foreign VRAMTRACE_SIM_MEM=1G VRAMTRACE_SIM_FOREIGN_MEM=300M VRAMTRACE_MEMINFO_INTERVAL_MS=10
check_eq "foreign: one vramtrace_sample meminfo, after the 16 MiB allocation (380 MiB used)" \
    "$(jqs $t '[.[]|select(.ev=="meminfo" and .api=="vramtrace_sample")|"\(.res):\(.dev):\(.total_bytes - .free_bytes)"]|join(" ")')" "0:0:$((380*MiB))"
check_eq "foreign: the report's driver view counts it: 3 queries, the last 380 MiB used, 80 live, 300 unattributed" \
    "$("$VT" report --json "$t" | jq -c '.processes[0].devices[0].driver | [.samples, .last.used_bytes, .last.live_bytes, .last.unattributed_bytes]')" \
    "[3,$((380*MiB)),$((80*MiB)),$((300*MiB))]"
t="$TMP/foreign_nosample.jsonl"
check_eq "foreign: the text says it at the device and at the OOM" \
    "$("$VT" report "$t" | grep -c -e '^      driver: 364.00 MiB used at the last of 2 queries, 300.00 MiB of it not allocated by the program$' \
        -e '; driver free 660.00 MiB of 1.00 GiB, 300.00 MiB used but not allocated by the program$')" 2

# ---- IPC ---------------------------------------------------------------------------------------
trace ipc
o="$TMP/ipc.out"; t="$TMP/ipc.jsonl"
check_eq "ipc: open gives a second range, not counted by the device" "$(v $o open),$(v $o distinct),$(v $o open_used_delta),$(v $o close)" 0,1,0,0
check_eq "ipc: ipc_open/ipc_close records of 1 MiB" \
    "$(jqs $t '[.[]|select(.ev=="ipc_open" or .ev=="ipc_close")|"\(.ev):\(.size)"]|join(" ")')" "ipc_open:$MiB ipc_close:$MiB"
check_eq "ipc: no alloc record for the mapping" "$(jqs $t '[.[]|select(.ev=="alloc")]|length')" 1
check_eq "ipc: kernel on the mapping: no finding, clean sync" "$(jqs $t '[.[]|select(.ev=="finding")]|length'),$(v $o sync)" 0,0
check_eq "ipc: live peak is the exporter's 1 MiB only" "$(jqs $t "$LIVE"' | ."0".peak')" $MiB
check_eq "ipc: report peak_bytes" "$("$VT" report --json "$t" | jq .peak_bytes)" $MiB

# ---- graphs ------------------------------------------------------------------------------------
trace graph
o="$TMP/graph.out"; t="$TMP/graph.jsonl"
check_eq "graph: capture allocates nothing; launch makes the outliving node live" \
    "$(v $o capture_used_mib),$(v $o launch1),$(v $o after_launch_used_mib)" 0,0,2
check_eq "graph: relaunch while its allocation is live fails; after the free it works" \
    "$(v $o relaunch_while_live),$(v $o launch2),$(v $o after_free_used_mib)" 1,0,0
check_eq "graph: explicit alloc/free nodes" "$(v $o add_alloc),$(v $o add_free),$(v $o launch3),$(v $o end_used_mib)" 0,0,0,0
# The memset is captured (not done then); each of the two graph launches that succeed (launch1,
# launch2; the relaunch while its allocation is live fails) does it, on memory its allocation node
# has just made live: no finding.
check_eq "graph: memset on a graph allocation: captured once, done by each successful graph launch" \
    "$(jqs $t '[.[]|select(.ev=="set")|"\(.res):\(if .captured then "captured" elif .graph then "graph" else "-" end)"]|join(",")')" \
    "0:captured,0:graph,0:graph"
check_eq "graph: the kernel on the graph allocation, at capture and at each replay: no finding" \
    "$(jqs $t '[.[]|select(.ev=="launch" or .ev=="launches")|(if .captured then "captured" elif .graph then "graph" else "-" end) as $k|range(.count // 1)|$k]|join(",")') $(jqs $t '[.[]|select(.ev=="finding")]|length')" \
    "captured,graph,graph 0"
check_eq "graph: 3 graph_alloc records (2 captured, 1 node), no counted alloc at capture" \
    "$(jqs $t '[.[]|select(.ev=="graph_alloc")]|length')" 3
check_eq "graph: launches write graph:true allocs (2+2+1) and in-graph frees (1+1+1)" \
    "$(jqs $t '[.[]|select(.ev=="alloc" and .graph==true and .api=="cudaGraphLaunch")]|length'),$(jqs $t '[.[]|select(.ev=="free" and .api=="cudaGraphLaunch")]|length')" 5,3
check_eq "graph: live from the trace (peak 3 MiB, nothing left)" "$(jqs $t "$LIVE"' | ."0" | "\(.peak),\(.live)"')" "$((3*MiB)),0"
check_eq "graph: kernel on a captured allocation raises no finding" "$(jqs $t '[.[]|select(.ev=="finding")]|length')" 0
check_eq "graph: report peak_bytes" "$("$VT" report --json "$t" | jq .peak_bytes)" $((3*MiB))

# ---- two devices -------------------------------------------------------------------------------
trace multi VRAMTRACE_SIM_DEVICES=2
o="$TMP/multi.out"; t="$TMP/multi.jsonl"
check_eq "multi: calls succeed" "$(v $o count),$(v $o peer),$(v $o push),$(v $o drv_alloc0),$(v $o pop),$(v $o drv_peer)" 2,0,0,0,0,0
check_eq "multi: allocation devices (runtime, then pushed ctx 0, popped back to 1)" \
    "$(jqs $t '[.[]|select(.ev=="alloc")|"\(.api):\(.dev)"]|join(" ")')" \
    "cudaMalloc:0 cudaMalloc:1 cudaMallocAsync:1 cuMemAlloc_v2:0 cuMemAlloc_v2:1"
check_eq "multi: frees carry the allocation's device" "$(jqs $t '[.[]|select(.ev=="free")|.dev]|join(",")')" 1,1,0,1,0
check_eq "multi: peer copies have dev and src_dev" "$(jqs $t '[.[]|select(.ev=="copy")|"\(.api):\(.dev)<\(.src_dev)"]|join(" ")')" \
    "cudaMemcpyPeer:1<0 cuMemcpyPeer:1<0"
check_eq "multi: per-device peaks (dev0 3 MiB, dev1 4 MiB), both end at 0" \
    "$(jqs $t "$LIVE"' | "\(."0".peak),\(."1".peak),\(."0".live),\(."1".live)"')" "$((3*MiB)),$((4*MiB)),0,0"
check_eq "multi: device records for both devices" "$(jqs $t '[.[]|select(.ev=="device")|.dev]|sort|join(",")')" 0,1
check_eq "multi: report peak_bytes (all devices)" "$("$VT" report --json "$t" | jq .peak_bytes)" $((6*MiB + MiB/2))

# ---- cuKernelGetParamInfo on a cudaKernel_t ------------------------------------------------------
trace paraminfo
o="$TMP/paraminfo.out"; t="$TMP/paraminfo.jsonl"
check_eq "paraminfo: cuKernelGetParamInfo(cudaKernel_t, 1)" "$(v $o rc) $(v $o off) $(v $o size)" "0 8 4"
check_eq "paraminfo: the kernel record's layout comes from the driver" "$(jqs $t '.[]|select(.ev=="kernel")|.layout')" paraminfo
trace paraminfo VRAMTRACE_SIM_NO_PARAMINFO=1
check_eq "paraminfo: VRAMTRACE_SIM_NO_PARAMINFO=1 -> CUDA_ERROR_NOT_SUPPORTED" "$(v $o rc)" 801
check_eq "paraminfo: the tracer falls back to the fatbin" "$(jqs $t '.[]|select(.ev=="kernel")|.layout')" elf
