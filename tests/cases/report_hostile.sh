#!/bin/sh
# report_hostile.sh - what a trace says never breaks or injects into the report's output: every
# string reaches HTML, JSON and Perfetto through one escaping choke point (tools/report/escape.h),
# JSON is valid UTF-8 whatever bytes the trace holds, the text report shows control characters
# escaped, and byte sums saturate instead of wrapping (docs/reliability.md "Security").
. tests/lib.sh
H='{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":4242,"ppid":1,"program":"/opt/p","argv":[],"t":1000,"hostname":"h","rank":{},"page_size":4096,"backtraces":false,"checks":"record"}'
# strict_json FILE : valid JSON in valid UTF-8 (python decodes strictly; jq alone replaces bad bytes)
strict_json() { python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1" 2>/dev/null; }

# --- a failed allocation whose API name is markup and JSON: it went unescaped into the HTML
# hover text (SVG <title>) and into the Perfetto event name
api='cudaMalloc<img src=x onerror=alert(1)>","x":"'
{ echo "$H"
  jq -cn --arg a "$api" '{ev:"alloc",t:2000,dur:1,tid:1,api:$a,res:2,dev:0,size:4096,mem:"device",free_bytes:0,total_bytes:8192}'
  echo '{"ev":"alloc","t":3000,"dur":1,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x1000","size":4096,"mem":"device"}'
} >"$TMP/api.jsonl"
"$VT" report --html "$TMP/api.html" --perfetto "$TMP/api.pf.json" --json "$TMP/api.jsonl" >"$TMP/api.json" 2>"$TMP/api.err"
check_eq "hostile API name: report exits 0" "$?" 0
check_eq "hostile API name: HTML holds no element from the trace" "$(grep -c '<img' "$TMP/api.html")" 0
check "hostile API name: HTML shows it as text" grep -q 'cudaMalloc&lt;img src=x onerror=alert(1)&gt;&quot;,&quot;x&quot;:&quot;' "$TMP/api.html"
check "hostile API name: Perfetto output is valid JSON" strict_json "$TMP/api.pf.json"
check_eq "hostile API name: the Perfetto OOM event names it exactly" \
    "$(jq -r '.traceEvents[] | select(.cat == "oom") | .name' "$TMP/api.pf.json")" "OOM $api 4.00 KiB"
check_eq "hostile API name: --json names it exactly" "$(jq -r '.oom_events[0].api' "$TMP/api.json")" "$api"

# --- names and paths that are not UTF-8, and control characters
{ echo "$H"
  printf '{"ev":"module","path":"/opt/lib\377\376x\303.so","base":"0x7f0000000000","lo":"0x7f0000000000","hi":"0x7f0000100000"}\n'
  printf '{"ev":"range_push","t":1500,"tid":1,"name":"step\\u001b[2J\\u0007\\r\300\257end"}\n'
  echo '{"ev":"alloc","t":2000,"dur":1,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x1000","size":4096,"mem":"device","bt":["0x7f0000001000"]}'
  echo '{"ev":"range_pop","t":2500,"tid":1}'
} >"$TMP/bytes.jsonl"
"$VT" report --json "$TMP/bytes.jsonl" >"$TMP/bytes.json" 2>"$TMP/bytes.err"
check_eq "bytes that are not UTF-8: --json exits 0" "$?" 0
check "bytes that are not UTF-8: --json output is valid UTF-8 JSON" strict_json "$TMP/bytes.json"
check_eq "bytes that are not UTF-8: each shown as U+FFFD, the control characters escaped" \
    "$(jq -j '.peak_ranges' "$TMP/bytes.json" | od -An -tx1 | tr -s ' \n' ' ')" \
    "$(printf 'step\033[2J\007\r\357\277\275\357\277\275end' | od -An -tx1 | tr -s ' \n' ' ')"
"$VT" report --perfetto "$TMP/bytes.pf.json" "$TMP/bytes.jsonl" >/dev/null 2>&1
check "bytes that are not UTF-8: Perfetto output is valid UTF-8 JSON" strict_json "$TMP/bytes.pf.json"
"$VT" report "$TMP/bytes.jsonl" >"$TMP/bytes.txt" 2>&1
check_eq "text report: no raw ESC, BEL or CR from the trace" "$(tr -cd '\033\007\r' <"$TMP/bytes.txt" | wc -c | tr -d ' ')" 0
check "text report: the NVTX name shown with its control characters escaped" grep -qF 'step\x1b[2J\x07\x0d\xc0\xafend' "$TMP/bytes.txt"

# --- sums past 2^64-1: 16385 allocations of 1 PiB (each sane), none freed, total 2^64 + 2^50.
# Before, the sums wrapped around to 1 PiB.
{ echo "$H"
  awk 'BEGIN { for (i = 0; i < 16385; i++) printf "{\"ev\":\"alloc\",\"t\":%d,\"dur\":1,\"tid\":1,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x%x\",\"size\":1125899906842624,\"mem\":\"device\"}\n", 2000 + i, (i + 1) * 4096 }'
} >"$TMP/sum.jsonl"
"$VT" report --json "$TMP/sum.jsonl" >"$TMP/sum.json" 2>"$TMP/sum.err"
check_eq "sums past 2^64-1 saturate: allocated, peak and leaked bytes" \
    "$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(json.dumps([j["allocations"]["count"], j["allocations"]["bytes"], j["peak_bytes"], j["leaked_bytes"]], separators=(",", ":")))' "$TMP/sum.json")" \
    "[16385,18446744073709551615,18446744073709551615,18446744073709551615]"
# a size of 2^64 is out of range: said as such, with the place, not read as 2^64-1
{ echo "$H"; echo '{"ev":"alloc","t":2000,"dur":1,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x1000","size":18446744073709551616,"mem":"device"}'; } >"$TMP/big.jsonl"
"$VT" report --json "$TMP/big.jsonl" >/dev/null 2>"$TMP/big.err"
check_eq "size 2^64: a non-zero exit and one line with the place" "$?:$(cat "$TMP/big.err")" \
    "2:vramtrace report: $TMP/big.jsonl:2: field 'size' is out of range (more than 2^64-1)"
