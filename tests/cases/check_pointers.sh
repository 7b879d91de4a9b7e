#!/bin/sh
# check_pointers.sh - end-to-end: the launch argument check (host / freed / out-of-bounds pointers,
# by-value structs, no false positives on scalars), the copy/set/free checks, leaks, --check=abort
# and the pageable-access downgrade, on the runtime path (every nvcc variant and both layout
# sources) and the driver path (cuModuleLoadData + cuLaunchKernel, kernelParams and `extra`).
# The programs print one "expect KIND SEVERITY KERNEL ARG OFFSET VALUE" line per finding they
# provoke; the trace's findings must be exactly those, in order.
. tests/lib.sh
need_sim
[ -x "$PROGS/trace_rt" ] || { skip "check_pointers: trace test programs not built"; exit 0; }

trace() { # trace NAME ENV [vramtrace run options] -- PROG ARGS...
    n=$1; e=$2; shift 2
    rm -f "$TMP/$n.jsonl"
    env $e "$VT" run --sim -o "$TMP/$n.jsonl" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
    echo $? >"$TMP/$n.rc"
}
q() { jqs "$TMP/$1.jsonl" "$2" | tr '\n' ';'; }
expected() { grep '^expect ' "$TMP/$1.out" | tr '\n' ';'; }
found() {
    q "$1" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k
        | .[] | select(.ev=="finding")
        | "expect \(.kind) \(.severity) \(if .k then $k[.k|tostring] else "-" end) \(.arg // "-") \(.offset // "-") \(.value)"'
}
# check_findings NAME DESC : the trace's findings are exactly the program's expectations
check_findings() {
    w=$(expected "$1")
    check "$2: the program provoked something" test -n "$w"
    check_eq "$2: findings" "$(found "$1")" "$w"
}

# ---- each bad-pointer case on the default build ----------------------------------------------
for m in host_malloc host_stack host_mmap host_offset host_struct host_tmpl host_exc freed freed_cached oob_end between; do
    trace $m "" -- "$PROGS/trace_rt" $m
    [ $m = oob_end ] || check_findings $m "$m"   # oob_end provokes nothing: checked below
    check_eq "$m: default mode records and goes on" "$(cat "$TMP/$m.rc"),$(grep -c "^done $m" "$TMP/$m.out")" 0,1
done
# glibc's malloc serves small blocks from [heap]; under ASan its own allocator's mappings
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then want_heap="anon null;"; else want_heap="heap [heap];"; fi
check_eq "malloc'd pointer is classed heap" "$(q host_malloc '.[] | select(.ev=="finding") | "\(.class) \(.mapping)"')" "$want_heap"
check_eq "stack pointer is classed stack" "$(q host_stack '.[] | select(.ev=="finding") | .class')" "stack;"
check_eq "mmap'd pointer is classed anon" "$(q host_mmap '.[] | select(.ev=="finding") | .class')" "anon;"
check "message names kernel and argument (struct: byte offset)" grep -q \
    "host pointer passed to kernel k_struct, argument 1 (byte 8 of a by-value struct)" "$TMP/host_struct.err"
check "message shows a template kernel's name without its return type" grep -q \
    "host pointer passed to kernel k_tmpl<float, 4>, argument 0:" "$TMP/host_tmpl.err"
check_eq "cudaLaunchKernelExC finding and launch carry that api" \
    "$(q host_exc '[.[] | select(.ev=="finding" or .ev=="launch") | .api] | join(",")')" "cudaLaunchKernelExC,cudaLaunchKernelExC;"
check_eq "finding precedes its launch" "$(q host_malloc '[.[] | select(.ev=="finding" or .ev=="launch") | .ev] | join(",")')" "finding,launch;"
check_eq "use after free names the freed allocation" \
    "$(q freed '.[] | select(.ev=="finding") | "\(.alloc.addr) \(.alloc.size)"')" "$(sed -n 's/^alloc //p' "$TMP/freed.out");"
check_eq "between: the warning names the nearest allocation" "$(q between '.[] | select(.ev=="finding") | .alloc.addr')" "$(sed -n 's/^near //p' "$TMP/between.out");"
check_eq "oob_end: the one-past-the-end pointer is legal: no finding" "$(q oob_end '[.[] | select(.ev=="finding")] | length')" "0;"
check "between allocations is explained" grep -q "between allocations" "$TMP/between.err"
check "exit summary counts the finding" grep -q "findings: 1 error, 0 warnings (1 host pointer)" "$TMP/host_malloc.err"

# ---- no false positives (device offsets, pinned, managed, registered, NULL, scalars), and a host
# pointer in a struct, on every nvcc variant with both layout sources ----
for v in trace_rt trace_rt_legacy trace_rt_zstdnone trace_rt_zsize trace_rt_speed; do
    for np in 0 1; do
        t=$v.np$np
        trace $t.clean "VRAMTRACE_SIM_NO_PARAMINFO=$np" -- "$PROGS/$v" clean
        check_eq "$t: clean program: no finding, exits 0" \
            "$(cat "$TMP/$t.clean.rc") $(q $t.clean '[.[] | select(.ev=="finding")] | length')" "0 0;"
        check_eq "$t: clean program: all launches recorded (lines and folded counts)" "$(nlaunches "$TMP/$t.clean.jsonl" '.res == 0');" "14;"
        check_eq "$t: every kernel has a layout" "$(q $t.clean '[.[] | select(.ev=="kernel" and .layout=="none")] | length')" "0;"
        lay=$(q $t.clean '[.[] | select(.ev=="kernel") | .layout] | unique | join(",")')
        if [ $np = 1 ]; then check_eq "$t: layout parsed from the fatbin" "$lay" "elf;"
        else check "$t: layout from paraminfo or the fatbin ($lay)" sh -c "[ '$lay' = 'paraminfo;' ] || [ '$lay' = 'elf;' ]"; fi
        check_eq "$t: scalar kernel's layout" \
            "$(q $t.clean '.[] | select(.ev=="kernel" and (.name|startswith("_Z9k_scalars"))) | .params | map(join(":")) | join(" ")')" \
            "0:4 4:4 8:8 16:4 24:8 32:8 40:8 48:8 56:8 64:8;"
        trace $t.struct "VRAMTRACE_SIM_NO_PARAMINFO=$np" -- "$PROGS/$v" host_struct
        check_findings $t.struct "$t: host pointer inside a struct"
    done
    [ $v = trace_rt_legacy ] && check_eq "legacy launch goes through cudaLaunchKernel" \
        "$(q $v.np0.struct '[.[] | select(.ev=="launch") | .api] | join(",")')" "cudaLaunchKernel;"
done
check_eq "clean program: census of pinned/managed/registered allocations" \
    "$(q trace_rt.np0.clean '[.[] | select(.ev=="alloc") | .mem] | join(",")')" "device,pinned,managed,registered;"

# ---- copies, sets and frees ------------------------------------------------------------------
trace copies "" -- "$PROGS/trace_rt" copies
check_findings copies "copy/set/free checks"
check "oob copy says by how much" grep -q "destination range runs 4096 bytes past the end" "$TMP/copies.err"
check_eq "direction mismatch says what the kind claimed, for a host side and for each device side" \
    "$(grep -o 'kind says [a-z0-9]* but the pointers are [a-z0-9]*' "$TMP/copies.err" | tr '\n' ';')" \
    "kind says d2h but the pointers are h2d;kind says h2d but the pointers are d2d;kind says d2h but the pointers are d2d;"
check_eq "oob copy names its allocation" \
    "$(q copies '[.[] | select(.ev=="finding" and .kind=="oob_copy") | .alloc.size] | map(tostring) | join(",")')" "4096,4096,4096;"
check "summary lists every kind" grep -q "findings: 8 errors, 0 warnings (3 out-of-bounds copy, 3 direction mismatch, 1 double free, 1 invalid free)" "$TMP/copies.err"

# Copies and memsets of freed device and managed memory: a use after free naming the freed
# allocation and the call's side (issue 50 slice 4: before, a copy from a freed pointer read as a
# direction mismatch "h2h" and a memset as nothing), and nothing once the address is live again.
trace freed_copies "" -- "$PROGS/trace_rt" freed_copies
check_findings freed_copies "copies and memsets of freed memory"
D=$(sed -n 's/^alloc \(0x[0-9a-f]*\) 4096$/\1/p' "$TMP/freed_copies.out" | head -1)
check_eq "freed copies: each names the freed allocation (the device one 4 times, then the managed one)" \
    "$(q freed_copies '[.[] | select(.ev=="finding") | "\(.alloc.addr) \(.alloc.size) \(.alloc.mem)"] | join(",")')" \
    "$D 4096 device,$D 4096 device,$D 4096 device,$D 4096 device,$(q freed_copies '[.[] | select(.ev=="alloc" and .mem=="managed") | .addr] | .[0]' | tr -d ';') 8192 managed;"
check_eq "freed copies: the message says which call and which side" \
    "$(grep -c "freed device pointer passed to cudaMemcpy as its source: " "$TMP/freed_copies.err"):$(grep -c "freed device pointer passed to cudaMemcpy as its destination: " "$TMP/freed_copies.err"):$(grep -c "freed device pointer passed to cudaMemset: " "$TMP/freed_copies.err"):$(grep -c "freed managed pointer passed to cudaMemcpy as its source: " "$TMP/freed_copies.err")" \
    "2:1:1:1"
check_eq "freed copies: no direction finding, and the program ran on" \
    "$(q freed_copies '[.[] | select(.ev=="finding" and .kind=="direction_mismatch")] | length'):$(cat "$TMP/freed_copies.rc")" "0;:0"

# ---- leaks -----------------------------------------------------------------------------------
trace leak "" -- "$PROGS/trace_rt" leak
leaked=$(q leak '([.[] | select(.ev=="free" and .res==0) | .addr]) as $f | .[] | select(.ev=="alloc" and .res==0 and (.addr as $a | $f | index($a) | not)) | "\(.addr) \(.size)"')
want=$(grep '^alloc ' "$TMP/leak.out" | head -2 | sed 's/^alloc //' | tr '\n' ';')
check_eq "trace shows the leaked allocations (alloc without free)" "$leaked" "$want"
check "exit summary: 2 allocations not freed" grep -q "2 device allocations (.*) not freed at exit" "$TMP/leak.err"
# One device, one managed and one pinned host allocation left at exit: each named by its kind (a
# managed allocation is not a device allocation: the report counts it as no VRAM), and the
# report's VRAM leak is the device one alone.
trace leak_kinds "" -- "$PROGS/trace_rt" leak_kinds
check "exit summary: each kind by name" \
    grep -q "1 device allocation (4.00 KiB), 1 stream-ordered allocation (64.00 KiB), 1 managed allocation (1.00 MiB), 1 pinned host allocation (8.00 KiB) not freed at exit" "$TMP/leak_kinds.err"
check_eq "... and the report's leaked VRAM is the device and stream-ordered allocations'" \
    "$("$VT" report --json "$TMP/leak_kinds.jsonl" | jq -r '"\(.leaked_bytes)"')" $((4096 + 65536))
check "... and the report names the kinds in the exit summary's words" sh -c \
    '"$1" report "$2" | grep -q "^    not freed:  1 device allocation (4.00 KiB), 1 stream-ordered allocation (64.00 KiB), 1 managed allocation (1.00 MiB), 1 pinned host allocation (8.00 KiB)$"' _ "$VT" "$TMP/leak_kinds.jsonl"
check_eq "... and in JSON, every kind in order" \
    "$("$VT" report --json "$TMP/leak_kinds.jsonl" | jq -c '[.processes[0].leaked_by_kind[]|[.kind,.count,.bytes]]')" \
    '[["device",1,4096],["stream-ordered",1,65536],["VMM",0,0],["managed",1,1048576],["pinned host",1,8192]]'
check_eq "footer live bytes = leaked bytes" "$(q leak '.[] | select(.ev=="footer") | .live_bytes')" "$((3 * 1048576 + 12345));"
check_eq "leaks are not findings" "$(q leak '[.[] | select(.ev=="finding")] | length')" "0;"

# ---- --check=abort, --check=off, pageable access ---------------------------------------------
trace abort "" --check=abort -- "$PROGS/trace_rt" host_struct
check_eq "--check=abort: exit status of SIGABRT" "$(cat "$TMP/abort.rc")" 134
check "--check=abort: clear message" grep -q "stopping at the first error (--check=abort)" "$TMP/abort.err"
check_eq "--check=abort: stopped before the launch" "$(grep -c '^launch' "$TMP/abort.out")" 0
check_findings abort "--check=abort"
check_eq "--check=abort: header says abort, no launch line" \
    "$(q abort '(.[] | select(.ev=="header") | .checks) + " " + ([.[] | select(.ev=="launch")] | length | tostring)')" "abort 0;"
trace abort_ok "" --check=abort -- "$PROGS/trace_rt" clean
check_eq "--check=abort: clean program unaffected" "$(cat "$TMP/abort_ok.rc")" 0
trace off "" --check=off -- "$PROGS/trace_rt" host_malloc copies
check_eq "--check=off: no findings" "$(q off '[.[] | select(.ev=="finding")] | length')" "0;"
# knobs set by hand to values they do not take: one warning line each, the defaults, same exit
trace knobs "VRAMTRACE_CHECK=abrot VRAMTRACE_BACKTRACE=of VRAMTRACE_SYNC=maybe VRAMTRACE_BT_DEPTH=ten VRAMTRACE_UNWIND=fast VRAMTRACE_FREED_HISTORY=lots VRAMTRACE_MEMINFO_INTERVAL_MS=often" \
    -- "$PROGS/trace_rt" clean
check_eq "bad knob values: the program's exit status" "$(cat "$TMP/knobs.rc")" 0
check_eq "bad knob values: one warning per knob, naming it and what it takes" \
    "$(grep -c '^vramtrace: VRAMTRACE_[A-Z_]*=[a-z]* not understood (takes .*); using the default$' "$TMP/knobs.err")" 7
check "bad knob values: the freed history's warning gives its range" \
    grep -q 'VRAMTRACE_FREED_HISTORY=lots not understood (takes a number of freed ranges from 1 to 32768)' "$TMP/knobs.err"
check "bad knob values: the check mode's warning lists the modes" grep -q 'VRAMTRACE_CHECK=abrot not understood (takes record, abort, off)' "$TMP/knobs.err"
check_eq "bad knob values: header shows the defaults (checks record, backtraces on)" \
    "$(q knobs '.[] | select(.ev=="header") | "\(.checks) \(.backtraces)"')" "record true;"
trace knobs_ok "VRAMTRACE_CHECK=record VRAMTRACE_BACKTRACE=No VRAMTRACE_SYNC=0 VRAMTRACE_BT_DEPTH=4 VRAMTRACE_UNWIND=default VRAMTRACE_FREED_HISTORY=64 VRAMTRACE_MEMINFO_INTERVAL_MS=0" \
    -- "$PROGS/trace_rt" clean
check_eq "good knob values: no warning, and they apply (backtraces off)" \
    "$(grep -c 'not understood' "$TMP/knobs_ok.err") $(q knobs_ok '.[] | select(.ev=="header") | .backtraces')" "0 false;"
trace pageable "VRAMTRACE_SIM_PAGEABLE=1" -- "$PROGS/trace_rt" host_malloc
check_eq "pageable access: host pointer is a warning" \
    "$(q pageable '.[] | select(.ev=="finding") | "\(.kind) \(.severity) \(.value)"')" \
    "host_pointer warning $(sed -n 's/^expect host_pointer error [^ ]* 0 0 //p' "$TMP/pageable.out");"
check "pageable access: the warning gives the reason" grep -q "pageable memory access" "$TMP/pageable.err"

# ---- driver API: cuModuleLoadData (fatbin / PTX, embedded / from a file) + cuLaunchKernel -----
for img in fatbin ptx "$PROGS/trace_kern.fatbin" "$PROGS/trace_kern.ptx"; do
    for form in params extra; do
        for np in 0 1; do
            t=drv.$(basename "$img").$form.$np
            trace $t "VRAMTRACE_SIM_NO_PARAMINFO=$np" -- "$PROGS/trace_drv_dl" launch "$img" $form
            check_findings $t "driver $(basename "$img") $form paraminfo=$((1 - np))"
            case "$np:$img" in
                0:*) want=paraminfo ;;
                1:*ptx) want=ptx ;;
                *) want=elf ;;
            esac
            check_eq "driver $(basename "$img") $form paraminfo=$((1 - np)): layout" \
                "$(q $t '[.[] | select(.ev=="kernel") | .layout] | unique | join(",")')" "$want;"
        done
    done
done
trace drv_linked "" -- "$PROGS/trace_drv" launch fatbin extra
check_findings drv_linked "driver (-lcuda) extra buffer"
# the other module loaders: cuModuleLoadDataEx (PTX and a fatbin), cuModuleLoadFatBinary, each
# by cuGetProcAddress and linked: the layout from the image (no paraminfo), the same findings
for l in "ptx dataex" "fatbin dataex" "fatbin fatbinary"; do
    set -- $l
    for prog in trace_drv trace_drv_dl; do
        t=drv.$prog.$1.$2
        trace $t "VRAMTRACE_SIM_NO_PARAMINFO=1" -- "$PROGS/$prog" launch "$1" params "$2"
        check_findings $t "driver $prog $1 loaded by $2"
        check_eq "driver $prog $1 loaded by $2: layout from the image" \
            "$(q $t '[.[] | select(.ev=="kernel") | .layout] | unique | join(",")')" "$([ "$1" = ptx ] && echo ptx || echo elf);"
    done
done
# functions found by cuModuleEnumerateFunctions (CUDA 12.4), which the tracer does not hook: it
# asks the driver each one's name and module (cuFuncGetName, cuFuncGetModule) and reads the
# module's image it noted at load, so drv_struct's PTX still says its struct's pointer is used:
# the same findings, errors (a note, "the image has no PTX", before)
for prog in trace_drv trace_drv_dl; do
    t=drv.$prog.enum
    trace $t "" -- "$PROGS/$prog" launch fatbin params enum
    check_findings $t "driver $prog, functions enumerated"
done

# ---- NVRTC: the image freed (or its file removed) right after loading ----------------------------
# nvrtc_gen compiles kernel `scale` (with 300 fillers: PTX over 128 KiB, so free() unmaps it) with
# the toolkit's NVRTC, outside the simulated device (NVRTC needs the real driver when it finds a
# libcuda). rel_nvrtc loads it the usual ways, frees the image or removes the file before the first
# launch, and passes a host buffer as argument 1; "reuse" loads a second program at the address of
# the first, its scale taking the host buffer as argument 3. With the driver's paraminfo and
# without it (then the layout comes from the tracer's copy of the PTX). Before, the tracer read
# the freed image at the first launch (SIGSEGV without paraminfo), and took the second program's
# layout from its cache of the first (no finding).
if [ -x "$PROGS/nvrtc_gen" ] && [ -x "$PROGS/rel_nvrtc" ] && no_san "$PROGS/nvrtc_gen" "$TMP/a.ptx" "$TMP/b.ptx" 2>"$TMP/nvrtc.err"; then
    check "NVRTC: the PTX is over 128 KiB" test "$(stat -c %s "$TMP/a.ptx")" -gt 131072
    # truth for the layouts, from the host compiler: kernel parameters are laid out as a C struct
    # of the same types (CUDA Programming Guide, "Function Parameters"): offsetof and sizeof
    cat >"$TMP/abi.c" <<'C'
#include <stddef.h>
#include <stdio.h>
struct a { float *out; const float *in; float a; int n; };
struct b { int n; float a; float *out; const float *in; };
int main(void)
{
    printf("["); printf("[%zu,%zu]", offsetof(struct a, out), sizeof(float *)); printf(",[%zu,%zu]", offsetof(struct a, in), sizeof(float *));
    printf(",[%zu,%zu]", offsetof(struct a, a), sizeof(float)); printf(",[%zu,%zu]]\n", offsetof(struct a, n), sizeof(int));
    printf("["); printf("[%zu,%zu]", offsetof(struct b, n), sizeof(int)); printf(",[%zu,%zu]", offsetof(struct b, a), sizeof(float));
    printf(",[%zu,%zu]", offsetof(struct b, out), sizeof(float *)); printf(",[%zu,%zu]]\n", offsetof(struct b, in), sizeof(float *));
    return 0;
}
C
    no_san cc -o "$TMP/abi" "$TMP/abi.c" && "$TMP/abi" >"$TMP/abi.txt"
    for np in 0 1; do
        if [ $np = 0 ]; then lay=paraminfo; else lay=ptx; fi
        for m in data lib file libfile reuse; do
            t=nvrtc_${m}_$np
            trace $t "VRAMTRACE_SIM_NO_PARAMINFO=$np" -- "$PROGS/rel_nvrtc" $m "$TMP/a.ptx" "$TMP/b.ptx"
            if [ $m = reuse ]; then arg=3 want_out="launch=0 sync=0;reused=1;launch=0 sync=700;"
            else arg=1 want_out="launch=0 sync=700;"; fi
            check_eq "NVRTC $m, layout from $lay: the program finishes, the device reports the bad pointer" \
                "$(cat "$TMP/$t.rc"):$(tr '\n' ';' <"$TMP/$t.out")" "0:$want_out"
            check_eq "NVRTC $m, layout from $lay: one finding, naming scale's argument $arg" \
                "$(q $t '[.[] | select(.ev=="finding") | "\(.kind) \(.severity) \(.arg)"] | join(",")')" "host_pointer error $arg;"
            check "NVRTC $m, layout from $lay: the message names kernel and argument" \
                grep -q "host pointer passed to kernel scale, argument $arg" "$TMP/$t.err"
            check_eq "NVRTC $m: layout from $lay" "$(q $t '[.[] | select(.ev=="kernel") | .layout] | unique | join(",")')" "$lay;"
            if [ $m = reuse ]; then want_params=$(tr '\n' ';' <"$TMP/abi.txt"); else want_params="$(head -1 "$TMP/abi.txt");"; fi
            check_eq "NVRTC $m, layout from $lay: scale's parameters where the host compiler puts them (offsetof)" \
                "$(q $t '.[] | select(.ev=="kernel") | .params | tojson')" "$want_params"
        done
    done
else
    skip "NVRTC: nvrtc_gen not built or NVRTC failed ($(head -1 "$TMP/nvrtc.err" 2>/dev/null))"
fi

# ---- examples/host_pointer_bug ---------------------------------------------------------------
if [ -x "$EXAMPLES/host_pointer_bug" ]; then
    trace ex "" -- "$EXAMPLES/host_pointer_bug"
    check "host_pointer_bug: the finding names kernel and argument" \
        sh -c "jq -r 'select(.ev==\"finding\") | .msg' <'$TMP/ex.jsonl' 2>/dev/null | tr -d '\\000' | grep -q 'host pointer passed to kernel my_kernel, argument 0'"
    check_eq "host_pointer_bug: one host_pointer error" "$(q ex '[.[] | select(.ev=="finding") | "\(.kind) \(.severity) \(.arg)"] | join(",")')" "host_pointer error 0;"
    check_eq "host_pointer_bug: program's exit status" "$(cat "$TMP/ex.rc")" 1
    # the launching line, past nvcc's generated stubs: `my_kernel<<<grid, block>>>(h_data, n)`
    bug_line=$(grep -n 'BUG: h_data is host memory' "$ROOT/examples/host_pointer_bug.cu" | cut -d: -f1)
    check_eq "host_pointer_bug: report names the launching file:line" \
        "$("$VT" report --json "$TMP/ex.jsonl" | jq -r '.findings[0].site')" "main (host_pointer_bug.cu:$bug_line)"
    check "host_pointer_bug: text report shows it too" sh -c '"$1" report "$2" | grep -q "at main (host_pointer_bug.cu:$3)"' _ "$VT" "$TMP/ex.jsonl" "$bug_line"
    check "host_pointer_bug: one kernel launch, in words" sh -c '"$1" report "$2" | grep -q "^Kernels (1 launch):$"' _ "$VT" "$TMP/ex.jsonl"
    trace exfix "" -- "$EXAMPLES/host_pointer_bug" fixed
    check_eq "host_pointer_bug fixed: nothing reported" \
        "$(cat "$TMP/exfix.rc") $(q exfix '[.[] | select(.ev=="finding")] | length') $(grep -c 'vramtrace: \(error\|warning\)' "$TMP/exfix.err")" "0 0; 0"
    trace exabort "" --check=abort -- "$EXAMPLES/host_pointer_bug"
    check_eq "host_pointer_bug --check=abort: 134" "$(cat "$TMP/exabort.rc")" 134
else
    skip "examples/host_pointer_bug not built"
fi
