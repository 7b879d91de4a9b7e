#!/bin/sh
# check_verdicts.sh - the right kind, severity and allocation for every pointer (issue 33):
# tests/progs/verdicts runs one scenario per mode and prints the exact findings it must produce
# (derived from what it does); the trace must hold exactly those, no other. The program's kernel
# never dereferences its argument (its branch is never taken), so the simulated device is told so
# (VRAMTRACE_SIM_DEREF) and never faults: the verdicts are the tracer's alone.
. tests/lib.sh
need_sim
P="$PROGS/verdicts"
[ -x "$P" ] || { skip "check_verdicts: not built"; exit 0; }
echo '*' >"$TMP/deref"
run() { # run NAME MODE [VAR=VALUE...]
    n=$1 m=$2; shift 2
    env VRAMTRACE_SIM_DEREF="$TMP/deref" "$@" "$VT" run --sim -o "$TMP/$n.jsonl" -- "$P" "$m" >"$TMP/$n.out" 2>"$TMP/$n.err"
    echo $? >"$TMP/$n.rc"
}
found() {
    jqs "$TMP/$1.jsonl" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k
        | .[] | select(.ev=="finding" and .msg)
        | "expect \(.kind) \(.severity) \(if .k then $k[.k|tostring] else "-" end) \(.arg // "-") \(.offset // "-") \(.value) \(.alloc.addr // "-") \(.alloc.size // "-") \(.alloc.mem // "-")"'
}
want() { grep "^${2:-expect} " "$TMP/$1.out" | sed 's/^forget /expect /'; }
verdict() { # verdict NAME DESC [LINE-PREFIX]
    check_eq "$1: $2" "$(found "$1" | tr '\n' ';')" "$(want "$1" "$3" | tr '\n' ';')"
    check "$1: the program ran to the end" grep -q "^done " "$TMP/$1.out"
}

# ---- freed memory -------------------------------------------------------------------------------
run many freed_many
verdict many "a block freed before 1000 later frees in its region is still a use after free (error, naming it)"
run forget freed_many VRAMTRACE_FREED_HISTORY=64
verdict forget "with a 64-range history the free is forgotten: an out-of-bounds warning naming the live neighbour" forget
check "forget: ... and the finding says the history had to forget" \
    grep -q "freed-memory history had to forget older frees here, so it may be a use after free" "$TMP/forget.err"
run pinned freed_pinned
verdict pinned "a pinned buffer released with cudaFreeHost, then launched: use after free of pinned memory"
check "pinned: the message names the freed pinned allocation" grep -q "freed pinned host pointer passed to kernel touch" "$TMP/pinned.err"
run managed freed_managed
verdict managed "a managed buffer freed, then launched: use after free of managed memory, not a host mapping"
run past past_freed
verdict past "the end of a freed block is the next block's start, and one past the last block is inside nothing"

# ---- classification -----------------------------------------------------------------------------
classes() { jqs "$TMP/$1.jsonl" '[.[]|select(.ev=="finding")|"class \(.class)"]|join(";")'; }
run beside host_beside
verdict beside "a host page right after a device block is host memory (error), not an out-of-bounds device pointer"
check_eq "beside: classed as anonymous mmap memory" "$(classes beside)" "$(grep '^class ' "$TMP/beside.out")"
run big host_big
verdict big "a 4 MiB malloc passed to a kernel: host pointer error"
# (under make SAN=1 the program's malloc is AddressSanitizer's, whose chunks are plain mappings)
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then want_big="class anon"; else want_big=$(grep '^class ' "$TMP/big.out"); fi
check_eq "big: classed as heap memory (glibc's mmapped chunk), not anonymous memory" "$(classes big)" "$want_big"
run merged host_big_merged
verdict merged "a pointer 1 MiB into a 4 MiB malloc whose mapping merged with its neighbour: host pointer error"
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    skip "merged: AddressSanitizer's malloc has no glibc chunk header to find"
else
    check_eq "merged: the program glued an anonymous mapping below the chunk (one maps line)" "$(grep '^merged ' "$TMP/merged.out")" "merged 1"
    check_eq "merged: still heap memory (found by the chunk's header, not the mapping's start)" "$(classes merged)" "$(grep '^class ' "$TMP/merged.out")"
fi

# ---- another device's memory --------------------------------------------------------------------
run other other_device VRAMTRACE_SIM_DEVICES=2
verdict other "device 1's memory in a device-0 kernel without peer access: an error (not on device 1, not after enabling peer access)"
check_eq "other: peer access was possible, enabled, then disabled" "$(grep '^can_access_peer\|^disable' "$TMP/other.out" | tr '\n' ';')" \
    "can_access_peer 1 enable 0;disable 0;"
check_eq "other: the finding is on device 0 and names device 1" \
    "$(jqs "$TMP/other.jsonl" '.[]|select(.ev=="finding" and .msg)|"\(.dev) \(.msg|test("device 1 memory passed to kernel touch, argument 0 on device 0"))"')" "0 true"
check_eq "other: once before peer access, once after it was disabled (cudaDeviceDisablePeerAccess: cuCtxDisablePeerAccess)" \
    "$("$VT" report --json "$TMP/other.jsonl" 2>/dev/null | jq -r '[.findings[]|"count \(.kind) \(.count)"]|join(";")')" "$(want other count)"

# ---- severity -----------------------------------------------------------------------------------
run past_end past_end
verdict past_end "one past the end: nothing; 256 bytes past: a warning; 400 KiB past: an error, each naming the block"

# ---- frees --------------------------------------------------------------------------------------
run fhd free_host_dev
verdict fhd "cudaFreeHost of device memory: a mismatched free naming the device allocation"
check_eq "fhd: CUDA's answers: cudaErrorInvalidValue (1), then cudaFree succeeds" "$(grep '^frees' "$TMP/fhd.out")" "frees 1 0"
check "fhd: the message names both APIs" grep -q "cudaFreeHost(0x[0-9a-f]*): device memory (4096 bytes) is freed with cudaFree, not cudaFreeHost" "$TMP/fhd.err"
run fdp free_dev_pin
verdict fdp "cudaFree of pinned memory: a mismatched free naming the pinned allocation"
check_eq "fdp: CUDA's answers: cudaErrorInvalidValue (1), then cudaFreeHost succeeds" "$(grep '^frees' "$TMP/fdp.out")" "frees 1 0"
check "fdp: the message names both APIs" grep -q "cudaFree(0x[0-9a-f]*): pinned memory (4096 bytes) is freed with cudaFreeHost, not cudaFree" "$TMP/fdp.err"
run foff free_offset
verdict foff "cudaFree(d + 16): an invalid free naming the allocation it points into"
check "foff: the message says where" grep -q "cudaFree(0x[0-9a-f]*): not the start of an allocation: 16 bytes into an allocation of 4096 bytes at 0x" "$TMP/foff.err"
check_eq "foff: CUDA's answers: an error, then cudaFree(d) succeeds" "$(grep '^frees' "$TMP/foff.out")" "frees 1 0"

# ---- device reset -------------------------------------------------------------------------------
run reset reset
verdict reset "a block freed by cudaDeviceReset and launched: a use after free (a new block after the reset: nothing)"
check_eq "reset: the reset is recorded as the block's free (nothing leaked at exit)" \
    "$(jqs "$TMP/reset.jsonl" '[.[]|select(.ev=="free" and .api=="cudaDeviceReset")|.size]|map(tostring)|join(",")') $(grep -c 'not freed' "$TMP/reset.err")" "4096 0"
for v in trace_drv trace_drv_dl; do # the driver API's reset, linked and through cuGetProcAddress
    env VRAMTRACE_SIM_DEREF="$TMP/deref" "$VT" run --sim -o "$TMP/$v.jsonl" -- "$PROGS/$v" reset >"$TMP/$v.out" 2>"$TMP/$v.err"
    verdict $v "cuDevicePrimaryCtxReset frees the block: launched after it, a use after free (a new block: nothing)"
    check_eq "$v: the reset succeeded and is the block's free" \
        "$(grep '^rc reset' "$TMP/$v.out") $(jqs "$TMP/$v.jsonl" '[.[]|select(.ev=="free" and .api=="cuDevicePrimaryCtxReset")|.size]|map(tostring)|join(",")')" \
        "rc reset 0 4096"
done

# ---- HMM/ATS: repeats of one finding ------------------------------------------------------------
# The first occurrence is the whole finding; later ones a short line at counts 2, 4, 8, ... and
# one at exit with the final count: 20000 launches give 1 + 14 (2..16384) + 1 = 16 lines, 3 give
# 1 + 1 (2) + 1 = 3.
run hmm hmm_repeat VRAMTRACE_SIM_PAGEABLE=1
check_eq "hmm: the device reports pageable memory access" "$(grep '^pageable_access' "$TMP/hmm.out")" "pageable_access 1"
verdict hmm "20000 launches with one heap pointer, 3 with a stack pointer: two warnings, each written in full once"
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then heap=anon; else heap=heap; fi
lines() { jqs "$TMP/$1.jsonl" '[.[]|select(.ev=="finding")] | group_by(.id) | sort_by(map(.t)|min) | map("\(.[0].class // "-") \(length) \(map(.count)|max)") | join(";")'; }
check_eq "hmm: one id per finding, its lines and the highest count (class lines count)" "$(lines hmm)" "$heap 16 20000;stack 3 3"
check_eq "hmm: every repeat line says when the first occurrence was" \
    "$(jqs "$TMP/hmm.jsonl" '[.[]|select(.ev=="finding")] | group_by(.id) | map((.[0].t) as $t | [.[1:][]|select(.first != $t)]|length)|add')" "0"
"$VT" report --json "$TMP/hmm.jsonl" >"$TMP/hmm.json" 2>"$TMP/hmm.rerr"
check_eq "hmm: the report merges the repeats: 20003 findings, 20000 x heap and 3 x stack" \
    "$(jq -r '"\(.finding_count) " + ([.findings[]|"\(.kind) \(.severity) \(.count)"]|join(";"))' "$TMP/hmm.json")" \
    "20003 host_pointer warning 20000;host_pointer warning 3"
check_eq "hmm: the merged finding spans the first to the last launch" \
    "$(jq -r '.findings[0] | .last_time_ns > .time_ns' "$TMP/hmm.json")" "true"
"$VT" report "$TMP/hmm.jsonl" >"$TMP/hmm.txt" 2>&1
check "hmm: the text report says how often" grep -q "^          20000 times, first at .*, last at " "$TMP/hmm.txt"
check "hmm: ... and counts the distinct findings" grep -q "^Findings (0 errors, 20003 warnings; 2 distinct):" "$TMP/hmm.txt"
check_eq "hmm: the exit summary counts every occurrence" \
    "$(grep -o 'findings: .* host pointer)' "$TMP/hmm.err")" "findings: 0 errors, 20003 warnings (20003 host pointer)"
check_eq "hmm: stderr names each finding once" "$(grep -c 'warning: host pointer' "$TMP/hmm.err")" "2"

# Without the exit (no destructor runs) the last line written is the last power of two.
env VRAMTRACE_SIM_DEREF="$TMP/deref" VRAMTRACE_SIM_PAGEABLE=1 "$VT" run --sim -o "$TMP/hmmx.jsonl" -- "$P" hmm_repeat exit \
    >"$TMP/hmmx.out" 2>"$TMP/hmmx.err"
check_eq "hmm _exit: the counts reached before it (16384 and 2 lines' worth)" "$(lines hmmx)" "$heap 15 16384;stack 2 2"
"$VT" report "$TMP/hmmx.jsonl" >"$TMP/hmmx.txt" 2>&1
check "hmm _exit: the report says the count is a lower bound" grep -q "^          at least 16384 times, first at" "$TMP/hmmx.txt"
