#!/bin/sh
# check_words.sh - words that cannot be pointers are never checked as pointers (issue 32, slice 1):
# tests/progs/check_words passes a CUB GridEvenShare-style struct (five ints, alignment 4) at
# offset 20 whose int pairs hold a real heap address. The program's kernel dereferences none of its
# arguments (its branch is never taken), so on a GPU neither launch faults: the simulated device is
# told so by a table of what each kernel dereferences (VRAMTRACE_SIM_DEREF: nothing). Then CUB's
# own DeviceReduce kernels, compiled here (tests/progs/cub_reduce.cu), with and without a host
# input; they read their input (argument 0), so a GPU faults on the host one.
. tests/lib.sh
need_sim
P="$PROGS/check_words"
[ -x "$P" ] || { skip "check_words: not built"; exit 0; }
run() { # run MODE [run options]
    m=$1; shift
    VRAMTRACE_SIM_DEREF="$TMP/deref" "$VT" run --sim -o "$TMP/$m.jsonl" "$@" -- "$P" "$m" >"$TMP/$m.out" 2>"$TMP/$m.err"
    echo $? >"$TMP/$m.rc"
}
echo '*' >"$TMP/deref"
findings() { jqs "$TMP/$1.jsonl" '[.[]|select(.ev=="finding")|"expect \(.kind) \(.severity) reduce \(.arg) \(.offset) \(.value)"]|join(";")'; }

run evenshare
check_eq "the host compiler's layout: the struct at offset 20, alignment 4, 20 bytes" \
    "$(grep '^layout' "$TMP/evenshare.out")" "layout share offset=20 align=4 size=20"
check_eq "an align-4 struct's int pairs holding a heap address: no finding" "$(findings evenshare)" ""
check_eq "... the layout the tracer used puts it there too (kernel record)" \
    "$(jqs "$TMP/evenshare.jsonl" '.[]|select(.ev=="kernel")|.params|map("\(.[0]):\(.[1])")|join(" ")')" "0:8 8:8 16:4 20:20"
run evenshare --check=abort
check_eq "--check=abort: the job is not killed" "$(cat "$TMP/evenshare.rc"),$(grep -c '^done evenshare' "$TMP/evenshare.out")" 0,1

run hostarg
check_eq "the same kernel with a heap pointer as argument 0: exactly that finding" \
    "$(findings hostarg)" "$(grep '^expect' "$TMP/hostarg.out" | tr '\n' ';' | sed 's/;$//')"

# ---- CUB's own reduction kernels, compiled here ---------------------------------------------------
C="$PROGS/cub_reduce"
if [ -x "$C" ]; then
    for m in ok host; do
        "$VT" run --sim -o "$TMP/cub_$m.jsonl" -- "$C" $m >"$TMP/cub_$m.out" 2>"$TMP/cub_$m.err"
    done
    # the simulated device's own rule (top-level 8-byte parameters are used), not the tracer's
    check_eq "CUB on device memory runs clean; on a host input the device faults (sync 700)" \
        "$(grep '^done' "$TMP/cub_ok.out") / $(grep '^done' "$TMP/cub_host.out")" "done ok 0 0 / done host 0 700"
    check_eq "CUB DeviceReduce::Sum: both kernels launched (DeviceReduceKernel with its GridEvenShare at offset 20, then the single tile)" \
        "$(jqs "$TMP/cub_ok.jsonl" '[.[]|select(.ev=="kernel")|(.name|test("DeviceReduceKernel")), (.params|map("\(.[0]):\(.[1])")|join(" "))]|.[0:2]|map(tostring)|join(" ")') $(jqs "$TMP/cub_ok.jsonl" '[.[]|select(.ev=="launch")]|length')" \
        "true $(sed -n 's/^layout //p' "$TMP/cub_ok.out") 2"
    check "... the GridEvenShare at offset 20 (the host compiler's offsetof)" grep -q '^layout 0:8 8:8 16:4 20:' "$TMP/cub_ok.out"
    check_eq "CUB on device memory: no finding" "$(jqs "$TMP/cub_ok.jsonl" '[.[]|select(.ev=="finding")]|length')" 0
    check_eq "CUB handed host memory: one error, argument 0" \
        "$(jqs "$TMP/cub_host.jsonl" '[.[]|select(.ev=="finding")|"expect \(.kind) \(.severity) \(.arg) \(.offset) \(.value)"]|join(";")')" \
        "$(grep '^expect' "$TMP/cub_host.out")"
else
    skip "check_words: cub_reduce not built"
fi
