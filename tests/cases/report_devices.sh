#!/bin/sh
# report_devices.sh - per-device peaks in `vramtrace report --json` (processes[].devices[],
# docs/report.md): a hand-written trace with two devices and an allocation of unknown device,
# then tests/progs/wl_mem multi on two simulated devices (VRAMTRACE_SIM_DEVICES=2), whose
# devices peak at 3 MiB (dev 0) and 4 MiB (dev 1) at different moments (process peak 6.5 MiB).
. "$ROOT/tests/lib.sh"
MiB=1048576
devs() { printf '%s' "$1" | jq -r '[.processes[0].devices[] | "\(.dev):\(.peak_bytes)"] | join(" ")'; }
DEVICES_SCHEMA='.processes | all(.devices | all(has("dev") and has("name") and has("total_bytes") and has("peak_bytes") and has("peak_time_ns") and has("sim")))'

# ---- hand-written ------------------------------------------------------------------------------
al() { echo "{\"ev\":\"alloc\",\"t\":$1,\"dur\":1,\"tid\":1,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":$2,\"addr\":\"$3\",\"size\":$(($4 * MiB)),\"mem\":\"device\"}"; }
fr() { echo "{\"ev\":\"free\",\"t\":$1,\"dur\":1,\"tid\":1,\"api\":\"cudaFree\",\"res\":0,\"dev\":$2,\"addr\":\"$3\",\"size\":$(($4 * MiB)),\"mem\":\"device\"}"; }
{
    echo '{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":9,"ppid":1,"program":"/x/devs","argv":["devs"],"t":1000,"wall_time":0,"hostname":"h","rank":{},"page_size":4096,"backtraces":false,"checks":"off"}'
    echo '{"ev":"device","t":1001,"dev":0,"name":"GPU zero","total_bytes":1073741824,"cc":"9.0","mem_clock_khz":1,"bus_width_bits":1,"pageable_access":0,"sim":false}'
    echo '{"ev":"device","t":1002,"dev":1,"name":"GPU one","total_bytes":2147483648,"cc":"9.0","mem_clock_khz":1,"bus_width_bits":1,"pageable_access":0,"sim":true}'
    al 1100 0 0x100000 8            # dev0 8
    al 1200 1 0x200000 2            # dev1 2 (process 10)
    fr 1300 0 0x100000 8            # dev0 0
    al 1400 1 0x300000 5            # dev1 7 (process 7)
    al 1500 -1 0x400000 1           # unknown device 1 (process 8)
    echo '{"ev":"device","t":1600,"dev":3,"name":"GPU three","total_bytes":4096,"cc":"9.0","mem_clock_khz":1,"bus_width_bits":1,"pageable_access":0,"sim":false}'
} >"$TMP/devs.jsonl"
j=$("$VT" report --json "$TMP/devs.jsonl"); rc=$?
check_eq "hand-written: --json exits 0" "$rc" 0
check_eq "hand-written: per-device peaks (unknown -1, dev 0, dev 1, idle dev 3 listed)" "$(devs "$j")" \
    "-1:$MiB 0:$((8*MiB)) 1:$((7*MiB)) 3:0"
check_eq "hand-written: peak times are each device's own" \
    "$(printf '%s' "$j" | jq -r '[.processes[0].devices[] | .peak_time_ns] | join(",")')" "1500,1100,1400,0"
check_eq "hand-written: name, total_bytes, sim from the device records (null name for -1)" \
    "$(printf '%s' "$j" | jq -r '[.processes[0].devices[] | "\(.name)/\(.total_bytes)/\(.sim)"] | join(" ")')" \
    "null/0/false GPU zero/1073741824/false GPU one/2147483648/true GPU three/4096/false"
check_eq "hand-written: process peak (10 MiB) is not the sum of device peaks" "$(printf '%s' "$j" | jq .peak_bytes)" $((10*MiB))
schema_ok "hand-written: --json validates" "$j" "$DEVICES_SCHEMA"
# two traces: each processes[] entry has its own devices
cp "$TMP/devs.jsonl" "$TMP/devs2.jsonl"
j2=$("$VT" report --json "$TMP/devs.jsonl" "$TMP/devs2.jsonl")
check_eq "two traces: devices per process" "$(printf '%s' "$j2" | jq -r '[.processes[] | .devices | length] | join(",")')" 4,4

# ---- wl_mem multi on two simulated devices -----------------------------------------------------
need_sim
t="$TMP/multi.jsonl"
env VRAMTRACE_SIM_DEVICES=2 VRAMTRACE_QUIET=1 VRAMTRACE_BACKTRACE=0 VRAMTRACE_OUTPUT="$t" \
    LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" LD_LIBRARY_PATH="$SIM" "$PROGS/wl_mem" multi >"$TMP/multi.out" 2>&1
check_eq "multi: two devices seen by the program" "$(sed -n 's/^count=//p' "$TMP/multi.out")" 2
j=$("$VT" report --json "$t"); rc=$?
check_eq "multi: --json exits 0" "$rc" 0
check_eq "multi: devices[] = dev 0 peak 3 MiB, dev 1 peak 4 MiB" "$(devs "$j")" "0:$((3*MiB)) 1:$((4*MiB))"
check_eq "multi: both simulated, named, sized" \
    "$(printf '%s' "$j" | jq -r '[.processes[0].devices[] | (.sim and (.name|type=="string") and .total_bytes > 0)] | all')" true
# the time of each device's peak is the time of the allocation that reached it
check_eq "multi: peak_time_ns = the allocation that reached each peak" \
    "$(printf '%s' "$j" | jq -r '[.processes[0].devices[] | .peak_time_ns] | join(",")')" \
    "$(jqs "$t" '[.[]|select(.ev=="alloc")] as $a | [($a[]|select(.api=="cuMemAlloc_v2" and .dev==0)|.t), ($a[]|select(.api=="cudaMallocAsync")|.t)] | join(",")')"
check_eq "multi: process peak 6.5 MiB" "$(printf '%s' "$j" | jq .peak_bytes)" $((6*MiB + MiB/2))
schema_ok "multi: --json validates" "$j" "$DEVICES_SCHEMA"
out=$("$VT" report "$t")
check "multi: text lists both device peaks" sh -c 'printf "%s\n" "$1" | grep -q "dev 0 (.*): peak 3.00 MiB" && printf "%s\n" "$1" | grep -q "dev 1 (.*): peak 4.00 MiB"' _ "$out"
