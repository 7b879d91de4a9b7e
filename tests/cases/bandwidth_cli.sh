#!/bin/sh
# bandwidth_cli.sh - `vramtrace bandwidth` options: bad flags give one line and exit 2; no GPU
# (libcuda.so.1 missing, or the toolkit's stub whose cuInit fails) gives one line, exit 0 and the
# host rows.
. tests/lib.sh
[ -x "$VT" ] || { not_ok "bandwidth_cli: $VT not built"; exit 1; }

for args in "--bogus" "--size 12x" "--size" "--size 0" "--trials 0" "--trials abc" "--device -1" \
            "--device x" "--json=1" "--host-size 1" "extra"; do
    # shellcheck disable=SC2086
    "$VT" bandwidth $args >"$TMP/out" 2>"$TMP/err"
    rc=$?
    lines=$(wc -l <"$TMP/err" | tr -d ' ')
    if [ "$rc" = 2 ] && [ "$lines" = 1 ] && grep -q '^vramtrace bandwidth: ' "$TMP/err" && [ ! -s "$TMP/out" ]; then
        ok "bad arguments '$args': one-line error, exit 2"
    else
        not_ok "bad arguments '$args': got exit $rc, $lines stderr lines: $(head -c 200 "$TMP/err")"
    fi
done

"$VT" bandwidth --help >"$TMP/out" 2>&1
check_eq "--help exits 0" "$?" 0
check "--help prints the usage" grep -q '^usage: vramtrace bandwidth \[--device N\] \[--size BYTES\] \[--trials N\] \[--json\] \[-o FILE\]' "$TMP/out"

# No libcuda.so.1 on the search path.
LD_LIBRARY_PATH=/nonexistent "$VT" bandwidth --size 16M --trials 2 --host-size 16M --json >"$TMP/nolib.json" 2>"$TMP/nolib.err"
rc=$?
if jq -e '.gpu != null' "$TMP/nolib.json" >/dev/null 2>&1; then
    skip "no-GPU message: a libcuda.so.1 is installed system-wide (a GPU machine)"
else
    check_eq "no libcuda: exit 0" "$rc" 0
    check_eq "no libcuda: one stderr line" "$(cat "$TMP/nolib.err")" \
        "vramtrace bandwidth: no CUDA GPU (libcuda.so.1 not found); GPU rows skipped"
    check_eq "no libcuda: host rows still measured" \
        "$(jq -r '[.results[].name] | join(",")' "$TMP/nolib.json")" "host_ddr_copy,host_ddr_triad"
    check_eq "no libcuda: the reason is in .notes" "$(jq -r '.notes[0]' "$TMP/nolib.json")" \
        "no CUDA GPU (libcuda.so.1 not found); GPU rows skipped"
fi

# The toolkit's stub libcuda: dlopen works, cuInit fails.
stub=""
for d in "${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" "${CUDA_HOME:-/usr/local/cuda}/targets/x86_64-linux/lib/stubs" \
         /usr/local/cuda/lib64/stubs; do
    [ -f "$d/libcuda.so" ] && { stub="$d/libcuda.so"; break; }
done
if [ -z "$stub" ]; then
    skip "stub libcuda: no CUDA toolkit stubs directory"
else
    mkdir -p "$TMP/stub" && cp "$stub" "$TMP/stub/libcuda.so.1"
    LD_LIBRARY_PATH="$TMP/stub" "$VT" bandwidth --size 16M --trials 2 --no-host >"$TMP/stub.out" 2>"$TMP/stub.err"
    check_eq "stub libcuda: exit 0" "$?" 0
    check_eq "stub libcuda: one stderr line" "$(wc -l <"$TMP/stub.err" | tr -d ' ')" 1
    check "stub libcuda: says cuInit failed" grep -q '^vramtrace bandwidth: no CUDA GPU (cuInit failed: CUDA_ERROR_STUB_LIBRARY.*); GPU rows skipped$' "$TMP/stub.err"
    check "stub libcuda: table says no GPU" grep -q '^GPU:  none' "$TMP/stub.out"
fi

# -o FILE, text table
"$VT" bandwidth --no-gpu --trials 2 --host-size 16M --sysfs-root "$ROOT/tests/data/sysfs/gen5" -o "$TMP/t.txt" >"$TMP/o" 2>&1
check_eq "-o FILE: exit 0, nothing on stdout/stderr" "$?:$(wc -c <"$TMP/o" | tr -d ' ')" "0:0"
check "table: PCIe link line" grep -q '^PCIe: 0000:1b:00.0 Gen5 x16 (32.0 GT/s, max link)' "$TMP/t.txt"
check "table: PCIe theoretical" grep -q 'theoretical peak 63.0 GB/s per direction' "$TMP/t.txt"
check "table: host DDR rows" sh -c "grep -q '^host DDR copy ' '$TMP/t.txt' && grep -q '^host DDR triad ' '$TMP/t.txt'"

# -o FILE where FILE is a link, and a disk that fills while writing: the link is replaced, its
# target untouched; the old FILE kept whole, no temporary left (issue 45)
mkdir -p "$TMP/bwo"
echo keep >"$TMP/bwo/victim"
ln -s "$TMP/bwo/victim" "$TMP/bwo/t.txt"
"$VT" bandwidth --no-gpu --trials 2 --host-size 16M --sysfs-root "$ROOT/tests/data/sysfs/gen5" -o "$TMP/bwo/t.txt" >/dev/null 2>&1
check_eq "-o FILE where FILE is a link: exit 0, the link replaced by the table, its target untouched" \
    "$?:$(test -L "$TMP/bwo/t.txt" && echo link || echo file):$(cat "$TMP/bwo/victim"):$(grep -c '^PCIe: 0000:1b:00.0' "$TMP/bwo/t.txt")" "0:file:keep:1"
echo "old table" >"$TMP/bwo/old.txt"
(trap '' XFSZ; ulimit -f 0; exec "$VT" bandwidth --dump-ptx -o "$TMP/bwo/old.txt") >/dev/null 2>"$TMP/bwo/err"
check_eq "-o FILE on a full disk: exit 1, FILE still the old one, no temporary left" \
    "$?:$(cat "$TMP/bwo/old.txt"):$(ls -A "$TMP/bwo" | grep -c '^\.old\.txt\.')" "1:old table:0"
