#!/bin/sh
# rel_signals.sh - a signal handler that calls exit() (as servers' SIGTERM handlers do) while its
# thread is inside a CUDA call, so inside the tracer's hook and maybe holding one of its locks:
# the program exits as it would untraced, and the trace can still be read (docs/reliability.md).
. tests/lib.sh
need_sim
P="$PROGS/rel_sigexit"
# run NAME N [VAR=VALUE...] [-- ARGS]: N runs with alarm delays spread over 2-22 ms; counts runs
# that exit 0 (a deadlock is killed by timeout: 124; 20 s, since a sanitized run on a loaded
# 2-core machine took over 5 s once), traces report can read, and runs that say they were
# interrupted holding a tracer lock. A run that fails is run once more and its failure kept in
# $bad (CI shows only the check's line): 1 run in 40 failed in two CI runs of 2026-12-06, never
# in 300 local runs under load; the checks below allow one such retry per case, no more.
runs() {
    name=$1 n=$2; shift 2
    good=0 readable=0 held=0 i=0 bad="" retries=0
    while [ $i -lt "$n" ]; do
        i=$((i + 1))
        d=$((2000 + i * 337 % 20000))
        for attempt in 1 2; do
            rm -f "$TMP/$name.jsonl"
            env "$@" timeout 20 "$VT" run --sim -o "$TMP/$name.jsonl" -- "$P" $d ${threads:-1} >"$TMP/$name.out" 2>"$TMP/$name.err"
            rc=$?
            if [ $rc -eq 0 ] && grep -q '^started$' "$TMP/$name.out"; then good=$((good + 1)); break; fi
            echo "# $name run $i (delay $d us), attempt $attempt: exit $rc"
            bad="$bad [run $i, delay $d us: exit $rc, out '$(tr '\n' ' ' <"$TMP/$name.out" | cut -c1-60)', err '$(tail -2 "$TMP/$name.err" | tr '\n' ' ' | cut -c1-160)']"
            [ $attempt = 1 ] && retries=$((retries + 1))
        done
        "$VT" report --json "$TMP/$name.jsonl" >/dev/null 2>&1 && readable=$((readable + 1))
        grep -q 'exit() called from a signal handler inside a CUDA call' "$TMP/$name.err" && held=$((held + 1))
    done
}
# inline draining (VRAMTRACE_SYNC=1) holds the drain lock in the program's thread for most of
# each call: about a quarter of the alarms land while it is held (1 in 60 runs hung before)
runs sync 40 VRAMTRACE_SYNC=1
check_eq "exit() from SIGALRM's handler, inline draining: all 40 runs exit 0, at most one on a second try$bad" "$good $((retries <= 1))" "40 1"
check_eq "... and every trace reads (report --json exits 0)" "$readable" 40
check "... at least one alarm landed while a tracer lock was held (saw $held of 40)" [ "$held" -ge 1 ]
runs plain 20
check_eq "exit() from SIGALRM's handler, drain thread: all 20 runs exit 0 (at most one on a second try), every trace reads$bad" "$good:$readable:$((retries <= 1))" 20:20:1
threads=3 runs threads 15
check_eq "exit() from SIGALRM's handler with 3 threads in CUDA calls: all 15 runs exit 0 (at most one on a second try), every trace reads$bad" "$good:$readable:$((retries <= 1))" 15:15:1
