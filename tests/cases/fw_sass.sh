#!/bin/sh
# fw_sass.sh - notes settled from the kernels' SASS (issue 46 slice 5): where the CUDA toolkit's
# nvdisasm is installed, `vramtrace report` reads each noted kernel's cubin (from the traced
# file's .nv_fatbin, for the device's architecture) and decides its noted words: one the machine
# code uses as an address becomes a finding (an error), the others go. nvdisasm comes from the
# toolkit, else the cache tools/setup-frameworks.sh fills (`make test-frameworks`); without one
# the case is skipped, loudly. Expectations come from the programs' sources:
#   * tests/progs/sass_words.cu, SASS-only and -rdc=true builds: gather dereferences s.data (its
#     word at byte 0 of argument 0) and never reads s.garbage (byte 8). gather(bad) hands a heap
#     address at byte 0: an error; gather(s)'s garbage word (a heap address at byte 8) is none.
#   * the corpus's -rdc=true build (tests/gen/corpus.py): every planted host pointer is used as
#     an address, every other noted word is garbage no kernel reads: exactly the 143 planted
#     pointers are findings, all errors, nothing else.
. tests/lib.sh
need_sim
NVD="$PY_CACHE/nvdisasm/nvidia/cu13/bin/nvdisasm"
[ -x "$NVD" ] || NVD="${CUDA_HOME:-/usr/local/cuda}/bin/nvdisasm"
if [ ! -x "$NVD" ]; then
    skip "SASS settling: NOT TESTED - no nvdisasm (the toolkit has none here; make test-frameworks installs it)"
    exit 0
fi
P="$PROGS/sass_words"
[ -x "${P}_sass" ] && [ -x "${P}_rdc" ] || { skip "fw_sass: sass_words not built"; exit 0; }
printf '%s\n' '_Z4fillPflmi 0' '_Z6gather5SlicePf 0 16' '_Z5scalePffi 0' >"$TMP/deref"
found() { jq -r '[.findings[] | "\(.kind) \(.severity) \(.kernel) \(.arg_index) \(.offset) \(.address)"] | sort | join(";")' "$1"; }

for b in _sass _rdc; do
    VRAMTRACE_SIM_DEREF="$TMP/deref" "$VT" run --sim -q -o "$TMP/$b.jsonl" -- "$P$b" >"$TMP/$b.out" 2>"$TMP/$b.err"
    h=$(sed -n 's/^heap //p' "$TMP/$b.out")
    VRAMTRACE_NVDISASM="$NVD" "$VT" report --json "$TMP/$b.jsonl" >"$TMP/$b.json" 2>"$TMP/$b.rerr"
    check_eq "$b: settled: gather's dereferenced word is an error, its garbage word gone; scale's error stays" \
        "$(found "$TMP/$b.json")" \
        "host_pointer error gather(Slice, float*) 0 0 $h;host_pointer error scale(float*, float, int) 0 0 $h"
    check_eq "$b: 2 errors, 0 warnings, no note; 2 words read in the SASS, 1 used as an address, every kernel settled" \
        "$(jq -c '[.finding_errors, .finding_warnings, (.notes|length), .processes[0].sass.words, .processes[0].sass.findings, .processes[0].sass.unsettled_kernels]' "$TMP/$b.json")" \
        "[2,0,0,2,1,0]"
    check "$b: the settled finding says how it was decided" \
        sh -c 'jq -r ".findings[].msg" "$1" | grep -q "kernel gather.*(the kernel.s machine code uses this word as an address: nvdisasm)"' _ "$TMP/$b.json"
    VRAMTRACE_NVDISASM="$NVD" "$VT" report "$TMP/$b.jsonl" >"$TMP/$b.rep" 2>&1
    check "$b: text: the settled line names the tool and the counts" grep -q \
        "^  settled       2 noted words read in the kernels' SASS ($NVD): 1 used as an address (now a finding), 1 not$" "$TMP/$b.rep"
    # without nvdisasm nothing changes: the note stays, with the hint
    VRAMTRACE_NVDISASM=none "$VT" report "$TMP/$b.jsonl" >"$TMP/$b.none" 2>&1
    check_eq "$b: no nvdisasm: 1 error and the note, with how to settle it" \
        "$(grep -c '^  findings      1 error, 0 warnings$' "$TMP/$b.none") $(grep -c "nvdisasm settles them from the kernels' SASS" "$TMP/$b.none")" "1 1"
done

# settling with memory running out: each allocation the report makes while it reads the _sass
# trace, disassembles and settles is made to fail in turn (tests/shim/failalloc.c, as
# report_faults.sh does for the other paths): the report survives it (0), or says why in one line
# (1); never a signal
SHIM="$ROOT/$BUILD/tests/libfailalloc.so"
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    skip "settling without memory: not under the sanitizer build (its runtime owns malloc)"
elif [ -f "$SHIM" ]; then
    SHIM_PRELOAD=$(preload "$SHIM") n=1 bad=""
    while [ "$n" -lt 2000 ]; do
        VT_FAIL_ALLOC_AT=$n LD_PRELOAD="$SHIM_PRELOAD" VRAMTRACE_NVDISASM="$NVD" "$VT" report --json "$TMP/_sass.jsonl" >/dev/null 2>"$TMP/oom.err"
        rc=$?
        grep -q 'not reached' "$TMP/oom.err" && break
        lines=$(grep -vc '^vt-failalloc: ' "$TMP/oom.err")
        if [ "$rc" -ge 128 ] || { [ "$rc" != 0 ] && { [ "$rc" != 1 ] || [ "$lines" != 1 ]; }; }; then
            bad="allocation $n: status $rc, $(grep -v '^vt-failalloc: ' "$TMP/oom.err" | head -2 | tr '\n' ' ')"; break
        fi
        n=$((n + 1))
    done
    check "settling: each of the report's $((n - 1)) allocations failed in turn: survived, or status 1 with one line${bad:+ ($bad)}" \
        sh -c '[ -z "$1" ] && [ "$2" -gt 50 ]' _ "$bad" "$n"
else not_ok "settling without memory: $SHIM not built"; fi

# the corpus, -rdc=true (no PTX kept): 53 of its 143 planted pointers are inside structs, notes
# until the SASS settles them; its 2208 garbage words too
C="$PROGS/corpus_rdc"
if [ -x "$C" ]; then
    echo '* ' >"$TMP/deref_all"
    VRAMTRACE_SIM_DEREF="$TMP/deref_all" VRAMTRACE_SIM_NO_PARAMINFO=1 "$VT" run --sim -q -o "$TMP/corpus.jsonl" -- "$C" >"$TMP/corpus.out" 2>&1
    VRAMTRACE_NVDISASM="$NVD" "$VT" report --json "$TMP/corpus.jsonl" >"$TMP/corpus.json" 2>/dev/null
    grep '^expect ' "$TMP/corpus.out" | sed 's/ \(top\|struct\)$//; s/^expect //' | sort >"$TMP/corpus.want"
    jq -r '.findings[] | "\(.kind) \(.severity) \(.kernel) \(.arg_index) \(.offset) \(.address)"' "$TMP/corpus.json" | sort >"$TMP/corpus.got"
    check_eq "corpus rdc: $(wc -l <"$TMP/corpus.want" | tr -d ' ') planted pointers: found as errors, missed, other findings" \
        "$(comm -12 "$TMP/corpus.want" "$TMP/corpus.got" | grep -c ' error ') $(comm -23 "$TMP/corpus.want" "$TMP/corpus.got" | wc -l | tr -d ' ') $(comm -13 "$TMP/corpus.want" "$TMP/corpus.got" | wc -l | tr -d ' ')" \
        "$(wc -l <"$TMP/corpus.want" | tr -d ' ') 0 0"
    check_eq "corpus rdc: every noted word settled; those found are the planted struct pointers (the 53 marked struct)" \
        "$(jq -c '[(.notes|length), .processes[0].sass.unsettled_kernels, .processes[0].sass.findings]' "$TMP/corpus.json")" \
        "[0,0,$(grep -c '^expect .* struct$' "$TMP/corpus.out")]"
    # the parallel reader (small chunks force it) hands the kernels' layouts on whole: the same
    # findings, every word settled
    VRAMTRACE_REPORT_CHUNK=4096 VRAMTRACE_NVDISASM="$NVD" "$VT" report --json "$TMP/corpus.jsonl" >"$TMP/corpus_mt.json" 2>/dev/null
    check_eq "corpus rdc: read in parallel chunks, the same findings and settlement" \
        "$(jq -c '[.findings | length, (.notes|length), .processes[0].sass]' "$TMP/corpus_mt.json") $(jq -r '.findings[] | "\(.kind) \(.severity) \(.kernel) \(.arg_index) \(.offset) \(.address)"' "$TMP/corpus_mt.json" | sort | cmp -s - "$TMP/corpus.got" && echo same)" \
        "$(jq -c '[.findings | length, (.notes|length), .processes[0].sass]' "$TMP/corpus.json") same"
else
    skip "fw_sass: corpus not built"
fi
