#!/bin/sh
# rel_behaviour.sh - the tracer does not change what the program sees (return codes, errno, exit
# status, no early context), survives programs that load CUDA with RTLD_DEEPBIND or dlmopen,
# reports its own failures once without failing the program, and is safe with hostile paths,
# environments and traces (docs/reliability.md).
. tests/lib.sh
need_sim
E="$PROGS/rel_errno"
D="$PROGS/rel_dlopen"
# under `make SAN=1` the sim is ASan-built: its runtime must come first even without the tracer
plain() { env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="${VRAMTRACE_PRELOAD_FIRST:+$VRAMTRACE_PRELOAD_FIRST${LD_PRELOAD:+:}}${LD_PRELOAD:-}" "$@"; }
case "${VRAMTRACE_PRELOAD_FIRST:-}" in *asan*) asan=1;; *) asan=0;; esac

# --- return codes, errno, exit status, no extra context ---
plain "$E" >"$TMP/plain.txt" 2>/dev/null; prc=$?
"$VT" run --sim -q -o "$TMP/e.jsonl" -- "$E" >"$TMP/traced.txt" 2>/dev/null; trc=$?
check_eq "exit status without tracer" "$prc" 7
check_eq "exit status unchanged under the tracer" "$trc" 7
if cmp -s "$TMP/plain.txt" "$TMP/traced.txt"; then ok "every return code and errno identical with and without the tracer"
else not_ok "return codes / errno differ"; diff "$TMP/plain.txt" "$TMP/traced.txt" | head; fi
check_eq "errno preserved across every hooked call (set 4242 before)" \
    "$(grep -c 'errno=4242$' "$TMP/traced.txt")" "$(grep -c ' rc=' "$TMP/traced.txt")"
check "failing calls keep their codes (OOM 2, bad free 1, bad device 101)" \
    grep -q '^cudaMalloc_huge rc=2 ' "$TMP/traced.txt"
check_eq "no primary context before the program makes one" "$(sed -n 's/^primary_active_before=//p' "$TMP/traced.txt")" 0
check_eq "no current context before the program makes one" "$(sed -n 's/^ctx_before_null=//p' "$TMP/traced.txt")" 1
check_eq "trace records the failed allocation with its code" \
    "$(jqs "$TMP/e.jsonl" '[.[] | select(.ev=="alloc" and .res==2)] | length')" 1

# --- programs that load the runtime themselves ---
for m in plain deepbind dlmopen; do
    if [ $asan = 1 ] && [ $m = deepbind ]; then skip "dlopen deepbind: ASan refuses RTLD_DEEPBIND (google/sanitizers#611)"; continue; fi
    if [ $asan = 1 ] && [ $m = dlmopen ]; then skip "dlopen dlmopen: the ASan-built sim cannot load in a new namespace (ASan runtime not first there)"; continue; fi
    want=$(plain "$D" $m 2>&1)
    got=$("$VT" run --sim -q -o "$TMP/dl-$m.jsonl" -- "$D" $m 2>&1); rc=$?
    check_eq "dlopen $m: program works under the tracer" "$rc:$got" "0:$want"
    check_eq "dlopen $m: alloc, memset, free traced (through the dlsym'd pointers)" \
        "$(jqs "$TMP/dl-$m.jsonl" '[.[] | select(.ev=="alloc" or .ev=="set" or .ev=="free") | .ev] | join(",")')" alloc,set,free
done

# dlsym(RTLD_NEXT) from a library destructor while the dlclose that runs it unloads a library after
# it (tests/progs/dlfini): glibc has marked that one removed, so dlopen(RTLD_NOLOAD) cannot reopen
# it; the tracer's RTLD_NEXT walk must skip it as glibc's does (it called dlsym and dlclose on
# the NULL handle: SIGSEGV). glibc's own answer, untraced, is the truth: both lookups null.
F="$ROOT/tests/progs/dlfini"
cc -shared -fPIC -Wl,-soname,libnext.so -o "$TMP/libnext.so" "$F/next.c" &&
    cc -shared -fPIC -o "$TMP/libdep.so" "$F/dep.c" "$TMP/libnext.so" && cc -o "$TMP/dlfini" "$F/main.c" -ldl ||
    check "the dlfini programs build" false
want="next_fini: next cuInit null, next dep_probe null
done"
check_eq "dlfini untraced: glibc finds neither next definition" "$(plain "$TMP/dlfini" "$TMP/libnext.so" "$TMP/libdep.so" 2>&1)" "$want"
got=$("$VT" run --sim -q -o "$TMP/dlfini.jsonl" -- "$TMP/dlfini" "$TMP/libnext.so" "$TMP/libdep.so" 2>&1); rc=$?
check_eq "dlfini traced: exit 0, the same answers" "$rc:$got" "0:$want"

# --- the tracer's own failures: said once on stderr, the program carries on ---
: >"$TMP/afile"
# (`vramtrace run` refuses such a template before starting the program: run_messages.sh; the
# library on its own, preloaded, must carry on)
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_OUTPUT="$TMP/afile/t.jsonl" \
    "$E" >"$TMP/o1.txt" 2>"$TMP/e1.txt"
check_eq "unwritable path (parent is a file): program exit status unchanged" "$?" 7
check "unwritable path: program output unchanged" cmp -s "$TMP/plain.txt" "$TMP/o1.txt"
check_eq "unwritable path: one message on stderr" "$(grep -c 'cannot create trace file' "$TMP/e1.txt")" 1
"$VT" run --sim -o /proc/vt-rel-test.jsonl -- "$E" >/dev/null 2>"$TMP/e2.txt"
check_eq "read-only directory (/proc, even for root): exit status unchanged" "$?" 7
check_eq "read-only directory: one message on stderr" "$(grep -c 'cannot create trace file' "$TMP/e2.txt")" 1
if [ "$(id -u)" != 0 ]; then
    mkdir "$TMP/ro" && chmod 555 "$TMP/ro"
    "$VT" run --sim -o "$TMP/ro/t.jsonl" -- "$E" >/dev/null 2>"$TMP/e3.txt"
    check_eq "chmod 555 directory: exit status unchanged" "$?" 7
    check_eq "chmod 555 directory: one message" "$(grep -c 'cannot create trace file' "$TMP/e3.txt")" 1
else
    skip "chmod 555 directory: running as root (covered by /proc above)"
fi
# disk full: RLIMIT_FSIZE of 64 blocks (32 KiB in dash/POSIX sh) - the tracer must stop at the limit
# rather than grow into SIGXFSZ, which would kill the program
sh -c 'ulimit -f 64 && exec "$@"' _ "$VT" run --sim -o "$TMP/full.jsonl" -- "$PROGS/rel_stress" 2 60 >"$TMP/o4.txt" 2>"$TMP/e4.txt"
check_eq "file size limit: program exit status 0 (no SIGXFSZ)" "$?" 0
check_eq "file size limit: the program's own work all succeeded" "$(sed -n 's/^errors=//p' "$TMP/o4.txt")" 0
check_eq "file size limit: one message on stderr" "$(grep -c 'events are dropped' "$TMP/e4.txt")" 1
check "file size limit: trace stays within the limit" test "$(stat -c %s "$TMP/full.jsonl")" -le 65536
check_eq "file size limit: what was written parses, header first" "$(jqs "$TMP/full.jsonl" '.[0].ev')" header
"$VT" report --json "$TMP/full.jsonl" >/dev/null 2>&1
check_eq "file size limit: report reads the truncated trace" "$?" 0

# --- descriptors the tracer no longer owns: rel_fds closes fds 3..1023 after its first CUDA call,
# opens its own file (it gets fd 3) and makes 20000 malloc/free pairs (megabytes of trace: the
# trace file grows several times). Untraced: exit 0 and exactly 100 bytes in its file.
F="$PROGS/rel_fds"
plain "$F" "$TMP/fds-plain.out" 2000 >/dev/null 2>&1
check_eq "closed fds: untraced, exit 0 and a 100-byte file" "$?:$(stat -c %s "$TMP/fds-plain.out")" 0:100
"$VT" run --sim -q -o "$TMP/fds.jsonl" -- "$F" "$TMP/fds.out" 20000 >"$TMP/fds.txt" 2>&1
check_eq "closed fds: traced, exit 0 (no SIGBUS)" "$?" 0
check_eq "closed fds: the program's file is its 100 bytes, untouched by the tracer" "$(stat -c %s "$TMP/fds.out"):$(tr -d p <"$TMP/fds.out" | wc -c)" 100:0
check_eq "closed fds: every pair traced after the close (20000 + 1 allocations, none leaked)" \
    "$("$VT" report --json "$TMP/fds.jsonl" | jq -c '[.allocations.count, .leaked_bytes]')" "[20001,0]"
# a fork child must not close the parent's trace descriptors either: after fork the number is the
# program's file, which the child writes 50 bytes to (then the parent its 50)
"$VT" run --sim -q -o "$TMP/fdf.jsonl" -- "$F" "$TMP/fdf.out" 2000 fork >/dev/null 2>&1
check_eq "closed fds + fork: exit 0, child's 50 bytes then parent's 50" "$?:$(cat "$TMP/fdf.out")" \
    "0:$(printf '%050d' 0 | tr 0 c)$(printf '%050d' 0 | tr 0 p)"
# a relative trace name and a program that chdirs: the file is reopened by its absolute name
(cd "$TMP" && env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
    VRAMTRACE_OUTPUT=fdr.jsonl "$F" "$TMP/fdr.out" 20000 chdir >/dev/null 2>&1)
check_eq "closed fds + chdir /, relative trace name: exit 0, 100-byte file" "$?:$(stat -c %s "$TMP/fdr.out")" 0:100
check_eq "closed fds + chdir /: every pair in the trace, which ends in its footer" \
    "$(jqs "$TMP/fdr.jsonl" '[([.[] | select(.ev == "alloc")] | length), .[-1].ev] | join(",")')" 20001,footer
# the trace renamed under the tracer (log rotation): its name no longer leads to the mapped file,
# so the tracer stops with one line rather than grow whatever the name names now
"$VT" run --sim -o "$TMP/fdm.jsonl" -- "$F" "$TMP/fdm.out" 20000 move >/dev/null 2>"$TMP/fdm.err"
check_eq "trace renamed: exit 0, the 100-byte file, one line saying why (without -q)" "$?:$(stat -c %s "$TMP/fdm.out"):$(grep -v '^vramtrace: \(trace written to\|analyse with\)' "$TMP/fdm.err")" \
    "0:100:vramtrace: cannot reopen trace file: No such file or directory; further events are dropped (the program continues)"
"$VT" run --sim -q -o "$TMP/fdq.jsonl" -- "$F" "$TMP/fdq.out" 20000 move >/dev/null 2>"$TMP/fdq.err"
check_eq "trace renamed under -q: exit 0 and nothing on stderr (the footer says why)" "$?:$(wc -c <"$TMP/fdq.err" | tr -d ' ')" "0:0"
check_eq "trace renamed: what was written ends in the footer, which counts the dropped events and says why" \
    "$(jqs "$TMP/fdm.jsonl.moved" '[.[-1].ev, (.[-1].dropped > 0), .[-1].error] | join(",")')" "footer,true,cannot reopen trace file: No such file or directory"

# --- a full disk: the trace on a 1 MiB tmpfs (a private mount namespace: unshare -rm, or -m as
# root). Untraced, rel_fds exits 0 with its 100-byte file; traced on a roomy disk its trace has
# N lines, the footer counting them. On the full disk the program must be unharmed, the tracer
# says so in one line, and the footer that still fits counts the rest as dropped: written + dropped
# = N, and the report calls the trace incomplete because of the disk, not a dead process.
small_fs() { # CMD... : run CMD with a 1 MiB tmpfs mounted at $TMP/mnt
    mkdir -p "$TMP/mnt"
    for u in -rm -m; do
        unshare $u true 2>/dev/null || continue
        unshare $u sh -c 'mount -t tmpfs -o size=1m vt-full "$0" && exec "$@"' "$TMP/mnt" "$@"
        return $?
    done
    return 125
}
if small_fs true; then
    "$VT" run --sim -q -o "$TMP/roomy.jsonl" -- "$F" "$TMP/roomy.out" 20000 >/dev/null 2>&1
    N=$(tr -d '\000' <"$TMP/roomy.jsonl" | grep -c .)
    check_eq "roomy disk: the footer counts every line, none dropped" "$(jqs "$TMP/roomy.jsonl" '.[-1] | [.events, .dropped] | join(",")')" "$N,0"
    small_fs sh -c '"$1" run --sim -o "$2/mnt/t.jsonl" -- "$3" "$2/disk.out" 20000 >"$2/disk.txt" 2>"$2/disk.err"; echo $? >"$2/disk.rc"
        cp "$2/mnt/t.jsonl" "$2/disk.jsonl"; ls "$2/mnt" >"$2/disk.ls"
        "$1" report --json "$2/mnt/t.jsonl" >"$2/disk.json" 2>"$2/disk-report.err"; echo $? >>"$2/disk.rc"
        "$1" report "$2/mnt/t.jsonl" >"$2/disk-report.txt" 2>&1' _ "$VT" "$TMP" "$F"
    check_eq "full disk: program exit 0, report exit 0" "$(cat "$TMP/disk.rc" | tr '\n' ' ')" "0 0 "
    check_eq "full disk: the program's own file is its 100 bytes" "$(stat -c %s "$TMP/disk.out"):$(tr -d p <"$TMP/disk.out" | wc -c)" 100:0
    check_eq "full disk: one stderr line from the tracer, naming the full disk" "$(grep -v '^vramtrace: \(trace written to\|analyse with\)' "$TMP/disk.err")" \
        "vramtrace: cannot grow trace file: No space left on device; further events are dropped (the program continues)"
    check_eq "full disk: no ring file left behind" "$(cat "$TMP/disk.ls")" t.jsonl
    check_eq "full disk: the footer is the last line and says why" "$(jqs "$TMP/disk.jsonl" '.[-1] | [.ev, .error] | join(",")')" \
        "footer,cannot grow trace file: No space left on device"
    check_eq "full disk: lines written + dropped = the roomy run's $N" \
        "$(jqs "$TMP/disk.jsonl" "(.[-1].events + .[-1].dropped), length, (.[-1].dropped > 0)" | tr '\n' ' ')" \
        "$N $(tr -d '\000' <"$TMP/disk.jsonl" | grep -c .) true "
    check_eq "full disk: report --json: incomplete, because the disk was full, with the dropped count" \
        "$(jq -r '.processes[0] | [.complete, (.incomplete_reason | test("No space left on device")), .dropped_events] | join(",")' "$TMP/disk.json")" \
        "false,true,$(jqs "$TMP/disk.jsonl" '.[-1].dropped')"
    check "full disk: text report says incomplete, not that the process died" \
        sh -c 'grep -q "trace incomplete: the tracer stopped writing (cannot grow trace file: No space left on device)" "$1" && ! grep -q "died" "$1"' _ "$TMP/disk-report.txt"
    # a ring an older tracer left sparse on the full disk: reading a hole by mmap raised SIGBUS in
    # `run` and `report`; now it is read (zeros: a header never written, its writer gone, so it
    # is removed without a word) and the trace reported
    small_fs sh -c 'cp "$2" "$3/mnt/s.jsonl" && truncate -s 4259840 "$3/mnt/s.jsonl.ring" &&
        { cat /dev/zero >"$3/mnt/fill" 2>/dev/null; true; } && "$1" report --json "$3/mnt/s.jsonl" >"$3/sparse.json" 2>"$3/sparse.err"
        echo $? >"$3/sparse.rc"; ls "$3/mnt" >"$3/sparse.ls"' \
        _ "$VT" "$TMP/e.jsonl" "$TMP"
    check_eq "sparse ring on a full disk: report exits 0 with every event of the trace" \
        "$(cat "$TMP/sparse.rc"):$(jq '.processes[0].events' "$TMP/sparse.json")" "0:$(tr -d '\000' <"$TMP/e.jsonl" | grep -c .)"
    check_eq "sparse ring on a full disk: removed without a warning" "$(cat "$TMP/sparse.err" "$TMP/sparse.ls" | tr '\n' ' ')" "fill s.jsonl "
else
    skip "full disk: no mount namespace here (unshare -rm / -m)"
fi

# --- security ---
mkdir "$TMP/ww" && chmod 1777 "$TMP/ww"
echo keep >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/ww/t.jsonl"
"$VT" run --sim -q -o "$TMP/ww/t.jsonl" -- "$E" >/dev/null 2>&1
check_eq "pre-existing symlink at the target: not followed (victim untouched)" "$(cat "$TMP/victim")" keep
check "pre-existing symlink: still a symlink" test -L "$TMP/ww/t.jsonl"
check_eq "pre-existing symlink: a new name is chosen (t.jsonl.1)" "$(jqs "$TMP/ww/t.jsonl.1" '.[0].ev')" header
check_eq "trace file mode 0600" "$(stat -c %a "$TMP/ww/t.jsonl.1")" 600
SECRET=xyz-vt-secret RANK=3 AWS_SECRET_ACCESS_KEY=xyz-vt-secret "$VT" run --sim -q -o "$TMP/env.jsonl" -- "$E" >/dev/null 2>&1
check_eq "no environment variable recorded (SECRET=... absent)" "$(tr -d '\000' <"$TMP/env.jsonl" | grep -c 'xyz-vt-secret')" 0
check_eq "rank variables are recorded" "$(jqs "$TMP/env.jsonl" '.[0].rank.RANK')" 3
# hostile strings from a real trace never reach the HTML unescaped
"$VT" run --sim -q -o "$TMP/hostile.jsonl" -- "$PROGS/rel_crash" hostile 2 >/dev/null 2>&1
check "hostile NVTX name is in the trace" sh -c "tr -d '\\000' <'$TMP/hostile.jsonl' | grep -q 'onerror=alert'"
if "$VT" report --help 2>&1 | grep -q -- '--html'; then
    "$VT" report --html "$TMP/h.html" "$TMP/hostile.jsonl" >/dev/null 2>&1
    check_eq "report --html on the hostile trace exits 0" "$?" 0
    check_eq "HTML: no injected <script>/<img> from the trace" "$(grep -c '<script>alert\|<img src=x' "$TMP/h.html")" 0
else
    skip "report --html not available"
fi
# a trace naming shell commands as paths: the report opens files, never runs anything
tr -d '\000' <"$TMP/e.jsonl" | jq -c --arg p "\$(touch $TMP/pwned1)" --arg q "|touch $TMP/pwned2;" \
    'if .ev=="header" then .program=$p elif .ev=="module" then .path=$q else . end' >"$TMP/evil.jsonl"
"$VT" report "$TMP/evil.jsonl" >/dev/null 2>&1
"$VT" report --json "$TMP/evil.jsonl" >/dev/null 2>&1
"$VT" report --html "$TMP/evil.html" "$TMP/evil.jsonl" >/dev/null 2>&1
check "report never executes anything named in a trace" sh -c "! ls '$TMP'/pwned* >/dev/null 2>&1"
