#!/bin/sh
# tests/run.sh - runs every unit-test binary (build/tests/unit/test_*) and every case script
# (tests/cases/*.sh), each printing "ok - ..." / "not ok - ..." / "skip - ..." lines, and ends with
# the summary line "N passed, N failed, N skipped". Exit status 1 if anything failed.
# Usage: tests/run.sh [PATTERN]   (PATTERN filters test names, e.g. `tests/run.sh report`)
BUILD=${BUILD:-build}
export BUILD
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
cd "$ROOT" || exit 2
pattern=${1:-}
passed=0; failed=0; skipped=0
log_dir="$BUILD/test-logs"; mkdir -p "$log_dir"
run_one() { # name, command...
    name=$1; shift
    case "$name" in *"$pattern"*) ;; *) return ;; esac
    log="$log_dir/$name.log"
    "$@" >"$log" 2>&1
    rc=$?
    p=$(grep -c '^ok - ' "$log"); f=$(grep -c '^not ok - ' "$log"); s=$(grep -c '^skip - ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1; echo "not ok - $name exited with status $rc" >>"$log"
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
        f=1; echo "not ok - $name ran no check" >>"$log"
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    if [ "$f" -gt 0 ]; then
        echo "FAIL $name ($p passed, $f failed) - log: $log"
        grep '^not ok - ' "$log" | sed 's/^/    /' | head -20
    else
        echo "PASS $name ($p passed${s:+, $s skipped})"
    fi
}
for t in "$BUILD"/tests/unit/test_*; do
    [ -x "$t" ] || continue
    run_one "unit-$(basename "$t")" "$t"
done
for t in tests/cases/*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t" .sh)" sh "$t"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
