#!/bin/sh
# rel_namespaces.sh - recovery touches a trace only when its writer is known dead on this machine,
# boot and PID namespace (docs/reliability.md). A trace written from a container (another PID
# namespace) or from another host on a shared filesystem names a pid that means nothing here:
# report reads such a trace as it is and never cuts the file a live program has mapped.
. tests/lib.sh
need_sim
LIB="$ROOT/$BUILD/libvramtrace.so"

# --- a live program in another PID namespace, its trace read from outside --------------------
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    # rel_sigexit allocates and frees in a loop (writing its trace all the time) for 3 s, then
    # returns from main
    unshare --pid --fork --mount-proc env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$LIB")" VRAMTRACE_QUIET=1 \
        VRAMTRACE_OUTPUT="$TMP/ns.jsonl" "$PROGS/rel_sigexit" -3000000 >"$TMP/ns.out" 2>&1 &
    job=$!
    i=0
    while ! grep -q '^started' "$TMP/ns.out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 0.3
    # (checked before the report: under make SAN=1 the report of a growing trace may outlast the
    # program's 3 s)
    check "container: the program is writing (its ring is there) when report runs" test -e "$TMP/ns.jsonl.ring"
    "$VT" report --json "$TMP/ns.jsonl" >"$TMP/ns.json" 2>"$TMP/ns.err"
    rrc=$?
    wait $job
    check_eq "container: the program runs on and exits 0 (report cut its mapped trace before: SIGBUS)" "$?" 0
    check_eq "container: report exits 0 and says why it left the ring alone" \
        "$rrc:$(grep -c 'in another PID namespace (a container): whether it still runs cannot be told from here, so the trace is read as it is' "$TMP/ns.err")" "0:1"
    check_eq "container: the finished trace ends in its footer, the ring is gone" \
        "$(jqs "$TMP/ns.jsonl" '.[-1].ev'):$(test -e "$TMP/ns.jsonl.ring" && echo ring || echo none)" "footer:none"
else
    skip "container: cannot make a PID namespace here (unshare --pid needs root or user namespaces)"
fi

# --- a dead writer's ring from another machine (its boot id is not ours) ----------------------
# killed by SIGSEGV with its records still in the ring (VRAMTRACE_SYNC=defer), 3 x 1 MiB allocated
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$LIB")" VRAMTRACE_QUIET=1 VRAMTRACE_SYNC=defer \
    VRAMTRACE_OUTPUT="$TMP/far.jsonl" "$PROGS/rel_crash" segv 3 >/dev/null 2>&1
here=$(cat /proc/sys/kernel/random/boot_id)
other=00000000-0000-4000-8000-000000000000
swap_boot() { # FROM TO: in the trace's header and the ring's
    python3 - "$1" "$2" "$TMP/far.jsonl" "$TMP/far.jsonl.ring" <<'PY'
import sys
a, b = sys.argv[1].encode(), sys.argv[2].encode()
for p in sys.argv[3:]:
    d = open(p, 'rb').read()
    assert d.count(a) == 1, (p, d.count(a))
    open(p, 'r+b').write(d.replace(a, b))
PY
}
check "another host: the writer recorded where it ran (trace header pidns)" \
    test "$(jqs "$TMP/far.jsonl" '.[0].pidns')" = "$here/$(readlink /proc/self/ns/pid)"
swap_boot "$here" "$other"
size=$(stat -c %s "$TMP/far.jsonl")
"$VT" report --json "$TMP/far.jsonl" >/dev/null 2>"$TMP/far.err"
check_eq "another host: report exits 0 and says it cannot tell whether the writer runs" \
    "$?:$(grep -c 'on another machine or boot' "$TMP/far.err")" "0:1"
check_eq "another host: the ring is left and the trace not cut" \
    "$(test -e "$TMP/far.jsonl.ring" && echo ring):$(stat -c %s "$TMP/far.jsonl")" "ring:$size"
swap_boot "$other" "$here"
"$VT" report --json "$TMP/far.jsonl" >"$TMP/far.json" 2>"$TMP/far2.err"
check_eq "this host again: the ring is recovered (3 allocations of 1 MiB) and removed" \
    "$(jq -r '.processes[0].peak_bytes' "$TMP/far.json"):$(grep -c 'recovered' "$TMP/far2.err"):$(test -e "$TMP/far.jsonl.ring" && echo ring || echo none)" \
    "3145728:1:none"
