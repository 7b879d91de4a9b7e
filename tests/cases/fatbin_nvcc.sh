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
struct Four { int *p[4]; };
__global__ void ki(Four a, int i) { *a.p[i] = 1; }
__global__ void kz(int *a, int *b, int i, int j) { int *arr[4] = {a, b, nullptr, nullptr}; arr[i] = nullptr; *arr[j] = 1; }
struct Strides4 { int ndim; long long st[4]; };
__device__ __noinline__ float *at(float *p, int i) { return p + i; }
__global__ void kr(Strides4 s, float *data, int i) { long long o = s.st[i]; *at(data, i) = (float)o; }
CU
# expectations from the source: PARAM:BYTE of each pointer the body dereferences (or passes to
# use()); offsets by the host compiler: Packed::p at 1, Ptr::p at 8, Two::b at 16
cat >"$TMP/u_want.c" <<'C'
#include <stddef.h>
#include <stdio.h>
struct __attribute__((packed)) Packed { char c; float *p; short s; };
struct Ptr { int n; float *p; };
struct Two { float *a; long long n; float *b; };
struct Four { int *p[4]; };
int main(void)
{
    printf("uses _Z2kc3PtrPf 0:%zu 1:0\n", offsetof(struct Ptr, p));
    printf("uses _Z2kf3PtrPPf 0:%zu 1:0\n", offsetof(struct Ptr, p));
    printf("uses _Z2kg3Twoi 0:%zu\n", offsetof(struct Two, b));
    printf("uses _Z2knPfxS_ 2:0\n");
    /* a.p[i], i unknown: nvcc copies the array to the stack and loads from it, so any of the 4 */
    printf("uses _Z2ki4Fouri 0:%zu 0:%zu 0:%zu 0:%zu\n", offsetof(struct Four, p[0]), offsetof(struct Four, p[1]),
           offsetof(struct Four, p[2]), offsetof(struct Four, p[3]));
    printf("uses _Z2kp6PackedPf 0:%zu 1:0\n", offsetof(struct Packed, p));
    /* arr[j] is a, b or a null the stack array was given (nvcc stores a zero register there) */
    printf("uses _Z2kzPiS_ii 0:0 1:0\n");
    /* the stride picked from the stack copy is a number; the pointer at() returns is data's */
    printf("uses _Z2kr8Strides4Pfi 1:0\n");
    printf("uses _Z2ks7StridesPfi 1:0\n");
    return 0;
}
C
sortuses() { VT_DUMP_USES=1 "$DUMP" "$@" | grep '^uses ' | while read -r u n rest; do echo "uses $n $(echo $rest | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"; done | sort; }
if cc -o "$TMP/u_want" "$TMP/u_want.c" && no_san "$NVCC" -ptx -arch=sm_90 -o "$TMP/u.ptx" "$TMP/u.cu" &&
    no_san "$NVCC" --fatbin -arch=sm_90 -o "$TMP/u.fatbin" "$TMP/u.cu"; then
    "$TMP/u_want" | while read -r u n rest; do echo "uses $n $(echo $rest | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"; done | sort >"$TMP/u_want.txt"
    check_eq "PTX address use: packed pointer at byte 1, stride table not an address, call argument, __grid_constant__ member, unused pointer, an array indexed on the stack" \
        "$(sortuses "$TMP/u.ptx")" "$(cat "$TMP/u_want.txt")"
    check_eq "a fatbin's ELF layouts take the uses of its PTX" "$(sortuses "$TMP/u.fatbin" 90)" "$(cat "$TMP/u_want.txt")"
else
    not_ok "building the address-use kernels"
fi

# nvcc -G (debug) PTX reaches a __grid_constant__ member by adding literals to the parameter's
# address (cvta.param, then add.s64 %rd4, %rd3, 32 and add.s64 %rd5, %rd4, -8), where -O3 folds
# them into one [param+N] operand: the member at the sum is the word used
cat >"$TMP/g.cu" <<'CU'
struct S { int n; int pad[5]; int *p; int *q; };
__global__ void kq(const __grid_constant__ S s) { int *const *pp = &s.q; **pp = 4; }
__global__ void kback(const __grid_constant__ S s) { int *const *pp = &s.q; *pp[-1] = 5; }
__global__ void kdown(const __grid_constant__ S s) { int *const *pp = &s.q; pp = pp - 1; **pp = 6; }
CU
cat >"$TMP/g_want.c" <<'C'
#include <stddef.h>
#include <stdio.h>
struct S { int n; int pad[5]; int *p; int *q; };
int main(void)
{
    printf("uses _Z2kq1S 0:%zu\n", offsetof(struct S, q));
    printf("uses _Z5kback1S 0:%zu\n", offsetof(struct S, p));
    printf("uses _Z5kdown1S 0:%zu\n", offsetof(struct S, p));
    return 0;
}
C
if cc -o "$TMP/g_want" "$TMP/g_want.c" && no_san "$NVCC" -G -ptx -arch=sm_90 -o "$TMP/g.ptx" "$TMP/g.cu"; then
    check_eq "PTX address use (nvcc -G): a __grid_constant__ member through literal adds to its address" \
        "$(sortuses "$TMP/g.ptx")" "$("$TMP/g_want" | sort)"
else
    not_ok "building the -G address-use kernels"
fi

# dynamic parallelism (-rdc=true): the PTX declares the child kernel it launches (".extern .entry
# _Z5childPi (...) ;", no body) before the kernels it defines. The declaration gives a layout but
# no uses ("?": its body is in another translation unit); the kernels after it keep their own:
# parent hands p to the child (stored into the launch's parameter buffer), q is never used;
# other writes through b.
cat >"$TMP/dp.cu" <<'CU'
__global__ void child(int *p);
__global__ void parent(int *p, int *q) { child<<<1, 1>>>(p); }
__global__ void other(int *a, int *b) { *b = 1; }
CU
if no_san "$NVCC" -rdc=true -ptx -arch=sm_90 -o "$TMP/dp.ptx" "$TMP/dp.cu"; then
    check_eq "PTX with an .extern .entry declaration: every kernel's layout and uses" \
        "$(VT_DUMP_USES=1 "$DUMP" "$TMP/dp.ptx" | sort | tr '\n' ';')" \
        "_Z5childPi ptx 1 0:8;_Z5otherPiS_ ptx 2 0:8 8:8;_Z6parentPiS_ ptx 2 0:8 8:8;uses _Z5childPi ?;uses _Z5otherPiS_ 1:0;uses _Z6parentPiS_ 0:0;"
else
    not_ok "building the dynamic-parallelism kernels"
fi
