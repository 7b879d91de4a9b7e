#!/bin/sh
# report_multi.sh - several traces (one per rank): per-rank table, which rank peaked, combined view;
# a directory means all its *.jsonl.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces/ranks"
out=$("$VT" report "$D"); rc=$?
check_eq "directory of traces: exit 0" "$rc" 0
check "per-rank table, rank 2 marked as peak" sh -c 'printf "%s\n" "$1" | grep -Eq "^  2 +502 +node1 +769.00 MiB +1 +0 .*rank2.jsonl  <- peak"' _ "$out"
check "highest peak line" sh -c 'printf "%s\n" "$1" | grep -q "highest peak: rank 2, pid 502, 769.00 MiB"' _ "$out"
check "combined line" sh -c 'printf "%s\n" "$1" | grep -q "combined: peaks sum to 1.50 GiB; 1 OOMs"' _ "$out"
j=$("$VT" report --json "$D/rank0.jsonl" "$D/rank1.jsonl" "$D/rank2.jsonl"); rc=$?
check_eq "--json over 3 files: exit 0" "$rc" 0
q() { printf '%s' "$j" | jq -r "$1"; }
check_eq "traces" "$(q .traces)" 3
check_eq "peak_rank / peak_bytes" "$(q '"\(.peak_rank) \(.peak_bytes)"')" "2 806354944"
check_eq "processes ranks" "$(q '[.processes[].rank] | join(",")')" "0,1,2"
check_eq "sum_of_peaks_bytes (257+513+769 MiB)" "$(q .combined.sum_of_peaks_bytes)" 1613758464
check_eq "oom from rank 2" "$(q '.oom_events[0].rank')" 2
check_eq "leaked over all ranks (256+512+768 MiB)" "$(q .leaked_bytes)" 1610612736
mkdir "$TMP/empty"
"$VT" report "$TMP/empty" >/dev/null 2>&1; check_eq "empty directory: exit 2" "$?" 2
