#!/bin/sh
# rel_tsan_registry.sh - the registry's unit test (8 threads inserting, looking up and removing in
# parallel over the sharded map) built with -fsanitize=thread; run by `make tsan-test` only.
if [ -z "${VT_TSAN_LIB:-}" ]; then echo "skip - rel_tsan_registry: run by make tsan-test"; exit 0; fi
. tests/lib.sh
bin=$TMP/test_registry_tsan
if cc -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=thread -Wno-tsan -Iinclude -Isrc/core -Isrc/platform -Isrc/trace -Itests/unit -o "$bin" \
      tests/unit/test_registry.c src/core/registry.c src/core/rangemap.c src/core/inflight.c src/platform/addrspace.c src/platform/tracer.c -lpthread 2>"$TMP/cc.err"; then
    ok "tsan-registry: test_registry builds with -fsanitize=thread"
else
    not_ok "tsan-registry: test_registry builds with -fsanitize=thread: $(head -3 "$TMP/cc.err")"
    exit 0
fi
TSAN_OPTIONS="halt_on_error=0 exitcode=66" "$bin" >"$TMP/out" 2>"$TMP/err"
check_eq "tsan-registry: exits 0 (every check passed, no race)" "$?" 0
check_eq "tsan-registry: ThreadSanitizer reports nothing" "$(grep -c 'WARNING: ThreadSanitizer' "$TMP/err")" 0
check_eq "tsan-registry: no failed check" "$(grep -c '^not ok' "$TMP/out")" 0
check "tsan-registry: the 8-thread check ran" grep -q '^ok - 8 threads' "$TMP/out"
check "tsan-registry: the announced-free reuse check ran" grep -q "^ok - the reusing thread's insert waited" "$TMP/out"
