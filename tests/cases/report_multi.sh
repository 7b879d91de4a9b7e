#!/bin/sh
# report_multi.sh - several traces (one per rank): per-rank table, which rank peaked, combined view;
# a directory means all its *.jsonl.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces/ranks"
out=$("$VT" report "$D"); rc=$?
check_eq "directory of traces: exit 0" "$rc" 0
check "per-rank table, rank 2 marked as peak" sh -c 'printf "%s\n" "$1" | grep -Eq "^  2 +502 +node1 +769.00 MiB +1 +0 .*rank2.jsonl  <- peak"' _ "$out"
check "highest peak line" sh -c 'printf "%s\n" "$1" | grep -q "highest peak: rank 2, pid 502, 769.00 MiB"' _ "$out"
check "combined line: three devices (two hosts) at once 1.50 GiB, as the peaks sum" sh -c 'printf "%s\n" "$1" | grep -q "^    at once: 1.50 GiB at .* (the traces. own peaks sum to 1.50 GiB)$"' _ "$out"
check "totals line" sh -c 'printf "%s\n" "$1" | grep -q "^  all traces: 1 OOM, 0 errors, 0 warnings, 1.50 GiB leaked$"' _ "$out"
j=$("$VT" report --json "$D/rank0.jsonl" "$D/rank1.jsonl" "$D/rank2.jsonl"); rc=$?
check_eq "--json over 3 files: exit 0" "$rc" 0
q() { printf '%s' "$j" | jq -r "$1"; }
check_eq "traces" "$(q .traces)" 3
check_eq "peak_rank / peak_bytes" "$(q '"\(.peak_rank) \(.peak_bytes)"')" "2 806354944"
check_eq "processes ranks" "$(q '[.processes[].rank] | join(",")')" "0,1,2"
check_eq "sum_of_peaks_bytes (257+513+769 MiB)" "$(q .combined.sum_of_peaks_bytes)" 1613758464
check_eq "oom from rank 2" "$(q '.oom_events[0].rank')" 2
check_eq "leaked over all ranks (256+512+768 MiB)" "$(q .leaked_bytes)" 1610612736
# ---- combined by device and time (issue 35) -----------------------------------------------------
# tests/data/traces/gpu_share: one host; a (pid 801) holds 1 GiB on 0000:10:00.0 from +1 s to +10 s;
# b (802) the same 1 GiB 20 s later (after a ended: they never add); c (803) 512 MiB on it from
# +5.5 s to +7 s (inside a); d (804) 256 MiB on 0000:11:00.0 from +6 s to +8 s. At once on
# 0000:10:00.0: 1.5 GiB at +5.5 s (a+c), not the 2.5 GiB the peaks sum to; over both devices
# 1.75 GiB at +6 s.
G=1073741824; MiB=1048576; W=1764680000000000000
j=$("$VT" report --json "$ROOT/tests/data/traces/gpu_share")
check_eq "gpu_share: by time; at once 1.75 GiB at +6 s; the peaks sum to 2.75 GiB" \
    "$(printf '%s' "$j" | jq -c '.combined|[.by_time,.peak_bytes,.peak_wall_ns-'$W',.sum_of_peaks_bytes]')" \
    "[true,$((G + 512*MiB + 256*MiB)),6000000000,$((2*G + 512*MiB + 256*MiB))]"
check_eq "gpu_share: per device (pci, at once, when, pids then, processes, own peaks summed)" \
    "$(printf '%s' "$j" | jq -c '[.combined.devices[]|[.pci,.peak_bytes,.peak_wall_ns-'$W',.pids_at_peak,.processes,.sum_of_peaks_bytes]]')" \
    "[[\"0000:10:00.0\",$((G + 512*MiB)),5500000000,[801,803],3,$((2*G + 512*MiB))],[\"0000:11:00.0\",$((256*MiB)),6000000000,[804],1,$((256*MiB))]]"
check "gpu_share: the text names the overlap" sh -c '"$1" report "$2" | grep -q "^    node9 0000:10:00.0 (GPU): 1.50 GiB at .* held by pid 801+803 (3 processes used it; their own peaks sum to 2.50 GiB)$"' _ "$VT" "$ROOT/tests/data/traces/gpu_share"
# a header without a wall clock: no time order, so the old sum, said so
mkdir "$TMP/nowall"
cp "$ROOT/tests/data/traces/gpu_share/a.jsonl" "$TMP/nowall/"
sed 's/"wall_time":[0-9]*,"wall_time_ns":[0-9]*,//' "$ROOT/tests/data/traces/gpu_share/b.jsonl" >"$TMP/nowall/b.jsonl"
check_eq "no wall clock in one header: not by time, why, the peaks' sum" \
    "$("$VT" report --json "$TMP/nowall" | jq -c '.combined|[.by_time,.not_by_time_reason,.sum_of_peaks_bytes]')" \
    "[false,\"a trace has no wall-clock anchor in its header\",$((2*G))]"
mkdir "$TMP/empty"
"$VT" report "$TMP/empty" >/dev/null 2>&1; check_eq "empty directory: exit 2" "$?" 2

# The rank is read from the launchers' variables, first to last (RANK, OMPI_COMM_WORLD_RANK,
# PMI_RANK, SLURM_PROCID; LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID), and a value that
# is not a whole number from 0 to 2^31-1 is passed over for the next: RANK "2x" (trailing text),
# OMPI_COMM_WORLD_RANK "" (empty), PMI_RANK "2147483648" (too large) give way to SLURM_PROCID 5;
# LOCAL_RANK "-1" (negative) to SLURM_LOCALID 0.
sed 's/"rank":{[^}]*}/"rank":{"RANK":"2x","OMPI_COMM_WORLD_RANK":"","PMI_RANK":"2147483648","SLURM_PROCID":"5","LOCAL_RANK":"-1","SLURM_LOCALID":"0"}/' \
    "$D/rank1.jsonl" >"$TMP/rankvars.jsonl"
check_eq "rank variables: the first whole number in range of each list (rank 5, local rank 0)" \
    "$("$VT" report --json "$TMP/rankvars.jsonl" | jq -c '.processes[0] | [.rank, .local_rank]')" "[5,0]"
sed 's/"rank":{[^}]*}/"rank":{"RANK":"7 ","LOCAL_RANK":"0x1"}/' "$D/rank1.jsonl" >"$TMP/rankvars2.jsonl"
check_eq "rank variables none of which is a number: no rank" \
    "$("$VT" report --json "$TMP/rankvars2.jsonl" | jq -c '.processes[0] | [.rank, .local_rank]')" "[null,null]"

# the HTML page of the three ranks: a Ranks table, a row per trace from its header (rank, pid,
# host) and its numbers (peak, OOMs, errors, warnings, leaked, the file), the highest peak's row
# marked; the same numbers the JSON checks above derive
"$VT" report --html "$TMP/ranks.html" "$D" >/dev/null 2>&1
check_eq "html over 3 traces: exit 0, '3 traces' in the header" "$?:$(grep -c '>3 traces</div>' "$TMP/ranks.html")" "0:1"
check_eq "html: the Ranks table, one row per rank, rank 2's peak the highest (its row marked)" \
    "$(sed -n 's/.*<h2>Ranks<\/h2><table>\(.*\)<\/table><\/section>.*/\1/p' "$TMP/ranks.html" | sed 's/<\/tr>/\n/g' | grep '<td>' |
       sed 's/<tr style="background:#fff6e0">/* /; s/<[^>]*>/|/g; s/||*/|/g')" \
    "|0|500|node0|257.00 MiB|0|0|0|256.00 MiB|rank0.jsonl|
|1|501|node0|513.00 MiB|0|0|0|512.00 MiB|rank1.jsonl|
* |2|502|node1|769.00 MiB (highest)|1|0|0|768.00 MiB|rank2.jsonl|"
