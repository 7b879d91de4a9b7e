#!/bin/sh
# report_limits.sh - the size gates for CI (issue 51 slice 2): report --max-peak=[process:|device:]SIZE,
# --diff --max-increase=SIZE|PCT%, and run --fail-on/--max-peak applied to the program's traces
# after it ends, with an exit status apart from usage errors (2) and from the program's own.
# Every expected size comes from what the fixtures and programs allocate (their comments).
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
# gate OPTS...: "STATUS|STDERR" of a report with OPTS (stdout in $TMP/g.out)
gate() { "$VT" report "$@" >"$TMP/g.out" 2>"$TMP/g.err"; echo "$?|$(cat "$TMP/g.err")"; }

# ---- --max-peak per process: oom.jsonl peaks at 3.50 GiB = 3758096384 bytes (report_basic.sh) ----------
O="$D/oom.jsonl"
check_eq "at the peak exactly: not over" "$(gate --max-peak=3758096384 "$O")" "0|"
check_eq "3.5G is the peak (powers of 1024): not over" "$(gate --max-peak=3.5G "$O")" "0|"
check_eq "process:3.5GiB is the same" "$(gate --max-peak process:3.5GiB "$O")" "0|"
check_eq "one byte under: status 3, one line, by how much" "$(gate --max-peak=3758096383 "$O")" \
    "3|vramtrace report: --max-peak=3.50 GiB: pid 4242 ($O): peak VRAM 3.50 GiB (3758096384 bytes), over the limit by 1 B"
check_eq "3.76GB (powers of 1000: 3760000000) is over the peak: passes" "$(gate --max-peak=3.76GB "$O")" "0|"
check_eq "3.75GB (3750000000) is under it: trips" "$(gate --max-peak=3.75GB "$O" | cut -d'|' -f1)" 3
check_eq "the report is still written (text)" "$(grep -c '^  peak VRAM     3.50 GiB' "$TMP/g.out")" 1
check_eq "--json with the gate: the JSON" "$(gate --json --max-peak=1G "$O" | cut -d'|' -f1):$(jq .peak_bytes "$TMP/g.out")" "3:3758096384"
check_eq "--error-exitcode=42" "$(gate --max-peak=1G --error-exitcode=42 "$O" | cut -d'|' -f1)" 42

# ---- --max-peak=device: gpu_share: on 0000:10:00.0 a holds 1 GiB, c 512 MiB inside a's time: 1.50 GiB
# at once (pids 801+803), though no process held over 1 GiB alone; d 256 MiB on 0000:11:00.0 ------------
G="$D/gpu_share"
check_eq "device:1G: each process within it, the device over it at once" "$(gate --max-peak=device:1G "$G")" \
    "3|vramtrace report: --max-peak=device:1.00 GiB: node9 0000:10:00.0: its processes held 1.50 GiB (1610612736 bytes) at once, over the limit by 512.00 MiB (pid 801+803)"
check_eq "device:1.5G: at once exactly: not over" "$(gate --max-peak=device:1.5G "$G")" "0|"
# b holds 1 GiB on the same device 20 s later, alone
check_eq "device:1023M: a's own 1 GiB on device 0 is over too (and b's), each line whole" \
    "$(gate --max-peak=device:1023M "$G" | sed "s|$G/||g")" "3|vramtrace report: --max-peak=device:1023.00 MiB: pid 801 (a.jsonl): device 0 peaked at 1.00 GiB (1073741824 bytes), over the limit by 1.00 MiB
vramtrace report: --max-peak=device:1023.00 MiB: pid 802 (b.jsonl): device 0 peaked at 1.00 GiB (1073741824 bytes), over the limit by 1.00 MiB
vramtrace report: --max-peak=device:1023.00 MiB: node9 0000:10:00.0: its processes held 1.50 GiB (1610612736 bytes) at once, over the limit by 513.00 MiB (pid 801+803)"
check_eq "the process limit is not the device limit: 1G per process passes" "$(gate --max-peak=1G "$G")" "0|"

# ---- --diff --max-increase: ranks/rank0 peaks at 257 MiB, rank2 at 769 MiB (report_multi.sh): +512 MiB,
# +199.2% -------------------------------------------------------------------------------------------
R0="$D/ranks/rank0.jsonl"; R2="$D/ranks/rank2.jsonl"
check_eq "+512 MiB against 512M: not over" "$(gate --diff --max-increase=512M "$R0" "$R2")" "0|"
check_eq "+512 MiB against 511M: status 3, one line" "$(gate --diff --max-increase=511M "$R0" "$R2")" \
    "3|vramtrace report: --max-increase=511.00 MiB: peak VRAM 257.00 MiB -> 769.00 MiB, +512.00 MiB (536870912 bytes), over the limit"
check_eq "+199.2% against 200%: not over" "$(gate --diff --max-increase=200% "$R0" "$R2")" "0|"
check_eq "+199.2% against 199%: over" "$(gate --diff --max-increase 199% "$R0" "$R2")" \
    "3|vramtrace report: --max-increase=199%: peak VRAM 257.00 MiB -> 769.00 MiB, +199.2%, over the limit"
check_eq "a smaller peak never trips it" "$(gate --diff --max-increase=0 "$R2" "$R0")" "0|"
check_eq "--diff --json with the gate: the diff JSON" "$(gate --diff --json --max-increase=1M "$R0" "$R2" | cut -d'|' -f1):$(jq -c '[.base.peak_bytes,.new.peak_bytes]' "$TMP/g.out")" \
    "3:[269484032,806354944]"
check_eq "with --fail-on too: the new run's own gates (rank2 leaks 768 MiB)" \
    "$(gate --diff --max-increase=1G --fail-on=leak "$R0" "$R2" | cut -d'|' -f1):$(grep -c 'fail-on=leak: pid 502' "$TMP/g.err")" "3:1"

# ---- bad values: one line, status 2 ----------------------------------------------------------------
for args in "--max-peak=x|--max-peak: 'x' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)" \
            "--max-peak=-1G|--max-peak: '-1G' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)" \
            "--max-peak=1Q|--max-peak: '1Q' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)" \
            "--max-peak=device:|--max-peak: 'device:' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)" \
            "--max-peak=99999999T|--max-peak: '99999999T' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)" \
            "--max-increase=5|--max-increase compares two runs: it needs --diff BASE NEW (try 'vramtrace report --help')" \
            "--diff --max-increase=5%x|--max-increase: '5%x' is not SIZE or PCT% (e.g. 512M or 5%)"; do
    opt=${args%%|*}; want=${args#*|}
    # shellcheck disable=SC2086
    check_eq "bad: $opt" "$(gate $opt "$O" "$O")" "2|vramtrace report: $want"
done

# ---- run: the gates after the program ---------------------------------------------------------------
if [ ! -f "$SIM/libcudart.so.13" ] || [ ! -x "$PROGS/rel_fork" ]; then
    skip "run's gates: simulated device or test programs not built"
    exit 0
fi
P="$PROGS/rel_fork"   # alloc: 2 cudaMalloc of 1 MiB, 1 cudaFree: 1 MiB leaked in 1 allocation, peak 2 MiB
run_gate() { "$VT" run --sim -q -o "$TMP/r%p.jsonl" "$@" >"$TMP/r.out" 2>"$TMP/r.err"; echo "$?|$(sed 's/pid [0-9]* ([^)]*)/pid P (T)/' "$TMP/r.err")"; }
check_eq "run --fail-on=leak: status 3, the leak said" "$(run_gate --fail-on=leak -- "$P" alloc)" \
    "3|vramtrace run: --fail-on=leak: pid P (T): not freed at exit: 1.00 MiB VRAM in 1 allocation"
check_eq "run --fail-on=leak --error-exitcode=86" "$(run_gate --fail-on=leak --error-exitcode=86 -- "$P" alloc | cut -d'|' -f1)" 86
check_eq "run --max-peak=2M: the peak is 2 MiB: passes" "$(run_gate --max-peak=2M -- "$P" alloc)" "0|"
check_eq "run --max-peak=1M: over by 1 MiB" "$(run_gate --max-peak 1M -- "$P" alloc)" \
    "3|vramtrace run: --max-peak=1.00 MiB: pid P (T): peak VRAM 2.00 MiB (2097152 bytes), over the limit by 1.00 MiB"
check_eq "run: a program that failed keeps its status (7), the gate still said" \
    "$(run_gate --fail-on=leak -- sh -c '"$1" alloc; exit 7' _ "$P" | cut -c1-41)" "7|vramtrace run: --fail-on=leak: pid P (T"
check_eq "run: nothing tripped, the program's 0" "$(run_gate --fail-on=oom,error,growth -- "$P" alloc)" "0|"
check_eq "run: no trace (the program never used CUDA): nothing to gate, its status" "$(run_gate --fail-on=leak -- true)" "0|"
check_eq "run: a bad gate is a usage error before the program runs (2, nothing run)" \
    "$("$VT" run --sim --fail-on=lek -- sh -c 'echo ran' 2>&1; echo "rc=$?")" \
    "vramtrace run: --fail-on: 'lek' is not a gate (oom, leak, error, warning, growth, separated by commas)
rc=2"
