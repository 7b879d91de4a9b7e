#!/bin/sh
# steady_sites.sh - the steady state of a copy loop (issue 48 slice 3): a stack seen again comes
# from the unwinder's per-thread memo (platform/unwind.c), a pageable page seen again asks the
# driver nothing (core/check.c). tests/progs/steady_sites.cu calls one copy helper from three
# callers at one stack depth (only the callers' return addresses differ), in two loops, then
# copies one buffer pageable, registered, unregistered. Each stack's count is checked against
# lines addr2line gives for its frames (the toolchain's answer, not the tracer's) and against
# glibc's backtrace(), which keeps no memo.
. tests/lib.sh
need_sim
SRC="$ROOT/tests/progs/steady_sites.cu"
P="$PROGS/steady_sites"
line() { grep -n "// $1\$" "$SRC" | cut -d: -f1; }

# "COUNT HOSTKIND LINE|LINE|..." per distinct stack, the program's own frames only (addr2line on
# each return address - 1, relative to the program's load base from its module record)
stacks() {
    base=$(jq -r --arg p "$P" 'select(.ev=="module" and .path==$p)|.base' "$1" | head -1)
    jq -r 'select(.ev=="copy" or .ev=="copies")|"\(.count // 1) \(.host) \(.bt|join(" "))"' "$1" |
    while read -r n host frames; do
        lines=
        for f in $frames; do
            off=$(printf '0x%x' $((f - base - 1)))
            l=$(addr2line -e "$P" "$off" 2>/dev/null | sed -n 's|.*steady_sites.cu:\([0-9]*\).*|\1|p')
            [ -n "$l" ] && lines="$lines${lines:+|}$l"
        done
        echo "$host $lines $n"
    done | awk '{ c[$1 " " $2] += $3 } END { for (k in c) print c[k], k }' | sort -k3
}
S=$(line SITE_PUT)
want=$(printf '%s\n' \
    "300 pageable $S|$(line CALLER_A)|$(line LOOP1_A)" \
    "200 pageable $S|$(line CALLER_A)|$(line LOOP2_A)" \
    "300 pageable $S|$(line CALLER_B)|$(line LOOP1_B)" \
    "67 pageable $S|$(line CALLER_B)|$(line LOOP2_B)" \
    "300 pageable $S|$(line CALLER_C)|$(line LOOP1_C)" \
    "10 pageable $(line REG_BEFORE)" "10 pinned $(line REG_DURING)" "10 pageable $(line REG_AFTER)" | sort -k3)
for mode in memo glibc nofold; do
    case $mode in
    memo) envs= ;;
    glibc) envs=VRAMTRACE_UNWIND=glibc ;;
    nofold) envs=VRAMTRACE_FOLD=0 ;;
    esac
    rm -f "$TMP/$mode.jsonl" "$TMP/$mode.q"
    env $envs VRAMTRACE_SIM_QUERIES="$TMP/$mode.q" "$VT" run --sim -q -o "$TMP/$mode.jsonl" -- "$P" >"$TMP/$mode.out" 2>&1
    check_eq "$mode: the program ran" "$(cat "$TMP/$mode.out")" "rc=0 calls=2334"
    check_eq "$mode: every stack with its count and host memory, by the lines of its frames" "$(stacks "$TMP/$mode.jsonl")" "$want"
done
# The driver is asked about a pageable page once while nothing new is allocated: host[0..2]'s
# three pages, then reg's page before it is registered, and again after it is unregistered (the
# registration inserted a range: every remembered page is asked again). An answer is kept one
# second, so a slow run may ask a page once more per second: 5, and at most 8.
q=$(sed -n 's/^pointer_queries //p' "$TMP/memo.q")
check "memo: the driver was asked about pointers 5 to 8 times for 1186 pageable copies (got $q)" test "$q" -ge 5 -a "$q" -le 8
