#!/bin/sh
# rel_tsan_stress.sh - rel_stress.sh with the ThreadSanitizer build of libvramtrace.so
# (`make tsan-test` sets VT_TSAN_LIB); skipped in the ordinary suite.
if [ -z "${VT_TSAN_LIB:-}" ]; then echo "skip - rel_tsan_stress: run by make tsan-test"; exit 0; fi
REL_NAME=tsan-stress REL_ITERS=${REL_ITERS:-40} . tests/cases/rel_stress.sh
