#!/bin/sh
# rel_limits.sh - the tracer under an address-space limit (ulimit -v, RLIMIT_AS, as batch
# schedulers set one): it takes a small share of the headroom for its trace, never the program's
# room, and says in the footer when the trace reached that share (docs/reliability.md).
. tests/lib.sh
need_sim
P="$PROGS/rel_aslimit" # HEADROOM_MIB ALLOC_MIB [LOOPS]
env LD_LIBRARY_PATH="$SIM" "$P" 10240 4096 >"$TMP/plain.out" 2>&1
check_eq "untraced: a 4 GiB malloc fits in 10 GiB of address-space headroom" "$?:$(tail -1 "$TMP/plain.out")" "0:malloc ok"
"$VT" run --sim -q -o "$TMP/as.jsonl" -- "$P" 10240 4096 >"$TMP/as.out" 2>&1
check_eq "traced: the same malloc still fits (the trace took 8 of the 10 GiB before: exit 3)" "$?:$(tail -1 "$TMP/as.out")" "0:malloc ok"
check_eq "traced: the trace holds the 101 allocations and ends in a footer without error" \
    "$(jqs "$TMP/as.jsonl" '[.[] | select(.ev == "alloc")] | length'):$(jqs "$TMP/as.jsonl" '.[-1] | "\(.ev) \(.error // "none")"')" "101:footer none"

# 100 MiB of headroom: the trace may map 4 MiB (a sixteenth, rounded down to a power of two);
# 20000 more malloc/free pairs overflow it: dropped and counted, the footer says why
"$VT" run --sim -q -o "$TMP/small.jsonl" -- "$P" 100 50 20000 >"$TMP/small.out" 2>"$TMP/small.err"
check_eq "100 MiB headroom: the program's 50 MiB malloc fits, exit 0" "$?:$(grep '^malloc' "$TMP/small.out")" "0:malloc ok"
check_eq "100 MiB headroom: the trace stops at 4 MiB and its footer says the address-space limit did it" \
    "$(jqs "$TMP/small.jsonl" '.[-1] | "\(.ev) \(.error)"')" \
    "footer trace file reached 4 MiB, the most the address-space limit (RLIMIT_AS) left it: File too large"
check "100 MiB headroom: the file is at most 4 MiB" [ "$(stat -c %s "$TMP/small.jsonl")" -le 4194304 ]
"$VT" run --sim -q -o "$TMP/roomy.jsonl" -- "$P" 1048576 50 20000 >/dev/null 2>&1
check_eq "100 MiB headroom: lines written + dropped = the lines of a run with 1 TiB of headroom" \
    "$(jqs "$TMP/small.jsonl" '.[-1] | .events + .dropped')" "$(jqs "$TMP/roomy.jsonl" '.[-1] | .events + .dropped')"

# --- a long command line: 400 file arguments (over 16 KiB) and one of 10000 bytes ------------------
i=0; set --
while [ $i -lt 400 ]; do set -- "$@" "$TMP/some/long/directory/input-file-number-$i.dat"; i=$((i + 1)); done
long=$(printf '%010000d' 0)
"$VT" run --sim -q -o "$TMP/argv.jsonl" -- "$PROGS/rel_crash" exit 2 "$long" "$@" >/dev/null 2>&1
check_eq "long command line: the program exits 0 and report reads the trace (2 MiB peak)" \
    "$?:$("$VT" report --json "$TMP/argv.jsonl" 2>/dev/null | jq .peak_bytes)" "0:2097152"
check_eq "long command line: the header is the first line and counts every argument (recorded + omitted = 404)" \
    "$(jqs "$TMP/argv.jsonl" '.[0] | "\(.ev) \((.argv | length) + .argv_omitted)"')" "header 404"
check_eq "long command line: the first arguments are whole, the 10000-byte one cut to 2048 bytes and '...'" \
    "$(jqs "$TMP/argv.jsonl" '.[0].argv | "\(.[1]) \(.[2]) \(.[3] | length) \(.[3] | endswith("0..."))"')" "exit 2 2051 true"
check "long command line: the header line stays under 16 KiB" [ "$(head -1 "$TMP/argv.jsonl" | wc -c)" -lt 16384 ]
