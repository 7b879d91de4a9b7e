#!/bin/sh
# tests/run.sh - runs every unit-test binary (build/tests/unit/test_*) and every case script
# (tests/cases/*.sh), each printing "ok - ..." / "not ok - ..." / "skip - ..." lines, and ends with
# the summary line "N passed, N failed, N skipped". Exit status 1 if anything failed.
# Usage: tests/run.sh [PATTERN...]   (a test runs when its name contains one of the PATTERNs,
#        e.g. `tests/run.sh report`; none: every test)
# Environment:
#   VT_TEST_JOBS=N      tests at a time (default: the number of CPUs). Each test has its own
#                       $TMP and log, so they only share the CPUs.
#   VT_TEST_EXCLUDE="PATTERN..."  leave out the tests whose names contain one of these
#   VT_TEST_FAILFAST=1  start no test after the first failure (the mutation runs: one failure
#                       is a verdict); the summary then counts only what ran
#   VT_TEST_TIMEOUT=S   a test that runs longer than S seconds is killed and fails
# Each test's output is in $BUILD/test-logs/NAME.log.
BUILD=${BUILD:-build}
export BUILD
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
cd "$ROOT" || exit 2
log_dir="$BUILD/test-logs"; mkdir -p "$log_dir"

# --one NAME COMMAND...: one test, run by a worker. Writes NAME.log and
# NAME.res ("p f s seconds"), prints one PASS/FAIL line (one write: the workers share the terminal).
if [ "${1:-}" = --one ]; then
    name=$2; shift 2
    [ "${VT_TEST_FAILFAST:-0}" = 1 ] && [ -e "$log_dir/.stop" ] && exit 0
    log="$log_dir/$name.log"
    t0=$(date +%s)
    if [ -n "${VT_TEST_TIMEOUT:-}" ]; then
        timeout -k 10 "$VT_TEST_TIMEOUT" "$@" >"$log" 2>&1
    else
        "$@" >"$log" 2>&1
    fi
    rc=$?
    p=$(grep -c '^ok - ' "$log"); f=$(grep -c '^not ok - ' "$log"); s=$(grep -c '^skip - ' "$log")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && [ -n "${VT_TEST_TIMEOUT:-}" ]; then
        f=$((f + 1)); echo "not ok - $name timed out after ${VT_TEST_TIMEOUT} s" >>"$log"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1; echo "not ok - $name exited with status $rc" >>"$log"
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
        f=1; echo "not ok - $name ran no check" >>"$log"
    fi
    echo "$p $f $s $(( $(date +%s) - t0 ))" >"$log_dir/$name.res"
    if [ "$f" -gt 0 ]; then
        [ "${VT_TEST_FAILFAST:-0}" = 1 ] && : >"$log_dir/.stop"
        printf 'FAIL %s (%s passed, %s failed) - log: %s\n%s\n' "$name" "$p" "$f" "$log" \
            "$(grep '^not ok - ' "$log" | sed 's/^/    /' | head -20)"
    else
        printf 'PASS %s (%s passed%s)\n' "$name" "$p" "${s:+, $s skipped}"
    fi
    exit 0
fi

selected() { # NAME: in the patterns given, and not excluded
    if [ $# -gt 1 ]; then
        n=$1; shift; hit=0
        for pat in "$@"; do case "$n" in *"$pat"*) hit=1 ;; esac; done
        [ $hit = 1 ] || return 1
        set -- "$n"
    fi
    for pat in ${VT_TEST_EXCLUDE:-}; do case "$1" in *"$pat"*) return 1 ;; esac; done
    return 0
}

# the list: "NAME<TAB>KIND<TAB>PATH" for each selected test; names have no spaces, paths may
list=$(
    for t in "$BUILD"/tests/unit/test_*; do
        [ -x "$t" ] || continue
        n="unit-$(basename "$t")"; selected "$n" "$@" && printf '%s\tunit\t%s\n' "$n" "$t"
    done
    for t in tests/cases/*.sh; do
        [ -f "$t" ] || continue
        n=$(basename "$t" .sh); selected "$n" "$@" && printf '%s\tcase\t%s\n' "$n" "$t"
    done
)
rm -f "$log_dir/.stop"
# longest first, by the time each took last run here (.res's fourth field), so that the last
# test to finish is a short one; then drop the old results
list=$(printf '%s\n' "$list" | while IFS="$(printf '\t')" read -r n kind path; do
    [ -n "$n" ] || continue
    secs=0; [ -f "$log_dir/$n.res" ] && read -r _ _ _ secs <"$log_dir/$n.res"
    rm -f "$log_dir/$n.res"
    printf '%s\t%s\t%s\t%s\n' "${secs:-0}" "$n" "$kind" "$path"
done | sort -t "$(printf '\t')" -k1,1nr -s | cut -f2-)

jobs=${VT_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
# one test per line, handed to a worker (xargs -d: paths may hold spaces)
workers() { # JOBS: the tests on stdin
    xargs -r -d '\n' -P "$1" -n 1 sh -c '
        n=$(printf "%s" "$1" | cut -f1); kind=$(printf "%s" "$1" | cut -f2); path=$(printf "%s" "$1" | cut -f3-)
        if [ "$kind" = unit ]; then exec sh tests/run.sh --one "$n" "$path"; else exec sh tests/run.sh --one "$n" sh "$path"; fi
    ' worker
}
# A case script with the line "# test: alone" checks what any other traced run may change (a
# killed run's directories in /tmp, which the next run anywhere removes): it runs after the
# others, with nothing beside it.
alone() { # 1: the tests that run alone; 0: the others
    while IFS= read -r line; do
        path=$(printf '%s' "$line" | cut -f3-); is=0
        case "$line" in *"$(printf '\t')case$(printf '\t')"*) grep -qx '# test: alone' "$path" && is=1 ;; esac
        [ "$is" = "$1" ] && printf '%s\n' "$line"
    done
}
printf '%s\n' "$list" | awk 'NF' | alone 0 | workers "$jobs"
printf '%s\n' "$list" | awk 'NF' | alone 1 | workers 1

passed=0; failed=0; skipped=0; ran=0; total=0; failed_tests=
while IFS="$(printf '\t')" read -r n _ _; do
    [ -n "$n" ] || continue
    total=$((total + 1))
    [ -f "$log_dir/$n.res" ] || continue
    read -r p f s _ <"$log_dir/$n.res"
    ran=$((ran + 1)); passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    [ "$f" -gt 0 ] && failed_tests="$failed_tests $n"
done <<EOF
$list
EOF
# the failures again, at the end where a log's tail (CI prints the last lines) shows them
if [ -n "$failed_tests" ]; then
    echo "failed:"
    for n in $failed_tests; do
        echo "  $n - log: $log_dir/$n.log"
        grep '^not ok - ' "$log_dir/$n.log" | head -5 | sed 's/^/    /'
    done
fi
[ "$total" -eq 0 ] && echo "no test's name contains: $*"
[ "$ran" -lt "$total" ] && echo "($((total - ran)) of $total tests not started after the first failure)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$total" -gt 0 ]
