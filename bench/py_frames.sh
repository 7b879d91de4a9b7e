#!/bin/sh
# py_frames.sh - what Python frames add to a recorded stack (docs/performance.md): ns per
# cudaMalloc+cudaFree pair from Python (ctypes) at a few call depths, untraced, traced without
# Python frames and with them; one run each (machines are noisy), ratios against untraced.
# Usage: bench/py_frames.sh [PAIRS]  (needs the simulated device built: make sim)
BUILD=${BUILD:-build}
N=${1:-20000}
PY=${PYTHON:-python3}
S="$(dirname "$0")/py_frames.py"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
printf '%-8s %14s %22s %22s\n' depth untraced "traced, no py frames" "traced, py frames"
for d in 1 8 32; do
    u=$(LD_LIBRARY_PATH="$BUILD/sim" "$PY" "$S" "$N" $d | cut -d' ' -f1)   # the calling thread's wall ns
    n=$(VRAMTRACE_PYTHON_FRAMES=0 "$BUILD/vramtrace" run --sim -q -o "$T/n$d.jsonl" -- "$PY" "$S" "$N" $d | cut -d' ' -f1)
    y=$("$BUILD/vramtrace" run --sim -q -o "$T/y$d.jsonl" -- "$PY" "$S" "$N" $d | cut -d' ' -f1)
    awk -v d="$d" -v u="$u" -v n="$n" -v y="$y" 'BEGIN { printf "%-8s %11.0f ns %11.0f ns %6.2fx %11.0f ns %6.2fx\n", d, u, n, n / u, y, y / u }'
done
