#!/bin/sh
# report_sites.sh - call sites of programs written the way users write them (issue 36): the typed
# cudaMalloc<T> overload lives in CUDA's cuda_runtime.h, so its frame (a real function at -O0,
# inlined at -O2) is never the site; a helper's two callers stay two sites; C start-up code is
# never a caller. Lines come from the program's SITE_/CALLER_ markers, not from the tool.
. tests/lib.sh
need_sim
SRC="$ROOT/tests/progs/typed_sites.cu"
line() { grep -n "$1" "$SRC" | cut -d: -f1; }
H=$(line SITE_HELPER); A=$(line CALLER_A); B=$(line CALLER_B); M=$(line SITE_MAIN)
for v in typed_sites typed_sites_o2; do
    rm -f "$TMP/$v.jsonl"
    "$VT" run --sim -o "$TMP/$v.jsonl" -- "$PROGS/$v" >"$TMP/$v.out" 2>"$TMP/$v.err"
    check_eq "$v: the program allocated" "$(cat "$TMP/$v.out")" "allocated 1"
    # sites of the 4 MiB, 1 MiB and 4 KiB allocations; the helper's name loses its signature
    # where DWARF names the inlined function without one
    check_eq "$v: each allocation's site is the user's line, the helper's callers apart" \
        "$("$VT" report --json "$TMP/$v.jsonl" | jq -r '[.largest[]|"\(.bytes) \(.site)"]|join(";")' | sed 's/make_buffer(unsigned long)/make_buffer/g')" \
        "4194304 make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$A);1048576 make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$B);4096 main (typed_sites.cu:$M)"
    check_eq "$v: no site names CUDA's header or C start-up" \
        "$("$VT" report "$TMP/$v.jsonl" | grep -c -e 'cuda_runtime.h' -e '__libc_start')" 0
    # the JSON stack keeps every source frame, CUDA's own first: the overload's line in the
    # toolkit's header, then the helper at the call, then main at the helper's call
    CR=$(grep -n 'return ::cudaMalloc((void\*\*)(void\*)devPtr, size);' "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" | head -1 | cut -d: -f1)
    check_eq "$v: the 4 MiB allocation's stack lists the inlined frames too" \
        "$("$VT" report --json "$TMP/$v.jsonl" | jq -r '[.peak_sites[]|select(.bytes==4194304)|.stack[0:3][]]|join(" | ")' | sed 's/make_buffer(unsigned long)/make_buffer/g; s/^cudaError //; s/cudaMalloc<float>(float\*\*, unsigned long)/cudaMalloc<float>/')" \
        "cudaMalloc<float> (cuda_runtime.h:$CR) | make_buffer (typed_sites.cu:$H) | main (typed_sites.cu:$A)"
done

# ---- the binary rebuilt after the trace: never another build's lines (issue 36) ----------------
# The trace records each module's build-id. The program is traced from a copy, the copy is then
# replaced by another build (the -O2 one: other build-id, other code at those addresses): the report
# says so and shows offsets; given the traced build as a debug file by build-id
# (VRAMTRACE_DEBUGINFO_DIR/.build-id/ab/cdef....debug) it finds the lines again.
mkdir -p "$TMP/app"
cp "$PROGS/typed_sites" "$TMP/app/prog"
rm -f "$TMP/app.jsonl"
"$VT" run --sim -o "$TMP/app.jsonl" -- "$TMP/app/prog" >/dev/null 2>&1
BID=$(jq -r 'select(.ev=="module" and .path=="'"$TMP/app/prog"'")|.build_id' "$TMP/app.jsonl")
check "rebuilt: the module record carries the build-id readelf shows" sh -c \
    'LC_ALL=C readelf -n "$1" | grep -q "Build ID: $2"' _ "$PROGS/typed_sites" "$BID"
site4m() { "$VT" report --json "$TMP/app.jsonl" | jq -r '.largest[]|select(.bytes==4194304)|.site' | sed 's/make_buffer(unsigned long)/make_buffer/'; }
check_eq "rebuilt: before, the user's line" "$(site4m)" "make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$A)"
cp "$PROGS/typed_sites_o2" "$TMP/app/prog"
check_eq "rebuilt: after, no line from the other build (module+offset)" "$(site4m | sed 's/0x[0-9a-f]*/OFF/g')" "prog+OFF"
check_eq "rebuilt: JSON names the changed file" "$("$VT" report --json "$TMP/app.jsonl" | jq -r '.processes[0].stale_modules')" "$TMP/app/prog"
check "rebuilt: the text says so" sh -c '"$1" report "$2" | grep -q "^  warning: $3 changed since the trace (not the build that ran) and no matching file was found$"' _ "$VT" "$TMP/app.jsonl" "$TMP/app/prog"
mkdir -p "$TMP/dbg/.build-id/$(printf %.2s "$BID")"
cp "$PROGS/typed_sites" "$TMP/dbg/.build-id/$(printf %.2s "$BID")/${BID#??}.debug"
check_eq "rebuilt: with the traced build found by build-id, the lines again" \
    "$(VRAMTRACE_DEBUGINFO_DIR="$TMP/dbg" "$VT" report --json "$TMP/app.jsonl" | jq -r '[(.largest[]|select(.bytes==4194304)|.site), (.processes[0].stale_modules|tostring)]|join(" / ")' | sed 's/make_buffer(unsigned long)/make_buffer/')" \
    "make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$A) / null"
# moved away after the trace: said so (not silently offsets), and found again by build-id
cp "$PROGS/typed_sites" "$TMP/app/prog"; rm -f "$TMP/app.jsonl"
"$VT" run --sim -o "$TMP/app.jsonl" -- "$TMP/app/prog" >/dev/null 2>&1
mv "$TMP/app/prog" "$TMP/app/moved"
check_eq "moved: JSON names the missing file, not as changed" \
    "$("$VT" report --json "$TMP/app.jsonl" | jq -c '[.processes[0].missing_modules, .processes[0].stale_modules]')" "[\"$TMP/app/prog\",null]"
check "moved: the text says so" sh -c '"$1" report "$2" | grep -q "^  warning: $3 not found (moved or deleted since the trace) and no file with its build-id either$"' _ "$VT" "$TMP/app.jsonl" "$TMP/app/prog"
check_eq "moved: found by build-id, the lines again and no warning" \
    "$(VRAMTRACE_DEBUGINFO_DIR="$TMP/dbg" "$VT" report --json "$TMP/app.jsonl" | jq -r '[(.largest[]|select(.bytes==4194304)|.site), (.processes[0].missing_modules|tostring)]|join(" / ")' | sed 's/make_buffer(unsigned long)/make_buffer/')" \
    "make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$A) / null"
# a FIFO where the debug file would be (a directory another user controls): not opened (a
# read-only open of a FIFO waits for a writer forever), the module still missing, the report done
mkdir -p "$TMP/fifo/.build-id/$(printf %.2s "$BID")"
mkfifo "$TMP/fifo/.build-id/$(printf %.2s "$BID")/${BID#??}.debug"
VRAMTRACE_DEBUGINFO_DIR="$TMP/fifo" timeout 30 "$VT" report --json "$TMP/app.jsonl" >"$TMP/fifo.json"
check_eq "moved, a FIFO at the build-id path: the report ends (exit 0), the file still missing" \
    "$?:$(jq -r '.processes[0].missing_modules' "$TMP/fifo.json")" "0:$TMP/app/prog"
# the warning names only files whose frames matter: one a recorded stack goes through, not the
# tracer's or CUDA's own (never sites) and not one no stack touched. A trace from another machine:
# none of its three files is here; its one allocation's stack is libcudart -> prog.
cat >"$TMP/elsewhere.jsonl" <<'J'
{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":5,"ppid":1,"program":"/opt/app/prog","argv":["prog"],"t":1000000000,"wall_time":1764680000,"hostname":"node7","rank":{},"page_size":4096,"backtraces":true,"checks":"record"}
{"ev":"module","path":"/opt/app/prog","base":"0x555555554000","lo":"0x555555554000","hi":"0x555555600000"}
{"ev":"module","path":"/opt/app/libunused.so","base":"0x7e8000000000","lo":"0x7e8000000000","hi":"0x7e8000100000"}
{"ev":"module","path":"/opt/cuda/libcudart.so.13","base":"0x7f1000000000","lo":"0x7f1000000000","hi":"0x7f1000200000"}
{"ev":"alloc","t":1000001000,"dur":100,"tid":5,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":4096,"mem":"device","bt":["0x7f1000001234","0x555555555100"]}
J
check_eq "missing files: only the one whose frames are the program's" \
    "$("$VT" report --json "$TMP/elsewhere.jsonl" | jq -c '[.processes[0].missing_modules, .largest[0].site]')" '["/opt/app/prog","prog+0x1100"]'

# ---- copies have call sites too (issue 36) -------------------------------------------------------
# examples/transfers.cu: time_copy() does 4 cudaMemcpy of 64 MiB; main calls it four times
# (pageable h2d, pageable d2h, pinned h2d, pinned d2h): four sites of 256 MiB in 4 copies each,
# told apart by main's line, the first two through pageable memory.
TS="$ROOT/examples/transfers.cu"
CL=$(grep -n 'cudaMemcpy(dst, src, n, kind)' "$TS" | cut -d: -f1)
L1=$(grep -n 'report("pageable host->device"' "$TS" | cut -d: -f1)
rm -f "$TMP/transfers.jsonl"
"$VT" run --sim -o "$TMP/transfers.jsonl" -- "$EXAMPLES/transfers" >/dev/null 2>&1
rows=$("$VT" report "$TMP/transfers.jsonl" | sed -n '/^Copy sites (by bytes):$/,/^$/p' | sed '1d;/^$/d' |
       sed 's/ [0-9.]* [µm]*s  / T  /; s/time_copy([^)]*)/time_copy/; s/  */ /g')
check_eq "copy sites by bytes: four call sites, main's line apart, pageable marked" "$rows" \
" 256.00 MiB 4 copies T 4 pageable time_copy (transfers.cu:$CL) <- main (transfers.cu:$L1)
 256.00 MiB 4 copies T 4 pageable time_copy (transfers.cu:$CL) <- main (transfers.cu:$((L1 + 1)))
 256.00 MiB 4 copies T time_copy (transfers.cu:$CL) <- main (transfers.cu:$((L1 + 2)))
 256.00 MiB 4 copies T time_copy (transfers.cu:$CL) <- main (transfers.cu:$((L1 + 3)))"
check "copy sites: a ranking by host time too" sh -c '"$1" report "$2" | grep -q "^Copy sites (by host time of synchronous copies):$"' _ "$VT" "$TMP/transfers.jsonl"
check_eq "copy sites in JSON: the same four, bytes, count, pageable bytes by direction, stack to main" \
    "$("$VT" report --json "$TMP/transfers.jsonl" | jq -r '.processes[0].copy_sites[]|"\(.bytes) \(.count) \(.pageable_count) \(.pageable_h2d_bytes) \(.pageable_d2h_bytes) \(.sync_seconds > 0) \(.stack[0:2]|join(" | "))"' | sed 's/time_copy([^)]*)/time_copy/')" \
"268435456 4 4 268435456 0 true time_copy (transfers.cu:$CL) | main (transfers.cu:$L1)
268435456 4 4 0 268435456 true time_copy (transfers.cu:$CL) | main (transfers.cu:$((L1 + 1)))
268435456 4 0 0 0 true time_copy (transfers.cu:$CL) | main (transfers.cu:$((L1 + 2)))
268435456 4 0 0 0 true time_copy (transfers.cu:$CL) | main (transfers.cu:$((L1 + 3)))"
check_eq "copy records carry their backtrace (folded ones for as many copies as they count)" \
    "$(jq -s '[.[]|select((.ev=="copy" or .ev=="copies") and (.bt|length) > 0) | .count // 1] | add' "$TMP/transfers.jsonl")" 16

# ---- transfer verdicts (issue 36) -----------------------------------------------------------------
# Against a reference where pinned copies reach 1000 GB/s, the pageable copies of
# examples/transfers.cu are always below 80% of pinned: a verdict per direction naming the one
# site that copies through pageable memory that way (h2d: main's first call, d2h: its second).
printf '{"results":[{"name":"h2d_pinned","gbps":1000},{"name":"d2h_pinned","gbps":1000}]}\n' >"$TMP/ref.json"
out=$("$VT" report --bandwidth "$TMP/ref.json" "$TMP/transfers.jsonl" | sed 's/time_copy([^)]*)/time_copy/')
for d in h2d:$L1 d2h:$((L1 + 1)); do
    check "verdict: pageable ${d%%:*} copies, pin the buffer, at main's line ${d#*:}" sh -c 'printf "%s\n" "$1" | grep -A1 "^       -> verdict: pageable $2 copies run at [0-9]*% of pinned (1000.0 GB/s, the reference): pin the host buffer (cudaHostAlloc, or cudaHostRegister on the existing one)$" | grep -q "^       at:  time_copy (transfers.cu:$3) <- main (transfers.cu:$4)$"' _ "$out" "${d%%:*}" "$CL" "${d#*:}"
done
check "the pinned rows say how far from the reference they are" sh -c 'printf "%s\n" "$1" | grep -q "^  h2d  pinned    256.00 MiB in      4 copies, .* GB/s = [0-9]*% of h2d_pinned 1000.0 GB/s$"' _ "$out"
# tests/progs/small_copies.cu: 200 copies of 4 KiB and one of 800 KiB, all h2d: the median is
# 4 KiB, so per-call latency dominates.
rm -f "$TMP/small.jsonl"
"$VT" run --sim -o "$TMP/small.jsonl" -- "$PROGS/small_copies" >"$TMP/small.out" 2>&1
check_eq "small copies: the program ran" "$(grep -c '^rc=0 ' "$TMP/small.out")" 1
check "small copies: verdict with the count and the median's range" sh -c '"$1" report "$2" | grep -q "^  -> verdict: 201 h2d copies, median size 4.00 KiB to 8.00 KiB (.* per synchronous copy): per-call latency dominates; batch them into fewer, larger copies$"' _ "$VT" "$TMP/small.jsonl"
LR=$(grep -n 'LOSS_READ' "$ROOT/tests/progs/small_copies.cu" | cut -d: -f1)
check "a synchronous d2h copy per step: 32 from one line, the fix and the line" sh -c '"$1" report "$2" | grep -A1 "^  -> verdict: 32 d2h copies from one line that the host waits for, each until the GPU has finished its work: keep the values on the GPU and read them back once after the loop, or copy with cudaMemcpyAsync into pinned memory and synchronize once after it$" | grep -q "^       at:  main (small_copies.cu:$3)$"' _ "$VT" "$TMP/small.jsonl" "$LR"
check_eq "... and no batching verdict for 32 d2h copies (fewer than 64)" "$("$VT" report "$TMP/small.jsonl" | grep -c 'd2h copies, median size')" 0
check_eq "no small-copies verdict for transfers.cu's 64 MiB copies" "$("$VT" report "$TMP/transfers.jsonl" | grep -c 'per-call latency')" 0
# transfers summed over traces: the same program twice is twice the bytes, copies and time
cp "$TMP/transfers.jsonl" "$TMP/transfers2.jsonl"
j1=$("$VT" report --json "$TMP/transfers.jsonl" | jq -r '.transfers.h2d.seconds')
check "transfers over two traces: the seconds add up (twice one trace's, to rounding)" sh -c \
    '"$1" report --json "$2" "$3" | jq -e --argjson one "$4" ".transfers.h2d.seconds - 2 * \$one | fabs < 1e-6" >/dev/null' _ "$VT" "$TMP/transfers.jsonl" "$TMP/transfers2.jsonl" "$j1"
check_eq "... 1 GiB in 16 h2d copies" "$("$VT" report --json "$TMP/transfers.jsonl" "$TMP/transfers2.jsonl" | jq -c '.transfers.h2d|[.bytes,.count]')" "[1073741824,16]"
check_eq "verdicts in JSON: batch (count, median range) and the synchronous read-back (count, line)" \
    "$("$VT" report --json "$TMP/small.jsonl" | jq -c '[.transfer_verdicts[]|[.kind,.dir,.count,.median_min_bytes,.median_max_bytes,.sites]]')" \
    "[[\"batch_copies\",\"h2d\",201,4096,8192,[]],[\"sync_copy_in_loop\",\"d2h\",32,null,null,[\"main (small_copies.cu:$LR)\"]]]"
check_eq "verdicts in JSON carry the text's sentence" \
    "$("$VT" report --json "$TMP/small.jsonl" | jq -r '.transfer_verdicts[1].text')" \
    "32 d2h copies from one line that the host waits for, each until the GPU has finished its work: keep the values on the GPU and read them back once after the loop, or copy with cudaMemcpyAsync into pinned memory and synchronize once after it"
# The verdict for each site, the first of the process included: a trace whose first stack
# (site 0) makes 16 synchronous d2h copies of 4 bytes, its second 15 (below the 16 a loop needs)
sync_d2h_trace 16 15 >"$TMP/sync_first.jsonl"
check_eq "a synchronous d2h loop at the process's first stack: its verdict (16 copies at 0x401234), none for 15" \
    "$("$VT" report --json "$TMP/sync_first.jsonl" | jq -c '[.transfer_verdicts[] | [.kind, .count, .sites]]')" '[["sync_copy_in_loop",16,["0x401234"]]]'
# the same 31 copies without call stacks (VRAMTRACE_BACKTRACE=0): they may come from 31 lines, so
# no "from one line" verdict, though all 31 fall in the one site "(no backtrace)" (before, it was
# given: 31 copies "from one line")
sed 's/,"bt":\["0x[0-9a-f]*"\]//; s/"backtraces":true/"backtraces":false/' "$TMP/sync_first.jsonl" >"$TMP/sync_nobt.jsonl"
check_eq "31 synchronous d2h copies without call stacks: no sync-loop verdict; the one site (no backtrace) holds them" \
    "$("$VT" report --json "$TMP/sync_nobt.jsonl" | jq -c '[[.transfer_verdicts[].kind], [.processes[0].copy_sites[] | [.site, .count, .d2h_waited_count]]]')" '[[],[["(no backtrace)",31,31]]]'
# tests/progs/item_loop.cu reads a value back as PyTorch's .item() does (cudaMemcpyAsync d2h, then
# cudaStreamSynchronize of its stream): 24 such copies into pinned memory, 20 async copies into
# pageable memory (CUDA returns from those when done), 40 with one synchronisation after the loop
# (the last waited for), 20 each followed by a synchronisation of another stream (none).
IL="$ROOT/tests/progs/item_loop.cu"
il() { grep -n "// $1\$" "$IL" | cut -d: -f1; }
rm -f "$TMP/item.jsonl"
"$VT" run --sim -o "$TMP/item.jsonl" -- "$PROGS/item_loop" >"$TMP/item.out" 2>&1
check_eq "item loop: the program ran" "$(grep -c '^rc=0$' "$TMP/item.out")" 1
check_eq "item loop: copies the host waited for, per line" \
    "$("$VT" report --json "$TMP/item.jsonl" | jq -r '.processes[0].copy_sites[]|"\(.site) \(.count) \(.d2h_waited_count)"' | sort)" \
    "$(printf '%s\n' "main (item_loop.cu:$(il ITEM_PINNED)) 24 24" "main (item_loop.cu:$(il ITEM_PAGEABLE)) 20 20" \
        "main (item_loop.cu:$(il NO_WAIT)) 40 1" "main (item_loop.cu:$(il OTHER_STREAM)) 20 0" | sort)"
check_eq "item loop: read-back verdicts for the two lines that wait every step" \
    "$("$VT" report --json "$TMP/item.jsonl" | jq -r '.transfer_verdicts[]|select(.kind=="sync_copy_in_loop")|"\(.count) \(.sites[0])"' | sort)" \
    "$(printf '%s\n' "20 main (item_loop.cu:$(il ITEM_PAGEABLE))" "24 main (item_loop.cu:$(il ITEM_PINNED))")"
check "item loop: the sync records name their stream" sh -c 'grep "\"ev\":\"sync\"" "$1" | grep -q "\"api\":\"cudaStreamSynchronize\".*\"stream\":\"0x[0-9a-f]*\""' _ "$TMP/item.jsonl"
# tests/progs/to_device.cu: 8 asynchronous 4 MiB copies from pageable memory, each followed by a
# stream synchronisation (PyTorch's .to("cuda") without pin_memory): untimed, so the reference's
# own pageable/pinned ratio (6 against 24 GB/s: 25%) says what pinning gains; none without one,
# none when the reference's pageable copies are as fast as pinned ones.
TL=$(grep -n '// TO_DEVICE' "$ROOT/tests/progs/to_device.cu" | cut -d: -f1)
rm -f "$TMP/td.jsonl"
"$VT" run --sim -o "$TMP/td.jsonl" -- "$PROGS/to_device" >"$TMP/td.out" 2>&1
check_eq "to_device: the program ran" "$(grep -c '^rc=0$' "$TMP/td.out")" 1
printf '{"results":[{"name":"h2d_pinned","gbps":24},{"name":"h2d_pageable","gbps":6}]}\n' >"$TMP/ref_slow.json"
printf '{"results":[{"name":"h2d_pinned","gbps":24},{"name":"h2d_pageable","gbps":22}]}\n' >"$TMP/ref_fast.json"
check_eq "to_device: untimed pageable copies get the pin verdict from the reference's ratio, at their line" \
    "$("$VT" report --json --bandwidth "$TMP/ref_slow.json" "$TMP/td.jsonl" | jq -c '[.transfer_verdicts[]|[.kind,.dir,.count,.share_of_pinned,.timed,.sites]]')" \
    "[[\"pin_host_buffer\",\"h2d\",8,0.25,false,[\"main (to_device.cu:$TL)\"]]]"
check "to_device: the text says they were not timed" sh -c '"$1" report --bandwidth "$2" "$3" | grep -q "^       -> verdict: pageable h2d copies (asynchronous, so not timed here) run at about 25% of pinned on this machine (the reference.s pageable against its pinned 24.0 GB/s): pin the host buffer"' _ "$VT" "$TMP/ref_slow.json" "$TMP/td.jsonl"
check_eq "to_device: no verdict without a reference, nor when pageable is as fast" \
    "$("$VT" report --json "$TMP/td.jsonl" | jq '.transfer_verdicts|length') $("$VT" report --json --bandwidth "$TMP/ref_fast.json" "$TMP/td.jsonl" | jq '.transfer_verdicts|length')" "0 0"
check_eq "verdicts in JSON: pin, against the reference, both directions, with their sites" \
    "$("$VT" report --json --bandwidth "$TMP/ref.json" "$TMP/transfers.jsonl" | jq -c '[.transfer_verdicts[]|[.kind,.dir,.count,.pinned_from,(.sites|map(sub("time_copy\\([^)]*\\)";"time_copy")))]]')" \
    "[[\"pin_host_buffer\",\"h2d\",4,\"reference\",[\"time_copy (transfers.cu:$CL) <- main (transfers.cu:$L1)\"]],[\"pin_host_buffer\",\"d2h\",4,\"reference\",[\"time_copy (transfers.cu:$CL) <- main (transfers.cu:$((L1 + 1)))\"]]]"
# tests/progs/staged_copy.cu on two simulated devices: 8 h2d copies forward what a d2h copy brought
# from device 0 into device 1 (the current device is 1 throughout: the allocations say which GPU);
# the last h2d copy (other host memory) is not staged.
SL=$(grep -n 'STAGED_H2D' "$ROOT/tests/progs/staged_copy.cu" | cut -d: -f1)
rm -f "$TMP/staged.jsonl"
VRAMTRACE_SIM_DEVICES=2 "$VT" run --sim -o "$TMP/staged.jsonl" -- "$PROGS/staged_copy" >"$TMP/staged.out" 2>&1
check_eq "staged: the program ran" "$(grep -c '^rc=0$' "$TMP/staged.out")" 1
check "staged: verdict with the count, the fix and the line" sh -c '"$1" report "$2" | grep -A1 "^  -> verdict: 8 copies carry another GPU.s data through host memory (d2h from one device, then h2d to this one): copy device to device (cudaMemcpyPeer" | grep -q "^       at:  main (staged_copy.cu:$3)$"' _ "$VT" "$TMP/staged.jsonl" "$SL"
check_eq "staged: in JSON" "$("$VT" report --json "$TMP/staged.jsonl" | jq -c '[.transfer_verdicts[]|select(.kind=="staged_through_host")|[.count,.sites]]')" "[[8,[\"main (staged_copy.cu:$SL)\"]]]"
check_eq "staged: not for transfers.cu (one device)" "$("$VT" report --json "$TMP/transfers.jsonl" | jq '[.transfer_verdicts[]|select(.kind=="staged_through_host")]|length')" 0

# ---- an allocator inside a framework library (PyTorch-style) ------------------------------------
# A library named like PyTorch's libc10_cuda.so makes the cudaMalloc; the program calls it. The
# site is the library's function at its line (the first frame that is not CUDA's), the program's
# line its caller, and the report notes the caching allocator.
CH=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$TMP/c10"
cat >"$TMP/c10/c10.c" <<'C'
#include <cuda_runtime_api.h>
#include <stddef.h>
__attribute__((noinline)) void *c10_raw_alloc(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n); /* SEGMENT */
    return p;
}
C
cat >"$TMP/c10/app.c" <<'C'
#include <stdio.h>
#include <stddef.h>
void *c10_raw_alloc(size_t n);
int main(void)
{
    void *p = c10_raw_alloc(20u << 20); /* CALLER */
    printf("%d\n", p != NULL);
    return 0;
}
C
if cc -shared -fPIC -g -O0 -I"$CH/include" -o "$TMP/c10/libc10_cuda.so" "$TMP/c10/c10.c" -L"$CH/lib64" -lcudart 2>"$TMP/c10/cc.err" &&
   cc -g -O0 -o "$TMP/c10/app" "$TMP/c10/app.c" -L"$TMP/c10" -lc10_cuda -Wl,-rpath,"$TMP/c10" 2>>"$TMP/c10/cc.err"; then
    rm -f "$TMP/c10.jsonl"
    "$VT" run --sim -o "$TMP/c10.jsonl" -- "$TMP/c10/app" >"$TMP/c10/out" 2>&1
    SG=$(grep -n 'SEGMENT' "$TMP/c10/c10.c" | cut -d: -f1); CA=$(grep -n 'CALLER' "$TMP/c10/app.c" | cut -d: -f1)
    check_eq "framework allocator: the site is the library's line (one caller: not appended)" \
        "$("$VT" report --json "$TMP/c10.jsonl" | jq -r '.largest[0]|"\(.bytes) \(.site)"')" "20971520 c10_raw_alloc (c10.c:$SG)"
    check_eq "framework allocator: the stack goes on to the program's line" \
        "$("$VT" report --json "$TMP/c10.jsonl" | jq -r '.peak_sites[0].stack[0:2]|join(" | ")')" "c10_raw_alloc (c10.c:$SG) | main (app.c:$CA)"
    check_eq "framework allocator: named as a caching allocator" "$("$VT" report --json "$TMP/c10.jsonl" | jq -r '.processes[0].caching_allocator')" "PyTorch (c10 CUDACachingAllocator)"
else not_ok "framework allocator: could not build the test library: $(head -1 "$TMP/c10/cc.err")"; fi

# ---- a user's file named like CUDA's headers is the user's --------------------------------------
# CUDA's own headers are never a site (cuda_runtime.h's cudaMalloc<T> above); a helper file of the
# program's named cuda_runtime_utils.c is not one of them: its line is the site.
mkdir -p "$TMP/cu"
cat >"$TMP/cu/cuda_runtime_utils.c" <<'C'
#include <cuda_runtime_api.h>
#include <stddef.h>
__attribute__((noinline)) void *alloc_scratch(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n); /* UTIL_SITE */
    return p;
}
C
cat >"$TMP/cu/app.c" <<'C'
#include <stdio.h>
#include <stddef.h>
void *alloc_scratch(size_t n);
int main(void)
{
    printf("%d\n", alloc_scratch(3u << 20) != NULL); /* UTIL_CALLER */
    return 0;
}
C
if cc -g -O0 -I"$CH/include" -o "$TMP/cu/app" "$TMP/cu/app.c" "$TMP/cu/cuda_runtime_utils.c" -L"$CH/lib64" -lcudart 2>"$TMP/cu/cc.err"; then
    rm -f "$TMP/cu.jsonl"
    "$VT" run --sim -o "$TMP/cu.jsonl" -- "$TMP/cu/app" >"$TMP/cu/out" 2>&1
    US=$(grep -n 'UTIL_SITE' "$TMP/cu/cuda_runtime_utils.c" | cut -d: -f1)
    check_eq "a user's cuda_runtime_utils.c: its line is the 3 MiB allocation's site (one caller: not appended)" \
        "$("$VT" report --json "$TMP/cu.jsonl" | jq -r '.largest[0]|"\(.bytes) \(.site)"')" "3145728 alloc_scratch (cuda_runtime_utils.c:$US)"
else not_ok "a user's cuda_runtime_utils.c: could not build the test program: $(head -1 "$TMP/cu/cc.err")"; fi

# ---- inside NVIDIA's libraries: the entry point the program called, and its line ----------------
# Stand-ins named like NCCL and cuBLAS (the real ones need a GPU): libnccl's ncclCommInitRank
# allocates through an inner helper; libcublas's cublasCreate_v2 calls into libcublasLt, which
# allocates. The site is the library's entry point with the program's line, whatever the inner
# functions (the stack keeps them).
mkdir -p "$TMP/nv"
cat >"$TMP/nv/nccl.c" <<'C'
#include <cuda_runtime_api.h>
#include <stddef.h>
__attribute__((noinline)) static void *nccl_buffers(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n); /* NCCL_INNER */
    return p;
}
__attribute__((noinline)) void *ncclCommInitRank(size_t n)
{
    return nccl_buffers(n); /* NCCL_ENTRY */
}
C
cat >"$TMP/nv/lt.c" <<'C'
#include <cuda_runtime_api.h>
#include <stddef.h>
__attribute__((noinline)) void *cublasLtWorkspace(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n);
    return p;
}
C
cat >"$TMP/nv/blas.c" <<'C'
#include <stddef.h>
void *cublasLtWorkspace(size_t n);
__attribute__((noinline)) void *cublasCreate_v2(size_t n)
{
    return cublasLtWorkspace(n); /* BLAS_ENTRY */
}
C
cat >"$TMP/nv/app.c" <<'C'
#include <stdio.h>
#include <stddef.h>
void *ncclCommInitRank(size_t n);
void *cublasCreate_v2(size_t n);
int main(void)
{
    void *comm = ncclCommInitRank(6u << 20); /* APP_NCCL */
    void *blas = cublasCreate_v2(3u << 20); /* APP_BLAS */
    printf("%d\n", comm && blas);
    return 0;
}
C
if cc -shared -fPIC -g -O0 -I"$CH/include" -o "$TMP/nv/libnccl.so.2" "$TMP/nv/nccl.c" -L"$CH/lib64" -lcudart 2>"$TMP/nv/cc.err" &&
   cc -shared -fPIC -g -O0 -I"$CH/include" -o "$TMP/nv/libcublasLt.so.13" "$TMP/nv/lt.c" -L"$CH/lib64" -lcudart 2>>"$TMP/nv/cc.err" &&
   cc -shared -fPIC -g -O0 -o "$TMP/nv/libcublas.so.13" "$TMP/nv/blas.c" "$TMP/nv/libcublasLt.so.13" -Wl,-rpath,"$TMP/nv" 2>>"$TMP/nv/cc.err" &&
   cc -g -O0 -o "$TMP/nv/app" "$TMP/nv/app.c" "$TMP/nv/libnccl.so.2" "$TMP/nv/libcublas.so.13" -Wl,-rpath,"$TMP/nv" 2>>"$TMP/nv/cc.err"; then
    rm -f "$TMP/nv.jsonl"
    "$VT" run --sim -o "$TMP/nv.jsonl" -- "$TMP/nv/app" >"$TMP/nv/out" 2>"$TMP/nv/err"
    check_eq "NVIDIA libraries: the program allocated" "$(cat "$TMP/nv/out")" 1
    nl() { grep -n "$1" "$TMP/nv/$2" | cut -d: -f1; }
    check_eq "NVIDIA libraries: each allocation named by the entry point called and the program's line" \
        "$("$VT" report --json "$TMP/nv.jsonl" | jq -r '.largest[]|"\(.bytes) \(.site)"')" \
"6291456 ncclCommInitRank (nccl.c:$(nl NCCL_ENTRY nccl.c)) <- main (app.c:$(nl APP_NCCL app.c))
3145728 cublasCreate_v2 (blas.c:$(nl BLAS_ENTRY blas.c)) <- main (app.c:$(nl APP_BLAS app.c))"
    check_eq "NVIDIA libraries: the stack keeps the inner frames" \
        "$("$VT" report --json "$TMP/nv.jsonl" | jq -r '.peak_sites[]|select(.bytes==6291456)|.stack[0:2]|join(" | ")')" \
        "nccl_buffers (nccl.c:$(nl NCCL_INNER nccl.c)) | ncclCommInitRank (nccl.c:$(nl NCCL_ENTRY nccl.c))"
else not_ok "NVIDIA libraries: could not build the stand-ins: $(head -1 "$TMP/nv/cc.err")"; fi

# ---- repeated tails folded (issue 36) -------------------------------------------------------------
# Three allocations in grab(), called from build() at three lines; build() runs once, from setup(),
# from main(). Every peak site has setup and main under it: printed once below the sites, not
# under each one (the JSON stacks keep every frame).
mkdir -p "$TMP/tail"
cat >"$TMP/tail/tail.c" <<'C'
#include <cuda_runtime_api.h>
#include <stdio.h>
static void *grab(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n); /* GRAB */
    return p;
}
static void build(void **w)
{
    w[0] = grab(8u << 20); /* W0 */
    w[1] = grab(4u << 20); /* W1 */
    w[2] = grab(2u << 20); /* W2 */
}
static void setup(void **w)
{
    build(w); /* SETUP */
}
int main(void)
{
    void *w[3];
    setup(w); /* MAIN */
    printf("%d\n", w[0] && w[1] && w[2]);
    for (int i = 0; i < 3; i++) cudaFree(w[i]);
    return 0;
}
C
if cc -g -O0 -I"$CH/include" -o "$TMP/tail/tail" "$TMP/tail/tail.c" -L"$CH/lib64" -lcudart 2>"$TMP/tail/cc.err"; then
    rm -f "$TMP/tail.jsonl"
    "$VT" run --sim -o "$TMP/tail.jsonl" -- "$TMP/tail/tail" >"$TMP/tail/out" 2>"$TMP/tail/err"
    check_eq "tails: the program allocated" "$(cat "$TMP/tail/out")" "1"
    tl() { grep -n "$1" "$TMP/tail/tail.c" | cut -d: -f1; }
    GR=$(tl GRAB); W0=$(tl W0); SU=$(tl SETUP); MA=$(tl MAIN)
    check_eq "tails: three sites, then their shared callers once" \
        "$("$VT" report "$TMP/tail.jsonl" | sed -n '/^Peak: /,/^$/p' | sed '1d;/^$/d' | sed 's/  */ /g')" \
" 8.00 MiB 57.1% 1 alloc grab (tail.c:$GR) <- build (tail.c:$W0)
 4.00 MiB 28.6% 1 alloc grab (tail.c:$GR) <- build (tail.c:$((W0 + 1)))
 2.00 MiB 14.3% 1 alloc grab (tail.c:$GR) <- build (tail.c:$((W0 + 2)))
 every site above called from setup (tail.c:$SU)
 main (tail.c:$MA)"
    check_eq "tails: the JSON stack keeps them (C start-up after)" \
        "$("$VT" report --json "$TMP/tail.jsonl" | jq -r '.peak_sites[0].stack[0:4]|join(" | ")')" \
        "grab (tail.c:$GR) | build (tail.c:$W0) | setup (tail.c:$SU) | main (tail.c:$MA)"
    check_eq "tails: one site alone keeps its own 'from' lines (typed_sites: main is not shared)" \
        "$("$VT" report "$TMP/typed_sites.jsonl" | grep -c 'every site above')" 0
else not_ok "tails: could not build the test program: $(head -1 "$TMP/tail/cc.err")"; fi
