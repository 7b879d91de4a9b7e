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
# big trace: bounded number of timeline points
if command -v python3 >/dev/null; then
    python3 "$D/gen_synth.py" 100000 "$TMP/big.jsonl" >/dev/null
    "$VT" report --html "$TMP/big.html" "$TMP/big.jsonl" >/dev/null
    n=$(grep -o '<rect x="[0-9.]*" y="18" width="[0-9.]*" height="242" fill="transparent">' "$TMP/big.html" | wc -l)
    check "timeline downsampled (hover targets $n <= 2048)" test "$n" -le 2048 -a "$n" -gt 100
    sz=$(wc -c <"$TMP/big.html")
    check "page size bounded for 100k events ($sz bytes)" test "$sz" -lt 3000000
fi
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
