#!/bin/sh
# fw_numba.sh - numba-cuda traced on the simulated device (issue 46 slice 3): the training loop in
# tests/frameworks/numba_train.py, the figures its docstring derives, exactly one finding (the
# deliberate host buffer) and none on numba's own kernels. The environment comes from
# tools/setup-frameworks.sh (`make test-frameworks`); without it the case is skipped, loudly.
. tests/lib.sh
need_sim
need_framework numba numba-cuda
S="$ROOT/tests/frameworks/numba_train.py"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" PYTHONWARNINGS=ignore NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0
# untraced, on the simulated device with the redirect run --sim uses: what the program prints
env LD_LIBRARY_PATH="$SIM" VRAMTRACE_SIM_DIR="$SIM" LD_PRELOAD="$(preload "$SIM/libvtsimredirect.so")" \
    "$PY" "$S" >"$TMP/plain.out" 2>"$TMP/plain.err"
check_eq "untraced: exit 0, 2 parameters fitted over 5 epochs, the bug's sync fails (illegal address)" \
    "$?:$(tr '\n' '|' <"$TMP/plain.out")" "0:fitted 2 epochs 5|sync failed CudaAPIError|"
"$VT" run --sim -q -o "$TMP/t.jsonl" -- "$PY" "$S" >"$TMP/t.out" 2>"$TMP/t.err"
check_eq "traced: the same exit and output" "$?:$(tr '\n' '|' <"$TMP/t.out")" "0:fitted 2 epochs 5|sync failed CudaAPIError|"
T="$TMP/t.jsonl"
check_eq "device allocations: x, y 16384 B, params, grad 8 B" \
    "$(jqs "$T" '[.[]|select(.ev=="alloc" and .mem=="device")|.size]|sort|join(" ")')" "8 8 16384 16384"
check_eq "one managed allocation of 4096 B, one pinned host allocation of 16384 B" \
    "$(jqs "$T" '[.[]|select(.ev=="alloc" and .mem!="device")|"\(.mem) \(.size)"]|sort|join(", ")')" "managed 4096, pinned 16384"
check_eq "h2d: x and y from the pinned buffer, params pageable; d2h: params" \
    "$(jqs "$T" '[.[]|select(.ev=="copy")|"\(.dir) \(.host) \(.size)"]|join(", ")')" \
    "h2d pinned 16384, h2d pinned 16384, h2d pageable 8, d2h pageable 8"
check_eq "16 launches (3 kernels x 5 epochs + the buggy one; lines and folded counts)" "$(nlaunches "$T")" 16
check_eq "exactly one finding: the host buffer, argument 4 (the array's data pointer) of scale, an error" \
    "$(jqs "$T" '. as $all | [.[]|select(.ev=="finding")|. as $f|"\(.kind) \(.severity) \(.arg) \([$all[]|select(.ev=="kernel" and .id==$f.k)|.name|test("scale")]|any)"]|join(";")')" \
    "host_pointer error 4 true"
"$VT" report --json "$T" >"$TMP/t.json" 2>/dev/null
check_eq "5 steps from vramtrace_step() (one per epoch, through ctypes), each starting with x, y, params and grad live (32784 B): flat" \
    "$(jq -c '.processes[0] | [.steps.source, .steps.count, ([.steps.list[].live_start_bytes] | unique), .growth.kind, .growth.rate_bytes_per_step]' "$TMP/t.json")" \
    '["vramtrace_step",5,[32784],"flat",0]'
