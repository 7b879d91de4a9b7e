#!/bin/sh
# rel_security.sh - files an attacker can plant or name never lead the tracer or the CLI to write
# where it should not, or to hang (docs/reliability.md "Security"): run's list of traces lives in
# a private directory, a ring planted beside a trace is never folded into it, and the report opens
# only regular files for symbols.
. tests/lib.sh
need_sim
P="$PROGS/rel_fork" # "alloc": cudaMalloc 1 MiB twice, cudaFree once; prints pid=P

# --- run's list of traces: not at a name another user can guess (/tmp/vramtrace-run-PID.list
# was one: a link planted there made root's run write into root's files), in a 0700 directory
mkdir -p "$TMP/t" && echo keep >"$TMP/victim"
TMPDIR="$TMP/t" sh -c 'ln -s "$1" "$TMPDIR/vramtrace-run-$$.list"; exec "$2" run --sim -q -o "$3" -- \
    sh -c "printf \"%s\\n\" \"\$VRAMTRACE_MANIFEST\"; stat -c %a \"\$(dirname \"\$VRAMTRACE_MANIFEST\")\""' \
    _ "$TMP/victim" "$VT" "$TMP/m.jsonl" >"$TMP/m.out" 2>&1
check_eq "list of traces: a private directory, mode 0700" \
    "$(sed -n 1p "$TMP/m.out" | sed "s|^$TMP/t/vramtrace-run-[0-9]*-[A-Za-z0-9]\{6\}/traces.list\$|private|"):$(sed -n 2p "$TMP/m.out")" "private:700"
check_eq "list of traces: the link planted at the old name untouched, the victim too" \
    "$(test -L "$TMP/t/vramtrace-run-$(ls "$TMP/t" | sed -n 's/^vramtrace-run-\([0-9]*\)\.list$/\1/p').list" && echo link):$(cat "$TMP/victim")" "link:keep"
check_eq "list of traces: its directory is gone after the run" "$(ls "$TMP/t" | grep -vc '\.list$')" 0

# --- a ring planted beside a trace: a real ring with events (another program's, killed while its
# records waited, VRAMTRACE_SYNC=defer) copied to VICTIM.ring before the victim's run. Before, run
# folded it into the victim's trace at exit: 8 more allocations, the tail cut at its offset.
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 VRAMTRACE_SYNC=defer \
    VRAMTRACE_OUTPUT="$TMP/other.jsonl" "$PROGS/rel_crash" sleep 8 >"$TMP/other.out" 2>&1 &
i=0
while ! grep -q '^ready' "$TMP/other.out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL $! 2>/dev/null; wait $! 2>/dev/null
if [ -s "$TMP/other.jsonl.ring" ]; then
    cp "$TMP/other.jsonl.ring" "$TMP/victim.jsonl.ring"
    "$VT" run --sim -q -o "$TMP/victim.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/victim.err"
    check_eq "planted ring: the program's exit status" "$?" 0
    check_eq "planted ring: the victim's trace holds its own 2 allocations, header and footer" \
        "$(jqs "$TMP/victim.jsonl" '[([.[] | select(.ev == "alloc")] | length), .[0].ev, .[-1].ev] | join(",")')" "2,header,footer"
    check_eq "planted ring: said, and left alone" \
        "$(grep -c "victim.jsonl.ring: not this trace's ring (its token or pid is not the trace header's); left alone" "$TMP/victim.err"):$(cmp -s "$TMP/other.jsonl.ring" "$TMP/victim.jsonl.ring" && echo same)" "1:same"
    "$VT" report --json "$TMP/victim.jsonl" >"$TMP/victim.json" 2>/dev/null
    check_eq "planted ring: report too leaves it out" "$(jq '.allocations.count' "$TMP/victim.json")" 2
    # the other trace's own ring is still recovered into it: the token and pid match
    "$VT" report --json "$TMP/other.jsonl" >"$TMP/other.json" 2>"$TMP/other.err"
    check_eq "its own ring is recovered into the other trace: its 8 allocations" "$(jq '.allocations.count' "$TMP/other.json")" 8
    # a ring that is not the trace owner's is never read
    if [ "$(id -u)" = 0 ] && cp "$TMP/victim.jsonl.ring" "$TMP/victim2.ring" && chown nobody "$TMP/victim2.ring" 2>/dev/null; then
        cp "$TMP/victim.jsonl" "$TMP/v2.jsonl" && mv "$TMP/victim2.ring" "$TMP/v2.jsonl.ring"
        "$VT" report --json "$TMP/v2.jsonl" >/dev/null 2>"$TMP/v2.err"
        check "planted ring of another owner: left alone" grep -q "not a regular file of the trace's owner" "$TMP/v2.err"
    else skip "planted ring of another owner: needs root"; fi
else
    skip "planted ring: no ring left by the killed program"
fi

# --- module paths that are FIFOs: the report opened them for symbols and blocked for ever
"$VT" run --sim -q -o "$TMP/f.jsonl" -- "$P" alloc >/dev/null 2>&1
mkfifo "$TMP/fifo"
tr -d '\000' <"$TMP/f.jsonl" | jq -c --arg p "$TMP/fifo" 'if .ev == "module" and (.path | endswith("/rel_fork")) then .path = $p else . end' >"$TMP/ff.jsonl"
timeout 30 "$VT" report --json "$TMP/ff.jsonl" >"$TMP/ff.json" 2>&1
check_eq "module path is a FIFO: report exits 0 (no hang), sites as module+offset" \
    "$?:$(jq -r '.allocations.count' "$TMP/ff.json"):$(jq -r '.peak_sites[0].site // .sites[0].site // "?"' "$TMP/ff.json" | grep -c '^fifo+0x')" "0:2:1"
# ... and the separate debug file its .gnu_debuglink names, a FIFO beside a stripped program
mkdir -p "$TMP/dl"
if objcopy --strip-debug "$P" "$TMP/dl/prog" 2>/dev/null && echo x >"$TMP/dl/prog.debug" &&
   objcopy --add-gnu-debuglink="$TMP/dl/prog.debug" "$TMP/dl/prog" 2>/dev/null; then
    rm "$TMP/dl/prog.debug" && mkfifo "$TMP/dl/prog.debug"
    "$VT" run --sim -q -o "$TMP/dl.jsonl" -- "$TMP/dl/prog" alloc >/dev/null 2>&1
    timeout 30 "$VT" report --json "$TMP/dl.jsonl" >"$TMP/dl.json" 2>&1
    check_eq "debuglink names a FIFO: report exits 0 (no hang) with the 2 allocations" "$?:$(jq -r '.allocations.count' "$TMP/dl.json")" "0:2"
else skip "debuglink FIFO: objcopy missing"; fi

# --- a FIFO named like a trace: report DIR blocked for ever opening it (issue 45.4) -------------
mkdir -p "$TMP/fifodir"
"$VT" run --sim -q -o "$TMP/fifodir/a.jsonl" -- "$P" alloc >/dev/null 2>&1
mkfifo "$TMP/fifodir/b.jsonl"
timeout 20 "$VT" report --json "$TMP/fifodir" >"$TMP/fifodir.json" 2>"$TMP/fifodir.err"
check_eq "report DIR with a FIFO named b.jsonl: exit 0 (no hang), the FIFO named and skipped, a.jsonl's 2 allocations reported" \
    "$?:$(grep -c 'fifodir/b.jsonl: not a regular file; skipped' "$TMP/fifodir.err"):$(jq '.allocations.count' "$TMP/fifodir.json")" "0:1:2"
timeout 20 "$VT" report "$TMP/fifodir/b.jsonl" >/dev/null 2>"$TMP/fifo1.err"
check_eq "report FIFO: exit 2 (no hang), 'not a regular file (a FIFO)'" \
    "$?:$(grep -c 'b.jsonl: not a regular file (a FIFO): not read' "$TMP/fifo1.err")" "2:1"

# --- report's output files: never through a link, never left half-written (issue 45.5) ---------
"$VT" run --sim -q -o "$TMP/out-src.jsonl" -- "$P" alloc >/dev/null 2>&1
mkdir -p "$TMP/outs"
for kind in html perfetto; do
    echo keep >"$TMP/outs/victim-$kind"
    ln -s "$TMP/outs/victim-$kind" "$TMP/outs/$kind.out"
    "$VT" report --$kind "$TMP/outs/$kind.out" "$TMP/out-src.jsonl" >/dev/null 2>&1
    check_eq "--$kind OUT where OUT is a link: exit 0, the link replaced by the report, its target untouched" \
        "$?:$(test -L "$TMP/outs/$kind.out" && echo link || echo file):$(head -c 40 "$TMP/outs/victim-$kind")" "0:file:keep"
    # the disk fills while the report is written (a 1 KiB file size limit, SIGXFSZ ignored)
    echo "old report" >"$TMP/outs/$kind.old"
    (trap '' XFSZ; ulimit -f 1; exec "$VT" report --$kind "$TMP/outs/$kind.old" "$TMP/out-src.jsonl") >/dev/null 2>"$TMP/outs/$kind.err"
    check_eq "--$kind OUT on a full disk: exit 1, OUT still holds the old report, no temporary file left" \
        "$?:$(head -c 40 "$TMP/outs/$kind.old"):$(ls -A "$TMP/outs" | grep -c "^\.$kind\.old\.")" "1:old report:0"
done
