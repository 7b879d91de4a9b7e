#!/bin/sh
# tools/coverage.sh - which lines of the library and the report the test suite never runs: the
# places a planted mistake (make mutants) survives for certain. Builds everything with gcc's
# --coverage in build-cov (-O0, no LTO), runs the suite there (tests/run.sh, PATTERNs as it takes
# them), then writes one gcov listing per source file under build-cov/coverage/ and prints, per
# module, the share of lines run and each file's lines never run.
# Usage: tools/coverage.sh [PATTERN...]      (make coverage: every test)
# Counts only what exits normally (gcov writes at exit): a test that SIGKILLs its program loses
# that program's counts, so a line listed here may still be run by such a test; so is what runs
# after gcov's own exit handler (lifecycle.c's shutdown, which runs after every destructor and
# writes the footer every trace test reads). A few checks fail
# in this build for reasons of the build, not the code (2026-12-07: the allocation-failure runs of
# report_faults and fw_sass reach gcov's own exit handler; test_unwind's -O0 frames): the suite's
# result is printed, the counts are what matter.
set -u
cd "$(dirname "$0")/.." || exit 2
B=build-cov
command -v gcov >/dev/null 2>&1 || { echo "coverage: gcov not found (it comes with gcc)" >&2; exit 2; }
make -s -j"$(nproc 2>/dev/null || echo 2)" BUILD=$B CC=gcc LTO= OPT="-O0 -g --coverage" \
    LDFLAGS=--coverage test-deps || exit 2
find $B -name '*.gcda' -delete
BUILD=$B VT_TEST_TIMEOUT=${VT_TEST_TIMEOUT:-900} sh tests/run.sh "$@" | tail -3

rm -rf $B/coverage && mkdir -p $B/coverage
for dir in src/hooks src/core src/fatbin src/trace src/platform tools/report; do
    out=$B/coverage/$(echo "$dir" | tr / _)
    mkdir -p "$out"
    # from the root, where the objects' recorded source paths lead; the listings then moved
    gcov -o "$B/obj/$dir" "$dir"/*.c >/dev/null 2>&1
    mv ./*.gcov "$out/" 2>/dev/null
    echo "== $dir"
    # each listing's lines are "count:line:text": "#####" never run, "-" no code
    for f in "$dir"/*.c; do
        g="$out/$(basename "$f").gcov"
        [ -f "$g" ] || { echo "  $(basename "$f"): no counts (not built, or no test ran it)"; continue; }
        awk -v f="$(basename "$f")" '
            /^ *#####:/ { split($0, a, ":"); miss = miss " " a[2] + 0; m++; t++; next }
            /^ *[0-9]+\*?:/ { t++ }
            END { printf "%s %d %d%s\n", f, t, m, miss }' "$g"
    done | awk '{ t += $2; m += $3; if ($3 > 0) { printf "  %-24s %4d of %4d lines never run:", $1, $3, $2;
                   for (i = 4; i <= NF && i < 24; i++) printf " %s", $i; if (NF >= 24) printf " ..."; print "" } }
                 END { if (t) printf "  %d of %d lines run (%.1f%%)\n", t - m, t, 100 * (t - m) / t }'
done
echo "listings: $B/coverage/DIR/FILE.c.gcov"
