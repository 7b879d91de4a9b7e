#!/bin/sh
# report_times.sh - times in the text report (issue 51): a duration that rounds to the next unit
# is written in it ("+1 s", never "+1e+03 ms"), and a trace's clock times keep the start's
# fraction of a second (the header's wall_time_ns), so one instant reads the same in its process's
# section and in the combined view.
. "$ROOT/tests/lib.sh"
export TZ=UTC
# wall_time 1764680000 is 2025-12-02 12:53:20 UTC; wall_time_ns adds .826 s. Process a (pid 11)
# allocates 1 GiB at +999.7 ms (12:53:21.8257: "12:53:21.825"); b (pid 12, started 5 s later,
# at .500) 256 MiB at +999.6 ms (12:53:26.4996: "12:53:26.499"), while a's GiB is still live: the
# two add, 1.25 GiB at once at b's allocation.
mk() { # mk FILE PID WALL_NS SIZE
    printf '%s\n' \
        "{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.1.0\",\"pid\":$2,\"ppid\":1,\"program\":\"/x/t\",\"argv\":[\"t\"],\"t\":1000000000,\"wall_time\":$(($3 / 1000000000)),\"wall_time_ns\":$3,\"hostname\":\"h\",\"rank\":{},\"page_size\":4096,\"backtraces\":false,\"checks\":\"off\"}" \
        "{\"ev\":\"device\",\"t\":1000000100,\"dev\":0,\"name\":\"GPU\",\"total_bytes\":85899345920,\"sim\":true,\"pci\":\"0000:10:00.0\"}" \
        "{\"ev\":\"alloc\",\"t\":$((1000000000 + $5)),\"dur\":100,\"tid\":$2,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x7e0000000000\",\"size\":$4,\"mem\":\"device\"}" \
        "{\"ev\":\"footer\",\"t\":20000000000,\"events\":3,\"live_bytes\":$4,\"findings\":0,\"dropped\":0}" >"$1"
}
mk "$TMP/a.jsonl" 11 1764680000826000000 1073741824 999700000
mk "$TMP/b.jsonl" 12 1764680005500000000 268435456 999600000
"$VT" report "$TMP/a.jsonl" >"$TMP/a.txt" 2>&1
check_eq "a: peak at +999.7 ms reads +1 s, the clock with the start's .826" \
    "$(grep '^  peak VRAM' "$TMP/a.txt")" "  peak VRAM     1.00 GiB at 12:53:21.825 (+1 s)"
check_eq "no duration in exponent form anywhere" "$(grep -c 'e+0' "$TMP/a.txt")" 0
"$VT" report "$TMP/a.jsonl" "$TMP/b.jsonl" >"$TMP/ab.txt" 2>&1
check_eq "a and b: b's section says 12:53:26.499" \
    "$(grep '^  peak VRAM' "$TMP/ab.txt" | sed -n 2p)" "  peak VRAM     256.00 MiB at 12:53:26.499 (+1 s)"
check "a and b: the combined line names the same instant (1.25 GiB at 12:53:26.499)" \
    grep -q '^    at once: 1.25 GiB at 12:53:26.499 ' "$TMP/ab.txt"
# the unit steps, each just under where the next begins: 999.6 ns, 999.7 us, 599.9 s
mk "$TMP/c.jsonl" 13 1764680000000000000 4096 1000
sed -i 's/"t":1000001000,/"t":1000000999,/' "$TMP/c.jsonl"   # +999 ns: still ns
"$VT" report "$TMP/c.jsonl" >"$TMP/c.txt" 2>&1
check_eq "+999 ns stays in ns" "$(grep -o '(+[^)]*)' "$TMP/c.txt" | head -1)" "(+999 ns)"
mk "$TMP/d.jsonl" 14 1764680000000000000 4096 999700
"$VT" report "$TMP/d.jsonl" >"$TMP/d.txt" 2>&1
check_eq "+999.7 us reads +1 ms" "$(grep -o '(+[^)]*)' "$TMP/d.txt" | head -1)" "(+1 ms)"
mk "$TMP/e.jsonl" 15 1764680000000000000 4096 999999
"$VT" report "$TMP/e.jsonl" >"$TMP/e.txt" 2>&1
check_eq "+999.999 us reads +1 ms" "$(grep -o '(+[^)]*)' "$TMP/e.txt" | head -1)" "(+1 ms)"
