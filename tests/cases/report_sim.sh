#!/bin/sh
# report_sim.sh - real traces of examples/oom on the simulated device (4 GiB): the recorded
# fixture tests/data/traces/sim-oom.jsonl (its build paths rewritten to a prefix that exists
# nowhere: re-record with `vramtrace run --sim -o F -- build/examples/oom`, then sed the checkout's
# path to /srv/recorded-on-another-machine/vramtrace), and a fresh recording when the simulator is built;
# then the unwinder's stacks against glibc's on real traced programs.
# oom.cu allocates 96 MiB embeddings once, then 64 MiB attention + 160 MiB activations per layer
# until cudaMalloc fails: 96 + 18*64 + 17*160 MiB = 3968 MiB live when the 18th activations fail.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
want_peak=$(( (96 + 18 * 64 + 17 * 160) << 20 ))
# The fixture was recorded on another machine: its program's module names a path that exists
# nowhere (the recording's build prefix rewritten to /srv/recorded-on-another-machine/), as a
# trace copied off a cluster would. Without the binary a frame reads module+offset: the
# activations allocation's first two return addresses minus the oom module's base, from the trace.
fixture_site() {
    base=$(jqs "$D/sim-oom.jsonl" '.[] | select(.ev == "module" and (.path | endswith("/examples/oom"))) | .base')
    set -- $(jqs "$D/sim-oom.jsonl" '[.[] | select(.ev == "alloc" and .size == 167772160)][0].bt[0,1]')
    printf 'oom+0x%x <- oom+0x%x' $(($1 - base)) $(($2 - base))
}
# No fixture may lean on a file outside the checkout: a module or program path that is not a
# system library must not exist here (on the recording machine it does, until it is rewritten).
for f in "$D"/*.jsonl "$D"/ranks/*.jsonl; do
    jqs "$f" '.[] | select(.ev == "module" or .ev == "header") | .path // .program // empty' |
        grep '^/' | grep -vE '^/(usr/)?lib(64)?/' | sort -u >"$TMP/fixture-paths"
    while IFS= read -r p; do
        check "fixture $(basename "$f") names no file outside the checkout: $p" test ! -e "$p"
    done <"$TMP/fixture-paths"
done
checks() { # TRACE LABEL [SITE]
    j=$("$VT" report --json "$1"); rc=$?
    check_eq "$2: exit 0" "$rc" 0
    q() { printf '%s' "$j" | jq -r "$1"; }
    check_eq "$2: peak_bytes = 96+18*64+17*160 MiB" "$(q .peak_bytes)" "$want_peak"
    check_eq "$2: one OOM of 160 MiB with 3968 MiB live" "$(q '.oom_events | length, .[0].requested_bytes, .[0].live_bytes' | tr '\n' ' ')" "1 167772160 $want_peak "
    check_eq "$2: everything freed" "$(q .leaked_bytes)" 0
    check_eq "$2: 36 allocations" "$(q .allocations.count)" 36
    [ -n "${3:-}" ] && check_eq "$2: OOM held by activations site ($3)" "$(q '.oom_events[0].held_by[0].site')" "$3"
}
checks "$D/sim-oom.jsonl" "recorded fixture" "$(fixture_site)"
if [ -x "$EXAMPLES/oom" ] && [ -f "$SIM/libcudart.so.13" ]; then
    VRAMTRACE_SIM_MEM=4G "$VT" run --sim -o "$TMP/oom.jsonl" -- "$EXAMPLES/oom" >/dev/null 2>&1
    checks "$TMP/oom.jsonl" "fresh recording" "grab(char const*, int, unsigned long) (oom.cu:16) <- alloc_activations(int) (oom.cu:31)"
else skip "simulated device or examples not built: fresh recording"; fi

# src/platform/unwind.c must record exactly the stacks glibc backtrace() gives: the same programs (one
# threaded) traced with VRAMTRACE_UNWIND=glibc and with the default, address randomization off.
if [ -x "$EXAMPLES/oom" ] && [ -x "$PROGS/rel_stress" ] && [ -f "$SIM/libcudart.so.13" ] && setarch -R true 2>/dev/null; then
    for u in default glibc; do
        VRAMTRACE_UNWIND=$u VRAMTRACE_SIM_MEM=4G setarch -R "$VT" run --sim -q -o "$TMP/uw-oom-$u.jsonl" -- "$EXAMPLES/oom" >/dev/null 2>&1
        VRAMTRACE_UNWIND=$u setarch -R "$VT" run --sim -q -o "$TMP/uw-mt-$u.jsonl" -- "$PROGS/rel_stress" 4 20 >/dev/null 2>&1
    done
    bts() { jqs "$1" '.[] | select(.ev == "alloc") | .bt | join(",")' | sort; }
    for t in oom mt; do
        bts "$TMP/uw-$t-default.jsonl" >"$TMP/uw-$t-default.bt"
        bts "$TMP/uw-$t-glibc.jsonl" >"$TMP/uw-$t-glibc.bt"
        n=$(grep -c ',.*,' "$TMP/uw-$t-glibc.bt")
        check "unwinder: $t: $n alloc stacks of 3+ frames recorded" test "$n" -gt 10
        check "unwinder: $t: alloc stacks identical with VRAMTRACE_UNWIND=glibc" cmp -s "$TMP/uw-$t-default.bt" "$TMP/uw-$t-glibc.bt"
    done
else skip "simulated device, examples or setarch -R missing: unwinder against glibc"; fi

# dlclose must drop the unwinder's cached rules: via() in a.so marks its caller's frame as the
# outermost (RA undefined at the call), via() in b.so is the same code with ordinary CFI. Loaded
# one after the other at the same address, a rule left from a.so would cut b.so's stacks short.
if [ -f "$SIM/libcudart.so.13" ] && setarch -R true 2>/dev/null; then
    for lib in a b; do
        { printf '.text\n.globl via\n.type via,@function\nvia:\n.cfi_startproc\nsubq $24, %%rsp\n.cfi_adjust_cfa_offset 24\n'
          [ $lib = a ] && printf '.cfi_undefined rip\n'
          printf 'movq %%rdi, %%rax\nmovq %%rsi, %%rdi\nmovl $4096, %%esi\ncall *%%rax\naddq $24, %%rsp\n'
          printf '.cfi_adjust_cfa_offset -24\nret\n.cfi_endproc\n.size via, .-via\n.section .note.GNU-stack,"",@progbits\n'
        } >"$TMP/$lib.s"
        no_san cc -shared -fPIC -o "$TMP/$lib.so" "$TMP/$lib.s"
    done
    cat >"$TMP/reload.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
typedef int (*malloc_fn)(void **, size_t);
int main(int argc, char **argv)
{
    void *rt = dlopen("libcudart.so.13", RTLD_NOW);
    malloc_fn m = rt ? (malloc_fn)dlsym(rt, "cudaMalloc") : NULL;
    for (int i = 1; i < argc && m; i++) {
        void *h = dlopen(argv[i], RTLD_NOW), *p = NULL;
        int (*via)(malloc_fn, void **) = h ? (int (*)(malloc_fn, void **))dlsym(h, "via") : NULL;
        if (!via) return 2;
        printf("via=%p rc=%d\n", (void *)via, via(m, &p));
        dlclose(h);
    }
    return 0;
}
C
    no_san cc -o "$TMP/reload" "$TMP/reload.c" -ldl
    for u in default glibc; do
        VRAMTRACE_UNWIND=$u setarch -R "$VT" run --sim -q -o "$TMP/rl-$u.jsonl" -- "$TMP/reload" "$TMP/a.so" "$TMP/b.so" "$TMP/a.so" "$TMP/b.so" >"$TMP/rl-$u.out" 2>&1
        jqs "$TMP/rl-$u.jsonl" '.[] | select(.ev == "alloc") | .bt | join(",")' >"$TMP/rl-$u.bt"
    done
    if [ "$(grep '^via=' "$TMP/rl-default.out" | cut -d' ' -f1 | sort -u | wc -l)" = 1 ]; then
        check_eq "unwinder: four loads, four alloc stacks" "$(wc -l <"$TMP/rl-glibc.bt")" 4
        check "unwinder: b.so's stacks go on past via (glibc)" sh -c '[ "$(head -2 "$1" | tail -1 | tr , "\n" | wc -l)" -gt 2 ]' _ "$TMP/rl-glibc.bt"
        check "unwinder: same stacks as glibc across dlclose/dlopen at the same address" cmp -s "$TMP/rl-default.bt" "$TMP/rl-glibc.bt"
    else skip "a.so and b.so were not loaded at the same address: cache invalidation not exercised"; fi
else skip "simulated device or setarch -R missing: unwinder across dlclose"; fi
