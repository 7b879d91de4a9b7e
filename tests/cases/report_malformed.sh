#!/bin/sh
# report_malformed.sh - crash damage is accepted (truncated last line, NUL padding, NULs inside a
# line) with a warning; bad input is rejected with "FILE:LINE: ..." and exit status 2, never a crash.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
H='{"ev":"header","format":"vramtrace-trace","version":1,"pid":7,"t":0}'
A='{"ev":"alloc","t":10,"dur":1,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":1048576,"mem":"device"}'
A2='{"ev":"alloc","t":20,"dur":1,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000100000","size":2097152,"mem":"device"}'

# rejects: "name" "file contents" "expected message part"
bad() {
    printf '%b' "$2" >"$TMP/$1.jsonl"
    "$VT" report "$TMP/$1.jsonl" >"$TMP/out" 2>"$TMP/err"; rc=$?
    msg=$(cat "$TMP/err")
    if [ "$rc" -eq 2 ] && printf '%s' "$msg" | grep -qF "$TMP/$1.jsonl:$3"; then ok "$1: exit 2, '$3'"
    else not_ok "$1: rc=$rc msg='$msg' (want exit 2 and '$TMP/$1.jsonl:$3')"; fi
    n=$(wc -l <"$TMP/err")
    check_eq "$1: one-line message" "$n" 1
}
good() { # NAME CONTENT WHAT: a trace at the edge of what is allowed, read without a word
    printf '%b' "$2" >"$TMP/$1.jsonl"
    "$VT" report "$TMP/$1.jsonl" >/dev/null 2>"$TMP/$1.err"
    check_eq "$3: exit 0, nothing said" "$?:$(cat "$TMP/$1.err")" "0:"
}
bad not_json "$H\n$A\nthis is not json\n" "3: not valid JSON"
bad not_object "$H\n[1,2,3]\n" "2: record is not a JSON object"
bad trailing_garbage "$H\n$A xyz\n" "2: not valid JSON"
# a record whose '{' is another character: both parsers must refuse it, the fast one included
bad brace_replaced "$H\nx${A#?}\n" "2: not valid JSON"
bad brace_missing "$H\n${A#?}\n" "2: not valid JSON"
bad wrong_version '{"ev":"header","format":"vramtrace-trace","version":2,"pid":7,"t":0}\n' "1: unsupported trace version 2"
bad wrong_format '{"ev":"header","format":"other","version":1,"pid":7,"t":0}\n' "1: not a vramtrace trace"
bad no_header "$A\n" "1: first record is not a header"
bad missing_field "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","mem":"device"}\n' "2: alloc record is missing field 'size'"
bad missing_ev "$H\n"'{"t":10}\n' "2: record is missing field 'ev'"
bad wrong_type "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":"big","mem":"device"}\n' "2: field 'size' must be an integer, got a string"
bad float_size "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":1.5,"mem":"device"}\n' "2: field 'size' must be an integer, got a number"
# the fields of repeated findings and of graph work (issues 33, 34)
bad finding_count_type "$H\n"'{"ev":"finding","t":5,"kind":"host_pointer","severity":"warning","id":3,"count":"many"}\n' "2: field 'count' must be an integer, got a string"
bad finding_first_neg "$H\n"'{"ev":"finding","t":5,"kind":"host_pointer","severity":"warning","id":3,"count":2,"first":-1}\n' "2: field 'first' is negative"
bad captured_type "$H\n"'{"ev":"launch","t":5,"dur":1,"tid":1,"api":"x","res":0,"dev":0,"k":1,"captured":1}\n' "2: field 'captured' must be a boolean, got an integer"
bad graph_type "$H\n"'{"ev":"copy","t":5,"dur":1,"tid":1,"api":"x","res":0,"dev":0,"size":4,"dir":"h2d","graph":"yes"}\n' "2: field 'graph' must be a boolean, got a string"
# the header's process numbers and wall clock are never negative
for f in pid ppid wall_time_ns; do
    bad "header_neg_$f" '{"ev":"header","format":"vramtrace-trace","version":1,"pid":7,"t":0,"'$f'":-5}\n' "1: field '$f' is negative"
done
bad negative_size "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":-4096,"mem":"device"}\n' "2: field 'size' is negative"
bad absurd_size "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":9223372036854775807,"mem":"device"}\n' "2: absurd allocation size"
bad huge_number "$H\n"'{"ev":"alloc","t":99999999999999999999999,"tid":1,"api":"cudaMalloc","res":0,"size":1,"addr":"0x1","mem":"device"}\n' "2:"
bad bad_addr "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"7e00","size":1,"mem":"device"}\n' "2: field 'addr' is not a hex address"
bad bad_mem "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x1","size":1,"mem":"gpu"}\n' "2: field 'mem' has unknown value"
bad bad_dev "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":99999,"addr":"0x1","size":1,"mem":"device"}\n' "2: field 'dev' is out of range"
bad escaped_bad "$H\n"'{"ev":"kernel","id":1,"name":"a\\qb"}\n' "2: not valid JSON"
bad empty "" "1: empty trace"
bad only_nul '\0\0\0\0' "1: empty trace"
bad second_header "$H\n$H\n" "2: second header record"
# a kernel's parameter layout: [offset, size] pairs, each from 0 to 65535
bad params_negative_size "$H\n"'{"ev":"kernel","id":1,"name":"k","params":[[0,8],[8,-1]]}\n' "2: field 'params' element 1 is out of range"
bad params_big_offset "$H\n"'{"ev":"kernel","id":1,"name":"k","params":[[65536,8]]}\n' "2: field 'params' element 0 is out of range"
bad params_big_size "$H\n"'{"ev":"kernel","id":1,"name":"k","params":[[0,8],[8,8],[16,65536]]}\n' "2: field 'params' element 2 is out of range"
# each refusal the reader has, with its own words
bad header_no_version '{"ev":"header","format":"vramtrace-trace","pid":7,"t":0}\n' "1: header record is missing field 'version'"
bad blank_only '\n\n\n' "3: empty trace (no header record)"
bad copies_no_count "$H\n"'{"ev":"copies","t":5,"tid":1,"api":"cudaMemcpy","dev":0,"size":4,"dir":"h2d","bytes":8}\n' "2: a folded record without its count"
bad sets_no_count "$H\n"'{"ev":"sets","t":5,"tid":1,"api":"cudaMemset","dev":0,"size":4,"bytes":8}\n' "2: a folded record without its count"
bad launches_no_count "$H\n"'{"ev":"launches","t":5,"tid":1,"api":"cudaLaunchKernel","dev":0,"k":1}\n' "2: a launches record without its count"
# 2^50 bytes (1 PiB) is the most a size may be; one byte more is absurd
bad absurd_copy "$H\n"'{"ev":"copy","t":5,"dur":1,"tid":1,"api":"cudaMemcpy","res":0,"dev":0,"size":1125899906842625,"dir":"h2d"}\n' "2: absurd copy size 1125899906842625"
bad absurd_folded "$H\n"'{"ev":"copies","t":5,"tid":1,"api":"cudaMemcpy","dev":0,"size":4,"dir":"h2d","count":2,"bytes":1125899906842625}\n' "2: absurd size 1125899906842625"
good copy_pib "$H\n"'{"ev":"copy","t":5,"dur":1,"tid":1,"api":"cudaMemcpy","res":0,"dev":0,"size":1125899906842624,"dir":"h2d"}\n' "a copy of exactly 1 PiB is read"
# every count, time and size field is refused negative, in any record (a step here); t, dur and
# tid also in a call record's head, which the fast parser matches literally
for f in t dur tid arg offset first last line events dropped live_bytes findings depth page_size wall_time \
         count bytes value skipped keep release_threshold reserved_after; do
    bad "neg_$f" "$H\n"'{"ev":"step","t":5,"'$f'":-1}\n' "2: field '$f' is negative (-1)"
done
for c in "t -1" "dur -2" "tid -3"; do
    set -- $c
    head=$(printf '"t":1,"dur":2,"tid":3' | sed "s/\"$1\":[0-9]*/\"$1\":$2/")
    bad "head_neg_$1" "$H\n"'{"ev":"alloc",'"$head"',"api":"cudaMalloc","res":0,"dev":0,"addr":"0x1","size":1,"mem":"device"}\n' "2: field '$1' is negative ($2)"
done
# dev: -1 (none) to 4095, in a call record's head (the fast parser's) and elsewhere (a device record)
bad dev_below_device "$H\n"'{"ev":"device","t":1,"dev":-2,"name":"x","total_bytes":1}\n' "2: field 'dev' is out of range (-2)"
bad dev_above_device "$H\n"'{"ev":"device","t":1,"dev":4096,"name":"x","total_bytes":1}\n' "2: field 'dev' is out of range (4096)"
bad dev_below "$H\n"'{"ev":"alloc","t":1,"dur":2,"tid":1,"api":"cudaMalloc","res":0,"dev":-2,"addr":"0x1","size":1,"mem":"device"}\n' "2: field 'dev' is out of range (-2)"
bad dev_above "$H\n"'{"ev":"alloc","t":1,"dur":2,"tid":1,"api":"cudaMalloc","res":0,"dev":4096,"addr":"0x1","size":1,"mem":"device"}\n' "2: field 'dev' is out of range (4096)"
good dev_edges "$H\n"'{"ev":"alloc","t":1,"dur":2,"tid":1,"api":"cudaMalloc","res":0,"dev":4095,"addr":"0x1","size":1,"mem":"device"}\n{"ev":"alloc","t":1,"dur":2,"tid":1,"api":"cudaMalloc","res":2,"dev":-1,"size":1,"mem":"device"}\n{"ev":"device","t":1,"dev":4095,"name":"x","total_bytes":1}\n' "dev 4095 and -1 are read (a call record and a device record)"
bad bt_not_hex "$H\n"'{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x1","size":1,"mem":"device","bt":["0x10","0x20","main+4"]}\n' "2: field 'bt' element 2 is not a hex address"
bad params_not_pair "$H\n"'{"ev":"kernel","id":1,"name":"k","params":[[0,8,1]]}\n' "2: field 'params' element 0 is not an [offset, size] pair"
good params_edge "$H\n"'{"ev":"kernel","id":1,"name":"k","params":[[0,0],[65535,65535]]}\n' "params at the bounds (offset and size 0 and 65535) are read"

# accepted damage
printf '%s\n%s\n%s' "$H" "$A" '{"ev":"alloc","t":20,"tid":1,"api":"cudaMa' >"$TMP/cut.jsonl"
j=$("$VT" report --json "$TMP/cut.jsonl" 2>"$TMP/err"); rc=$?
check_eq "truncated mid-line: exit 0" "$rc" 0
check "truncated: warning names file:line" grep -q "cut.jsonl:3: warning: last record has no newline" "$TMP/err"
check_eq "truncated: valid prefix used" "$(printf '%s' "$j" | jq .peak_bytes)" 1048576
check_eq "truncated: warnings counted" "$(printf '%s' "$j" | jq .warnings)" 1

printf '%s\n%s\n\0\0\0\0%s\n\0\0\0\0\0\0\0\0' "$H" "$A" "$A2" >"$TMP/nul.jsonl"
j=$("$VT" report --json "$TMP/nul.jsonl" 2>"$TMP/err"); rc=$?
check_eq "NUL padding between lines and at the end: exit 0" "$rc" 0
check_eq "NUL padding: both records used" "$(printf '%s' "$j" | jq .peak_bytes)" 3145728
check_eq "NUL padding: no warning" "$(wc -c <"$TMP/err")" 0

printf '%s\n%s\n{"ev":"alloc","t":15,"ti\0\0\0\0%s\n' "$H" "$A" "$A2" >"$TMP/nulmid.jsonl"
j=$("$VT" report --json "$TMP/nulmid.jsonl" 2>"$TMP/err"); rc=$?
check_eq "record cut by NULs: exit 0" "$rc" 0
check "record cut by NULs: warning" grep -q "nulmid.jsonl:3: warning: record cut off by a crash" "$TMP/err"
check_eq "record cut by NULs: the record after the NULs is kept" "$(printf '%s' "$j" | jq .peak_bytes)" 3145728

# a live writer's record whose tail was copied before its head (memcpy copies the ends first):
# NULs, then the end of a record, then a whole one
printf '%s\n%s\n\0\0\0\0\0\0"size":1048576,"mem":"device"}\n%s\n' "$H" "$A" "$A2" >"$TMP/nulhead.jsonl"
j=$("$VT" report --json "$TMP/nulhead.jsonl" 2>"$TMP/err"); rc=$?
check_eq "record whose head is still NULs: exit 0 (was 2: not valid JSON)" "$rc" 0
check "record whose head is still NULs: warning names file:line" grep -q "nulhead.jsonl:3: warning: damaged record after NUL bytes, dropped" "$TMP/err"
check_eq "record whose head is still NULs: the records around it are kept" "$(printf '%s' "$j" | jq .peak_bytes)" 3145728

printf '%s\n%s\n{"ev":"free","t":30,"tid":1,"api":"cudaFree","res":null,"addr":"0x7e0000000000"}\n' "$H" "$A" >"$TMP/died.jsonl"
j=$("$VT" report --json "$TMP/died.jsonl"); rc=$?
check_eq "free with res null (died inside): accepted" "$rc" 0
check_eq "no footer: process marked incomplete" "$(printf '%s' "$j" | jq '.processes[0].complete')" false

# a failed allocation may request more than exists (cudaMalloc(SIZE_MAX)): accepted
printf '%s\n{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":2,"dev":0,"size":18446744073709551615,"mem":"device"}\n' "$H" >"$TMP/hugefail.jsonl"
j=$("$VT" report --json "$TMP/hugefail.jsonl"); rc=$?
check_eq "failed alloc of SIZE_MAX: accepted" "$rc" 0
check "failed alloc of SIZE_MAX: requested_bytes exact" sh -c 'printf "%s" "$1" | grep -q "\"requested_bytes\":18446744073709551615,"' _ "$j"

# escapes and unicode go through json-c
printf '%s\n{"ev":"kernel","id":1,"name":"k\\u003cint\\u003e\\n"}\n{"ev":"launch","t":5,"k":1,"api":"x","res":0}\n' "$H" >"$TMP/esc.jsonl"
"$VT" report "$TMP/esc.jsonl" >/dev/null 2>&1; check_eq "escaped strings accepted" "$?" 0

# CLI errors
"$VT" report --frobnicate "$D/oom.jsonl" >/dev/null 2>"$TMP/err"; rc=$?
check_eq "unknown flag: exit 2" "$rc" 2
check "unknown flag: one line naming it" sh -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "unknown option .--frobnicate." "$1"' _ "$TMP/err"
"$VT" report "$TMP/does-not-exist.jsonl" >/dev/null 2>"$TMP/err"; rc=$?
check_eq "missing file: exit 2" "$rc" 2
check "missing file: one line with the reason" sh -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "does-not-exist.jsonl: No such file or directory" "$1"' _ "$TMP/err"
"$VT" report >/dev/null 2>"$TMP/err"; check_eq "no trace: exit 2" "$?" 2
"$VT" report --top 0 "$D/oom.jsonl" >/dev/null 2>"$TMP/err"; check_eq "--top 0: exit 2" "$?" 2
"$VT" report --html >/dev/null 2>"$TMP/err"; check_eq "--html without FILE: exit 2" "$?" 2
"$VT" report --help | grep -q -- "--perfetto FILE"; check_eq "--help lists options" "$?" 0
# several traces, every one of them empty (each process killed as the tracer started): nothing to
# report is an error, said once after each trace is named
: >"$TMP/empty1.jsonl"; : >"$TMP/empty2.jsonl"
"$VT" report "$TMP/empty1.jsonl" "$TMP/empty2.jsonl" >"$TMP/out" 2>"$TMP/err"
check_eq "two empty traces: exit 2, both named as empty, then 'none of the 2 traces could be read'" \
    "$?:$(grep -c ': empty (the process was killed as the tracer started: nothing was recorded); skipped$' "$TMP/err"):$(tail -1 "$TMP/err")" \
    "2:2:vramtrace report: none of the 2 traces could be read"
