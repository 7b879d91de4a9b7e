#!/bin/sh
# report_sites.sh - call sites of programs written the way users write them (issue 36): the typed
# cudaMalloc<T> overload lives in CUDA's cuda_runtime.h, so its frame (a real function at -O0,
# inlined at -O2) is never the site; a helper's two callers stay two sites; C start-up code is
# never a caller. Lines come from the program's SITE_/CALLER_ markers, not from the tool.
. tests/lib.sh
need_sim
SRC="$ROOT/tests/progs/typed_sites.cu"
line() { grep -n "$1" "$SRC" | cut -d: -f1; }
H=$(line SITE_HELPER); A=$(line CALLER_A); B=$(line CALLER_B); M=$(line SITE_MAIN)
for v in typed_sites typed_sites_o2; do
    rm -f "$TMP/$v.jsonl"
    "$VT" run --sim -o "$TMP/$v.jsonl" -- "$PROGS/$v" >"$TMP/$v.out" 2>"$TMP/$v.err"
    check_eq "$v: the program allocated" "$(cat "$TMP/$v.out")" "allocated 1"
    # sites of the 4 MiB, 1 MiB and 4 KiB allocations; the helper's name loses its signature
    # where DWARF names the inlined function without one
    check_eq "$v: each allocation's site is the user's line, the helper's callers apart" \
        "$("$VT" report --json "$TMP/$v.jsonl" | jq -r '[.largest[]|"\(.bytes) \(.site)"]|join(";")' | sed 's/make_buffer(unsigned long)/make_buffer/g')" \
        "4194304 make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$A);1048576 make_buffer (typed_sites.cu:$H) <- main (typed_sites.cu:$B);4096 main (typed_sites.cu:$M)"
    check_eq "$v: no site names CUDA's header or C start-up" \
        "$("$VT" report "$TMP/$v.jsonl" | grep -c -e 'cuda_runtime.h' -e '__libc_start')" 0
    # the JSON stack keeps every source frame, CUDA's own first: the overload's line in the
    # toolkit's header, then the helper at the call, then main at the helper's call
    CR=$(grep -n 'return ::cudaMalloc((void\*\*)(void\*)devPtr, size);' "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime.h" | head -1 | cut -d: -f1)
    check_eq "$v: the 4 MiB allocation's stack lists the inlined frames too" \
        "$("$VT" report --json "$TMP/$v.jsonl" | jq -r '[.peak_sites[]|select(.bytes==4194304)|.stack[0:3][]]|join(" | ")' | sed 's/make_buffer(unsigned long)/make_buffer/g; s/^cudaError //; s/cudaMalloc<float>(float\*\*, unsigned long)/cudaMalloc<float>/')" \
        "cudaMalloc<float> (cuda_runtime.h:$CR) | make_buffer (typed_sites.cu:$H) | main (typed_sites.cu:$A)"
done
