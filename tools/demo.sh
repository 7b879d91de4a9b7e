#!/bin/sh
# tools/demo.sh - `make demo`: the three example programs under the tracer, each followed by its
# report, then the reference bandwidths. Uses the real GPU when one is usable, else the simulated
# device (build/sim; a 4 GiB one for the OOM example, like BERT on a 4 GB card).
# Outputs: out/demo/*.jsonl (traces), out/demo/*.html (reports), out/demo/bandwidth.json.
BUILD=${BUILD:-build}
VT="$BUILD/vramtrace"
OUT=${DEMO_OUT:-out/demo}
mkdir -p "$OUT" || exit 1
rm -f "$OUT"/*.jsonl "$OUT"/*.jsonl.* 2>/dev/null
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    mode="real GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"; SIM=""
else
    mode="simulated device (no GPU here; see tests/sim/README.md)"; SIM="--sim"
    export VRAMTRACE_SIM_MEM=4G
fi
banner() { printf '\n==== %s ====\n' "$*"; }
if [ ! -x "$BUILD/examples/oom" ]; then
    banner "no CUDA toolkit (nvcc) here: the example programs cannot be built"
    echo "Install the CUDA toolkit and rerun 'make demo' for the traced examples; meanwhile the"
    echo "reference bandwidths of this machine:"
    "$VT" bandwidth --size 256M --trials 3
    exit $?
fi
banner "vramtrace demo on the $mode"
status=0
demo() { # name args...
    name=$1; shift
    banner "$name $*: what the program printed"
    "$VT" run $SIM -o "$OUT/$name.jsonl" -- "$BUILD/examples/$name" "$@"
    banner "vramtrace report $OUT/$name.jsonl"
    "$VT" report --top 5 --html "$OUT/$name.html" "$OUT/$name.jsonl" || status=1
}
demo host_pointer_bug
mv "$OUT/host_pointer_bug.jsonl" "$OUT/host_pointer_bug-buggy.jsonl"; mv "$OUT/host_pointer_bug.html" "$OUT/host_pointer_bug-buggy.html"
demo host_pointer_bug fixed
demo oom
banner "vramtrace bandwidth (reference figures for this machine)"
# on the simulated device the GPU rows come out marked "simulated" (its copies are memcpy)
bw() { if [ -n "$SIM" ]; then LD_LIBRARY_PATH="$BUILD/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$VT" bandwidth "$@"; else "$VT" bandwidth "$@"; fi; }
# measured once (two runs would print two different sets of figures): the JSON for the report
bw --size 256M --trials 3 --json -o "$OUT/bandwidth.json" >/dev/null || status=1
echo "measured once into $OUT/bandwidth.json; the transfers below are compared with it"
demo transfers
banner "transfers against the reference bandwidths"
"$VT" report --bandwidth "$OUT/bandwidth.json" --top 3 "$OUT/transfers.jsonl" | sed -n '/^Transfers/,$p'
banner "done: traces and HTML reports in $OUT/"
ls "$OUT"
exit $status
