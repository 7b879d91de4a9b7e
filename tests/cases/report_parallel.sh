#!/bin/sh
# report_parallel.sh - the parallel trace reader (tools/report/reader_mt.c) gives what the
# sequential one gives: the malformed-trace and basic report suites run again with tiny chunks
# (VRAMTRACE_REPORT_CHUNK, which also lifts the 64 MiB threshold), and crafted traces (a line
# longer than a chunk's overlap, CRLF and blank lines, NUL padding and a NUL tail, a bad line deep
# in the file, 5000 blank lines before the first record) give byte-identical output, warnings and
# exit status both ways.
. tests/lib.sh
for ch in 7 64; do
    for suite in report_malformed report_basic; do
        ROOT="$ROOT" VRAMTRACE_REPORT_CHUNK=$ch sh "tests/cases/$suite.sh" 2>&1 | sed -n "s/^\(ok\|not ok\) - /\1 - chunk $ch, $suite: /p"
    done
done

H='{"ev":"header","format":"vramtrace-trace","version":1,"pid":7,"t":1}'
A='{"ev":"alloc","t":10,"dur":2,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":1048576,"mem":"device"}'
L='{"ev":"launch","t":20,"dur":1,"tid":1,"api":"__cudaLaunchKernel","res":0,"dev":0,"k":1,"grid":[1,1,1],"block":[1,1,1],"shmem":0,"stream":"0x0"}'
long=$(head -c 300000 /dev/zero | tr '\0' 'x')
{
    echo "$H"
    i=0; while [ $i -lt 300 ]; do echo "$L"; i=$((i + 1)); done
    printf '{"ev":"kernel","id":1,"name":"%s","params":[]}\n' "$long"
    echo "$A"
    printf '%s\r\n\n   \n' "$L"
    i=0; while [ $i -lt 300 ]; do echo "$L"; i=$((i + 1)); done
} >"$TMP/long.jsonl"
{ echo "$H"; echo "$A"; printf '\0\0\0\0%s\n' "$L"; echo "$L"; head -c 5000 /dev/zero; } >"$TMP/nul.jsonl"
{ echo "$H"; i=0; while [ $i -lt 500 ]; do echo "$L"; i=$((i + 1)); done; echo '{"ev":"alloc","t":-1}'; echo "$A"; } >"$TMP/bad.jsonl"
{ echo "$L"; echo "$H"; } >"$TMP/nohead.jsonl"
{ echo "$H"; echo "$A"; printf '%s' '{"ev":"free","t":30,"ti'; } >"$TMP/cut.jsonl"
# 5000 blank lines first: the header (or a record that is not one) is in the second 4096-byte chunk,
# whose worker does not know it holds the first record
blanks() { i=0; while [ $i -lt 5000 ]; do echo; i=$((i + 1)); done; }
{ blanks; echo "$H"; echo "$A"; echo "$L"; } >"$TMP/lead.jsonl"
{ blanks; echo "$A"; echo "$H"; echo "$L"; } >"$TMP/leadbad.jsonl"
for f in long nul bad nohead cut lead leadbad; do
    for fmt in --json ""; do
        VRAMTRACE_REPORT_THREADS=1 "$VT" report $fmt "$TMP/$f.jsonl" >"$TMP/$f.seq.out" 2>"$TMP/$f.seq.err"; s=$?
        VRAMTRACE_REPORT_CHUNK=4096 "$VT" report $fmt "$TMP/$f.jsonl" >"$TMP/$f.mt.out" 2>"$TMP/$f.mt.err"; m=$?
        check_eq "$f ${fmt:-text}: same exit status ($s)" "$m" "$s"
        check "$f ${fmt:-text}: same output" cmp -s "$TMP/$f.seq.out" "$TMP/$f.mt.out"
        check "$f ${fmt:-text}: same warnings and errors" cmp -s "$TMP/$f.seq.err" "$TMP/$f.mt.err"
    done
done
check "bad line deep in the file: the sequential reader's message, with its line number" \
    grep -q "bad.jsonl:502: field 't' is negative" "$TMP/bad.mt.err"
check_eq "blank lines first: the header read as the first record (1 MiB peak); a first record that is not a header refused at its line" \
    "$(VRAMTRACE_REPORT_CHUNK=4096 "$VT" report --json "$TMP/lead.jsonl" | jq .peak_bytes):$(grep -c "leadbad.jsonl:5001: first record is not a header (ev \"alloc\")" "$TMP/leadbad.mt.err")" "1048576:1"
check_eq "long line: read in full (601 launches)" \
    "$(VRAMTRACE_REPORT_CHUNK=4096 "$VT" report --json "$TMP/long.jsonl" | jq '.processes[0].launches // .launches // empty' | head -1)" \
    "$(VRAMTRACE_REPORT_THREADS=1 "$VT" report --json "$TMP/long.jsonl" | jq '.processes[0].launches // .launches // empty' | head -1)"

# every string an event carries outlives its line in the parallel reader: a snapshot's label, a
# device's PCI bus id, the footer's error, the header's PyTorch settings, each followed by lines
# that reuse the parser's buffer (they were kept only by the sequential reader: labels and bus
# ids came out as other lines' bytes)
{
    echo "$H" | sed 's/}$/,"torch_cuda_alloc_conf":"backend:cudaMallocAsync","torch_tensors":true}/'
    echo '{"ev":"device","t":2,"dev":0,"name":"GPU zero","total_bytes":1073741824,"cc":"9.0","pci":"0000:3b:00.0","sim":false}'
    i=0; while [ $i -lt 200 ]; do echo "$L"; i=$((i + 1)); done
    echo "$A"
    echo '{"ev":"snapshot","t":30,"tid":1,"label":"after load","live_bytes":1048576}'
    i=0; while [ $i -lt 200 ]; do echo "$L"; i=$((i + 1)); done
    echo '{"ev":"footer","t":40,"events":404,"live_bytes":1048576,"findings":0,"dropped":3,"error":"disk full at 1 GiB"}'
} >"$TMP/strs.jsonl"
VRAMTRACE_REPORT_THREADS=1 "$VT" report --json "$TMP/strs.jsonl" >"$TMP/strs.seq.json" 2>&1
VRAMTRACE_REPORT_CHUNK=4096 "$VT" report --json "$TMP/strs.jsonl" >"$TMP/strs.mt.json" 2>&1
check_eq "strings kept: the label, the footer's error, the torch option read in parallel as sequentially" \
    "$(jq -c '[.snapshots[0].label, .processes[0].incomplete_reason, .processes[0].torch_tensors]' "$TMP/strs.mt.json")" \
    "$(jq -c '[.snapshots[0].label, .processes[0].incomplete_reason, .processes[0].torch_tensors]' "$TMP/strs.seq.json")"
check "strings kept: the whole JSON report the same both ways" cmp -s "$TMP/strs.seq.json" "$TMP/strs.mt.json"
check_eq "strings kept: the sequential reader's label and the footer's error (the test's own figures)" \
    "$(jq -c '[.snapshots[0].label, (.processes[0].incomplete_reason | test("disk full at 1 GiB"))]' "$TMP/strs.seq.json")" '["after load",true]'
