#!/bin/sh
# fw_lines.sh - framework programs named by the script's own lines (issue 47, slice 3), on a
# simulated device of 64 MiB: tests/frameworks/numba_lines.py under every CPython 3.10-3.13
# installed here (numba-cuda environments from tools/setup-frameworks.sh), and
# tests/frameworks/torch_lines.py under PyTorch's cached environment (one CPython: its CUDA wheels
# are 5 GB an interpreter; the frame reader itself is tested under every version by py_frames,
# py_life and this numba part), with its caching allocator and with run --torch-tensors.
# Lines from the scripts' "# at:" markers, sizes from their arithmetic and, for the caching
# allocator's segments, from PyTorch's own memory_snapshot(). Each script's docstring says what it does.
. tests/lib.sh
need_sim
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    skip "fw_lines: not under the sanitizer build (the interpreter is not instrumented)"
    exit 0
fi
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" PYTHONWARNINGS=ignore NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0 VRAMTRACE_SIM_MEM=64M
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
at() { grep -n "# at:$1\b" "$2" | cut -d: -f1; }
# SITE FILE MARK [CALLER-MARK MODULE-MARK]: "fn (file:line)" labels joined as the report's stacks are
peak() { jq -r '[.peak_sites[] | "\(.bytes) \(.count) \(.stack | join(" | "))"] | join("; ")' "$1"; }
held() { jq -r '[.oom_events[0].held_by[] | "\(.bytes) \(.count) \(.site)"] | join("; ")' "$1"; }

N="$ROOT/tests/frameworks/numba_lines.py"
nb=$(basename "$N")
cpythons >"$TMP/pythons"
while read -r minor py <&3; do
    E="$PY_CACHE/numba-py3$minor/bin/python"
    if [ ! -x "$E" ]; then
        skip "fw_lines: numba-cuda under 3.$minor: NOT TESTED - no environment at $E (make test-frameworks installs it)"
        continue
    fi
    v="numba 3.$minor"
    T="$TMP/n$minor.jsonl"
    "$VT" run --sim -q -o "$T" -- "$E" "$N" >"$TMP/n$minor.out" 2>"$TMP/n$minor.err" </dev/null
    check_eq "$v: exit 0, the OOM raised, the bug's sync fails" "$?:$(tr '\n' '|' <"$TMP/n$minor.out")" "0:oom CudaAPIError|sync failed CudaAPIError|"
    "$VT" report --json "$T" >"$TMP/n$minor.json" 2>/dev/null
    w="weights ($nb:$(at weights "$N"))"; a="activations ($nb:$(at acts "$N"))"; m="<module> ($nb:$(at main_build "$N"))"
    check_eq "$v: the peak: 3 MiB at the weights' line, 2 MiB in 2 arrays at the activations' line, each from build() and the module" \
        "$(peak "$TMP/n$minor.json")" \
        "3145728 1 $w | build ($nb:$(at build_w "$N")) | $m; 2097152 2 $a | build ($nb:$(at build_acts "$N")) | $m"
    # numba's allocator, on CUDA_ERROR_OUT_OF_MEMORY, frees what it has pending and tries once more
    check_eq "$v: two OOMs of 128 MiB (numba retries once), asked at grow's line from the module's" \
        "$(jq -r '"\(.oom_count) \(.oom_events[0].requested_bytes) \(.oom_events[0].stack | join(" | "))"' "$TMP/n$minor.json")" \
        "2 134217728 grow ($nb:$(at oom "$N")) | <module> ($nb:$(at call_oom "$N"))"
    check_eq "$v: the OOM held by the peak's lines" "$(held "$TMP/n$minor.json")" "3145728 1 $w; 2097152 2 $a"
    check_eq "$v: one error, the host array at launch_bad's launch line, called from the module's line" \
        "$(jq -r '"\(.finding_errors) \(.finding_warnings) \(.findings[0].kind) \(.findings[0].stack | join(" | "))"' "$TMP/n$minor.json")" \
        "1 0 host_pointer launch_bad ($nb:$(at bug "$N")) | <module> ($nb:$(at call_bug "$N"))"
done 3<"$TMP/pythons"

need_framework torch PyTorch
S="$ROOT/tests/frameworks/torch_lines.py"
tb=$(basename "$S")
w="weights ($tb:$(at weights "$S"))"; a="activations ($tb:$(at acts "$S"))"; m="<module> ($tb:$(at main_build "$S"))"
ws="$w | build ($tb:$(at build_w "$S")) | $m"; as="$a | build ($tb:$(at build_acts "$S")) | $m"
for mode in native tensors; do
    opt=; [ $mode = tensors ] && opt=--torch-tensors
    T="$TMP/t$mode.jsonl"
    "$VT" run --sim $opt -q -o "$T" -- "$PY" "$S" >"$TMP/t$mode.out" 2>"$TMP/t$mode.err" </dev/null
    rc=$?
    "$VT" report --json "$T" >"$TMP/t$mode.json" 2>/dev/null
    if [ $mode = native ]; then
        check_eq "torch native: exit 0, the OOM raised, the caching allocator ran" "$rc:$(grep -v '^segment' "$TMP/t$mode.out" | tr '\n' '|')" \
            "0:oom OutOfMemoryError|backend native|"
        # PyTorch's snapshot: the segment holding the 3 MiB block is the weights' line's, the one
        # holding the 1 MiB blocks the activations' (both carved from one segment: 1 allocation)
        sw=$(sed -n 's/^segment \([0-9]*\) 3145728$/\1/p' "$TMP/t$mode.out")
        sa=$(sed -n 's/^segment \([0-9]*\) 1048576 1048576$/\1/p' "$TMP/t$mode.out")
        check "torch native: PyTorch's snapshot shows the two segments ($sw, $sa)" test -n "$sw" -a -n "$sa"
        want="$sw 1 $ws; $sa 1 $as"; wheld="$sw 1 $w; $sa 1 $a"
    else
        check_eq "torch --torch-tensors: exit 0, the OOM raised, cudaMallocAsync ran" "$rc:$(tr '\n' '|' <"$TMP/t$mode.out")" \
            "0:oom OutOfMemoryError|backend cudaMallocAsync|"
        want="3145728 1 $ws; 2097152 2 $as"; wheld="3145728 1 $w; 2097152 2 $a"
    fi
    check_eq "torch $mode: the peak by the script's lines, each from build() and the module" "$(peak "$TMP/t$mode.json")" "$want"
    check_eq "torch $mode: the OOM of 128 MiB asked at grow's line from the module's" \
        "$(jq -r '"\(.oom_count > 0) \(.oom_events[0].requested_bytes) \(.oom_events[0].stack | join(" | "))"' "$TMP/t$mode.json")" \
        "true 134217728 grow ($tb:$(at oom "$S")) | <module> ($tb:$(at call_oom "$S"))"
    check_eq "torch $mode: the OOM held by the peak's lines" "$(held "$TMP/t$mode.json")" "$wheld"
done
