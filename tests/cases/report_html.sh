#!/bin/sh
# report_html.sh - `--html`: self-contained (no scripts, no network), every trace string escaped
# (hostile kernel/range/program names), timeline downsampled; rendered in headless Chromium.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
"$VT" report --html "$TMP/h.html" "$D/hostile.jsonl" >/dev/null; rc=$?
check_eq "--html exits 0" "$rc" 0
check "no <script> at all" sh -c '! grep -qi "<script" "$1"' _ "$TMP/h.html"
check "no raw hostile <img>" sh -c '! grep -q "<img" "$1"' _ "$TMP/h.html"
check "no raw <svg onload" sh -c '! grep -q "<svg onload" "$1"' _ "$TMP/h.html"
check "hostile kernel name escaped" grep -qF '&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;' "$TMP/h.html"
check "hostile message escaped" grep -qF '&lt;img src=x onerror=alert(4)&gt; &amp; &#39;quoted&#39; &quot;x&quot;' "$TMP/h.html"
check "no external resources" sh -c '! grep -Eq "(src|href)=\"(https?:)?//" "$1"' _ "$TMP/h.html"
check "timeline, treemap and flow present" sh -c 'grep -q "live device memory over time" "$1" && grep -q "memory at the peak by call site" "$1" && grep -q "aria-label=\"data flow\"" "$1"' _ "$TMP/h.html"
check "OOM marked on the timeline" grep -q '<title>OOM: cudaMalloc of 1.00 GiB' "$TMP/h.html"
"$VT" report --html "$TMP/o.html" "$D/oom.jsonl" >/dev/null
check "peak marked, hover shows the allocation" sh -c 'grep -q "peak 3.50 GiB" "$1" && grep -q "largest allocation here: 1.00 GiB cudaMalloc at oom+0x1200" "$1"' _ "$TMP/o.html"
# the treemap's labels: each inside its own cell (starts right of the cell's left edge, its
# baseline above the bottom), none spilling onto a neighbour
if command -v python3 >/dev/null; then
    check_eq "treemap: every cell's two labels lie inside the cell (cells labelled, all inside)" "$(python3 - "$TMP/o.html" <<'EOF'
import re, sys
page = open(sys.argv[1]).read()
cells = re.findall(r'<g><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="#[0-9a-f]{6}" stroke="#fff" stroke-width="2"/>'
                   r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>[^<]*</text><text x="([\d.]+)" y="([\d.]+)"', page)
inside = all(x < tx < x + w and y < ty < y + h and x < sx < x + w and y < sy < y + h
             for x, y, w, h, tx, ty, sx, sy in ([float(v) for v in c] for c in cells))
print("labelled" if cells else "none labelled", inside)
EOF
)" "labelled True"
fi
# big trace: bounded number of timeline points
if command -v python3 >/dev/null; then
    python3 "$D/gen_synth.py" 100000 "$TMP/big.jsonl" >/dev/null
    "$VT" report --html "$TMP/big.html" "$TMP/big.jsonl" >/dev/null
    n=$(grep -o '<rect x="[0-9.]*" y="18" width="[0-9.]*" height="242" fill="transparent">' "$TMP/big.html" | wc -l)
    check "timeline downsampled (hover targets $n <= 2048)" test "$n" -le 2048 -a "$n" -gt 100
    sz=$(wc -c <"$TMP/big.html")
    check "page size bounded for 100k events ($sz bytes)" test "$sz" -lt 3000000
fi
# ---- what the text says, the page says too: transfer verdicts, copy sites, notes --------------
# examples/transfers.cu against a reference where pinned copies reach 1000 GB/s: its pageable
# copies (main's first two calls of time_copy) get the pin verdict; four copy sites of 4 copies
# each. examples/host_pointer_bug.cu's cudaDeviceSynchronize fails with the illegal address (700).
if [ -f "$SIM/libcudart.so.13" ] && [ -x "$EXAMPLES/transfers" ]; then
    TS="$ROOT/examples/transfers.cu"
    CL=$(grep -n 'cudaMemcpy(dst, src, n, kind)' "$TS" | cut -d: -f1)
    L1=$(grep -n 'report("pageable host->device"' "$TS" | cut -d: -f1)
    "$VT" run --sim -o "$TMP/tr.jsonl" -- "$EXAMPLES/transfers" >/dev/null 2>&1
    printf '{"results":[{"name":"h2d_pinned","gbps":1000},{"name":"d2h_pinned","gbps":1000}]}\n' >"$TMP/ref.json"
    "$VT" report --html "$TMP/tr.html" --bandwidth "$TMP/ref.json" "$TMP/tr.jsonl" >/dev/null
    check_eq "page: the pin verdict for both directions, each at its line" \
        "$(grep -o '<div class="verdict"><b>Verdict:</b> pageable [a-z2]* copies run at [0-9]*% of pinned (1000.0 GB/s, the reference): pin the host buffer (cudaHostAlloc, or cudaHostRegister on the existing one)<br>at <code>[^<]*</code>' "$TMP/tr.html" |
           sed 's/ at [0-9]*% / at N% /; s/time_copy([^)]*)/time_copy/')" \
"<div class=\"verdict\"><b>Verdict:</b> pageable h2d copies run at N% of pinned (1000.0 GB/s, the reference): pin the host buffer (cudaHostAlloc, or cudaHostRegister on the existing one)<br>at <code>time_copy (transfers.cu:$CL) &lt;- main (transfers.cu:$L1)</code>
<div class=\"verdict\"><b>Verdict:</b> pageable d2h copies run at N% of pinned (1000.0 GB/s, the reference): pin the host buffer (cudaHostAlloc, or cudaHostRegister on the existing one)<br>at <code>time_copy (transfers.cu:$CL) &lt;- main (transfers.cu:$((L1 + 1)))</code>"
    check_eq "page: four copy sites of 256 MiB in 4 copies, 4 pageable for the first two" \
        "$(sed 's/<tr>/\n<tr>/g' "$TMP/tr.html" | sed -n '/<h2>Copy sites/,/<\/table>/p' | grep -o '^<tr><td class="n">[^<]*</td><td class="n">[0-9]*</td><td class="n">[^<]*</td><td class="n">[0-9]*</td>' |
           sed 's/<td class="n">[0-9.]* [µm]*s<\/td>/T/; s/<[^>]*>/ /g; s/  */ /g')" \
" 256.00 MiB 4 T 4 
 256.00 MiB 4 T 4 
 256.00 MiB 4 T 0 
 256.00 MiB 4 T 0 "
    check "page: the rows say how far from the reference" grep -q '<td>h2d</td><td>pinned</td>.*<td>[0-9]*% of h2d_pinned 1000.0 GB/s</td>' "$TMP/tr.html"
    "$VT" run --sim -o "$TMP/hp.jsonl" -- "$EXAMPLES/host_pointer_bug" >/dev/null 2>&1
    "$VT" report --html "$TMP/hp.html" "$TMP/hp.jsonl" >/dev/null
    check "page: failed calls by name in the notes" grep -qF '<li><b>Failed calls (1):</b> <code>cudaDeviceSynchronize</code> → cudaErrorIllegalAddress (700) ×1</li>' "$TMP/hp.html"
else skip "page verdicts: simulated device or examples not built"; fi

CHROME=$(command -v chromium || command -v chromium-browser)
if [ -z "$CHROME" ]; then skip "chromium not installed: HTML rendering"; exit 0; fi
for page in h o; do
    no_san timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
        --screenshot="$TMP/$page.png" --window-size=1400,2000 "file://$TMP/$page.html" >"$TMP/$page.log" 2>&1
    check "chromium screenshot of $page.html" test -s "$TMP/$page.png"
    check "no console errors in $page.html" sh -c '! grep -i "CONSOLE" "$1" | grep -qi "error"' _ "$TMP/$page.log"
    no_san timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --dump-dom "file://$TMP/$page.html" >"$TMP/$page.dom" 2>/dev/null
    check "DOM of $page.html has the sections" grep -q "Memory at the peak by call site" "$TMP/$page.dom"
    check "no script element in the DOM of $page.html" sh -c '! grep -qi "<script" "$1"' _ "$TMP/$page.dom"
done
[ -n "${VT_KEEP_SCREENSHOT:-}" ] && cp "$TMP/o.png" "$VT_KEEP_SCREENSHOT"
exit 0
