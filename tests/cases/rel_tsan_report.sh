#!/bin/sh
# rel_tsan_report.sh - `vramtrace report` built with -fsanitize=thread reads traces with its
# parallel reader (tools/report/reader_mt.c, small chunks forced): a clean trace, and one whose bad
# line deep in the file makes the workers stop and the sequential reader take over. Run by
# `make tsan-test` only.
if [ -z "${VT_TSAN_LIB:-}" ]; then echo "skip - rel_tsan_report: run by make tsan-test"; exit 0; fi
. tests/lib.sh
bin=$TMP/vramtrace_tsan
if cc -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=thread -Wno-tsan -Iinclude -Isrc/core -Isrc/trace -Isrc/platform -Isrc/fatbin -Isrc/hooks -Itools -I"$BUILD/gen" -o "$bin" \
      tools/*.c tools/report/*.c tools/bandwidth/*.c "$BUILD/libvtcore.a" \
      -ljson-c -ldw -lelf -ldl -lpthread -lzstd -llz4 -lm -lstdc++ 2>"$TMP/cc.err"; then
    ok "tsan-report: the CLI builds with -fsanitize=thread"
else
    not_ok "tsan-report: the CLI builds with -fsanitize=thread: $(head -3 "$TMP/cc.err")"
    exit 0
fi
H='{"ev":"header","format":"vramtrace-trace","version":1,"pid":7,"t":1}'
L='{"ev":"launch","t":20,"dur":1,"tid":1,"api":"__cudaLaunchKernel","res":0,"dev":0,"k":1,"grid":[1,1,1],"block":[1,1,1],"shmem":0,"stream":"0x0"}'
A='{"ev":"alloc","t":10,"dur":2,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":1048576,"mem":"device"}'
{ echo "$H"; echo "$A"; i=0; while [ $i -lt 6000 ]; do echo "$L"; i=$((i + 1)); done; } >"$TMP/clean.jsonl"
{ cat "$TMP/clean.jsonl"; echo '{"ev":"alloc","t":-1}'; cat "$TMP/clean.jsonl"; } >"$TMP/bad.jsonl"
export TSAN_OPTIONS="halt_on_error=0 exitcode=66"
VRAMTRACE_REPORT_CHUNK=4096 "$bin" report --json "$TMP/clean.jsonl" >"$TMP/clean.json" 2>"$TMP/clean.err"
check_eq "tsan-report: clean trace, exit 0" "$?" 0
check_eq "tsan-report: clean trace, ThreadSanitizer reports nothing" "$(grep -c 'WARNING: ThreadSanitizer' "$TMP/clean.err")" 0
check_eq "tsan-report: clean trace, peak from the parallel read" "$(jq .peak_bytes "$TMP/clean.json")" 1048576
VRAMTRACE_REPORT_CHUNK=4096 "$bin" report --json "$TMP/bad.jsonl" >/dev/null 2>"$TMP/bad.err"
check_eq "tsan-report: bad line, exit 2" "$?" 2
check_eq "tsan-report: bad line, ThreadSanitizer reports nothing" "$(grep -c 'WARNING: ThreadSanitizer' "$TMP/bad.err")" 0
check "tsan-report: bad line, the sequential reader's message" grep -q "bad.jsonl:6003: field 't' is negative" "$TMP/bad.err"
