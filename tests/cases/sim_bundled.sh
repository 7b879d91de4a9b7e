#!/bin/sh
# sim_bundled.sh - a program that opens its own CUDA runtime by full path (as PyTorch's wheel
# does) gets the simulated one under `vramtrace run --sim` (issue 46 slice 2; tests/sim/README.md
# "Frameworks"). Without it, NVIDIA's runtime runs on the simulated driver and fails.
. tests/lib.sh
need_sim
P="$PROGS/sim_bundled"
REAL="${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13"
if [ ! -x "$P" ] || [ ! -f "$REAL" ]; then
    skip "$(basename "$0"): no toolkit libcudart.so.13 to bundle"
    exit 0
fi
v() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | head -1; }
# a wheel's layout, the runtime under its full version name as some wheels ship it
W="$TMP/site packages/nvidia/cu13/lib"
mkdir -p "$W" && cp "$REAL" "$W/libcudart.so.13" && cp "$REAL" "$W/libcudart.so.13.0.96"
out=$(env LD_LIBRARY_PATH="$SIM" "$P" "$W/libcudart.so.13" 2>/dev/null)
check "without run --sim: NVIDIA's bundled runtime is used and cannot allocate on the simulated driver" \
    sh -c "[ '$(v "$out" runtime_is_wheel)' = 1 ] && [ '$(v "$out" malloc)' != 0 ]"
line=$(grep -n 'cmalloc(&d' "$ROOT/tests/progs/sim_bundled.c" | cut -d: -f1)
cline=$(grep -n 'cmemcpy(d' "$ROOT/tests/progs/sim_bundled.c" | cut -d: -f1)
for lib in libcudart.so.13 libcudart.so.13.0.96; do
    out=$("$VT" run --sim -q -o "$TMP/$lib.jsonl" -- "$P" "$W/$lib" 2>"$TMP/$lib.err")
    # the handle is the simulated runtime's (under its own path, or run's link to it when the
    # checkout's path has a space), not the wheel's
    check_eq "run --sim, $lib opened by path: the simulated runtime; allocate, copy, free succeed" \
        "$?:$(v "$out" runtime_is_wheel):$(v "$out" malloc):$(v "$out" memcpy):$(v "$out" free)" "0:0:0:0:0"
    check_eq "... traced: one 3 MiB allocation, freed; one 4096-byte h2d copy" \
        "$(jqs "$TMP/$lib.jsonl" '[([.[]|select(.ev=="alloc")|.size]|join(",")), ([.[]|select(.ev=="free")]|length), ([.[]|select(.ev=="copy")|"\(.dir) \(.size)"]|join(","))]|join(" ")')" \
        "3145728 1 h2d 4096"
    "$VT" report "$TMP/$lib.jsonl" >"$TMP/$lib.rep" 2>&1
    check_eq "... the sites are the program's lines ($line, $cline)" \
        "$(grep -c "main (sim_bundled.c:$line)" "$TMP/$lib.rep" | tr -d ' ' | sed 's/^0$/missing/;s/^[1-9].*/ok/'):$(grep -c "main (sim_bundled.c:$cline)" "$TMP/$lib.rep" | sed 's/^0$/missing/;s/^[1-9].*/ok/')" "ok:ok"
done
# other libraries opened by path are left alone (libm's own file, not a CUDA one)
LIBM=$(ldconfig -p 2>/dev/null | sed -n 's/.*libm.so.6 (libc6,x86-64) => //p' | head -1)
if [ -n "$LIBM" ]; then
    out=$("$VT" run --sim -q -o "$TMP/libm.jsonl" -- "$P" "$LIBM" 2>&1)
    check_eq "run --sim, libm opened by path: opened as it is (no cudaMalloc in it)" "$(v "$out" dlsym)" missing
fi

# a library linked against the runtime with a DT_RPATH to the wheel's copy (PyTorch's
# libtorch_global_deps.so: RPATH beats LD_LIBRARY_PATH): run --sim preloads the simulated runtime
# (after the user's own preloads), so the DT_NEEDED libcudart.so.13 is the one already loaded
cat >"$TMP/rpath.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
int main(void)
{
    void *d = NULL;
    int rc = (int)cudaMalloc(&d, 1 << 20);
    char line[4096];
    int wheel = 0;
    FILE *m = fopen("/proc/self/maps", "r");
    while (m && fgets(line, sizeof line, m)) wheel |= strstr(line, "nvidia/cu13/lib/libcudart") != NULL;
    if (m) fclose(m);
    printf("malloc=%d wheel_runtime_mapped=%d\n", rc, wheel);
    return 0;
}
C
CUDA_INC="${CUDA_HOME:-/usr/local/cuda}/include"
if no_san cc -o "$TMP/rpath" "$TMP/rpath.c" -I"$CUDA_INC" -L"$W" -Wl,--disable-new-dtags,-rpath,"$W" -l:libcudart.so.13 2>"$TMP/rpath.cc.err"; then
    out=$(env LD_LIBRARY_PATH="$SIM" "$TMP/rpath" 2>/dev/null)
    check "DT_RPATH to the wheel, LD_LIBRARY_PATH alone: the wheel's runtime is loaded and cannot allocate" \
        sh -c "printf '%s' '$out' | grep -q 'wheel_runtime_mapped=1' && ! printf '%s' '$out' | grep -q 'malloc=0 '"
    out=$("$VT" run --sim -q -o "$TMP/rpath.jsonl" -- "$TMP/rpath" 2>/dev/null)
    check_eq "DT_RPATH to the wheel under run --sim: the simulated runtime allocates, the wheel's is never mapped" \
        "$out" "malloc=0 wheel_runtime_mapped=0"
    check_eq "... traced: the 1 MiB allocation" "$(jqs "$TMP/rpath.jsonl" '[.[]|select(.ev=="alloc")|.size]|join(",")')" 1048576
else
    skip "DT_RPATH program: cannot link against the toolkit's runtime ($(head -1 "$TMP/rpath.cc.err"))"
fi
