#!/bin/sh
# check_words.sh - words that cannot be pointers are never checked as pointers (issue 32, slice 1):
# tests/progs/check_words passes a CUB GridEvenShare-style struct (five ints, alignment 4) at
# offset 20 whose int pairs hold a real heap address. The program's kernel dereferences none of its
# arguments (its branch is never taken), so on a GPU neither launch faults: the simulated device is
# told so (VRAMTRACE_SIM_NO_FAULT=1) rather than deciding with the tracer's own word rule.
. tests/lib.sh
need_sim
P="$PROGS/check_words"
[ -x "$P" ] || { skip "check_words: not built"; exit 0; }
run() { # run MODE [run options]
    m=$1; shift
    VRAMTRACE_SIM_NO_FAULT=1 "$VT" run --sim -o "$TMP/$m.jsonl" "$@" -- "$P" "$m" >"$TMP/$m.out" 2>"$TMP/$m.err"
    echo $? >"$TMP/$m.rc"
}
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
