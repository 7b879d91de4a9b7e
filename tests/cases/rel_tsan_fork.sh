#!/bin/sh
# rel_tsan_fork.sh - rel_fork.sh with the ThreadSanitizer build of libvramtrace.so
# (`make tsan-test` sets VT_TSAN_LIB); skipped in the ordinary suite.
if [ -z "${VT_TSAN_LIB:-}" ]; then echo "skip - rel_tsan_fork: run by make tsan-test"; exit 0; fi
. tests/cases/rel_fork.sh
