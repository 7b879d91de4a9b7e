#!/bin/sh
# run_messages.sh - what `vramtrace run` says at the end is true: the real trace paths to analyse,
# a template's missing directories made (or the program not started, with the reason), "never
# used CUDA" only when the tracer was loaded and no process used CUDA, and why a process has no
# trace, even with -q (docs/reliability.md "Messages").
# A killed run's directories in /tmp are removed by the next run anywhere: checked with nothing beside it.
# test: alone
. tests/lib.sh
need_sim
P="$PROGS/rel_fork" # "alloc": two cudaMalloc, one cudaFree; prints pid=P
W="$TMP/w"
mkdir -p "$W"

# the README's multi-rank recipe with traces/ missing: made (0700), the trace lands in it, and the
# last line names it for `vramtrace report`
(cd "$W" && RANK=3 "$VT" run --sim -o 'traces/rank%r-%p.jsonl' -- "$P" alloc >"$TMP/r1.out" 2>"$TMP/r1.err")
check_eq "missing traces/: exit 0" "$?" 0
pid=$(sed -n 's/^pid=//p' "$TMP/r1.out")
check_eq "missing traces/: made 0700, holding rank3-PID.jsonl" "$(stat -c %a "$W/traces"):$(ls "$W/traces")" "700:rank3-$pid.jsonl"
check_eq "missing traces/: the trace holds the program's 2 allocations" \
    "$(jqs "$W/traces/rank3-$pid.jsonl" '[.[] | select(.ev == "alloc")] | length')" 2
check_eq "missing traces/: the last line names the real trace" "$(tail -1 "$TMP/r1.err")" \
    "vramtrace: analyse with: vramtrace report $W/traces/rank3-$pid.jsonl"
check_eq "no literal TRACE placeholder" "$(grep -c 'report TRACE' "$TMP/r1.err")" 0
(cd "$W" && "$VT" run --sim -q -o 'traces-q/rank%r-%p.jsonl' -- "$P" alloc >/dev/null 2>"$TMP/r1q.err")
check_eq "missing traces/, -q: exit 0, silent, one trace written" "$?:$(wc -c <"$TMP/r1q.err" | tr -d ' '):$(ls "$W/traces-q" | wc -l | tr -d ' ')" 0:0:1

# directories with % letters are made by the process itself, 0700 each
"$VT" run --sim -q -o "$W/per-host/%h/t-%p.jsonl" -- "$P" alloc >"$TMP/r2.out" 2>&1
pid=$(sed -n 's/^pid=//p' "$TMP/r2.out")
check_eq "per-host directory from %h: made 0700 at each level, trace inside" \
    "$(stat -c %a "$W/per-host" "$W/per-host/$(hostname)" | tr '\n' ' ')$(ls "$W/per-host/$(hostname)")" "700 700 t-$pid.jsonl"

# a template that cannot work: said before the program starts, which never runs
: >"$W/afile"
"$VT" run --sim -o "$W/afile/x/t.jsonl" -- "$P" alloc >"$TMP/r3.out" 2>"$TMP/r3.err"
check_eq "template under a file: exit 1, the program never started" "$?:$(wc -c <"$TMP/r3.out" | tr -d ' ')" 1:0
check_eq "template under a file: the reason, in one line" "$(cat "$TMP/r3.err")" \
    "vramtrace run: cannot use $W/afile/x for traces: Not a directory; not starting $P"

# a process whose trace cannot be created: said, even with -q, and not "never used CUDA"
mkdir -p "$W/blocked" && : >"$W/blocked/$(hostname)"
"$VT" run --sim -q -o "$W/blocked/%h/t.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/r4.err"
check_eq "trace cannot be created, -q: exit 0 and one line saying why" "$?:$(cat "$TMP/r4.err")" \
    "0:vramtrace: a process has no trace: cannot create trace file $W/blocked/$(hostname)/t.jsonl: Not a directory"
"$VT" run --sim -o "$W/blocked/%h/t.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/r4v.err"
check_eq "trace cannot be created: the process says it once, when it happens, and nothing else follows" "$?:$(cat "$TMP/r4v.err")" \
    "0:vramtrace: cannot create trace file $W/blocked/$(hostname)/t.jsonl: Not a directory; tracing disabled for this process"

# no CUDA at all: the tracer was loaded, nothing used CUDA
"$VT" run --sim -o "$W/none.jsonl" -- /bin/sh -c 'exit 4' >/dev/null 2>"$TMP/r5.err"
check_eq "no CUDA: exit 4, never used CUDA, nothing to analyse" "$?:$(cat "$TMP/r5.err")" \
    "4:vramtrace: no trace written (the program never used CUDA)"

# a statically linked program: LD_PRELOAD cannot reach it, so nothing can say it never used CUDA
printf 'int main(void) { return 0; }\n' >"$TMP/static.c"
if no_san cc -static -o "$TMP/static" "$TMP/static.c" 2>/dev/null; then
    "$VT" run --sim -o "$W/static.jsonl" -- "$TMP/static" >/dev/null 2>"$TMP/r6.err"
    check_eq "static program: exit 0, the tracer was never loaded" "$?:$(grep -c 'the tracer was never loaded' "$TMP/r6.err"):$(grep -c 'never used CUDA' "$TMP/r6.err")" 0:1:0
else skip "static program: no static libc to link with"; fi

# vramtrace installed under a path with a space: the loader splits LD_PRELOAD at spaces (and
# colons), so run preloads it through a link in a private directory it removes at the end
SP="$TMP/my tools"
mkdir -p "$SP" "$TMP/tmpd" && cp "$VT" "$ROOT/$BUILD/libvramtrace.so" "$SP/" && cp -r "$SIM" "$SP/sim"
TMPDIR="$TMP/tmpd" "$SP/vramtrace" run --sim -o "$W/space.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/r8.err"
check_eq "tracer under 'my tools/': exit 0, the program's 2 allocations traced" \
    "$?:$(jqs "$W/space.jsonl" '[.[] | select(.ev == "alloc")] | length')" 0:2
check_eq "tracer under 'my tools/': no loader error, no claim the tracer was never loaded" \
    "$(grep -c 'cannot be preloaded' "$TMP/r8.err"):$(grep -c 'never loaded' "$TMP/r8.err")" 0:0
check_eq "tracer under 'my tools/': the link's private directory is gone after the run" "$(ls "$TMP/tmpd" | wc -l | tr -d ' ')" 0
# a library whose path has a colon and a '$' (VRAMTRACE_LIB), TMPDIR missing: the link goes to /tmp
CO="$TMP/a:b\$ORIGIN"
mkdir -p "$CO" && cp "$ROOT/$BUILD/libvramtrace.so" "$CO/"
TMPDIR="$W/no-such-dir" VRAMTRACE_LIB="$CO/libvramtrace.so" "$VT" run --sim -o "$W/colon.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/r9.err"
check_eq "library under 'a:b\$ORIGIN/': exit 0, the program's 2 allocations traced, no loader error" \
    "$?:$(jqs "$W/colon.jsonl" '[.[] | select(.ev == "alloc")] | length'):$(grep -c 'cannot be preloaded' "$TMP/r9.err")" 0:2:0

# the list of traces cannot be made (TMPDIR missing): said up front; the trace is still written
TMPDIR="$W/no-such-dir" "$VT" run --sim -o "$W/nolist.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/r7.err"
check_eq "no list of traces: exit 0, the trace still written" "$?:$(jqs "$W/nolist.jsonl" '.[0].ev')" 0:header
check_eq "no list of traces: said before and after, never 'never used CUDA'" \
    "$(grep -c "cannot create the list of traces in $W/no-such-dir: No such file or directory" "$TMP/r7.err"):$(grep -c "traces go to $W/nolist.jsonl" "$TMP/r7.err"):$(grep -c 'never used CUDA' "$TMP/r7.err")" 1:1:0
# run --bandwidth without a usable GPU (always so under --sim here): only host rows, said so
if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
    (cd "$TMP" && "$VT" run --sim --bandwidth -o "$TMP/bwrun.jsonl" -- /bin/true >/dev/null 2>"$TMP/bwrun.err")
    check "run --sim --bandwidth: says the reference has host rows only" grep -q '^vramtrace: no GPU measured here: the reference has host rows only; for the GPU rows run `vramtrace bandwidth --json -o ref.json` on the machine with the GPU' "$TMP/bwrun.err"
else skip "run --bandwidth host-rows message: a GPU is usable here"; fi

# --- the -o template's expansions (issue 45.5) -----------------------------------------------
# %r and %e name one path component: RANK=../.. stayed a climb out of the template's directory
mkdir -p "$W/tmpl/a"
(cd "$W/tmpl/a" && RANK=../.. "$VT" run --sim -q -o 'r%r-t.jsonl' -- "$P" alloc >/dev/null 2>&1)
check_eq "RANK=../..: the trace stays in the template's directory, the rank's slashes and dots made '_'" \
    "$(ls "$W/tmpl/a"):$(ls "$W/tmpl" | tr '\n' ' ')" "r.._..-t.jsonl:a "
RANK=.. "$VT" run --sim -q -o "$W/tmpl/%r/t.jsonl" -- "$P" alloc >/dev/null 2>&1
check "RANK=..: a directory of underscores, not the template's parent" test -f "$W/tmpl/__/t.jsonl"
# the characters a component keeps as they are: [A-Za-z0-9._+-] (one of each class here)
mkdir -p "$W/tmpl/keep"
RANK='zZ9.a_b+c-d' "$VT" run --sim -q -o "$W/tmpl/keep/r%r.jsonl" -- "$P" alloc >/dev/null 2>&1
check_eq "RANK=zZ9.a_b+c-d: letters, digits, '.', '_', '+' and '-' are kept as they are" "$(ls "$W/tmpl/keep")" "rzZ9.a_b+c-d.jsonl"
# %r: the first of RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID that is set and not empty, else 0
mkdir -p "$W/tmpl/rk"
for c in "a OMPI_COMM_WORLD_RANK=7 PMI_RANK=8 SLURM_PROCID=9" "b RANK= OMPI_COMM_WORLD_RANK= PMI_RANK=8 SLURM_PROCID=9" \
         "c SLURM_PROCID=9 LOCAL_RANK=4" "d LOCAL_RANK=4 SLURM_LOCALID=5"; do
    set -- $c
    n=$1; shift
    env -u RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID "$@" "$VT" run --sim -q -o "$W/tmpl/rk/$n%r.jsonl" -- "$P" alloc >/dev/null 2>&1
done
check_eq "%r from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID in turn (empty ones passed over), else 0" \
    "$(ls "$W/tmpl/rk" | tr '\n' ' ')" "a7.jsonl b8.jsonl c9.jsonl d0.jsonl "
# '%%' is one '%'; a '%' before any other character, or last, is kept as written
mkdir -p "$W/tmpl/pct"
"$VT" run --sim -q -o "$W/tmpl/pct/a%%b%q%.jsonl%" -- "$P" alloc >/dev/null 2>&1
check_eq "template a%%b%q%.jsonl%: the trace a%b%q%.jsonl%" "$(ls "$W/tmpl/pct")" "a%b%q%.jsonl%"
# a newline in the program's file name: one line in run's list, not a forged "trace written to"
nl='
'
cp "$P" "$W/tmpl/prog${nl}vramtrace: trace written to FORGED"
"$VT" run --sim -o "$W/tmpl/%e.jsonl" -- "$W/tmpl/prog${nl}vramtrace: trace written to FORGED" alloc >/dev/null 2>"$TMP/nl.err"
check_eq "a newline in the program's name: exit 0, no forged line, the trace named with '_'" \
    "$?:$(grep -c '^vramtrace: trace written to FORGED' "$TMP/nl.err"):$(grep -c "^vramtrace: trace written to $W/tmpl/prog_vramtrace__trace_written_to_FORGED.jsonl\$" "$TMP/nl.err")" "0:0:1"
# an expansion past 4096 bytes: said, no trace at a shortened name
long=$(printf '%04000d' 0)
RANK=$long "$VT" run --sim -o "$W/tmpl/long/%r%r.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/long.err"
check_eq "an expansion over 4096 bytes: exit 0, said, nothing written at a cut name" \
    "$?:$(grep -c 'over 4095 bytes once expanded; tracing disabled' "$TMP/long.err"):$(ls "$W/tmpl/long" 2>/dev/null | wc -l | tr -d ' ')" "0:1:0"
# -o /dev/stdout: not a file the tracer can map (it made /dev/stdout.1 before)
"$VT" run --sim -o /dev/stdout -- "$P" alloc >/dev/null 2>"$TMP/stdout.err"
check_eq "-o /dev/stdout: exit 2 before the program starts, one line, no /dev/stdout.1" \
    "$?:$(wc -l <"$TMP/stdout.err" | tr -d ' '):$(test -e /dev/stdout.1 && echo made)" "2:1:"

# --- run's private directories do not outlive it (issue 45.5) ----------------------------------
mkdir -p "$TMP/rt"
TMPDIR="$TMP/rt" "$VT" run --sim -o "$W/sig.jsonl" -- "$PROGS/rel_crash" sleep 1 >"$TMP/sig.out" 2>"$TMP/sig.err" &
vt=$!
i=0
while ! grep -q '^ready' "$TMP/sig.out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $vt; wait $vt
check_eq "SIGTERM to run: passed to the program (exit 143), the trace named, run's directory removed" \
    "$?:$(grep -c "trace written to $W/sig.jsonl" "$TMP/sig.err"):$(ls -A "$TMP/rt" | wc -l | tr -d ' ')" "143:1:0"
# kill_run_when_ready OUT TMPDIR VRAMTRACE -o TRACE: a run of rel_crash (sleeping) SIGKILLed once its
# program is ready, and the program after it (a killed run leaves its directories behind)
kill_run_when_ready() {
    TMPDIR="$2" "$3" run --sim -o "$4" -- "$PROGS/rel_crash" sleep 1 >"$1" 2>&1 &
    vt=$!
    i=0
    while ! grep -q '^ready' "$1" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL $vt; wait $vt 2>/dev/null
    kill -KILL "$(sed -n 's/^ready pid=//p' "$1")" 2>/dev/null
}
kill_run_when_ready "$TMP/sig2.out" "$TMP/rt" "$VT" "$W/sig2.jsonl"
check_eq "SIGKILL to run: its directory is left" "$(ls -A "$TMP/rt" | grep -c '^vramtrace-run-')" 1
TMPDIR="$TMP/rt" "$VT" run --sim -q -o "$W/sig3.jsonl" -- "$P" alloc >/dev/null 2>&1
check_eq "... and the next run removes it (its run is gone)" "$(ls -A "$TMP/rt" | wc -l | tr -d ' ')" 0
# the tracer under 'my tools/' and a TMPDIR LD_PRELOAD cannot carry: the list goes to TMPDIR, the
# link's directory to /tmp; a SIGKILLed run leaves both, the next run removes both
mkdir -p "$TMP/rt sp"
kill_run_when_ready "$TMP/sig4.out" "$TMP/rt sp" "$SP/vramtrace" "$W/sig4.jsonl"
check_eq "SIGKILL to run with its link in /tmp: both directories left" \
    "$(ls -A "$TMP/rt sp" | grep -c "^vramtrace-run-$vt-"):$(ls -A /tmp | grep -c "^vramtrace-lib-$vt-")" 1:1
TMPDIR="$TMP/rt sp" "$SP/vramtrace" run --sim -q -o "$W/sig5.jsonl" -- "$P" alloc >/dev/null 2>&1
check_eq "... and the next run removes both" \
    "$(ls -A "$TMP/rt sp" | wc -l | tr -d ' '):$(ls -A /tmp | grep -c "^vramtrace-lib-$vt-")" 0:0
