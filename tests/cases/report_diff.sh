#!/bin/sh
# report_diff.sh - `report --diff BASE NEW`: two runs side by side. Every number comes from what
# the programs do: examples/oom.cu on a 4 GiB and on an 8 GiB device, and two versions of a small
# program whose code moved between them.
. tests/lib.sh
need_sim
# examples/oom.cu: 96 MiB of embeddings, then per layer 64 MiB attention and 160 MiB activations
# until one fails. 4 GiB (4096 MiB): 17 layers and the 18th's attention (3968 MiB) before the
# 18th's activations fail; 8 GiB (8192 MiB): 36 layers (8160 MiB) before the 37th's attention.
for m in 4G 8G; do
    VRAMTRACE_SIM_MEM=$m "$VT" run --sim -o "$TMP/oom$m.jsonl" -- "$EXAMPLES/oom" >/dev/null 2>&1
done
MiB=1048576
j=$("$VT" report --diff --json "$TMP/oom4G.jsonl" "$TMP/oom8G.jsonl")
check_eq "oom: peaks, allocation counts, one OOM each" \
    "$(printf '%s' "$j" | jq -c '[.base.peak_bytes, .new.peak_bytes, .base.alloc_count, .new.alloc_count, .base.oom_count, .new.oom_count]')" \
    "[$((3968 * MiB)),$((8160 * MiB)),36,73,1,1]"
check_eq "oom: sites by change: activations 17 -> 36 x 160 MiB, attention 18 -> 36 x 64 MiB, embeddings unchanged" \
    "$(printf '%s' "$j" | jq -r '.peak_sites[]|"\(.base_bytes) \(.new_bytes) \(.delta_bytes) \(.site|sub("\\(oom.cu:16\\) <- ";"<- ")|sub("\\(int\\) \\(oom.cu:[0-9]+\\)";""))"' | sed 's/^grab([^)]*) //')" \
"$((2720 * MiB)) $((5760 * MiB)) $((3040 * MiB)) grab(char const*, int, unsigned long) <- alloc_activations
$((1152 * MiB)) $((2304 * MiB)) $((1152 * MiB)) grab(char const*, int, unsigned long) <- alloc_attention
$((96 * MiB)) $((96 * MiB)) 0 grab(char const*, int, unsigned long) <- alloc_embeddings"
check "oom: the text's peak row" sh -c '"$1" report --diff "$2" "$3" | grep -q "^  peak VRAM          3.88 GiB     7.97 GiB      +4.09 GiB$"' _ "$VT" "$TMP/oom4G.jsonl" "$TMP/oom8G.jsonl"

# ---- code that moved: the new version has one more line at the top, a site gone (old_cache), a
# new one (scratch), A doubled (4 -> 8 MiB), B unchanged; main's two sites pair in line order.
CH=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$TMP/v1" "$TMP/v2"
cat >"$TMP/v1/app.c" <<'C'
#include <cuda_runtime_api.h>
#include <stdio.h>
static void *grab(size_t n) { void *p = NULL; cudaMalloc(&p, n); return p; } /* GRAB */
static void *old_cache(void) { return grab(3u << 20); } /* GONE */
int main(void)
{
    void *a = grab(4u << 20); /* A */
    void *b = grab(1u << 20); /* B */
    void *c = old_cache();
    static char h[1u << 20];
    cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice); /* COPY */
    printf("%d\n", a && b && c);
    return 0;
}
C
cat >"$TMP/v2/app.c" <<'C'
/* version 2 */
#include <cuda_runtime_api.h>
#include <stdio.h>
static void *grab(size_t n) { void *p = NULL; cudaMalloc(&p, n); return p; } /* GRAB */
static void *scratch(void) { return grab(2u << 20); } /* NEW */
int main(void)
{
    void *a = grab(8u << 20); /* A */
    void *b = grab(1u << 20); /* B */
    void *c = scratch();
    static char h[1u << 20];
    cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice); /* COPY */
    cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice);
    printf("%d\n", a && b && c);
    return 0;
}
C
ok_build=1
for v in v1 v2; do
    cc -g -O0 -I"$CH/include" -o "$TMP/$v/app" "$TMP/$v/app.c" -L"$CH/lib64" -lcudart 2>"$TMP/$v/cc.err" || ok_build=0
done
if [ "$ok_build" = 1 ]; then
    for v in v1 v2; do "$VT" run --sim -o "$TMP/$v.jsonl" -- "$TMP/$v/app" >/dev/null 2>&1; done
    ln() { grep -n "/\* $1 \*/" "$TMP/$2/app.c" | cut -d: -f1; }
    s() { echo "grab (app.c:$(ln GRAB "$1")) <- $2 (app.c:$(ln "$3" "$1"))"; }
    check_eq "moved code: A and B paired with their moved lines, old_cache gone, scratch new" \
        "$("$VT" report --diff --json "$TMP/v1.jsonl" "$TMP/v2.jsonl" | jq -r '.peak_sites[]|"\(.delta_bytes) \(.base_site) => \(.site)"')" \
"$((4 * MiB)) $(s v1 main A) => $(s v2 main A)
-$((3 * MiB)) $(s v1 old_cache GONE) => null
$((2 * MiB)) null => $(s v2 scratch NEW)
0 $(s v1 main B) => $(s v2 main B)"
    check_eq "moved code: the text marks new, gone and moved rows" \
        "$("$VT" report --diff "$TMP/v1.jsonl" "$TMP/v2.jsonl" | sed -n '/^Sites at the peak/,/^$/p' | sed '1d;/^$/d' | sed 's/  */ /g')" \
" +4.00 MiB 4.00 MiB -> 8.00 MiB $(s v2 main A) (was $(s v1 main A))
 -3.00 MiB 3.00 MiB -> 0 B $(s v1 old_cache GONE) (gone)
 +2.00 MiB 0 B -> 2.00 MiB $(s v2 scratch NEW) (new)
 0 B 1.00 MiB -> 1.00 MiB $(s v2 main B) (was $(s v1 main B))"
    # v1 copies 1 MiB of a static (pageable) buffer to b once, v2 twice: the bytes of each run, and
    # both rates (bytes / host time: measured, so only their form is checked)
    check "moved code: the text's transfers, h2d from pageable memory, 1 MiB -> 2 MiB at a rate each" sh -c \
        '"$1" report --diff "$2" "$3" | sed -n "/^Transfers/,\$p" | grep -Eq "^  h2d +pageable +1\.00 MiB -> +2\.00 MiB, [0-9.]+ -> [0-9.]+ GB/s \([+-][0-9]+%\)$"' \
        _ "$VT" "$TMP/v1.jsonl" "$TMP/v2.jsonl"
    check_eq "moved code: peaks 8 -> 11 MiB" "$("$VT" report --diff --json "$TMP/v1.jsonl" "$TMP/v2.jsonl" | jq -c '[.base.peak_bytes,.new.peak_bytes]')" "[$((8 * MiB)),$((11 * MiB))]"
    # a third version with three allocations from main (lines moved too): main's group has 2 sites
    # in v1 and 3 here, so which is which cannot be told: all shown gone and new, none paired
    mkdir -p "$TMP/v3"
    sed 's|void \*c = old_cache();|void *c = grab(5u << 20); /* C */|; 1i /* version 3 */' "$TMP/v1/app.c" >"$TMP/v3/app.c"
    if cc -g -O0 -I"$CH/include" -o "$TMP/v3/app" "$TMP/v3/app.c" -L"$CH/lib64" -lcudart 2>"$TMP/v3/cc.err"; then
        "$VT" run --sim -o "$TMP/v3.jsonl" -- "$TMP/v3/app" >/dev/null 2>&1
        check_eq "moved code, more sites in a group: nothing paired by guess" \
            "$("$VT" report --diff --json "$TMP/v1.jsonl" "$TMP/v3.jsonl" | jq -r '[.peak_sites[]|select(.site != null and .base_site != null)]|length')" 0
    else not_ok "moved code: could not build version 3: $(head -1 "$TMP/v3/cc.err")"; fi
else not_ok "moved code: could not build the two versions: $(cat "$TMP"/v*/cc.err | head -1)"; fi

# ---- usage -----------------------------------------------------------------------------------------
"$VT" report --diff "$TMP/oom4G.jsonl" >"$TMP/u1.out" 2>"$TMP/u1.err"; rc=$?
check_eq "--diff with one run: exit 2, one line" "$rc,$(wc -l <"$TMP/u1.err"),$(cat "$TMP/u1.err")" \
    "2,1,vramtrace report: --diff takes two runs, BASE and NEW (each a trace or a directory), not 1"
"$VT" report --diff --html "$TMP/x.html" "$TMP/oom4G.jsonl" "$TMP/oom8G.jsonl" >/dev/null 2>"$TMP/u2.err"; rc=$?
check_eq "--diff with --html: exit 2, one line" "$rc,$(cat "$TMP/u2.err")" "2,vramtrace report: --diff writes text or --json only (not --html or --perfetto)"
