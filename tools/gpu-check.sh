#!/bin/sh
# tools/gpu-check.sh - device check on a machine with a real NVIDIA GPU (a few minutes at most).
# Builds everything, measures bandwidth (the kernels must reach >= 85% of the theoretical VRAM
# peak), runs every example under the tracer on the real device and reports each trace, and runs
# examples/pytorch_oom.py under the tracer when PyTorch is importable, checks the read-back
# verdict's counts on the real runtime (tests/progs/item_loop.cu), and measures the tracer's
# cost per call on the real device (reported, not judged). Prints one PASS/FAIL/SKIP
# line per check and a summary; exit status 1 if anything failed. Logs go under $OUT (a temporary
# directory when OUT is unset).
#   usage: sh tools/gpu-check.sh        env: OUT, JOBS (make -j, default: online CPUs),
#                                            VT_BW_MIN_RATIO (default 0.85), VT_CHECK_TIMEOUT (s, 180)
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/vt-gpu-check.XXXXXX")}
mkdir -p "$OUT" || exit 2
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 4)}
MIN_RATIO=${VT_BW_MIN_RATIO:-0.85}
TMO=${VT_CHECK_TIMEOUT:-180}
npass=0; nfail=0; nskip=0
pass() { npass=$((npass + 1)); echo "PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $*"; }
skip() { nskip=$((nskip + 1)); echo "SKIP $*"; }
# step NAME CMD... : runs CMD (timeout TMO) with output in $OUT/NAME.log; PASS when it exits 0
step() {
    name=$1; shift
    if timeout "$TMO" "$@" >"$OUT/$name.log" 2>&1; then pass "$name"; return 0; fi
    rc=$?
    fail "$name (exit $rc; log $OUT/$name.log)"
    tail -5 "$OUT/$name.log" | sed 's/^/    /'
    return 1
}
echo "gpu-check: logs in $OUT"
{ command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv; } \
    >"$OUT/nvidia-smi.log" 2>&1 && sed 's/^/    /' "$OUT/nvidia-smi.log"

# 1. Build.
step build make -j"$JOBS" || { echo "gpu-check: $npass PASS, $nfail FAIL, $nskip SKIP"; exit 1; }
step build-examples make -j"$JOBS" examples
VT=build/vramtrace

# 2. Bandwidth on the real GPU.
if step bandwidth "$VT" bandwidth --json -o "$OUT/bandwidth.json"; then
    jq -r '.results[] | "    \(.name | . + " " * (16 - length)) \(.gbps | tostring | .[0:9]) GB/s" +
           (if .pct_of_theoretical then "  \(.pct_of_theoretical | floor)% of \(.theoretical_gbps | floor) GB/s" else "" end)' \
        "$OUT/bandwidth.json" 2>/dev/null
    jq -r '"    gpu: \(.gpu.name // "none")  pcie: " + (if .pcie then "Gen\(.pcie.gen) x\(.pcie.width) (\(.pcie.source))" else "none" end)' \
        "$OUT/bandwidth.json" 2>/dev/null
    if jq -e '.gpu != null and .gpu.sim == false' "$OUT/bandwidth.json" >/dev/null 2>&1; then
        pass "bandwidth: real GPU found ($(jq -r .gpu.name "$OUT/bandwidth.json"))"
    else
        fail "bandwidth: no real GPU in the document ($(jq -r '.notes | join("; ")' "$OUT/bandwidth.json" 2>/dev/null))"
    fi
    best=$(jq -r '[.results[] | select(.name | startswith("vram_")) | .pct_of_theoretical // 0] | max // 0 | . * 10 | round / 1000' \
        "$OUT/bandwidth.json" 2>/dev/null)
    ratios=$(jq -r '[.results[] | select(.name | startswith("vram_")) | "\(.name)=\((.pct_of_theoretical // 0) / 100 | tostring | .[0:5])"] | join(" ")' \
        "$OUT/bandwidth.json" 2>/dev/null)
    if [ -n "$best" ] && awk -v b="$best" -v m="$MIN_RATIO" 'BEGIN { exit !(b >= m) }'; then
        pass "bandwidth: best kernel reaches $best of theoretical VRAM (>= $MIN_RATIO; $ratios)"
    else
        fail "bandwidth: best kernel reaches ${best:-?} of theoretical VRAM (< $MIN_RATIO; $ratios)"
    fi
fi

# 3. Every example under the tracer on the real device, then report it.
found=0
for ex in build/examples/*; do
    if [ ! -f "$ex" ] || [ ! -x "$ex" ]; then continue; fi
    found=1
    n=$(basename "$ex")
    timeout "$TMO" "$VT" run -o "$OUT/$n.jsonl" -- "$ex" >"$OUT/run-$n.log" 2>&1
    rc=$?
    if [ -s "$OUT/$n.jsonl" ]; then pass "run $n (example exit $rc, trace $(wc -c <"$OUT/$n.jsonl" | tr -d ' ') bytes)"
    else fail "run $n: no trace written (exit $rc; log $OUT/run-$n.log)"; tail -5 "$OUT/run-$n.log" | sed 's/^/    /'; continue; fi
    step "report-$n" "$VT" report "$OUT/$n.jsonl" || continue
    if [ "$n" = host_pointer_bug ]; then
        if grep -Eiq 'host[ _-]?pointer' "$OUT/report-$n.log"; then pass "report host_pointer_bug: the finding is reported"
        else fail "report host_pointer_bug: no host-pointer finding in $OUT/report-$n.log"; fi
    fi
done
[ "$found" = 1 ] || fail "no examples built (build/examples/*)"

# 4. PyTorch under the tracer.
if [ ! -f examples/pytorch_oom.py ]; then
    skip "pytorch: examples/pytorch_oom.py absent"
elif ! python3 -c 'import torch' >/dev/null 2>&1; then
    skip "pytorch: python3 cannot import torch"
else
    timeout "$TMO" "$VT" run -o "$OUT/pytorch_oom.jsonl" -- python3 examples/pytorch_oom.py >"$OUT/run-pytorch_oom.log" 2>&1
    rc=$?
    if [ -s "$OUT/pytorch_oom.jsonl" ]; then
        pass "run pytorch_oom.py (exit $rc)"
        step report-pytorch_oom "$VT" report "$OUT/pytorch_oom.jsonl"
    else
        fail "run pytorch_oom.py: no trace (exit $rc; log $OUT/run-pytorch_oom.log)"
    fi
fi

# 4b. Transfer verdicts on the real runtime: tests/progs/item_loop.cu reads values back as PyTorch's
#     .item() does; the copies the host waits for, per marked line, are what the program does
#     (24, 20, 1, 0: see its header), whatever the GPU; to_device.cu's pageable async copies
#     against this machine's own reference (reported: the ratio is the hardware's).
if step build-item_loop make "build/tests/progs/item_loop" "build/tests/progs/to_device"; then
    timeout "$TMO" "$VT" run -o "$OUT/item_loop.jsonl" -- build/tests/progs/item_loop >"$OUT/run-item_loop.log" 2>&1
    got=$("$VT" report --json "$OUT/item_loop.jsonl" 2>/dev/null | jq -r '[.processes[0].copy_sites[]|.d2h_waited_count]|sort|map(tostring)|join(",")')
    if [ "$got" = "0,1,20,24" ]; then pass "item_loop: copies the host waited for per line 0,1,20,24"
    else fail "item_loop: copies the host waited for per line '$got', want 0,1,20,24 (log $OUT/run-item_loop.log)"; fi
    timeout "$TMO" "$VT" run -o "$OUT/to_device.jsonl" -- build/tests/progs/to_device >"$OUT/run-to_device.log" 2>&1
    if [ -s "$OUT/bandwidth.json" ]; then
        "$VT" report --bandwidth "$OUT/bandwidth.json" "$OUT/to_device.jsonl" >"$OUT/report-to_device.log" 2>&1
        grep -A1 'verdict' "$OUT/report-to_device.log" | sed 's/^/    /'
        pass "to_device: reported against this machine's reference"
    else skip "to_device: no bandwidth.json"; fi
fi

# 5. The tracer's cost per call on real hardware (docs/performance.md, issue 6): the bench's call
#    loop untraced, traced without backtraces or checks, and with checks, interleaved three times,
#    the minimum of each. Reported for the docs, never judged: timings are no pass/fail test.
if step bench-build make -j"$JOBS" "build/bench/bench_calls"; then
    B=build/bench/bench_calls
    BT=${TMPDIR:-/tmp}/vt-gpu-bench.$$ # the traces are large and not kept
    : >"$OUT/bench.txt"
    for r in 1 2 3; do
        for cfg in untraced nobt checks; do
            case $cfg in
            untraced) timeout "$TMO" "$B" launch8,malloc 1 200000 ;;
            nobt) VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=off timeout "$TMO" "$VT" run -q -o "$BT.jsonl" -- "$B" launch8,malloc 1 200000 ;;
            checks) VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=record timeout "$TMO" "$VT" run -q -o "$BT.jsonl" -- "$B" launch8,malloc 1 200000 ;;
            esac 2>>"$OUT/bench.log" | awk -v c=$cfg '/^RESULT/ { print c, $2, $5 }' >>"$OUT/bench.txt"
            rm -f "$BT".jsonl*
        done
    done
    awk '{ k = $2 " " $1; if (!(k in m) || $3 < m[k]) m[k] = $3 }
         END { for (k in m) { split(k, a, " "); if (a[2] != "untraced" && ((a[1] " untraced") in m))
                   printf "    %-8s %-9s %8.1f ns/call  (untraced %.1f, added %+.1f)\n", a[1], a[2], m[k], m[a[1] " untraced"], m[k] - m[a[1] " untraced"] } }' \
        "$OUT/bench.txt" | sort
    if [ "$(wc -l <"$OUT/bench.txt")" -eq 18 ]; then pass "bench: per-call cost measured (launch8, malloc; min of 3)"
    else fail "bench: expected 18 results, got $(wc -l <"$OUT/bench.txt") (log $OUT/bench.log)"; fi
fi

echo "gpu-check: $npass PASS, $nfail FAIL, $nskip SKIP (logs in $OUT)"
[ "$nfail" -eq 0 ]
