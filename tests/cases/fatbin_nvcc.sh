#!/bin/sh
# fatbin_nvcc.sh - compiles kernels with the installed nvcc under every --compress-mode and checks
# the layouts vt_fatbin_parse finds (via $BUILD/tests/fatbin_dump). Skips without nvcc.
. tests/lib.sh
DUMP="$ROOT/$BUILD/tests/fatbin_dump"
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null)}
[ -n "$NVCC" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ] || ! [ -x "$NVCC" ]; then skip "fatbin_nvcc: nvcc not found"; exit 0; fi
if [ ! -x "$DUMP" ]; then skip "fatbin_nvcc: $DUMP not built"; exit 0; fi

cat >"$TMP/k.cu" <<'CU'
struct S { float *p; int n; };
struct T { double d; char c; };
__global__ void k(float *p, int n, S s) { if (n) p[0] = s.n; }
__global__ void m(char c, T t, short h, const double *d) { if (c) *(double *)d = t.d + h; }
extern "C" __global__ void z() {}
CU
cat >"$TMP/want" <<'TXT'
_Z1kPfi1S 3 0:8 8:4 16:16
_Z1mc1TsPKd 4 0:1 8:16 24:2 32:8
z 0
TXT
layouts() { "$DUMP" "$@" | awk '{ $2 = ""; sub("  ", " "); print }'; }
sources() { "$DUMP" "$@" | awk '{ print $2 }' | sort -u | tr '\n' ' '; }

for mode in default none size speed balance; do
    if ! no_san "$NVCC" --fatbin -arch=sm_90 --compress-mode=$mode -o "$TMP/$mode.fatbin" "$TMP/k.cu" 2>"$TMP/err"; then
        not_ok "nvcc --compress-mode=$mode: $(head -c 200 "$TMP/err")"; continue
    fi
    check_eq "compress-mode=$mode: layouts" "$(layouts "$TMP/$mode.fatbin")" "$(cat "$TMP/want")"
    check_eq "compress-mode=$mode: from ELF" "$(sources "$TMP/$mode.fatbin")" "elf "
done
no_san "$NVCC" --fatbin -arch=compute_90 -o "$TMP/ptx.fatbin" "$TMP/k.cu" &&
    check_eq "PTX-only fatbin: layouts" "$(layouts "$TMP/ptx.fatbin")" "$(cat "$TMP/want")" &&
    check_eq "PTX-only fatbin: from PTX" "$(sources "$TMP/ptx.fatbin")" "ptx "
no_san "$NVCC" --fatbin -arch=compute_90 --compress-mode=speed -o "$TMP/ptx_lz4.fatbin" "$TMP/k.cu" &&
    check_eq "PTX-only LZ4 fatbin: layouts" "$(layouts "$TMP/ptx_lz4.fatbin")" "$(cat "$TMP/want")"
no_san "$NVCC" --fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90] \
    -o "$TMP/multi.fatbin" "$TMP/k.cu" &&
    check_eq "two-arch fatbin: layouts" "$(layouts "$TMP/multi.fatbin" 80)" "$(cat "$TMP/want")"
no_san "$NVCC" -cubin -arch=sm_90 -o "$TMP/k.cubin" "$TMP/k.cu" &&
    check_eq "bare cubin: layouts" "$(layouts "$TMP/k.cubin")" "$(cat "$TMP/want")"
no_san "$NVCC" -ptx -arch=sm_90 -o "$TMP/k.ptx" "$TMP/k.cu" &&
    check_eq "bare PTX: layouts" "$(layouts "$TMP/k.ptx")" "$(cat "$TMP/want")"

# an executable's .nv_fatbin section: one fatbin per translation unit, back to back
if command -v objcopy >/dev/null 2>&1; then
    echo 'int main() { return 0; }' >"$TMP/main.cu"
    if no_san "$NVCC" -arch=sm_90 -cudart shared -o "$TMP/app" "$TMP/k.cu" "$TMP/main.cu" 2>"$TMP/err" &&
        objcopy -O binary --only-section=.nv_fatbin "$TMP/app" "$TMP/app.fatbin"; then
        check_eq "executable .nv_fatbin: layouts" "$(layouts "$TMP/app.fatbin")" "$(cat "$TMP/want")"
    else
        not_ok "building the executable: $(head -c 200 "$TMP/err")"
    fi
else
    skip "objcopy not found"
fi
