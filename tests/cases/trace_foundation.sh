#!/bin/sh
# trace_foundation.sh - end-to-end: unmodified programs under `vramtrace run --sim` produce a trace
# listing each allocation, free, copy (direction, bytes) and launch (device name) exactly once,
# failed allocations with their size, untouched return codes; runtime programs (nvcc -cudart
# shared, plain C) through the runtime hooks only, driver-only programs (-lcuda, or dlopen +
# cuGetProcAddress like static cudart) through the driver hooks only. Programs print what they
# did; every check compares that with the trace.
. tests/lib.sh
need_sim
[ -x "$PROGS/trace_rt" ] || { skip "trace_foundation: trace test programs not built"; exit 0; }

# trace NAME ENV PROG ARGS... : run under the tracer; $TMP/NAME.{jsonl,out,err,rc}
trace() {
    n=$1; e=$2; shift 2
    rm -f "$TMP/$n.jsonl"
    env $e "$VT" run --sim -o "$TMP/$n.jsonl" -- "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
    echo $? >"$TMP/$n.rc"
}
out() { grep "^$2 " "$TMP/$1.out" | tr '\n' ';'; }          # program's own lines of a kind
q() { jqs "$TMP/$1.jsonl" "$2" | tr '\n' ';'; }              # trace query, one line
rc_of() { sed -n "s/^rc $2 //p" "$TMP/$1.out" | head -1; }
KNAMES='(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k'

# ---- 2D copies (cudaMemcpy2D, cudaMemcpy2DAsync): the rectangle and both pitches, as passed ----
trace pitched "" "$PROGS/trace_rt" pitched
check_eq "pitched: every call succeeds" "$(cat "$TMP/pitched.rc"):$(rc_of pitched mallocpitch):$(rc_of pitched memcpy2d):$(rc_of pitched memcpy2dasync):$(rc_of pitched malloc3d):$(rc_of pitched peerasync)" "0:0:0:0:0:0"
check_eq "pitched: cudaMalloc3D once, pitch x height x depth bytes, with its pitch, width and rows" \
    "$(q pitched '.[] | select(.ev=="alloc" and .api=="cudaMalloc3D") | "alloc3d \(.addr) \(.size) pitch \(.pitch) width \(.width) rows \(.height)"')" "$(out pitched alloc3d)"
check_eq "pitched: cudaMemcpyPeerAsync once: d2d, bytes, addresses, source device, kind, on its stream" \
    "$(q pitched '.[] | select(.ev=="copy" and .api=="cudaMemcpyPeerAsync") | "peer \(.dir) \(.size) \(.dst) \(.src) src_dev \(.src_dev) kind \(.kind) async \(.async) stream \(.stream)"')" "$(out pitched peer)"
check_eq "pitched: each 2D copy once, with width*height bytes, width, height, dpitch, spitch" \
    "$(q pitched '.[] | select(.ev=="copy" and .width and (.api | startswith("cudaMemcpy2D"))) | "copy2d \(.dir) size \(.size) w \(.width) h \(.height) dpitch \(.dpitch) spitch \(.spitch) async \(.async)"')" \
    "$(out pitched copy2d)"
check_eq "pitched: a graph's 2D copy node, when made and when its graph is launched: the same rectangle and pitches" \
    "$(rc_of pitched graph2d):$(q pitched '.[] | select(.ev=="copy" and (.api | startswith("cudaGraph"))) | "graph2d \(.api) \(.dir) size \(.size) w \(.width) h \(.height) dpitch \(.dpitch) spitch \(.spitch)"')" \
    "0:$(out pitched graph2d)"

# ---- backtraces: VRAMTRACE_BT_DEPTH frames exactly (24 by default), glibc's own addresses ----
# a cudaMalloc 30 calls deep (over 32 frames); from its second frame on the trace's backtrace is
# the program's own backtrace() of that stack from its caller's return address on (the first is
# the cudaMalloc's own return address)
for d in 4 default; do
    e=; want=24; [ $d = default ] || { e="VRAMTRACE_BT_DEPTH=$d"; want=$d; }
    trace deep_$d "$e" "$PROGS/trace_rt" deep
    check_eq "deep, depth $d: exit 0, the allocation recorded" "$(cat "$TMP/deep_$d.rc"):$(q deep_$d '.[] | select(.ev=="alloc") | "alloc \(.addr) \(.size)"')" "0:$(out deep_$d alloc)"
    check_eq "deep, depth $d: $want frames, the 2nd on those of the program's own backtrace() from its caller's return address" \
        "$(q deep_$d '.[] | select(.ev=="alloc") | .bt | "\(length) \(.[1:] | join(" "))"')" \
        "$(awk -v w="$want" '$1 == "callers" && NF > w { s = w; for (i = 2; i <= w; i++) s = s " " $i; print s ";" }' "$TMP/deep_$d.out")"
done

# ---- nvcc -cudart shared program: default <<<>>> path and the legacy cudaLaunchKernel stub ----
for v in trace_rt trace_rt_legacy; do
    trace $v "" "$PROGS/$v" basic
    check_eq "$v: exit status" "$(cat "$TMP/$v.rc")" 0
    check_eq "$v: every cudaMalloc, once, with address and size" \
        "$(q $v '.[] | select(.ev=="alloc") | "alloc \(.addr) \(.size)"')" "$(out $v alloc)"
    check_eq "$v: allocations are recorded by the runtime hook" \
        "$(q $v '[.[] | select(.ev=="alloc") | .api] | unique | .[]')" "cudaMalloc;"
    check_eq "$v: every cudaMemcpy, once, with direction, bytes, dst, src" \
        "$(q $v '.[] | select(.ev=="copy") | "copy \(.dir) \(.size) \(.dst) \(.src)"')" "$(out $v copy)"
    check_eq "$v: copies keep the cudaMemcpyKind passed" \
        "$(q $v '[.[] | select(.ev=="copy") | .kind] | map(tostring) | join(",")')" "1,3,2,4;"
    check_eq "$v: every launch, once, with the kernel's device name" \
        "$(q $v "$KNAMES"' | .[] | select(.ev=="launch") | "launch \($k[.k|tostring])"')" "$(out $v launch)"
    check_eq "$v: one kernel record per kernel, before its launch" \
        "$(q $v '[.[] | select(.ev=="kernel" or .ev=="launch") | .ev] | join(",")')" "kernel,launch,kernel,launch;"
    want_api=__cudaLaunchKernel; [ $v = trace_rt_legacy ] && want_api=cudaLaunchKernel
    check_eq "$v: launch api" "$(q $v '[.[] | select(.ev=="launch") | .api] | unique | .[]')" "$want_api;"
    check_eq "$v: launch geometry" "$(q $v '.[] | select(.ev=="launch") | "\(.grid|join("x")) \(.block|join("x"))"')" \
        "2x1x1 64x1x1;1x1x1 32x1x1;"
    check_eq "$v: every cudaFree, once, succeeded, with the size it freed" \
        "$(q $v '.[] | select(.ev=="free" and .res==0) | "free \(.addr)"')" "$(out $v free)"
    check_eq "$v: frees know their allocation" "$(q $v '[.[] | select(.ev=="free") | .size] | map(tostring) | join(",")')" "1048576,4096;"
    check_eq "$v: nothing recorded twice through the driver layer" \
        "$(q $v '[.[] | select(.api? and (.api | test("^cu[A-Z]")))] | length')" "0;"
    check_eq "$v: exact event census (no duplicates, no findings)" \
        "$(q $v '[.[] | .ev | select(. != "module")] | group_by(.) | map("\(.[0])=\(length)") | join(",")')" \
        "alloc=2,copy=4,device=1,footer=1,free=2,header=1,kernel=2,launch=2,sync=1;"
done
check_eq "device record says simulated" "$(q trace_rt '.[] | select(.ev=="device") | "\(.dev) \(.sim) \(.cc)"')" "0 true 9.0;"
check_eq "footer counts no findings and no live bytes" \
    "$(q trace_rt '.[] | select(.ev=="footer") | "\(.findings) \(.live_bytes)"')" "0 0;"

# ---- return codes and exit status pass through ------------------------------------------------
trace rc "" "$PROGS/trace_rt" rc exit=7
check_eq "exit status of the program passes through vramtrace run" "$(cat "$TMP/rc.rc")" 7
check_eq "failing cudaFree returns the real error" "$(rc_of rc cudaFree_bad)" 1
check_eq "failing cudaFree's res in the trace is what the program got" \
    "$(q rc '[.[] | select(.ev=="free" and .res!=0) | .res] | .[0]')" "$(rc_of rc cudaFree_bad);"
check_eq "failing cudaMemcpy's res in the trace is what the program got" \
    "$(q rc '[.[] | select(.ev=="copy") | .res] | .[0]')" "$(rc_of rc cudaMemcpy_bad);"
check "failing cudaMemcpy returned an error" test "$(rc_of rc cudaMemcpy_bad)" != 0
check_eq "later cudaFree succeeds and is recorded" "$(q rc '[.[] | select(.ev=="free" and .res==0)] | length')" "1;"

# ---- OOM -------------------------------------------------------------------------------------
trace oom "" "$PROGS/trace_rt" oom
check_eq "OOM returns cudaErrorMemoryAllocation" "$(rc_of oom oom)" 2
check_eq "OOM is one failed alloc event with its size, no address" \
    "$(q oom '.[] | select(.ev=="alloc" and .res!=0) | "\(.res) \(.size) \(.addr // "none") \(.mem)"')" \
    "2 $(sed -n 's/^oom //p' "$TMP/oom.out") none device;"
check_eq "failed alloc carries the driver's free/total bytes" \
    "$(q oom '(.[] | select(.ev=="device") | .total_bytes) as $t | .[] | select(.ev=="alloc" and .res!=0) | (.total_bytes == $t and .free_bytes > 0 and .free_bytes <= $t)')" "true;"
check_eq "allocation after the OOM is recorded" "$(q oom '.[] | select(.ev=="alloc" and .res==0) | "alloc \(.addr) \(.size)"')" "$(out oom alloc)"

# ---- plain C program on the runtime API ------------------------------------------------------
trace rtc "" "$PROGS/trace_rtc" 5
check_eq "C program: exit status passes through" "$(cat "$TMP/rtc.rc")" 5
check_eq "C program: cudaMalloc recorded" "$(q rtc '.[] | select(.ev=="alloc" and .mem=="device") | "alloc \(.addr) \(.size)"')" "$(out rtc alloc)"
check_eq "C program: cudaMallocHost recorded once as pinned" \
    "$(q rtc '[.[] | select(.ev=="alloc" and .mem=="pinned") | "\(.api) \(.size)"] | join(",")')" "cudaMallocHost 8192;"
check_eq "C program: copies with direction and bytes" "$(q rtc '.[] | select(.ev=="copy") | "copy \(.dir) \(.size)"')" "$(out rtc copy)"
check_eq "C program: host side of the pinned copy" "$(q rtc '[.[] | select(.ev=="copy") | .host] | join(",")')" "pageable,pinned;"
check_eq "C program: memset recorded" "$(q rtc '.[] | select(.ev=="set") | "\(.api) \(.size) \(.value)"')" "cudaMemset 4096 1;"
check_eq "C program: frees (device, pinned, failing double free)" \
    "$(q rtc '[.[] | select(.ev=="free") | "\(.api)=\(.res)"] | join(",")')" \
    "cudaFreeHost=0,cudaFree=0,cudaFree=$(rc_of rtc cudaFree_again);"
check_eq "C program: no driver-layer duplicates" "$(q rtc '[.[] | select(.api? and (.api | test("^cu[A-Z]")))] | length')" "0;"

# ---- driver API only: linked with -lcuda, and dlopen + cuGetProcAddress (static cudart's way) --
for v in trace_drv trace_drv_dl; do
    trace $v "" "$PROGS/$v" mem
    check_eq "$v: exit status" "$(cat "$TMP/$v.rc")" 0
    check "$v: binding as intended" grep -q "^bound $( [ $v = trace_drv ] && echo linked || echo dlopen)" "$TMP/$v.out"
    check_eq "$v: every cuMemAlloc, once" \
        "$(q $v '.[] | select(.ev=="alloc" and .mem=="device" and .res==0) | "alloc \(.addr) \(.size)"')" "$(out $v alloc)"
    check_eq "$v: driver api names" "$(q $v '[.[] | select(.ev=="alloc" and .mem=="device") | .api] | unique | .[]')" "cuMemAlloc_v2;"
    check_eq "$v: every copy, once, with direction and bytes" \
        "$(q $v '.[] | select(.ev=="copy") | "copy \(.dir) \(.size)"')" "$(out $v copy)"
    check_eq "$v: cuMemsetD32 counts bytes" "$(q $v '.[] | select(.ev=="set") | "set \(.size)"')" "$(out $v set)"
    check_eq "$v: cuMemAllocHost recorded once" \
        "$(q $v '[.[] | select(.ev=="alloc" and .mem=="pinned") | .api] | join(",")')" "cuMemAllocHost_v2;"
    check_eq "$v: failed cuMemAlloc with its size" \
        "$(q $v '.[] | select(.ev=="alloc" and .res!=0) | "\(.res) \(.size)"')" "$(rc_of $v oom) $(sed -n 's/^oom //p' "$TMP/$v.out");"
    check_eq "$v: frees" "$(q $v '.[] | select(.ev=="free" and .mem=="device" and .res==0) | "free \(.addr)"')" "$(out $v free)"
    check_eq "$v: failing second cuMemFree keeps its result and is a double free" \
        "$(q $v '[.[] | select(.ev=="free" and .res!=0) | .res] + [.[] | select(.ev=="finding") | .kind] | map(tostring) | join(",")')" \
        "$(rc_of $v free_again),double_free;"
    check_eq "$v: nothing recorded under a runtime name" "$(q $v '[.[] | select(.api? and (.api | startswith("cuda")))] | length')" "0;"
done

# ---- the header: who ran, where, when, with which settings (each from the system itself) ------
# rel_fork alloc prints its pid; an extra argument it ignores carries a space, quotes, a backslash
# and UTF-8, which the header's argv must give back as they were.
arg='a "b" \c é'
before=$(date +%s)
trace header "" "$PROGS/rel_fork" alloc "$arg"
after=$(date +%s)
h() { jqs "$TMP/header.jsonl" ".[0] | $1"; }
check_eq "header: the program's pid, its path, its argv as given" \
    "$(h '"\(.pid) \(.program)"') $(h '.argv | join("|")')" \
    "$(sed -n 's/^pid=//p' "$TMP/header.out") $(cd "$(dirname "$PROGS/rel_fork")" && pwd -P)/rel_fork $PROGS/rel_fork|alloc|$arg"
check_eq "header: this host's name and page size" "$(h '"\(.hostname) \(.page_size)"')" "$(hostname) $(getconf PAGESIZE)"
check_eq "header: the wall clock of the run (between $before and $after), to the second and the nanosecond" \
    "$(h "(.wall_time >= $before and .wall_time <= $after) and ((.wall_time_ns / 1000000000 | floor) == .wall_time)")" true
check_eq "header: the default settings, backtraces on and checks recording" "$(h '"\(.backtraces) \(.checks)"')" "true record"
for c in off abort; do
    trace header_$c "VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=$c" "$PROGS/rel_fork" alloc
    check_eq "header: VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=$c as set" \
        "$(jqs "$TMP/header_$c.jsonl" '.[0] | "\(.backtraces) \(.checks)"') $(jqs "$TMP/header_$c.jsonl" '[.[] | select(.ev=="alloc" and has("bt"))] | length')" "false $c 0"
done

# ---- the launcher's rank variables, every one set: each in the header's "rank" object as given -
trace ranks "RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 OMPI_COMM_WORLD_RANK=13 OMPI_COMM_WORLD_LOCAL_RANK=5 PMI_RANK=23 SLURM_PROCID=33 SLURM_LOCALID=7" "$PROGS/trace_drv" mem
check_eq "ranks: the header names all 8 variables with their values" \
    "$(jqs "$TMP/ranks.jsonl" '.[0].rank | to_entries | sort_by(.key) | map("\(.key)=\(.value)") | join(",")')" \
    "LOCAL_RANK=1,OMPI_COMM_WORLD_LOCAL_RANK=5,OMPI_COMM_WORLD_RANK=13,PMI_RANK=23,RANK=3,SLURM_LOCALID=7,SLURM_PROCID=33,WORLD_SIZE=8"
check_eq "ranks: the report takes RANK (3)" "$("$VT" report --json "$TMP/ranks.jsonl" 2>/dev/null | jq -r '.processes[0].rank')" 3

# ---- each device the program used, as the driver describes it to the program --------------------
# One record per device (3 here, pageable memory access on), its fields what the program's own
# cuDeviceGetName, cuDeviceTotalMem, cuDeviceGetAttribute and cuDeviceGetPCIBusId answered.
trace devices "VRAMTRACE_SIM_DEVICES=3 VRAMTRACE_SIM_PAGEABLE=1" "$PROGS/trace_drv_dl" devices
check_eq "devices: exit status, 3 devices, each cuMemAlloc succeeded" \
    "$(cat "$TMP/devices.rc") $(grep -c '^device ' "$TMP/devices.out") $(grep -c '^rc alloc[0-9]* 0$' "$TMP/devices.out")" "0 3 3"
check_eq "devices: one record per device, each field as the driver gave it to the program" \
    "$(jqs "$TMP/devices.jsonl" '[.[] | select(.ev=="device")] | sort_by(.dev) | .[] | "device \(.dev)|\(.name)|\(.total_bytes)|\(.cc)|\(.mem_clock_khz)|\(.bus_width_bits)|\(.pageable_access)|\(.pci)"' | tr '\n' ';')" \
    "$(out devices device)"
check_eq "devices: each is the simulated one (its name says so)" "$(q devices '[.[] | select(.ev=="device") | .sim] | unique | .[]')" "true;"

# ---- launch geometry at CUDA's limits and past them -------------------------------------------
# Every launch is recorded with the geometry and shmem it was given, whatever the device says of
# it: values near the 16- and 32-bit limits of the launch record's fields come through whole.
trace geometry "" "$PROGS/trace_drv" geometry
check_eq "launch geometry: exit status" "$(cat "$TMP/geometry.rc")" 0
check_eq "launch geometry: every launch as launched" \
    "$(q geometry '.[] | select(.ev=="launch") | "launch \(.grid|join("x")) \(.block|join("x")) \(.shmem) \(.res)"')" \
    "$(out geometry launch)"

# ---- a long run's trace does not stay in the process's memory ---------------------------------
# Written pages are unmapped one 8 MiB step behind the writer (the page cache keeps the data), so
# RssFile stays bounded while the trace grows to ~100 MB; without that it is the whole trace.
trace many VRAMTRACE_FOLD=0 "$PROGS/trace_rt" many
check_eq "long trace: exit status" "$(cat "$TMP/many.rc")" 0
check_eq "long trace: every launch recorded (a line each: VRAMTRACE_FOLD=0)" "$(grep -c '"ev":"launch"' "$TMP/many.jsonl")" 600000
kb=$(sed -n 's/^rss_file_kb=//p' "$TMP/many.out")
sz=$(($(wc -c <"$TMP/many.jsonl") / 1024))
check "long trace: RssFile ${kb:-?} kB for a $sz kB trace (at most two steps, the ring and the libraries)" \
    test "${kb:-999999}" -lt 49152 -a "$sz" -gt 81920
rm -f "$TMP/many.jsonl"
