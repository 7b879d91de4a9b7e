#!/bin/sh
# cli_conventions.sh - the command-line habits of other GNU tools work in every command (issue 51):
# --opt=V and --opt V, -- ends the options, - reads standard input, -V/--version/version, help CMD,
# bad usage one line with status 2, the text report only when no other format was asked for (or
# with --text), a directory's NAME.jsonl.N traces read, a file named twice read once.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
export TZ=UTC

# ---- version: the one in the public header, from every command -----------------------------------
want="vramtrace $(sed -n 's/^#define VRAMTRACE_VERSION "\([^"]*\)".*/\1/p' "$ROOT/include/vramtrace/vramtrace.h")"
for args in "-V" "--version" "version" "report -V" "report --version" "run -V" "run --version" "bandwidth -V" "bandwidth --version"; do
    # shellcheck disable=SC2086
    got=$("$VT" $args 2>&1); rc=$?
    check_eq "'$args': the header's version, exit 0" "$rc:$got" "0:$want"
done

# ---- help CMD is the command's own --help ---------------------------------------------------------
for cmd in run report bandwidth; do
    "$VT" "$cmd" --help >"$TMP/h1" 2>&1
    "$VT" help "$cmd" >"$TMP/h2" 2>&1; rc=$?
    check "help $cmd: exit 0, the same text as '$cmd --help', its own usage line" \
        sh -c '[ "$1" = 0 ] && cmp -s "$2" "$3" && head -1 "$3" | grep -q "^usage: vramtrace $4 "' _ "$rc" "$TMP/h1" "$TMP/h2" "$cmd"
done
"$VT" help >"$TMP/h" 2>&1
check "help: the general usage lists help and version" sh -c 'grep -q "^  help \[COMMAND\]" "$1" && grep -q "^  version " "$1"' _ "$TMP/h"
"$VT" help bogus >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "help bogus: one line, exit 2" "$rc:$(cat "$TMP/e")" "2:vramtrace help: unknown command 'bogus' (try 'vramtrace help')"

# ---- --opt=V and --opt V: the same report -----------------------------------------------------------
# oom.jsonl's peak holds three sites (report_basic.sh): --top 1 keeps one alloc row in Peak:
"$VT" report --top 1 "$D/oom.jsonl" >"$TMP/t1" 2>&1
"$VT" report --top=1 "$D/oom.jsonl" >"$TMP/t2" 2>&1; rc=$?
check "--top=1 is --top 1 (exit 0, same text)" sh -c '[ "$1" = 0 ] && cmp -s "$2" "$3"' _ "$rc" "$TMP/t1" "$TMP/t2"
check_eq "--top=1: one row in Peak:" "$(sed -n '/^Peak:/,/^$/p' "$TMP/t2" | grep -c alloc)" 1
"$VT" report "$D/oom.jsonl" --top 1 >"$TMP/t3" 2>&1
check "an option after the trace counts too" cmp -s "$TMP/t1" "$TMP/t3"
"$VT" report --fail-on leak "$D/oom.jsonl" >/dev/null 2>&1; a=$?
"$VT" report --fail-on=leak "$D/oom.jsonl" >/dev/null 2>&1; b=$?
check_eq "--fail-on leak and --fail-on=leak: the same status (oom.jsonl leaks: 3)" "$a:$b" "3:3"

# ---- bad usage: one line naming the option, exit 2, nothing on stdout -------------------------------
for args in "report --frob $D/oom.jsonl|vramtrace report: unknown option '--frob' (try 'vramtrace report --help')" \
            "report --json=1 $D/oom.jsonl|vramtrace report: option '--json' takes no value (try 'vramtrace report --help')" \
            "report $D/oom.jsonl --top|vramtrace report: option '--top' needs a value (try 'vramtrace report --help')" \
            "report --top=0 $D/oom.jsonl|vramtrace report: --top needs a number from 1 to 100000, not '0' (try 'vramtrace report --help')" \
            "report -x $D/oom.jsonl|vramtrace report: unknown option '-x' (try 'vramtrace report --help')" \
            "report --json --text $D/oom.jsonl|vramtrace report: --json --text: choose one of --json and --text for standard output (try 'vramtrace report --help')" \
            "run --check=bad -- true|vramtrace run: --check must be record, abort or off, not 'bad' (try 'vramtrace run --help')" \
            "run --check|vramtrace run: option '--check' needs a value (try 'vramtrace run --help')" \
            "run -o|vramtrace run: option '-o' needs a value (try 'vramtrace run --help')" \
            "run --sim=1 true|vramtrace run: option '--sim' takes no value (try 'vramtrace run --help')" \
            "bandwidth --trials|vramtrace bandwidth: option '--trials' needs a value (try 'vramtrace bandwidth --help')"; do
    cmd=${args%%|*}; want=${args#*|}
    # shellcheck disable=SC2086
    "$VT" $cmd >"$TMP/o" 2>"$TMP/e"; rc=$?
    check_eq "'$cmd': one line, exit 2, no stdout" "$rc:$(cat "$TMP/e"):$(wc -c <"$TMP/o" | tr -d ' ')" "2:$want:0"
done

# ---- run: options in both forms, and the program's own options are its own -------------------------
"$VT" run --check abort -q -- sh -c 'echo "$VRAMTRACE_CHECK $0 $1"' -x --top >"$TMP/o" 2>&1; rc=$?
check_eq "run --check abort (a space): set for the program; -x --top after the program are its own" "$rc:$(cat "$TMP/o")" "0:abort -x --top"
"$VT" run --check=off -q sh -c 'echo "$VRAMTRACE_CHECK"' >"$TMP/o" 2>&1; rc=$?
check_eq "run without --: the first word that is not an option starts the program" "$rc:$(cat "$TMP/o")" "0:off"
"$VT" run -q --output "$TMP/x-%p.jsonl" -- sh -c 'echo "$VRAMTRACE_OUTPUT"' >"$TMP/o" 2>&1
check_eq "run --output PATH (a space)" "$(cat "$TMP/o")" "$TMP/x-%p.jsonl"

# ---- -- ends the options: a trace whose name starts with a dash ------------------------------------
cp "$D/oom.jsonl" "$TMP/-odd.jsonl"
(cd "$TMP" && "$VT" report --json -- -odd.jsonl >"$TMP/o" 2>"$TMP/e"); rc=$?
check_eq "report -- -odd.jsonl: read as a trace (peak 3.50 GiB)" "$rc:$(jq .peak_bytes "$TMP/o")" "0:3758096384"

# ---- - reads standard input --------------------------------------------------------------------------
"$VT" report --json "$D/oom.jsonl" >"$TMP/file.json" 2>&1
cat "$D/oom.jsonl" | "$VT" report --json - >"$TMP/pipe.json" 2>"$TMP/e"; rc=$?
check_eq "report - from a pipe: exit 0, no message, peak 3.50 GiB, 2 GiB leaked (report_basic.sh)" \
    "$rc:$(wc -c <"$TMP/e" | tr -d ' '):$(jq -c '[.peak_bytes,.leaked_bytes]' "$TMP/pipe.json")" "0:0:[3758096384,2147483648]"
check "report - : the same JSON as from the file but for the trace's name" \
    sh -c 'jq -S "walk(if type == \"object\" then del(.trace) else . end)" "$1" >"$1.n" && jq -S "walk(if type == \"object\" then del(.trace) else . end)" "$2" >"$2.n" && cmp -s "$1.n" "$2.n"' _ "$TMP/file.json" "$TMP/pipe.json"
"$VT" report - <"$D/oom.jsonl" >"$TMP/o" 2>&1; rc=$?
check "report - < FILE: the text names <stdin>, peak 3.50 GiB" sh -c '[ "$1" = 0 ] && grep -q "peak VRAM     3.50 GiB" "$2"' _ "$rc" "$TMP/o"
printf '{"ev":"header"\n' | "$VT" report - >"$TMP/o" 2>"$TMP/e"; rc=$?
check "report - with a bad trace: exit 2, one line naming <stdin>:1" sh -c '[ "$1" = 2 ] && [ "$(wc -l <"$2")" = 1 ] && grep -q "^vramtrace report: <stdin>:1: " "$2"' _ "$rc" "$TMP/e"
"$VT" report - - <"$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "report - -: exit 2, one line" "$rc:$(cat "$TMP/e")" "2:vramtrace report: -: standard input can be read once, not given twice"
cat "$D/ranks/rank0.jsonl" | "$VT" report --json --diff - "$D/ranks/rank2.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "report --diff - NEW: exit 0, base peak from stdin (257 MiB), new 769 MiB" \
    "$rc:$(jq -c '[.base.peak_bytes,.new.peak_bytes]' "$TMP/o" 2>/dev/null)" "0:[269484032,806354944]"

# ---- the text report only when no other format is asked for -----------------------------------------
"$VT" report --html "$TMP/r.html" "$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "--html FILE: exit 0, nothing on stdout, the file written" "$rc:$(wc -c <"$TMP/o" | tr -d ' '):$(grep -c '<html' "$TMP/r.html")" "0:0:1"
"$VT" report --perfetto "$TMP/r.pf.json" "$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "--perfetto FILE: exit 0, nothing on stdout, a JSON file" "$rc:$(wc -c <"$TMP/o" | tr -d ' '):$(jq -r 'type' "$TMP/r.pf.json")" "0:0:object"
"$VT" report --html "$TMP/r2.html" --text "$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check "--html FILE --text: the text report too" sh -c '[ "$1" = 0 ] && grep -q "peak VRAM     3.50 GiB" "$2" && [ -s "$3" ]' _ "$rc" "$TMP/o" "$TMP/r2.html"
"$VT" report --html "$TMP/r3.html" --json "$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "--html FILE --json: the JSON on stdout" "$rc:$(jq .peak_bytes "$TMP/o")" "0:3758096384"

# ---- a directory: NAME.jsonl and the NAME.jsonl.N the tracer writes when NAME.jsonl exists ----------
mkdir "$TMP/dir"
cp "$D/ranks/rank0.jsonl" "$TMP/dir/t.jsonl"
cp "$D/ranks/rank1.jsonl" "$TMP/dir/t.jsonl.1"
cp "$D/ranks/rank2.jsonl" "$TMP/dir/t.jsonl.10"
printf 'not a trace' >"$TMP/dir/u.jsonl.ring"     # a crash journal: never a trace
printf 'not a trace' >"$TMP/dir/t.jsonl.old"
"$VT" report --json "$TMP/dir" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "report DIR: t.jsonl, t.jsonl.1, t.jsonl.10 (ranks 0,1,2 in that order); .ring and .old not read" \
    "$rc:$(jq -c '[.traces, [.processes[].rank]]' "$TMP/o"):$(wc -c <"$TMP/e" | tr -d ' ')" "0:[3,[0,1,2]]:0"

# the edges of the names: N from 1 to 99 without a leading 0, ordered as numbers (9 before 10, 10
# before 99); a file named otherwise is not read (each holds no trace: one read would say so)
mkdir "$TMP/dir2"
cp "$D/ranks/rank0.jsonl" "$TMP/dir2/t.jsonl.9"
cp "$D/ranks/rank1.jsonl" "$TMP/dir2/t.jsonl.10"
cp "$D/ranks/rank2.jsonl" "$TMP/dir2/t.jsonl.99"
for bad in t.jsonl.0 t.jsonl.05 t.jsonl.100 t.jsonl.1a .jsonl t.jsonlx t.json t.jsonl. ; do printf 'not a trace' >"$TMP/dir2/$bad"; done
"$VT" report --json "$TMP/dir2" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "report DIR: t.jsonl.9, .10, .99 in that order (ranks 0,1,2); .0, .05, .100, .1a, .jsonl, .jsonlx, .json, '.jsonl.' not read" \
    "$rc:$(jq -c '[.traces, [.processes[].rank]]' "$TMP/o"):$(wc -c <"$TMP/e" | tr -d ' ')" "0:[3,[0,1,2]]:0"

# ---- the same file twice is one process ---------------------------------------------------------------
"$VT" report --json "$D/oom.jsonl" "$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "the same trace twice: one process, peak 3.50 GiB, said once" \
    "$rc:$(jq -c '[.traces,.peak_bytes]' "$TMP/o"):$(cat "$TMP/e")" "0:[1,3758096384]:vramtrace report: $D/oom.jsonl: given twice: read once"
ln -s "$D/ranks/rank1.jsonl" "$TMP/link.jsonl"
"$VT" report --json "$D/ranks" "$TMP/link.jsonl" "$D/ranks/rank2.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "a directory, a link to one of its traces and one by name: 3 processes, leaks summed once (1.50 GiB)" \
    "$rc:$(jq -c '[.traces,.leaked_bytes,.combined.sum_of_peaks_bytes]' "$TMP/o"):$(wc -l <"$TMP/e" | tr -d ' ')" "0:[3,1610612736,1613758464]:2"
check "... each second naming said" sh -c 'grep -q "^vramtrace report: $1: the same file as $2/rank1.jsonl: read once$" "$3" && grep -q "^vramtrace report: $2/rank2.jsonl: given twice: read once$" "$3"' _ "$TMP/link.jsonl" "$D/ranks" "$TMP/e"
"$VT" report --json --diff "$D/oom.jsonl" "$D/oom.jsonl" >"$TMP/o" 2>"$TMP/e"; rc=$?
check_eq "--diff A A: each run reads it (no change)" "$rc:$(jq -c '[.base.peak_bytes,.new.peak_bytes]' "$TMP/o")" "0:[3758096384,3758096384]"

# ---- progress: on a terminal only (script(1) gives the command one), never in a log -----------------
# 200000 allocations of 4 KiB: about 27 MB of trace, over the 16 MiB a report shows progress for
awk 'BEGIN {
    print "{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.1.0\",\"pid\":801,\"ppid\":1,\"program\":\"/opt/job\",\"argv\":[\"job\"],\"t\":1000000000,\"wall_time\":1764680000,\"hostname\":\"h\",\"rank\":{},\"page_size\":4096,\"backtraces\":false,\"checks\":\"off\"}"
    for (i = 0; i < 200000; i++)
        printf "{\"ev\":\"alloc\",\"t\":%d,\"dur\":100,\"tid\":801,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x7e%010x\",\"size\":4096,\"mem\":\"device\"}\n", 2000000000 + i * 10, i * 4096
}' >"$TMP/big.jsonl"
if ! command -v script >/dev/null 2>&1; then
    skip "progress on a terminal: NOT TESTED - no script(1) (util-linux) to give the command a terminal"
else
    script -qec "'$VT' report --json '$TMP/big.jsonl' >'$TMP/big.json'" /dev/null >"$TMP/tty" 2>&1; rc=$?
    check_eq "report on a terminal: exit 0, the JSON (200000 allocations of 4 KiB live: 800 MiB)" "$rc:$(jq .peak_bytes "$TMP/big.json")" "0:819200000"
    check "report on a terminal: a progress line redrawn in place, then cleared" \
        sh -c 'tr "\r" "\n" <"$1" | grep -q "^.\[Kvramtrace report: reading trace 1 of 1: [0-9]*% ([0-9.]* MiB of 25.94 MiB)$" && [ "$(tail -c 4 "$1" | od -An -c | tr -d " ")" = "\r033[K" ]' _ "$TMP/tty"
    script -qec "'$VT' bandwidth --no-gpu --trials 1 --host-size 16M --sysfs-root '$ROOT/tests/data/sysfs/gen5' >'$TMP/bw.txt'" /dev/null >"$TMP/tty" 2>&1; rc=$?
    check "bandwidth on a terminal: says what it measures and each row as it is done" \
        sh -c '[ "$1" = 0 ] && tr "\r" "\n" <"$2" | grep -q "vramtrace bandwidth: measuring host DDR (copy and triad)$" && tr "\r" "\n" <"$2" | grep -q "vramtrace bandwidth: host_ddr_triad: [0-9.]* GB/s (2 rows done)$"' _ "$rc" "$TMP/tty"
fi
"$VT" report --json "$TMP/big.jsonl" >"$TMP/big2.json" 2>"$TMP/e"; rc=$?
check_eq "report into a pipe or file: nothing on stderr" "$rc:$(wc -c <"$TMP/e" | tr -d ' ')" "0:0"
"$VT" bandwidth --no-gpu --trials 1 --host-size 16M --sysfs-root "$ROOT/tests/data/sysfs/gen5" >/dev/null 2>"$TMP/e"; rc=$?
check_eq "bandwidth with stderr a file: nothing on stderr" "$rc:$(wc -c <"$TMP/e" | tr -d ' ')" "0:0"
