#!/bin/sh
# check_sass_words.sh - no finding that cannot be verified (issue 46, slice 4). tests/progs/sass_words.cu
# (what it does is written there) built with PTX, SASS only and -rdc=true. What must come out,
# from the program's source:
#   * fill's int64_t seed and uint64_t tag hold a heap address: the mangled name types them as
#     integers (`_Z4fillPflmi`: float *, long, unsigned long, int), so no build finds anything there.
#   * gather's Slice argument: with PTX the kernel is seen to dereference s.data only: the heap
#     pointer in `bad` is an error, the garbage word in `s` nothing. Without PTX neither can be told
#     from padding: both words are notes, folded into one note for the kernel, never findings.
#   * scale's float * argument holding the heap address: an error on every build.
# Ground truth for the simulated device (VRAMTRACE_SIM_DEREF, from the kernels' source): fill
# dereferences out (byte 0), gather s.data (byte 0) and out (byte 16), scale x (byte 0); so the
# first sync is 700 (gather(bad) faults) as on a GPU.
. tests/lib.sh
need_sim
P="$PROGS/sass_words"
[ -x "$P" ] && [ -x "${P}_sass" ] && [ -x "${P}_rdc" ] || { skip "check_sass_words: not built"; exit 0; }
printf '%s\n' '_Z4fillPflmi 0' '_Z6gather5SlicePf 0 16' '_Z5scalePffi 0' >"$TMP/deref"
run() { # run NAME BUILD [run options] [-- program arguments]
    n=$1 b=$2; shift 2
    VRAMTRACE_SIM_DEREF="$TMP/deref" "$VT" run --sim -o "$TMP/$n.jsonl" "$@" -- "$P$b" ${ARGS:-} >"$TMP/$n.out" 2>"$TMP/$n.err"
    echo $? >"$TMP/$n.rc"
}
# "KIND SEVERITY KERNEL ARG OFFSET VALUE" of each finding and note, in kernel-name order
found() {
    jqs "$TMP/$1.jsonl" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k
        | [.[] | select(.ev=="finding") | "\(.kind) \(.severity) \($k[.k|tostring]) \(.arg) \(.offset) \(.value)"] | sort | join(";")'
}

for b in "" _sass _rdc; do
    n=b${b:-_ptx}
    run $n "$b"
    h=$(sed -n 's/^heap //p' "$TMP/$n.out")
    check_eq "$n: the program ran: host compiler's Slice layout, gather(bad) and scale faulted" \
        "$(sed -n 's/^slice //p;s/^sync //p' "$TMP/$n.out" | tr '\n' ';')" "0 8;700 700;"
    case $b in
    "") want="host_pointer error _Z5scalePffi 0 0 $h;host_pointer error _Z6gather5SlicePf 0 0 $h"
        sum="findings: 2 errors, 0 warnings (2 host pointer)" ;;
    *)  want="host_pointer error _Z5scalePffi 0 0 $h;host_pointer note _Z6gather5SlicePf 0 0 $h;host_pointer note _Z6gather5SlicePf 0 8 $h"
        sum="findings: 1 error, 0 warnings (1 host pointer)" ;;
    esac
    if [ -z "$b" ]; then what="the dereferenced one an error"; else what="both notes"; fi
    check_eq "$n: fill's integers are no finding; gather's struct words: $what; scale an error" \
        "$(found $n)" "$want"
    check_eq "$n: the exit summary counts findings by severity, notes not at all" \
        "$(grep -o 'findings: [^)]*)' "$TMP/$n.err")" "$sum"
    check_eq "$n: stderr says nothing of the notes" "$(grep -c 'gather' "$TMP/$n.err")" "$([ -z "$b" ] && echo 1 || echo 0)"
    check_eq "$n: the footer counts no note" "$(jqs "$TMP/$n.jsonl" '.[]|select(.ev=="footer")|.findings')" "$([ -z "$b" ] && echo 2 || echo 1)"
    "$VT" report "$TMP/$n.jsonl" >"$TMP/$n.rep" 2>&1
    "$VT" report --json "$TMP/$n.jsonl" >"$TMP/$n.json" 2>&1
    if [ -z "$b" ]; then
        check_eq "$n: report: 2 errors, no notes" "$(grep -c '^  findings      2 errors, 0 warnings$' "$TMP/$n.rep") $(grep -c '^Notes' "$TMP/$n.rep")" "1 0"
        check_eq "$n: JSON: counts by severity, no notes" \
            "$(jq -c '[.finding_count, .finding_errors, .finding_warnings, (.notes|length), .processes[0].note_count]' "$TMP/$n.json")" "[2,2,0,0,0]"
        continue
    fi
    check_eq "$n: report summary: 1 error, 0 warnings, and the note outside the findings" \
        "$(grep -c '^  findings      1 error, 0 warnings$' "$TMP/$n.rep") $(grep -c '^  notes         1 kernel with argument words nothing could check (no PTX): not findings, see Notes$' "$TMP/$n.rep")" "1 1"
    check_eq "$n: report: one note for gather, its two words, at the first launch (sass_words.cu:48)" \
        "$(sed -n '/^Notes (not findings):$/,/^$/p' "$TMP/$n.rep" | sed 1d)" \
        "  note    kernel gather(Slice, float*)
          first at main (sass_words.cu:48)
          2 argument words inside by-value structs looked like host addresses; the image has no PTX, so they were not checked"
    check_eq "$n: JSON: 1 finding (an error), one note of 2 host words" \
        "$(jq -c '[.finding_count, .finding_errors, .finding_warnings, .processes[0].note_count, (.notes|map([.kernel,.words,.host_words,.site]))]' "$TMP/$n.json")" \
        '[1,1,0,1,[["gather(Slice, float*)",2,2,"main (sass_words.cu:48)"]]]'
    "$VT" report --html "$TMP/$n.html" "$TMP/$n.jsonl" 2>/dev/null
    check "$n: HTML: findings by severity and the note" sh -c \
        'grep -q "<h2>Findings (1 error, 0 warnings)</h2>" "$1" && grep -q "<h2>Notes (not findings)</h2>" "$1" && grep -q "2 argument words inside by-value structs" "$1"' _ "$TMP/$n.html"
done

# A note never stops the program: --check=abort runs the SASS build without step 4 to its end
ARGS=noscale run abort _sass --check=abort
check_eq "--check=abort: notes do not stop the job (exit 0, first sync 700 from gather(bad))" \
    "$(cat "$TMP/abort.rc") $(sed -n 's/^sync //p' "$TMP/abort.out")" "0 700 700"
check_eq "... and the trace holds the two notes" "$(found abort | tr ';' '\n' | grep -c ' note ')" 2

# Without backtraces (VRAMTRACE_BACKTRACE=0) a note has no call site: the note says nothing of
# one, as the error beside it has no "at" line (it printed "first at (unknown)" when a missing
# site was taken for one)
(export VRAMTRACE_BACKTRACE=0; run nobt _sass)
"$VT" report "$TMP/nobt.jsonl" >"$TMP/nobt.rep" 2>&1
check_eq "no backtraces: the note for gather, its two words, no site line" \
    "$(sed -n '/^Notes (not findings):$/,/^$/p' "$TMP/nobt.rep" | sed 1d)" \
    "  note    kernel gather(Slice, float*)
          2 argument words inside by-value structs looked like host addresses; the image has no PTX, so they were not checked"
