#!/bin/sh
# rel_attacks.sh - attacks by another, unprivileged user on files root's vramtrace touches
# (docs/reliability.md "Security", issue 45). Runs as root with the user nobody as the attacker;
# skipped otherwise.
. tests/lib.sh
need_sim
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null 2>&1; then
    skip "$(basename "$0"): needs root, the user nobody and setpriv"
    exit 0
fi
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
# in the background, $! the program itself (a function run with & would be a subshell's pid)
as_nobody_bg() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@" & }
# what the attacker may run: the program, the tracer and the sim, readable by all
A="$TMP/attack"
chmod 755 "$TMP"
mkdir -p "$A/bin" "$A/home" "$A/rootdir"
cp "$PROGS/rel_crash" "$ROOT/$BUILD/libvramtrace.so" "$A/bin/" && cp -r "$SIM" "$A/bin/sim" && chmod -R a+rX "$A"
chown nobody "$A/home"
as_nobody_traced() { # OUTPUT ARGS...: a traced run as nobody
    out=$1; shift
    as_nobody env LD_LIBRARY_PATH="$A/bin/sim" LD_PRELOAD="${VRAMTRACE_PRELOAD_FIRST:+$VRAMTRACE_PRELOAD_FIRST:}$A/bin/libvramtrace.so" \
        VRAMTRACE_QUIET=1 VRAMTRACE_OUTPUT="$out" "$@"
}

# --- 1. crash recovery through a directory symlink flipped during recovery ---------------------
# nobody's dead trace and its ring (records still in it: VRAMTRACE_SYNC=defer, then SIGSEGV) sit
# in home/fake; home/d flips between home/fake and rootdir, which holds a root-owned file with the
# trace's name. Root runs report on home/d/t.jsonl. Before, the header and ring were read from
# fake and the trace reopened by path, now rootdir's: the ring's records were appended to root's
# file (about one report in eight). Now recovery does not follow a link another user owns at all
# (the trace is read as it is, and said so), and works on the descriptors it opened.
cat >"$TMP/flip.c" <<'C'
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) /* LINK TARGET_A TARGET_B SECONDS: flip LINK between the two */
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    time_t end = time(NULL) + atoi(argv[4]);
    for (unsigned long i = 0; time(NULL) < end; i++) {
        unlink(tmp);
        if (symlink(argv[2 + (i & 1)], tmp) == 0) rename(tmp, argv[1]);
    }
    return 0;
}
C
no_san cc -O1 -o "$A/bin/flip" "$TMP/flip.c" -include stdlib.h && chmod 755 "$A/bin/flip"
printf 'root file: not to be written\n' >"$A/rootdir/t.jsonl"
cp "$A/rootdir/t.jsonl" "$TMP/root-before"
as_nobody_bg "$A/bin/flip" "$A/home/d" "$A/home/fake" "$A/rootdir" 12
flipper=$!
rounds=0 reports=0 refused=0
while [ $rounds -lt 6 ]; do
    rounds=$((rounds + 1))
    as_nobody rm -rf "$A/home/fake" && as_nobody mkdir "$A/home/fake"
    VRAMTRACE_SYNC=defer as_nobody_traced "$A/home/fake/t.jsonl" "$A/bin/rel_crash" segv 2 >/dev/null 2>&1
    i=0
    while [ $i -lt 5 ]; do
        "$VT" report --json "$A/home/d/t.jsonl" >/dev/null 2>"$TMP/flip.err"
        grep -q "not recovered: $A/home/d is a link another user owns (not followed)" "$TMP/flip.err" && refused=$((refused + 1))
        i=$((i + 1)); reports=$((reports + 1))
    done
done
kill $flipper 2>/dev/null; wait $flipper 2>/dev/null
check "recovery through a flipped directory link: root's file with the trace's name is untouched ($reports reports)" \
    cmp -s "$A/rootdir/t.jsonl" "$TMP/root-before"
check_eq "... and it is still root's, mode 644" "$(stat -c '%U %a' "$A/rootdir/t.jsonl")" "root 644"
check "... the reports that found nobody's dead trace said it was not recovered through their link ($refused of $reports)" [ "$refused" -ge 1 ]
check "... and left nobody's ring alone" test -e "$A/home/fake/t.jsonl.ring"

# 1a. The same without the race: a trace reached through nobody's (still) link. A trace with no
# ring is simply read, and nothing is said about recovery; one whose ring is there is read as it
# is, and the report says once that the ring was not recovered through the link.
as_nobody mkdir "$A/home/st" "$A/home/st2"
as_nobody_traced "$A/home/st/t.jsonl" "$A/bin/rel_crash" exit 2 >/dev/null 2>&1
VRAMTRACE_SYNC=defer as_nobody_traced "$A/home/st2/t.jsonl" "$A/bin/rel_crash" segv 2 >/dev/null 2>&1
as_nobody ln -s "$A/home/st" "$A/home/sl"
as_nobody ln -s "$A/home/st2" "$A/home/sl2"
"$VT" report --json "$A/home/sl/t.jsonl" >"$TMP/sl.json" 2>"$TMP/sl.err"
check_eq "a finished trace through nobody's link: read (complete, peak 2 x 1 MiB), nothing said about recovery" \
    "$?:$(jq -c '.processes[0] | [.complete, .peak_bytes]' "$TMP/sl.json"):$(grep -c 'not recovered' "$TMP/sl.err")" "0:[true,2097152]:0"
"$VT" report --json "$A/home/sl2/t.jsonl" >/dev/null 2>"$TMP/sl2.err"
check_eq "a crashed trace with its ring through nobody's link: the report says once it was not recovered" \
    "$(grep -c "^vramtrace report: warning: $A/home/sl2/t.jsonl.ring: not recovered: $A/home/sl2 is a link another user owns (not followed); the trace is read as it is" "$TMP/sl2.err")" 1
check "... and left the ring" test -e "$A/home/st2/t.jsonl.ring"

# 1b. The trace's own directory exchanged with nobody's link to rootdir (renameat2
# RENAME_EXCHANGE, as fast as it goes) while root reports on home/rN/t.jsonl: each report either
# finds the link (and reads as is) or nobody's directory, and then everything it cuts, appends
# and removes is in the directory it found.
cat >"$TMP/exch.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) /* A B SECONDS: exchange A and B until then */
{
    time_t end = time(NULL) + atoi(argv[3]);
    if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) { perror("renameat2"); return 1; }
    while (time(NULL) < end) renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
    return 0;
}
C
if no_san cc -O1 -o "$A/bin/exch" "$TMP/exch.c" 2>/dev/null && chmod 755 "$A/bin/exch" &&
   as_nobody mkdir "$A/home/x1" "$A/home/x2" && as_nobody "$A/bin/exch" "$A/home/x1" "$A/home/x2" 0; then
    rounds=0 reports=0 recovered=0
    while [ $rounds -lt 10 ]; do
        rounds=$((rounds + 1))
        d="$A/home/r$rounds"
        as_nobody mkdir "$d" && as_nobody ln -s "$A/rootdir" "$d.alt"
        VRAMTRACE_SYNC=defer as_nobody_traced "$d/t.jsonl" "$A/bin/rel_crash" segv 2 >/dev/null 2>&1
        as_nobody_bg "$A/bin/exch" "$d" "$d.alt" 30
        exch=$!
        i=0
        while [ $i -lt 10 ]; do
            "$VT" report --json "$d/t.jsonl" >/dev/null 2>&1
            i=$((i + 1)); reports=$((reports + 1))
        done
        kill $exch 2>/dev/null; wait $exch 2>/dev/null
        [ -e "$d/t.jsonl.ring" ] || [ -e "$d.alt/t.jsonl.ring" ] || recovered=$((recovered + 1))
    done
    check "the trace's directory exchanged with a link during recovery: root's file untouched ($reports reports)" \
        cmp -s "$A/rootdir/t.jsonl" "$TMP/root-before"
    check_eq "... nothing new in root's directory" "$(ls -A "$A/rootdir" | tr '\n' ' ')" "t.jsonl "
    check "... while nobody's dead traces were recovered in place (in $recovered of 10 rounds)" [ "$recovered" -ge 5 ]
else
    skip "renameat2 RENAME_EXCHANGE not supported here"
fi

# --- 2. a TMPDIR others can write to without the sticky bit ------------------------------------
# There anyone can rename run's private list directory away and put their own at its name: a
# FIFO as traces.list blocked the traced program for ever, a link made root create and delete
# traces.list where the attacker chose. run now makes its list in /tmp then; and the tracer opens
# the list only as a regular file of its own user, non-blocking, never created.
mkdir -p "$TMP/ww" && chmod 777 "$TMP/ww"
TMPDIR="$TMP/ww" "$VT" run --sim -o "$TMP/ww-trace.jsonl" -- sh -c 'printf "%s\n" "$VRAMTRACE_MANIFEST"' >"$TMP/ww.out" 2>&1
check_eq "world-writable, not sticky TMPDIR: the list of traces is made in /tmp instead, nothing in TMPDIR" \
    "$(sed -n 1p "$TMP/ww.out" | sed 's|^/tmp/vramtrace-run-[0-9]*-[A-Za-z0-9]\{6\}/traces.list$|/tmp|'):$(ls -A "$TMP/ww" | wc -l | tr -d ' ')" "/tmp:0"
# a TMPDIR reached through a link nobody owns (to a directory of root's): they could swap it
mkdir -p "$A/rootdir5" && as_nobody ln -s "$A/rootdir5" "$A/home/tmplink"
TMPDIR="$A/home/tmplink" "$VT" run --sim -o "$TMP/tl-trace.jsonl" -- sh -c 'printf "%s\n" "$VRAMTRACE_MANIFEST"' >"$TMP/tl.out" 2>&1
check_eq "TMPDIR through nobody's link: the list of traces is made in /tmp instead, nothing in the link's target" \
    "$(sed -n 1p "$TMP/tl.out" | sed 's|^/tmp/vramtrace-run-[0-9]*-[A-Za-z0-9]\{6\}/traces.list$|/tmp|'):$(ls -A "$A/rootdir5" | wc -l | tr -d ' ')" "/tmp:0"
mkfifo "$TMP/list.fifo"
timeout 20 env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
    VRAMTRACE_MANIFEST="$TMP/list.fifo" VRAMTRACE_OUTPUT="$TMP/fifo-trace.jsonl" "$PROGS/rel_crash" exit 2 >/dev/null 2>&1
check_eq "a FIFO at the list's name: the traced program does not block, exits 0 (was killed by timeout: 124)" "$?" 0
: >"$TMP/list.other" && chown nobody "$TMP/list.other"
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
    VRAMTRACE_MANIFEST="$TMP/list.other" VRAMTRACE_OUTPUT="$TMP/other-trace.jsonl" "$PROGS/rel_crash" exit 2 >/dev/null 2>&1
check_eq "another user's file at the list's name: exit 0, nothing written into it" "$?:$(wc -c <"$TMP/list.other" | tr -d ' ')" "0:0"
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
    VRAMTRACE_MANIFEST="$TMP/list.none" VRAMTRACE_OUTPUT="$TMP/none-trace.jsonl" "$PROGS/rel_crash" exit 2 >/dev/null 2>&1
check "no file at the list's name: the tracer does not create one" test ! -e "$TMP/list.none"

# --- 3. run --bandwidth's reference file, at a name others can predict (its pid) ----------------
# nobody plants links vramtrace-bandwidth-PID.json -> a root-owned 0600 file for the next 400
# pids in a directory of theirs that root's run writes to (-o). Before, root's fopen("w")
# followed the link and overwrote its own file; now the file is created exclusively, no link
# followed, under the next free name.
mkdir -p "$A/home/out" && chown nobody "$A/home/out"
printf 'root secret\n' >"$TMP/root-secret" && chmod 600 "$TMP/root-secret"
# one process plants them all (a shell loop of ln would use up the very pids it plants for)
cat >"$TMP/plant.c" <<'C'
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) /* TARGET DIR */
{
    char name[4096];
    for (int i = 1; i <= 400; i++) {
        snprintf(name, sizeof name, "%s/vramtrace-bandwidth-%d.json", argv[2], (int)getpid() + i);
        if (symlink(argv[1], name) != 0) return 1;
    }
    return 0;
}
C
no_san cc -O1 -o "$A/bin/plant" "$TMP/plant.c" && chmod 755 "$A/bin/plant"
as_nobody "$A/bin/plant" "$TMP/root-secret" "$A/home/out"
"$VT" run --sim --bandwidth -o "$A/home/out/t.jsonl" -- true >/dev/null 2>"$TMP/bw.err"
ref=$(sed -n 's/^vramtrace: reference bandwidths in \(.*\) (use: .*/\1/p' "$TMP/bw.err")
check_eq "run --bandwidth past planted links: root's file untouched" "$(cat "$TMP/root-secret")" "root secret"
check_eq "... the reference went to a file of its own (a regular file of root's, 0600, not a link)" \
    "$(test -L "$ref" && echo link; stat -c '%F %U %a' "$ref" 2>&1)" "regular file root 600"

# --- 5. a directory link planted on the -o path ---------------------------------------------------
# nobody links home/out2/traces to a root-owned directory; root's run -o home/out2/traces/t.jsonl
# put its trace there before. A link owned by neither the user nor root is not followed.
mkdir -p "$A/home/out2" "$A/rootdir2" && chown nobody "$A/home/out2"
as_nobody ln -s "$A/rootdir2" "$A/home/out2/traces"
"$VT" run --sim -o "$A/home/out2/traces/t.jsonl" -- "$PROGS/rel_crash" exit 2 >/dev/null 2>"$TMP/dl.err"
check_eq "run -o through another user's directory link: exit 2 before the program starts, said, nothing in the link's target" \
    "$?:$(grep -c "home/out2/traces is a link another user owns (not followed); not starting" "$TMP/dl.err"):$(ls -A "$A/rootdir2" | wc -l | tr -d ' ')" "2:1:0"
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_OUTPUT="$A/home/out2/traces/t.jsonl" \
    "$PROGS/rel_crash" exit 2 >/dev/null 2>"$TMP/dl2.err"
check_eq "the tracer alone (VRAMTRACE_OUTPUT): exit 0, one line, nothing in the link's target" \
    "$?:$(grep -c 'is a link another user owns (not followed); tracing disabled' "$TMP/dl2.err"):$(ls -A "$A/rootdir2" | wc -l | tr -d ' ')" "0:1:0"

# --- 5b. the same link swapped in between the check and the open ----------------------------------
# nobody exchanges home/out3/traces, a directory of theirs, with a link of theirs to a root-owned
# directory (renameat2 RENAME_EXCHANGE, as fast as it goes). Before, the tracer checked the path
# for others' links and then created the trace by name: when the exchange fell in between, root's
# trace was created in the root-owned directory. Now the directory is reached one component at a
# time without following others' links, and the trace made in the directory reached.
mkdir -p "$A/home/out3" "$A/rootdir3" && chown nobody "$A/home/out3"
as_nobody mkdir "$A/home/out3/traces" && as_nobody ln -s "$A/rootdir3" "$A/home/out3/alt"
if [ -x "$A/bin/exch" ]; then
    as_nobody_bg "$A/bin/exch" "$A/home/out3/traces" "$A/home/out3/alt" 30
    exch=$!
    n=0
    while [ $n -lt 150 ]; do
        n=$((n + 1))
        env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
            VRAMTRACE_OUTPUT="$A/home/out3/traces/t-%p.jsonl" "$PROGS/rel_crash" exit 2 >/dev/null 2>&1
    done
    kill $exch 2>/dev/null; wait $exch 2>/dev/null
    made=$(find "$A/home/out3" -name 't-*.jsonl' | wc -l | tr -d ' ')
    check_eq "a link exchanged in during 150 traced runs: no trace in the root-owned directory" "$(ls -A "$A/rootdir3" | wc -l | tr -d ' ')" 0
    check "... while the runs that found nobody's directory traced into it ($made of 150)" [ "$made" -ge 1 ]
else
    skip "renameat2 RENAME_EXCHANGE not supported here"
fi

# --- 5c. report's and bandwidth's output files under another user's directory link ----------------
# nobody links home/out4/o to a root-owned directory; root writes report --html/--perfetto and
# bandwidth -o under home/out4/o. Before, the new file was made and renamed where the link
# pointed; now the output's directory is reached without following another user's link.
mkdir -p "$A/home/out4" "$A/rootdir4" && chown nobody "$A/home/out4"
as_nobody ln -s "$A/rootdir4" "$A/home/out4/o"
"$VT" run --sim -q -o "$TMP/o4-src.jsonl" -- "$PROGS/rel_crash" exit 2 >/dev/null 2>&1
for kind in html perfetto; do
    "$VT" report --$kind "$A/home/out4/o/r.$kind" "$TMP/o4-src.jsonl" >/dev/null 2>"$TMP/o4-$kind.err"
    check_eq "report --$kind under nobody's directory link: exit 1, said, nothing in the link's target" \
        "$?:$(grep -c "r.$kind: Operation not permitted" "$TMP/o4-$kind.err"):$(ls -A "$A/rootdir4" | wc -l | tr -d ' ')" "1:1:0"
done
"$VT" bandwidth --dump-ptx -o "$A/home/out4/o/k.ptx" >/dev/null 2>"$TMP/o4-bw.err"
check_eq "bandwidth -o under nobody's directory link: exit 1, nothing in the link's target" \
    "$?:$(ls -A "$A/rootdir4" | wc -l | tr -d ' ')" "1:0"
# the user's own link is followed as before
ln -s "$A/rootdir4" "$TMP/mylink"
"$VT" report --html "$TMP/mylink/r.html" "$TMP/o4-src.jsonl" >/dev/null 2>&1
check_eq "report --html under root's own link: exit 0, the report in its target" "$?:$(ls -A "$A/rootdir4")" "0:r.html"
