#!/bin/sh
# report_steps.sh - the steps of a training loop (issue 49 slice 1, tools/report/analysis_steps.c):
# found from vramtrace_step() calls, else a repeated NVTX range; each step's live VRAM at its start
# and its peak. tests/progs/steps.cu: a 2 MiB buffer, then 8 steps each keeping a 1 MiB
# allocation and freeing a 4 MiB one, so step K starts with 2 + (K - 1) MiB live and peaks at
# 2 + K + 4 MiB.
. tests/lib.sh
need_sim

M=1048576
want=""
for k in 1 2 3 4 5 6 7 8; do want="$want${want:+,}[$(((1 + k) * M)),$(((6 + k) * M))]"; done
for mode in api nvtx batch plain; do
    t="$TMP/$mode"
    "$VT" run --sim -q -o "$t.jsonl" -- "$PROGS/steps" $mode >"$t.out" 2>&1
    check_eq "$mode: the program ran (exit 0)" "$?:$(head -1 "$t.out")" "0:steps=8 rc=0"
    "$VT" report --json "$t.jsonl" >"$t.json" 2>"$t.err"
    case $mode in
    api) src='"vramtrace_step","vramtrace_step()"' ;;
    nvtx) src='"nvtx","step"' ;;
    batch) src='"nvtx","batch"' ;; # no step-like name: the repeated range open longest, not the nested "forward"
    plain) src='"period","4 calls: cudaMalloc, cudaMalloc, cudaFree, cudaMemcpy"' ;; # each step ends at its d2h read
    esac
    check_eq "$mode: 8 steps from $src, live at each start and peak from the program's arithmetic" \
        "$(jq -c '.processes[0].steps | [.source, .name, .count, .listed, .live_known, .max_peak_bytes, .max_peak_step, (.list | map([.live_start_bytes, .peak_bytes]))]' "$t.json")" \
        "[$src,8,8,true,$((14 * M)),8,[$want]]"
    check "$mode: every step has a duration, steps in time order, durations add up to total_ns" jq -e '.processes[0].steps |
        (.list | all(.duration_ns > 0)) and ([.list[].time_ns] == ([.list[].time_ns] | sort)) and
        (([.list[].duration_ns] | add) == .total_ns) and .min_ns <= .max_ns' "$t.json"
    schema_ok "$mode: the report validates against docs/report-schema.json" "$(cat "$t.json")" '[$s[0].required[] as $k | has($k)] | all'
done
"$VT" report "$TMP/api.jsonl" >"$TMP/api.txt" 2>/dev/null
check "text: Summary, Growth, then Steps, saying how the steps were found" \
    sh -c 'test "$(sed -n "/^Summary$/,/^Steps/p" "$1" | grep "^[A-Z]" | cut -c1-6 | tr "\n" " ")" = "Summar Growth Steps: " && grep -q "^Steps: 8, from the program'"'"'s vramtrace_step() calls; " "$1"' _ "$TMP/api.txt"
check_eq "text: live at the start of the first and last step, the highest peak" \
    "$(grep '^  live VRAM at the start:' "$TMP/api.txt")" "  live VRAM at the start: 2.00 MiB (step 1) -> 9.00 MiB (step 8); highest peak 14.00 MiB (step 8)"
check_eq "text: a row per step (the default top 10 shows all 8): step, live at start, peak" \
    "$(sed -n '/^  *step  *start (trace)/,/^$/p' "$TMP/api.txt" | sed '1d;/^$/d' | awk '{print $1, $(NF-3) $(NF-2), $(NF-1) $NF}' | tr '\n' ';')" \
    "1 2.00MiB 7.00MiB;2 3.00MiB 8.00MiB;3 4.00MiB 9.00MiB;4 5.00MiB 10.00MiB;5 6.00MiB 11.00MiB;6 7.00MiB 12.00MiB;7 8.00MiB 13.00MiB;8 9.00MiB 14.00MiB;"
# --top 4: the first two steps and the last two, the four between them said in one line
check_eq "text --top 4: steps 1-2, '... 4 more steps', then steps 7-8" \
    "$("$VT" report --top 4 "$TMP/api.jsonl" | sed -n '/^  *step  *start (trace)/,/^$/p' | sed '1d;/^$/d' | awk '/more steps/ { print; next } { print $1, $(NF-3) $(NF-2), $(NF-1) $NF }' | tr '\n' ';')" \
    "1 2.00MiB 7.00MiB;2 3.00MiB 8.00MiB;  ... 4 more steps;7 8.00MiB 13.00MiB;8 9.00MiB 14.00MiB;"
# the period is found in calls folding never hides: the same steps with folding off
VRAMTRACE_FOLD=0 "$VT" run --sim -q -o "$TMP/plain0.jsonl" -- "$PROGS/steps" plain >/dev/null 2>&1
check_eq "plain: the same steps with folding off (times, live, peaks)" \
    "$("$VT" report --json "$TMP/plain0.jsonl" | jq -c '.processes[0].steps | [.count, (.list | map([.live_start_bytes, .peak_bytes]))]')" \
    "$(jq -c '.processes[0].steps | [.count, (.list | map([.live_start_bytes, .peak_bytes]))]' "$TMP/plain.json")"
# no steps: a program without a marker or repeated range says nothing of steps
"$VT" run --sim -q -o "$TMP/none.jsonl" -- "$PROGS/trace_rt" clean >/dev/null 2>&1
check_eq "no marker, no repeated range: steps null, no Steps section" \
    "$("$VT" report --json "$TMP/none.jsonl" | jq -c '.processes[0].steps'):$("$VT" report "$TMP/none.jsonl" | grep -c '^Steps')" "null:0"
# a set-up loop (allocations alone) and a tear-down loop (frees alone, a cache emptied) repeat one
# call, but are no steps: a step waits for the GPU, or allocates and frees
{ head -1 "$TMP/api.jsonl"
  awk 'BEGIN { for (i = 0; i < 10; i++) printf "{\"ev\":\"alloc\",\"t\":%d,\"dur\":1,\"tid\":1,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x%x\",\"size\":1048576,\"mem\":\"device\",\"bt\":[\"0x1000\"]}\n", 1000 + i, (i + 1) * 1048576;
               for (i = 0; i < 12; i++) printf "{\"ev\":\"free\",\"t\":%d,\"dur\":1,\"tid\":1,\"api\":\"cudaFree\",\"res\":0,\"dev\":0,\"addr\":\"0x%x\",\"bt\":[\"0x2000\"]}\n", 2000 + i, (i + 1) * 1048576 }'
} >"$TMP/setup.jsonl"
check_eq "10 allocations then 12 frees (two never made) from one line each: no steps" \
    "$("$VT" report --json "$TMP/setup.jsonl" 2>/dev/null | jq -c '.processes[0] | [.steps, .growth, .alloc_count // 0]' | cut -d, -f1-2)" "[null,null"
# ... and a tear-down run longer than the loop does not hide it: 4 steps of an allocation and a
# d2h read, then 12 frees from one line: the 4 steps (the longest run that is steps)
{ head -1 "$TMP/api.jsonl"
  awk 'BEGIN { for (i = 0; i < 4; i++) {
                 printf "{\"ev\":\"alloc\",\"t\":%d,\"dur\":1,\"tid\":1,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x%x\",\"size\":1048576,\"mem\":\"device\",\"bt\":[\"0x3000\"]}\n", 1000 + 10 * i, (i + 1) * 1048576;
                 printf "{\"ev\":\"copy\",\"t\":%d,\"dur\":1,\"tid\":1,\"api\":\"cudaMemcpy\",\"res\":0,\"dev\":0,\"dst\":\"0x7000\",\"src\":\"0x%x\",\"size\":4,\"dir\":\"d2h\",\"host\":\"pageable\",\"async\":false,\"kind\":2,\"bt\":[\"0x4000\"]}\n", 1005 + 10 * i, (i + 1) * 1048576 }
               for (i = 0; i < 12; i++) printf "{\"ev\":\"free\",\"t\":%d,\"dur\":1,\"tid\":1,\"api\":\"cudaFree\",\"res\":0,\"dev\":0,\"addr\":\"0x%x\",\"bt\":[\"0x2000\"]}\n", 2000 + i, (i + 1) * 1048576 }'
} >"$TMP/loop_teardown.jsonl"
check_eq "4 steps of an allocation and a d2h read, then 12 frees from one line: the 4 steps, 1 MiB more live at each start" \
    "$("$VT" report --json "$TMP/loop_teardown.jsonl" 2>/dev/null | jq -c '.processes[0].steps | [.source, .count, [.list[].live_start_bytes]]')" \
    "[\"period\",4,[0,$M,$((2 * M)),$((3 * M))]]"
