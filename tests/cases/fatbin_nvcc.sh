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

# ---- which words the PTX uses as addresses (fatbin_ptx_use.c), each pattern from nvcc's output --
cat >"$TMP/u.cu" <<'CU'
#include <cstddef>
struct __attribute__((packed)) Packed { char c; float *p; short s; };
struct Strides { int ndim; long long sizes[8]; long long strides[8]; };   /* the tail: garbage */
struct Ptr { int n; float *p; };
struct Two { float *a; long long n; float *b; };
__global__ void kp(Packed a, float *out) { out[0] = a.p[3]; }
__global__ void ks(Strides st, float *data, int n)
{ long long off = 0; for (int i = 0; i < st.ndim; i++) off += st.strides[i] * (threadIdx.x % st.sizes[i]); data[off] = n; }
__device__ __noinline__ float use(const float *p) { return p[1]; }
__global__ void kc(Ptr s, float *o) { o[0] = use(s.p); }
__global__ void kf(Ptr s, float **pp) { *pp[1] = s.p[threadIdx.x]; }
__global__ void kg(__grid_constant__ const Two t, int i) { t.b[i] = (float)t.n; }
__global__ void kn(float *unused, long long bits, float *used) { used[0] = (float)bits; }
CU
# expectations from the source: PARAM:BYTE of each pointer the body dereferences (or passes to
# use()); offsets by the host compiler: Packed::p at 1, Ptr::p at 8, Two::b at 16
cat >"$TMP/u_want.c" <<'C'
#include <stddef.h>
#include <stdio.h>
struct __attribute__((packed)) Packed { char c; float *p; short s; };
struct Ptr { int n; float *p; };
struct Two { float *a; long long n; float *b; };
int main(void)
{
    printf("uses _Z2kc3PtrPf 0:%zu 1:0\n", offsetof(struct Ptr, p));
    printf("uses _Z2kf3PtrPPf 0:%zu 1:0\n", offsetof(struct Ptr, p));
    printf("uses _Z2kg3Twoi 0:%zu\n", offsetof(struct Two, b));
    printf("uses _Z2knPfxS_ 2:0\n");
    printf("uses _Z2kp6PackedPf 0:%zu 1:0\n", offsetof(struct Packed, p));
    printf("uses _Z2ks7StridesPfi 1:0\n");
    return 0;
}
C
sortuses() { VT_DUMP_USES=1 "$DUMP" "$@" | grep '^uses ' | while read -r u n rest; do echo "uses $n $(echo $rest | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"; done | sort; }
if cc -o "$TMP/u_want" "$TMP/u_want.c" && no_san "$NVCC" -ptx -arch=sm_90 -o "$TMP/u.ptx" "$TMP/u.cu" &&
    no_san "$NVCC" --fatbin -arch=sm_90 -o "$TMP/u.fatbin" "$TMP/u.cu"; then
    "$TMP/u_want" | while read -r u n rest; do echo "uses $n $(echo $rest | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"; done | sort >"$TMP/u_want.txt"
    check_eq "PTX address use: packed pointer at byte 1, stride table not an address, call argument, __grid_constant__ member, unused pointer" \
        "$(sortuses "$TMP/u.ptx")" "$(cat "$TMP/u_want.txt")"
    check_eq "a fatbin's ELF layouts take the uses of its PTX" "$(sortuses "$TMP/u.fatbin" 90)" "$(cat "$TMP/u_want.txt")"
else
    not_ok "building the address-use kernels"
fi
