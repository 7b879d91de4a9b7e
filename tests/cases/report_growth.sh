#!/bin/sh
# report_growth.sh - how live VRAM moves from step to step (issue 49 slice 2, analysis_growth.c):
# tests/progs/growth.cu's 20 steps (vramtrace_step()), with the numbers from its own arithmetic.
. tests/lib.sh
need_sim

M=1048576
P="$ROOT/tests/progs/growth.cu"
LEAK=$(grep -n '// LEAK$' "$P" | cut -d: -f1)
ULEAK=$(grep -n '// UNMARKED_LEAK' "$P" | cut -d: -f1)
for mode in leak leak2 warmup noisy frag unmarked; do
    "$VT" run --sim -q -o "$TMP/$mode.jsonl" -- "$PROGS/growth" $mode >"$TMP/$mode.out" 2>&1
    check_eq "$mode: the program ran (exit 0)" "$?:$(cat "$TMP/$mode.out")" "0:steps=20 rc=0"
    "$VT" report --json "$TMP/$mode.jsonl" >"$TMP/$mode.json" 2>/dev/null
    "$VT" report "$TMP/$mode.jsonl" >"$TMP/$mode.txt" 2>/dev/null
    schema_ok "$mode: the report validates against docs/report-schema.json" "$(cat "$TMP/$mode.json")" '[$s[0].required[] as $k | has($k)] | all'
done
# leak: +24 MiB a step from the one site that keeps its allocation; the 8 and 16 MiB ones are freed.
# 19 steps have an end (the 20th runs into the tear-down): the window is their last half, steps
# 10-19. Step 20 peaks at 24 x 20 + 24 = 504 MiB; the simulated device has 16 GiB: it runs out
# at step 20 + ceil((16384 - 504) / 24) = 682.
check_eq "leak: steady, +24 MiB a step over steps 10-19, from main (growth.cu:$LEAK) in all 10, out of memory at step 682 of 16 GiB" \
    "$(jq -c '.processes[0].growth | [.kind, .rate_bytes_per_step, .window_first_step, .window_last_step, (.sites | map([.site, .bytes_per_step, .rose_in_steps])), .forecast.dev, .forecast.capacity_bytes, .forecast.oom_step]' "$TMP/leak.json")" \
    "[\"steady\",$((24 * M)),10,19,[[\"main (growth.cu:$LEAK)\",$((24 * M)),10]],0,17179869184,682]"
check "leak: the forecast's time is the steps left at the mean step duration" jq -e '.processes[0] |
    (.growth.forecast.seconds_after_trace - (662 * .steps.total_ns / .steps.count / 1e9) | fabs) < 0.001' "$TMP/leak.json"
check_eq "leak: text: Growth right after the summary, the site, the forecast" \
    "$(sed -n '/^Summary$/,/^Steps/p' "$TMP/leak.txt" | grep -c '^[A-Z]'):$(grep -c "^   24.00 MiB per step  main (growth.cu:$LEAK) (rose in 10 of 10 steps)$" "$TMP/leak.txt"):$(grep -c '^  forecast: device 0 runs out at step 682, about .* after the trace.s last step, at +24.00 MiB per step (a step.s peak reaching 16.00 GiB)$' "$TMP/leak.txt")" \
    "3:1:1"
# leak2: 8 MiB (the first site) and 24 MiB kept each step: 32 MiB a step, both sites in all 10
# steps of the window, the one that leaks more first
check_eq "leak2: steady, +32 MiB a step over steps 10-19, growth.cu:$(grep -n '// LEAK_BIG' "$P" | cut -d: -f1) (24 MiB) before growth.cu:$(grep -n '// LEAK_SMALL' "$P" | cut -d: -f1) (8 MiB)" \
    "$(jq -c '.processes[0].growth | [.kind, .rate_bytes_per_step, .window_first_step, .window_last_step, (.sites | map([.site, .bytes_per_step, .rose_in_steps]))]' "$TMP/leak2.json")" \
    "[\"steady\",$((32 * M)),10,19,[[\"main (growth.cu:$(grep -n '// LEAK_BIG' "$P" | cut -d: -f1))\",$((24 * M)),10],[\"main (growth.cu:$(grep -n '// LEAK_SMALL' "$P" | cut -d: -f1))\",$((8 * M)),10]]]"
check_eq "warmup: grew 50 MiB over steps 1-5 (10 MiB kept each), then stopped: no rate, no site, no forecast" \
    "$(jq -c '.processes[0].growth | [.kind, .warmup_steps, .warmup_bytes, .rate_bytes_per_step, .sites, .forecast]' "$TMP/warmup.json"):$(grep -c '^Growth (live VRAM at the end of each step): a warm-up: grew 50.00 MiB over steps 1-5, then stopped growing$' "$TMP/warmup.txt")" \
    "[\"warmup\",5,$((50 * M)),0,[],null]:1"
check_eq "noisy: 1 to 31 MiB live from step to step without a trend: flat, no alarm" \
    "$(jq -c '.processes[0].growth | [.kind, .rate_bytes_per_step, .sites, .forecast]' "$TMP/noisy.json"):$(grep -c '^Growth (live VRAM at the end of each step): flat over 20 steps' "$TMP/noisy.txt")" \
    "[\"flat\",0,[],null]:1"
# frag: a caching allocator serving 4, 6, 8, 5, 7 MiB in turn grows a block in steps 1-3 (4 + 6 + 8
# MiB), then serves every size from its cache: growth that stops, not a leak
check_eq "frag: a warm-up of 18 MiB over steps 1-3 (the cache filling with varying sizes), no rate, no forecast" \
    "$(jq -c '.processes[0].growth | [.kind, .warmup_steps, .warmup_bytes, .rate_bytes_per_step, .forecast]' "$TMP/frag.json")" \
    "[\"warmup\",3,$((18 * M)),0,null]"
# unmarked: no marker; 4 calls a step (24 MiB kept, 8 MiB allocated and freed, the loss read):
# 20 steps from the period, +24 MiB a step; step 20 peaks at 24 x 20 + 8 = 488 MiB: out of
# memory at step 20 + ceil((16384 - 488) / 24) = 683
check_eq "unmarked: 20 steps from the calls' period, +24 MiB a step from main (growth.cu:$ULEAK), out of memory at step 683" \
    "$(jq -c '.processes[0] | [.steps.source, .steps.count, .growth.kind, .growth.rate_bytes_per_step, (.growth.sites | map([.site, .bytes_per_step])), .growth.forecast.oom_step]' "$TMP/unmarked.json")" \
    "[\"period\",20,\"steady\",$((24 * M)),[[\"main (growth.cu:$ULEAK)\",$((24 * M))]],683]"
# fewer than 4 steps: nothing to say
"$VT" run --sim -q -o "$TMP/none.jsonl" -- "$PROGS/trace_rt" clean >/dev/null 2>&1
check_eq "no steps: growth null, no Growth section" \
    "$("$VT" report --json "$TMP/none.jsonl" | jq -c '.processes[0].growth'):$("$VT" report "$TMP/none.jsonl" | grep -c '^Growth')" "null:0"
# HTML: the section with the growth sentence, both per-step lines (20 points each), the site, the forecast
"$VT" report --html "$TMP/leak.html" "$TMP/leak.jsonl" >/dev/null 2>&1
sec=$(grep -o '<section><h2>Steps (20) and growth</h2>.*' "$TMP/leak.html" | sed 's#</section>.*##')
check_eq "html: growth sentence, two lines of 20 steps, the growing site, the forecast" \
    "$(printf '%s' "$sec" | grep -c 'growing: +24.00 MiB per step</b> over steps 10-19'):$(printf '%s' "$sec" | grep -o '<polyline[^>]*points="[^"]*"' | sed 's/.*points="//; s/"$//' | awk '{print NF}' | tr '\n' ' '):$(printf '%s' "$sec" | grep -c "<code>main (growth.cu:$LEAK)</code>"):$(printf '%s' "$sec" | grep -c 'runs out at step 682')" \
    "1:20 20 :1:1"
# --diff: the growth rate of two runs (the leak against the warm-up)
check_eq "diff: growth/step row, +24 MiB against a warm-up" \
    "$("$VT" report --diff "$TMP/leak.jsonl" "$TMP/warmup.jsonl" | grep '^  growth/step' | tr -s ' ')" " growth/step +24.00 MiB warm-up -24.00 MiB"
check_eq "diff --json: steps, kind and rate of each side" \
    "$("$VT" report --json --diff "$TMP/leak.jsonl" "$TMP/warmup.jsonl" | jq -c '[.base.steps, .base.growth, .base.growth_bytes_per_step, .new.steps, .new.growth, .new.growth_bytes_per_step]')" \
    "[20,\"steady\",$((24 * M)),20,\"warmup\",0]"
