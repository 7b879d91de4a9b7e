#!/bin/sh
# report_svg.sh - the HTML report's live-memory timeline (render_svg.c), drawn from a hand-written
# one-second trace whose memory is known at every moment:
#   +0.25 s  cudaMalloc 512 MiB          live 512 MiB
#   +0.50 s  cudaMalloc 256 MiB          live 768 MiB (the peak)
#   +0.60 s  cudaMalloc 1 GiB fails (2)  an OOM with 768 MiB live
#   +0.75 s  cudaFree of the 512 MiB     live 256 MiB
#   +1.00 s  cudaFree of the 256 MiB     live 0
# on a device of 1.5 GiB (its capacity line drawn) beside one of 4 GiB (above the axis: none). The picture is checked by its geometry, read from the SVG itself (the
# plot's rectangle, the 0.5 GiB grid line): every level of the line is proportional to the bytes
# live, every step and marker sits at its time's share of the width. Then the treemap of memory at
# the peak, from 30 sites of known sizes: its cells' areas, order, colours and percentages.
. "$ROOT/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || { skip "report_svg: NOT TESTED - python3 missing"; exit 0; }
MiB=1048576
ev() { echo "{\"ev\":\"$1\",\"t\":$((1000000000 + $2)),\"dur\":1,\"tid\":1,\"api\":\"$3\",\"res\":$4,\"dev\":0,$5\"size\":$(($6 * MiB)),\"mem\":\"device\"}"; }
{
    echo '{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":9,"ppid":1,"program":"/x/svg","argv":["svg"],"t":1000000000,"wall_time":0,"hostname":"h","rank":{},"page_size":4096,"backtraces":false,"checks":"off"}'
    echo "{\"ev\":\"device\",\"t\":1000000001,\"dev\":0,\"name\":\"GPU zero\",\"total_bytes\":$((1536 * MiB)),\"cc\":\"9.0\",\"mem_clock_khz\":1,\"bus_width_bits\":1,\"pageable_access\":0,\"sim\":false}"
    echo "{\"ev\":\"device\",\"t\":1000000002,\"dev\":1,\"name\":\"GPU one\",\"total_bytes\":$((4096 * MiB)),\"cc\":\"9.0\",\"mem_clock_khz\":1,\"bus_width_bits\":1,\"pageable_access\":0,\"sim\":false}"
    ev alloc 250000000 cudaMalloc 0 '"addr":"0x100000000",' 512
    ev alloc 500000000 cudaMalloc 0 '"addr":"0x200000000",' 256
    ev alloc 600000000 cudaMalloc 2 '' 1024
    ev free 750000000 cudaFree 0 '"addr":"0x100000000",' 512
    ev free 999999999 cudaFree 0 '"addr":"0x200000000",' 256
} >"$TMP/s.jsonl"
"$VT" report --html "$TMP/s.html" "$TMP/s.jsonl" >/dev/null 2>"$TMP/s.err"
check_eq "report --html exits 0, says nothing" "$?:$(cat "$TMP/s.err")" "0:"

python3 - "$TMP/s.html" >"$TMP/geo.txt" 2>&1 <<'EOF'
import re, sys
h = open(sys.argv[1], encoding="utf-8").read()
i = h.index('aria-label="live device memory over time"')
svg = h[i:h.index("</svg>", i)]
MiB = 1 << 20
L, T, W, H = (float(v) for v in re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="#fafbfc"', svg).groups())
base = T + H
ticks = re.findall(r'<line x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)" y2="[\d.]+" stroke="#e4e6ea"/><text[^>]*>([^<]*)</text>', svg)
print("y ticks:", ";".join(t for _, t in ticks))
y_half = float(dict((t, y) for y, t in ticks)["0.5 GiB"])
def mib(y):  # bytes at height y, in MiB, by the 0.5 GiB grid line
    return (base - float(y)) / (base - y_half) * 512
def mib16(y):  # the same to the nearest 16 MiB: heights are written to 0.1 px (~1 MiB here)
    return int(round(mib(y) / 16) * 16)
print("y ticks at their values:", all(abs(mib(y) - float(t.split()[0]) * 1024) < 2 for y, t in ticks))
xt = re.findall(r'<line x1="([\d.]+)" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" stroke="#eef0f3"/><text[^>]*>([^<]*)</text>', svg)
print("x ticks:", ";".join(t for _, t in xt))
print("x ticks at their times:", all(abs(float(x) - (L + float(t.split()[0]) * W)) < 0.2 for x, t in xt))
# the line: H (to a bucket's end) and V (to its level) commands; the levels it steps through
d = re.search(r'<path fill="none" stroke="#2b5fb8"[^>]* d="([^"]*)"', svg).group(1)
x, steps, level = L, [], None
for cmd, v in re.findall(r"([MHV])([\d.]+)", d):
    if cmd == "H": x = float(v)
    elif cmd == "V":
        if level is not None and float(v) != level: steps.append((x, float(v)))
        level = float(v)
print("line levels:", ";".join("%d" % mib16(y) for _, y in steps))
# a step is drawn at the end of the bucket the event falls in: within 2 px of its time
print("line steps at:", ";".join("%.2f" % round((sx - L) / W, 2) for sx, _ in steps),
      all(0 <= sx - (L + f * W) < 2 for (sx, _), f in zip(steps, (0.25, 0.5, 0.75, 1.0))))
peak_y = [y for _, y in steps][1]
c = re.search(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)
print("peak marker:", abs(float(c.group(1)) - (L + 0.5 * W)) < 0.1, float(c.group(2)) == peak_y)
pl = re.search(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"[^>]*/><text x="([\d.]+)" y="[\d.]+"[^>]*text-anchor="(start|end)">peak ', svg)
cx, r, tx = float(pl.group(1)), float(pl.group(3)), float(pl.group(4))
print("peak label:", pl.group(5), tx >= cx + r if pl.group(5) == "start" else tx <= cx - r)
o = re.search(r'<g><line x1="([\d.]+)" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" stroke="#d0463a"[^>]*/><path d="M([\d.]+) ([\d.]+)l', svg)
print("oom marker:", abs(float(o.group(1)) - (L + 0.6 * W)) < 0.1, mib16(float(o.group(3)) + 2))
caps = re.findall(r'<line x1="[\d.]+" x2="[\d.]+" y1="(-?[\d.]+)" y2="-?[\d.]+" stroke="#999" stroke-dasharray="6 4"/><text[^>]*>([^<]*)<', svg)
print("capacity:", ";".join("%d %s" % (mib16(y), t) for y, t in caps))
for t in re.findall(r"<title>([^<]*)</title>", svg):
    print("title:", re.sub(r"^\+[\d.]+ s: ", "", t.split("\n")[0]))
EOF
g() { sed -n "s/^$1: //p" "${2:-$TMP/geo.txt}"; }   # KEY [FILE]: a checker's line
check_eq "the checker ran" "$(grep -c Traceback "$TMP/geo.txt")" 0
check_eq "bytes axis in GiB (the OOM's 768 MiB + 1 GiB is above 1 GiB), every 0.5 GiB" "$(g 'y ticks')" "0 GiB;0.5 GiB;1 GiB;1.5 GiB"
check_eq "each grid line at its bytes' height" "$(g 'y ticks at their values')" True
check_eq "time axis every 0.2 s over the second" "$(g 'x ticks')" "0 s;0.2 s;0.4 s;0.6 s;0.8 s;1 s"
check_eq "each time grid line at its share of the width" "$(g 'x ticks at their times')" True
check_eq "the line steps through the live bytes: 512, 768, 256, 0 MiB" "$(g 'line levels')" "512;768;256;0"
check_eq "... at 0.25, 0.5, 0.75 and 1 of the width" "$(g 'line steps at')" "0.25;0.50;0.75;1.00 True"
check_eq "the peak's dot at 0.5 s on the line's 768 MiB level" "$(g 'peak marker')" "True True"
check_eq "the peak's label starts clear of its dot (right of it, mid-plot)" "$(g 'peak label')" "start True"
check_eq "the OOM's mark at 0.6 s, its arrow on the 768 MiB then live" "$(g 'oom marker')" "True 768"
check_eq "device 0's 1.5 GiB capacity line at its height; none for device 1's 4 GiB, above the axis" "$(g capacity)" "1536 dev 0 capacity 1.50 GiB"
check_eq "hover texts: each step's bucket (live, max), then the OOM and the peak" "$(g title | tr '\n' ';')" \
    "live 512.00 MiB (max 512.00 MiB);live 768.00 MiB (max 768.00 MiB);live 256.00 MiB (max 768.00 MiB);live 0 B (max 256.00 MiB);OOM: cudaMalloc of 1.00 GiB failed at +0.6000 s; live 768.00 MiB; requested at (no backtrace); most held by 768.00 MiB (no backtrace);peak: 768.00 MiB live at +0.5000 s; largest holder (no backtrace);"

# ---- the treemap of memory at the peak -----------------------------------------------------------
# 30 call sites, site i (1 to 30) allocating i MiB, nothing freed: the peak is 465 MiB. The map
# shows the 24 largest (30 down to 7 MiB) and one "other sites" cell of 1+...+6 = 21 MiB, each
# cell's area its share of the 1100 x 320 map, the cells tiling it; a labelled cell's percentage
# is its bytes over 465 MiB; cells take the palette in turn by rank, "other sites" grey.
{
    echo '{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":9,"ppid":1,"program":"/x/tm","argv":["tm"],"t":1000000000,"wall_time":0,"hostname":"h","rank":{},"page_size":4096,"backtraces":true,"checks":"off"}'
    echo '{"ev":"module","path":"/x/tm","base":"0x555555554000","lo":"0x555555554000","hi":"0x555555600000"}'
    echo "{\"ev\":\"device\",\"t\":1000000001,\"dev\":0,\"name\":\"GPU zero\",\"total_bytes\":$((4096 * MiB)),\"cc\":\"9.0\",\"mem_clock_khz\":1,\"bus_width_bits\":1,\"pageable_access\":0,\"sim\":false}"
    i=1
    while [ $i -le 30 ]; do
        printf '{"ev":"alloc","t":%d,"dur":1,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x%x","size":%d,"mem":"device","bt":["0x%x","0x555555556000"]}\n' \
            $((1000000000 + i * 1000)) $((0x100000000 * i)) $((i * MiB)) $((0x555555555000 + i * 16))
        i=$((i + 1))
    done
} >"$TMP/tm.jsonl"
"$VT" report --html "$TMP/tm.html" "$TMP/tm.jsonl" >/dev/null 2>"$TMP/tm.err"
check_eq "treemap trace: report --html exits 0, says nothing" "$?:$(cat "$TMP/tm.err")" "0:"
python3 - "$TMP/tm.html" >"$TMP/tm.txt" 2>&1 <<'EOF'
import re, sys
page = open(sys.argv[1]).read()
svg = re.search(r'<svg viewBox="0 0 (\d+) (\d+)"[^>]*aria-label="memory at the peak by call site">(.*?)</svg>', page, re.S)
W, H, body = float(svg.group(1)), float(svg.group(2)), svg.group(3)
cells = []
for g in re.findall(r"<g>(.*?)</g>", body, re.S):
    r = re.match(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(#[0-9a-f]{6})"', g)
    pct = re.search(r"\(([\d.]+)%\)</text>", g)
    t = re.search(r"<title>(.*): ([\d.]+) MiB at the peak</title>", g)
    cells.append([float(v) for v in r.groups()[:4]] + [r.group(5), float(pct.group(1)) if pct else None, t.group(1), float(t.group(2))])
print("map:", "%g x %g" % (W, H), len(cells), "cells")
print("sizes:", ";".join("%g" % c[7] for c in cells))
print("names:", len(set(c[6] for c in cells[:-1])), "distinct;", cells[-1][6])
pal = ["#4a7bd0", "#3a9d8f", "#7b61c4", "#d07a3a", "#5a9d3a", "#c4557b", "#3a86b8", "#9d8a3a"]
print("fills by rank:", all(c[4] == pal[k % 8] for k, c in enumerate(cells[:-1])), cells[-1][4])
# coordinates are written to 0.1: a cell's area is good to half a tenth of its perimeter
print("areas are shares:", all(abs(c[2] * c[3] - W * H * c[7] / 465) <= 0.05 * (c[2] + c[3]) + 0.01 for c in cells),
      "%d" % (round(sum(c[2] * c[3] for c in cells) / 100) * 100))
print("inside:", all(c[0] >= 0 and c[1] >= 0 and c[0] + c[2] <= W + 0.1 and c[1] + c[3] <= H + 0.1 for c in cells))
overlap = lambda a, b: min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) > 0.2 and min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]) > 0.2
print("overlaps:", sum(overlap(a, b) for i, a in enumerate(cells) for b in cells[i + 1:]))
lab = [c for c in cells if c[5] is not None]
print("percentages:", len(lab), "labelled,", all(c[5] == round(100 * c[7] / 465, 1) for c in lab),
      "rows and columns:", len(set(c[1] for c in lab)) > 1 and len(set(c[0] for c in lab)) > 1)
EOF
check_eq "treemap: the checker ran" "$(grep -c Traceback "$TMP/tm.txt")" 0
check_eq "treemap: 1100 x 320, 25 cells" "$(g map "$TMP/tm.txt")" "1100 x 320 25 cells"
check_eq "treemap: the cells' sizes, largest first, \"other sites\" last (21 MiB)" "$(g sizes "$TMP/tm.txt")" \
    "30;29;28;27;26;25;24;23;22;21;20;19;18;17;16;15;14;13;12;11;10;9;8;7;21"
check_eq "treemap: 24 sites, each its own name, then \"other sites\"" "$(g names "$TMP/tm.txt")" "24 distinct; other sites"
check_eq "treemap: the palette in turn by rank, \"other sites\" grey" "$(g 'fills by rank' "$TMP/tm.txt")" "True #a0a6b0"
check_eq "treemap: each cell's area is its share of 465 MiB; together the whole 352000 (to 100)" "$(g 'areas are shares' "$TMP/tm.txt")" "True 352000"
check_eq "treemap: every cell inside the map, none overlapping" "$(g inside "$TMP/tm.txt") $(g overlaps "$TMP/tm.txt")" "True 0"
check "treemap: labelled cells in columns and rows, each percentage its bytes over 465 MiB" \
    grep -qx "percentages: [0-9]* labelled, True rows and columns: True" "$TMP/tm.txt"
