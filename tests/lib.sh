# tests/lib.sh - helpers for case scripts (sourced). Each check prints one "ok - " / "not ok - " line.
# Provides: $VT (CLI), $SIM (sim lib dir), $PROGS (built test programs), $TMP (scratch dir, removed
# at exit), ok/not_ok/skip/check/check_eq, need_sim (skips the script when the simulated device or
# nvcc programs are not built), jqs (jq -s over a trace, ignoring NUL padding).
BUILD=${BUILD:-build}
ROOT=${ROOT:-$(pwd)}
VT="$ROOT/$BUILD/vramtrace"
SIM="$ROOT/$BUILD/sim"
PROGS="$ROOT/$BUILD/tests/progs"
EXAMPLES="$ROOT/$BUILD/examples"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vt-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
skip()   { echo "skip - $*"; }
check()  { # check DESC CMD...  : passes when CMD succeeds
    d=$1; shift
    if "$@"; then ok "$d"; else not_ok "$d"; fi
}
check_eq() { # check_eq DESC GOT WANT
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi
}
need_sim() {
    if [ ! -f "$SIM/libcudart.so.13" ] || [ ! -d "$PROGS" ]; then
        skip "$(basename "$0"): simulated device or nvcc test programs not built (no CUDA toolkit)"
        exit 0
    fi
}
# Where tools/setup-frameworks.sh keeps the Python environments and tools (make test-frameworks).
PY_CACHE="${VT_PY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vramtrace/py}"
# need_framework ENV WHAT : PY is the cached environment ENV's python; without one the case is
# skipped, loudly, and so under the sanitizer build (the interpreter is not instrumented)
need_framework() {
    PY="$PY_CACHE/$1/bin/python"
    if [ ! -x "$PY" ]; then
        skip "$2: NOT TESTED - no environment at $PY (make test-frameworks installs it)"
        exit 0
    fi
    if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
        skip "$2: not under the sanitizer build (the interpreter is not instrumented)"
        exit 0
    fi
}
# cpythons : one line "MINOR PATH" per CPython 3.10-3.13 installed here (pyenv's, then PATH's), a
# path that runs and is that version (a pyenv shim of a version not selected does not run)
cpythons() {
    for minor in 10 11 12 13; do
        for cand in "$HOME"/.pyenv/versions/3.$minor*/bin/python3.$minor "$(command -v python3.$minor 2>/dev/null)"; do
            if [ -x "$cand" ] && no_san "$cand" -c "import sys; sys.exit(sys.version_info[:2] != (3, $minor))" 2>/dev/null; then
                printf '%s %s\n' "$minor" "$cand"
                break
            fi
        done
    done
}
# nlaunches TRACE [FILTER]: the launches a trace records, each line's and each folded record's count
# (launch lines, and `launches` records of steady ones: core/fold.h); FILTER (jq, default true)
# selects among both
nlaunches() {
    jqs "$1" "[.[] | select((.ev == \"launch\" or .ev == \"launches\") and (${2:-true})) | .count // 1] | add // 0"
}
# jqs TRACE FILTER : slurp a trace (NUL padding stripped) and apply a jq filter
jqs() { tr -d '\000' <"$1" | jq -s -r "$2"; }
# Under `make SAN=1 test` the library, the CLI and the simulated device are ASan-built and get
# loaded into uninstrumented programs: the ASan runtime must come first in every process
# (VRAMTRACE_PRELOAD_FIRST, set by mk/reliability.mk). `preload LIB` gives the LD_PRELOAD value
# for a script that preloads LIB itself. nvcc must not see the runtime (it crashes under it).
# `preload LIB...` joins several with ':'. The loader splits LD_PRELOAD at spaces and colons: a
# library whose path has one (a checkout under "my work/") is named through a link in $TMP.
preload() {
    list=${VRAMTRACE_PRELOAD_FIRST:-}
    for lib in "$@"; do
        case "$lib" in *[' :$']*)
            d="$TMP/preload.$(printf %s "$lib" | cksum | cut -d' ' -f1)"
            mkdir -p "$d" && ln -sf "$lib" "$d/$(basename "$lib")" && lib="$d/$(basename "$lib")" ;;
        esac
        list="${list:+$list:}$lib"
    done
    echo "$list"
}
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    export LD_PRELOAD="$VRAMTRACE_PRELOAD_FIRST${LD_PRELOAD:+:$LD_PRELOAD}"
fi
no_san() { env -u LD_PRELOAD "$@"; }
# schema_ok DESC JSON JQ_FILTER : JSON validates against docs/report-schema.json with python3
# jsonschema when it is installed, else JQ_FILTER (run with the schema as $s) must hold
schema_ok() {
    printf '%s' "$2" >"$TMP/schema-in.json"
    if python3 -c 'import jsonschema' 2>/dev/null; then
        check "$1 (jsonschema)" python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$TMP/schema-in.json" "$ROOT/docs/report-schema.json"
    else
        check "$1 (jq)" jq -e --slurpfile s "$ROOT/docs/report-schema.json" "$3" "$TMP/schema-in.json"
    fi
}
# sections_in_order FILE : a text report's section headings each appear once (an OOM, a device's
# peak: once each) and in the report's order (render_text.c one()), in every process's part of
# a report of several traces. Prints the first heading out of order or repeated and fails.
sections_in_order() {
    awk '
    function rank(l) {
        if (l ~ /^Summary$/) return 1;              if (l ~ /^Growth \(/) return 2
        if (l ~ /^Steps: /) return 3;               if (l ~ /^OOM: /) return 4
        if (l ~ /^Failed calls \(/) return 5;       if (l ~ /^Snapshots \(/) return 6
        if (l ~ /^Peak: /) return 7;                if (l ~ /^Peak on dev /) return 8
        if (l ~ /^Largest allocations:$/) return 9; if (l ~ /^Allocation churn /) return 10
        if (l ~ /^Ranges \(/) return 11;            if (l ~ /^Leaks \(/) return 12
        if (l ~ /^Transfers \(/) return 13;         if (l ~ /^Copy sites \(by bytes\)/) return 14
        if (l ~ /^Copy sites \(by host time/) return 15
        if (l ~ /^Findings \(/) return 16;          if (l ~ /^Notes \(/) return 17
        if (l ~ /^Kernels \(/) return 18
        return 0
    }
    NR == 1 && /^vramtrace report: [0-9]+ traces$/ { multi = 1 }
    /^====================/ { last = 0; inproc = 1; next }
    {
        if (multi && !inproc) next
        r = rank($0)
        if (!r) next
        if (r < last || (r == last && r != 4 && r != 8)) { print "out of order or repeated, line " NR ": " $0; bad = 1; exit }
        last = r
    }
    END { exit bad }' "$1"
}
# record_fields_bad TRACE : the records of TRACE that carry a field their kind of call does not
# have (docs/trace-format.md), one "line: why" each; nothing when every record is right. Copies:
# src_dev only on a peer copy, width/height/dpitch/spitch only on a 2D copy, host only on h2d or
# d2h; graph and captured only as true.
record_fields_bad() {
    tr -d '\000' <"$1" | jq -r -c 'select(type == "object") | . as $r | input_line_number as $n |
        ( if .ev == "copy" and has("src_dev") and ((.api | test("Peer")) | not) then "\($n): src_dev on \(.api)" else empty end ),
        ( if .ev == "copy" and ((has("width") or has("height") or has("dpitch") or has("spitch")) and ((.api | test("2D")) | not))
          then "\($n): 2D fields on \(.api)" else empty end ),
        ( if .ev == "copy" and has("host") and (.dir != "h2d" and .dir != "d2h") then "\($n): host on a \(.dir) copy" else empty end ),
        ( if (has("graph") and .graph != true) or (has("captured") and .captured != true) then "\($n): graph/captured false on \(.ev)" else empty end )'
}
# stderr_unexpected FILE : the lines of a traced run's stderr other than what a clean run says at
# its end ("vramtrace: trace written to ...", "vramtrace: analyse with: ..."); nothing for a clean
# run. A warning no one asked for (a false one included) shows here.
stderr_unexpected() { grep -v -e '^vramtrace: trace written to ' -e '^vramtrace: analyse with: vramtrace report ' "$1"; }

# sync_d2h_trace N1 N2 : a hand-made trace (stdout) of N1 + N2 synchronous 4-byte d2h copies into
# pageable memory, 10 us apart: the first N1 from the stack [0x401234], the next N2 from [0x405678]
sync_d2h_trace() {
    awk -v n1="$1" -v n2="$2" 'BEGIN {
    print "{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.1.0\",\"pid\":801,\"ppid\":1,\"program\":\"/opt/job\",\"argv\":[\"job\"],\"t\":1000000000,\"wall_time\":1764680000,\"hostname\":\"h\",\"rank\":{},\"page_size\":4096,\"backtraces\":true,\"checks\":\"off\"}"
    for (i = 0; i < n1 + n2; i++)
        printf "{\"ev\":\"copy\",\"t\":%d,\"dur\":1000,\"tid\":801,\"api\":\"cudaMemcpy\",\"res\":0,\"dev\":0,\"dst\":\"0x7e0000001000\",\"src\":\"0x7f0000000000\",\"size\":4,\"dir\":\"d2h\",\"host\":\"pageable\",\"async\":false,\"bt\":[\"%s\"]}\n", 2000000000 + i * 10000, i < n1 ? "0x401234" : "0x405678"
}'
}
