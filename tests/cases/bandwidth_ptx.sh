#!/bin/sh
# bandwidth_ptx.sh - the PTX embedded in `vramtrace bandwidth` is the committed kernels.ptx and
# ptxas compiles it for sm_80 and sm_90 (skips without ptxas).
. tests/lib.sh
[ -x "$VT" ] || { not_ok "bandwidth_ptx: $VT not built"; exit 1; }
"$VT" bandwidth --dump-ptx -o "$TMP/k.ptx"
check_eq "--dump-ptx exits 0" "$?" 0
check "embedded PTX is tools/bandwidth/kernels.ptx" cmp -s "$TMP/k.ptx" "$ROOT/tools/bandwidth/kernels.ptx"
PTXAS=$(command -v ptxas 2>/dev/null || { [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ] && echo "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"; })
if [ -z "$PTXAS" ]; then
    skip "ptxas not installed: PTX not compiled"
    exit 0
fi
for arch in sm_80 sm_90; do
    if "$PTXAS" -arch=$arch "$TMP/k.ptx" -o "$TMP/k_$arch.cubin" 2>"$TMP/ptxas_$arch.log"; then
        ok "ptxas -arch=$arch compiles the embedded PTX"
    else
        not_ok "ptxas -arch=$arch: $(head -3 "$TMP/ptxas_$arch.log")"
    fi
done
"$PTXAS" -arch=sm_90 -v "$TMP/k.ptx" -o "$TMP/v.cubin" >"$TMP/v.log" 2>&1
check "no register spills" sh -c "! grep -q '[1-9][0-9]* bytes spill' '$TMP/v.log'"
