#!/bin/sh
# report_sim.sh - real traces of examples/oom on the simulated device (4 GiB): the recorded
# fixture tests/data/traces/sim-oom.jsonl, and a fresh recording when the simulator is built.
# oom.cu allocates 96 MiB embeddings once, then 64 MiB attention + 160 MiB activations per layer
# until cudaMalloc fails: 96 + 18*64 + 17*160 MiB = 3968 MiB live when the 18th activations fail.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
want_peak=$(( (96 + 18 * 64 + 17 * 160) << 20 ))
checks() { # TRACE LABEL
    j=$("$VT" report --json "$1"); rc=$?
    check_eq "$2: exit 0" "$rc" 0
    q() { printf '%s' "$j" | jq -r "$1"; }
    check_eq "$2: peak_bytes = 96+18*64+17*160 MiB" "$(q .peak_bytes)" "$want_peak"
    check_eq "$2: one OOM of 160 MiB with 3968 MiB live" "$(q '.oom_events | length, .[0].requested_bytes, .[0].live_bytes' | tr '\n' ' ')" "1 167772160 $want_peak "
    check_eq "$2: everything freed" "$(q .leaked_bytes)" 0
    check_eq "$2: 36 allocations" "$(q .allocations.count)" 36
    if [ -x "$ROOT/build/examples/oom" ] || [ -x "$EXAMPLES/oom" ]; then
        check_eq "$2: OOM held by activations site (file:line)" "$(q '.oom_events[0].held_by[0].site')" \
            "grab(char const*, int, unsigned long) (oom.cu:16) <- alloc_activations(int) (oom.cu:31)"
    fi
}
checks "$D/sim-oom.jsonl" "recorded fixture"
if [ -x "$EXAMPLES/oom" ] && [ -f "$SIM/libcudart.so.13" ]; then
    VRAMTRACE_SIM_MEM=4G "$VT" run --sim -o "$TMP/oom.jsonl" -- "$EXAMPLES/oom" >/dev/null 2>&1
    checks "$TMP/oom.jsonl" "fresh recording"
else skip "simulated device or examples not built: fresh recording"; fi

# src/unwind.c must record exactly the stacks glibc backtrace() gives: the same programs (one
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
