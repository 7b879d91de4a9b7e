#!/bin/sh
# bench/run.sh - `make bench`: measures the tracer's cost and the report's throughput, prints ONE
# table (docs/performance.md explains every row). Every row is measured in this run against its
# baseline in this run. Needs the simulated device and the bench programs (mk/bench.mk).
#
# Environment: BUILD (default build), BENCH_REPS (3: wall rows are the minimum of REPS runs,
# configurations interleaved), BENCH_N (200000 launches per cell; malloc/memcpy use N/4),
# BENCH_EVENTS (10000000 report events), BENCH_REG_N (400000 registry operations per cell),
# BENCH_PY_N (20000 cudaMalloc+cudaFree pairs per Python run; python: $PYTHON, else python3),
# BENCH_KEEP=1 keeps $BUILD/bench/tmp.
set -eu
BUILD=${BUILD:-build}
REPS=${BENCH_REPS:-3}
N=${BENCH_N:-200000}
EVENTS=${BENCH_EVENTS:-10000000}
CG_N=${BENCH_CG_N:-8000}
PY_N=${BENCH_PY_N:-20000}
VT=$BUILD/vramtrace
B=$BUILD/bench
SIM=$BUILD/sim
TMP=$B/tmp
OPS=launch2,launch8,launch32,malloc,memcpyfr,graph16
THREADS=1,8
export VRAMTRACE_QUIET=1

for f in "$VT" "$BUILD/libvramtrace.so" "$SIM/libcudart.so.13" "$B/bench_calls" "$B/soak" "$B/gen_trace" "$B/jsonc_floor" "$B/prims"; do
    [ -e "$f" ] || { echo "bench: $f missing (make BUILD=$BUILD all sim bench needs nvcc)" >&2; exit 1; }
done
rm -rf "$TMP"
mkdir -p "$TMP"
R=$TMP/results.txt   # lines: KIND CONFIG FIELDS...
: >"$R"
start=$(date +%s)
say() { echo "bench: $*" >&2; }

# ---- 1. wall-clock ns per call, four configurations, REPS interleaved runs -------------------
# untraced: no preload; nobt: VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=off; check: VRAMTRACE_BACKTRACE=0
# VRAMTRACE_CHECK=record; default: backtraces on, checks record (what `vramtrace run` does).
run_cfg() { # CONFIG REP
    case $1 in
    untraced) env LD_LIBRARY_PATH="$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/bench_calls" $OPS $THREADS "$N" ;;
    nobt) env VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=off "$VT" run --sim -q -o "$TMP/$1-$2.jsonl" -- "$B/bench_calls" $OPS $THREADS "$N" ;;
    check) env VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=record "$VT" run --sim -q -o "$TMP/$1-$2.jsonl" -- "$B/bench_calls" $OPS $THREADS "$N" ;;
    default) "$VT" run --sim -q -o "$TMP/$1-$2.jsonl" -- "$B/bench_calls" $OPS $THREADS "$N" ;;
    esac
}
rep=1
while [ "$rep" -le "$REPS" ]; do
    for cfg in untraced nobt check default; do
        say "calls: run $rep/$REPS, $cfg"
        run_cfg $cfg $rep | sed "s/^/$cfg /" >>"$R"
        if [ $cfg = default ] && [ "$rep" = 1 ]; then
            # 3. bytes per event by kind, from this real traced run (then the file goes)
            awk '{ if (match($0, /"ev":"[a-z_]*"/)) { k = substr($0, RSTART + 6, RLENGTH - 7); n[k]++; b[k] += length($0) + 1 } }
                 END { for (k in n) print "SIZE", k, n[k], b[k] }' "$TMP/$cfg-$rep.jsonl" >>"$R"
        fi
        rm -f "$TMP/$cfg-$rep.jsonl"*
    done
    rep=$((rep + 1))
done

# ---- 2. instructions per call under callgrind (deterministic), 1 thread ----------------------
# Valgrind runs one thread at a time, so the drain thread would not run alongside: the traced
# configurations use VRAMTRACE_SYNC=defer (records wait in the ring; the count is what the calling
# thread pays), and "sync" (VRAMTRACE_SYNC=1) formats in the caller: the difference is the
# formatting work the drain thread takes off the program's threads.
# Valgrind cannot map the tracer's 64 GiB trace reservation: vg_mmap_shim.so cuts that one mapping
# to 1 GiB. --toggle-collect counts the timed loop only (warm-up, setup and exit excluded).
if command -v valgrind >/dev/null 2>&1; then
    cg() { # OP CONFIG
        n=$CG_N
        case $1 in malloc|memcpy*) n=$((CG_N * 4)) ;; graph16) n=$((CG_N * 8)) ;; esac
        calls=$n
        case $1 in malloc|memcpy*) calls=$((n / 4)) ;; graph16) calls=$((n / 64)) ;; esac
        case $2 in
        untraced) pre= ; envs= ;;
        nobt) pre="$B/vg_mmap_shim.so:$BUILD/libvramtrace.so"; envs="VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=off VRAMTRACE_SYNC=defer" ;;
        check) pre="$B/vg_mmap_shim.so:$BUILD/libvramtrace.so"; envs="VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=record VRAMTRACE_SYNC=defer" ;;
        default) pre="$B/vg_mmap_shim.so:$BUILD/libvramtrace.so"; envs="VRAMTRACE_CHECK=record VRAMTRACE_SYNC=defer" ;;
        sync) pre="$B/vg_mmap_shim.so:$BUILD/libvramtrace.so"; envs="VRAMTRACE_BACKTRACE=0 VRAMTRACE_CHECK=record VRAMTRACE_SYNC=1" ;;
        esac
        ir=$(env LD_LIBRARY_PATH="$SIM" ${pre:+LD_PRELOAD=$pre} VRAMTRACE_OUTPUT="$TMP/cg-%p.jsonl" $envs \
             valgrind --tool=callgrind --toggle-collect=vt_bench_measured --callgrind-out-file="$TMP/cg.$1.$2.out" \
             "$B/bench_calls" "$1" 1 "$n" 2>&1 >/dev/null | sed -n 's/.*Collected : *//p' | tr -d ,)
        [ -n "$ir" ] && echo "INSTR $2 $1 $calls $ir" >>"$R"
        # The malloc loop's pair split into its two calls: what the tracer adds inside each hook
        # (the runtime hook's inclusive count minus the real runtime function's, plus the same
        # for the driver hook the runtime calls through).
        if [ "$1" = malloc ] && [ "$2" != untraced ] && command -v callgrind_annotate >/dev/null 2>&1; then
            callgrind_annotate --inclusive=yes --threshold=100 "$TMP/cg.$1.$2.out" 2>/dev/null | awk -v cfg="$2" -v calls="$calls" '
                { obj = "" } NF >= 3 { gsub(",", "", $1); obj = $NF; fn = $(NF - 1); sub(/.*:/, "", fn); sub(/.*\//, "", obj); sub(/\]$/, "", obj) }
                $1 ~ /^[0-9]+$/ && obj == "libvramtrace.so" { hook[fn] = $1 }
                $1 ~ /^[0-9]+$/ && (obj == "libcudart.so.13" || obj == "libcuda.so.1") { real[fn] = $1 }
                END {
                    if (calls > 0 && ("cudaMalloc" in hook) && ("cudaFree" in hook)) {
                        printf "SPLIT %s cudaMalloc %d %d\n", cfg, calls, hook["cudaMalloc"] - real["cudaMalloc"] + hook["cuMemAlloc_v2"] - real["cuMemAlloc_v2"]
                        printf "SPLIT %s cudaFree %d %d\n", cfg, calls, hook["cudaFree"] - real["cudaFree"] + hook["cuMemFree_v2"] - real["cuMemFree_v2"]
                    }
                }' >>"$R"
        fi
        rm -f "$TMP"/cg-*.jsonl
    }
    # Whole process (every thread, no toggle): what a call adds, as (Ir(2n) - Ir(n)) / calls(n),
    # so start-up and exit cancel out; traced with VRAMTRACE_SYNC=1, the drain thread's formatting
    # done in the calling thread (valgrind runs one thread at a time anyway): fold on (the default)
    # and off (core/fold.h).
    cgw_ir() { # OP N CONFIG
        case $3 in
        untraced) pre= ; envs= ;;
        fold) pre="$B/vg_mmap_shim.so:$BUILD/libvramtrace.so"; envs="VRAMTRACE_CHECK=record VRAMTRACE_SYNC=1 VRAMTRACE_FOLD=1" ;;
        nofold) pre="$B/vg_mmap_shim.so:$BUILD/libvramtrace.so"; envs="VRAMTRACE_CHECK=record VRAMTRACE_SYNC=1 VRAMTRACE_FOLD=0" ;;
        esac
        env LD_LIBRARY_PATH="$SIM" ${pre:+LD_PRELOAD=$pre} VRAMTRACE_OUTPUT="$TMP/cgw-%p.jsonl" $envs \
            valgrind --tool=callgrind --callgrind-out-file="$TMP/cgw.out" "$B/bench_calls" "$1" 1 "$2" 2>&1 >/dev/null |
            sed -n 's/.*Collected : *//p' | tr -d ,
        rm -f "$TMP"/cgw-*.jsonl* "$TMP/cgw.out"
    }
    cgw() { # OP CONFIG
        n=$CG_N
        case $1 in malloc|memcpy*) n=$((CG_N * 4)) ;; graph16) n=$((CG_N * 8)) ;; esac
        calls=$n
        case $1 in malloc|memcpy*) calls=$((n / 4)) ;; graph16) calls=$((n / 64)) ;; esac
        a=$(cgw_ir "$1" "$n" "$2"); b=$(cgw_ir "$1" $((2 * n)) "$2")
        # The difference holds the extra measured calls and the extra warm-up calls too
        # (bench_calls warms up with calls/10 + 100 first): both are divided out.
        calls=$((calls + (2 * calls / 10) - (calls / 10)))
        [ -n "$a" ] && [ -n "$b" ] && echo "WINSTR $2 $1 $calls $((b - a))" >>"$R"
    }
    say "instructions: callgrind"
    for op in launch8 launch8u memcpy graph16; do for cfg in untraced fold nofold; do cgw $op $cfg; done; done
    for op in launch2 launch8 launch32; do for cfg in untraced nobt check; do cg $op $cfg; done; done
    cg launch8 sync
    for cfg in untraced nobt default sync; do cg malloc $cfg; done
    for cfg in untraced nobt check; do cg memcpy $cfg; done
    for cfg in untraced nobt check; do cg memcpyfr $cfg; done
    for cfg in untraced nobt check; do cg graph16 $cfg; done
else
    say "valgrind not found: no instruction rows"
fi

# ---- 4. report throughput on a generated trace, against a plain json-c parse -----------------
say "report: generating $EVENTS events"
T=$TMP/gen.jsonl
"$B/gen_trace" "$T" "$EVENTS" "$B/bench_calls" "$BUILD/libvramtrace.so" "$(ldd "$B/bench_calls" | awk '/libc.so/ { print $3 }')" >"$TMP/gen.out"
read gev gbytes <"$TMP/gen.out"
# ---- 1b. the registry alone: own 2 MiB regions (own shards) vs one shared region (one lock) ---
r=1
while [ "$r" -le "$REPS" ]; do
    say "registry: run $r/$REPS"
    "$B/bench_registry" "${BENCH_REG_N:-400000}" >>"$R"
    r=$((r + 1))
done

# ---- 1c. what a few instructions the counts weigh as one cost here (ns each) --------------------
say "primitives"
"$B/prims" >>"$R"

# ---- 1d. Python frames in recorded stacks: cudaMalloc+cudaFree pairs from Python (ctypes) at call
# depths 1, 8, 32; untraced, traced without Python frames, traced with them (min of REPS) -----------
PY=${PYTHON:-python3}
if "$PY" -c 'import ctypes' 2>/dev/null; then
    r=1
    while [ $r -le "$REPS" ]; do
        say "python frames: run $r/$REPS"
        for d in 1 8 32; do
            echo "PY untraced $(env LD_LIBRARY_PATH="$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$PY" bench/py_frames.py "$PY_N" $d)" >>"$R"
            echo "PY nopy $(VRAMTRACE_PYTHON_FRAMES=0 "$VT" run --sim -q -o "$TMP/pyn.jsonl" -- "$PY" bench/py_frames.py "$PY_N" $d)" >>"$R"
            echo "PY py $("$VT" run --sim -q -o "$TMP/pyy.jsonl" -- "$PY" bench/py_frames.py "$PY_N" $d)" >>"$R"
            rm -f "$TMP"/pyn.jsonl* "$TMP"/pyy.jsonl*
        done
        r=$((r + 1))
    done
else
    say "python frames: no $PY with ctypes; rows left out"
fi

timed() { # NAME CMD... : wall s and peak RSS of the child (getrusage via /usr/bin/time)
    name=$1; shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%e %M" -o "$TMP/time.$name" "$@" >"$TMP/out.$name" 2>"$TMP/err.$name" || { cat "$TMP/err.$name" >&2; return 1; }
        read s kb <"$TMP/time.$name"
    else
        t0=$(date +%s.%N); "$@" >"$TMP/out.$name" 2>"$TMP/err.$name"; t1=$(date +%s.%N)
        s=$(echo "$t1 $t0" | awk '{ print $1 - $2 }'); kb=0
    fi
    echo "REPORT $name $gev $gbytes $s $kb" >>"$R"
}
# ---- 5. soak: an hour of a training loop in a minute (bench/soak.cu), at BENCH_SOAK launches --
# each (default 1 and 10 million, 4 threads): trace bytes, the tracer's peak RSS (the traced
# program's VmHWM minus the untraced one's: it must not grow with the run), both walls, the report's
# time and peak RSS, and whether the report counts every launch.
for L in ${BENCH_SOAK:-1000000 10000000}; do
    say "soak: $L launches"
    set -- $(env LD_LIBRARY_PATH="$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/soak" "$L" | sed -n 's/^SOAK //p')
    uw=$4 uh=$5
    rm -f "$TMP"/soak.jsonl*
    set -- $("$VT" run --sim -q -o "$TMP/soak.jsonl" -- "$B/soak" "$L" | sed -n 's/^SOAK //p')
    tb=$(cat "$TMP"/soak.jsonl* | wc -c)
    /usr/bin/time -f "%e %M" -o "$TMP/time.soak" "$VT" report --json "$TMP/soak.jsonl" >"$TMP/soak.json" 2>/dev/null || :
    read rs rkb <"$TMP/time.soak" || :
    counted=$(jq '[.processes[].kernels[].launches] | add' "$TMP/soak.json" 2>/dev/null)
    echo "SOAK $1 $2 $3 $uw $uh $4 $5 $tb $rs $rkb $([ "$counted" = "$1" ] && echo exact || echo "off:$counted")" >>"$R"
    rm -f "$TMP"/soak.jsonl* "$TMP/soak.json"
done

say "report: json-c floor"
timed floor "$B/jsonc_floor" "$T"
say "report: vramtrace report --json"
timed report "$VT" report "$T" --json
rm -f "$T"
end=$(date +%s)

# ---- the table ---------------------------------------------------------------------------------
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
cpus=$(getconf _NPROCESSORS_ONLN)
awk -v reps="$REPS" -v model="$model" -v cpus="$cpus" -v secs=$((end - start)) '
function key(c, o, t) { return c SUBSEP o SUBSEP t }
$1 == "untraced" || $1 == "nobt" || $1 == "check" || $1 == "default" {
    if ($2 == "RESULT") {
        k = key($1, $3, $4); if (!(k in ns) || $6 < ns[k]) ns[k] = $6
        if ($7 != "" && (!(k in pcpu) || $7 < pcpu[k])) pcpu[k] = $7
    }
    else if ($2 == "RSS") { r = $1; if (!(r in rss) || $3 > rss[r]) { rss[r] = $3; anon[r] = $4; file[r] = $5 } }
}
$1 == "REG" { k = $2 SUBSEP $3; if (!(k in reg) || $5 < reg[k]) reg[k] = $5; if ($6 != 0) regbad = 1 }
$1 == "SIZE" { sz_n[$2] = $3; sz_b[$2] = $4; tot_n += $3; tot_b += $4 }
$1 == "INSTR" { ir[$2, $3] = $5 / $4 }
$1 == "WINSTR" { wir[$2, $3] = $5 / $4 }
$1 == "SPLIT" { split_ir[$2, $3] = $5 / $4 }
$1 == "REPORT" { rep_ev[$2] = $3; rep_b[$2] = $4; rep_s[$2] = $5; rep_kb[$2] = $6 }
$1 == "SOAK" { soak[++nsoak] = $0 }
$1 == "PRIM" { prim[++nprim] = $2; prim_ns[$2] = $3 }
$1 == "PY" { k = $2 SUBSEP $6; if (!(k in pyw) || $3 < pyw[k]) pyw[k] = $3; if (!(k in pyc) || $4 < pyc[k]) pyc[k] = $4; pyseen = 1 }
function row(name, base, meas, unit, fmt) {
    if (base == "" || meas == "") { printf "  %-58s %14s %14s %12s %8s\n", name, "n/a", "n/a", "", ""; return }
    printf "  %-58s %11" fmt " %-2s %11" fmt " %-2s %+11" fmt " %8.2fx\n", name, base, unit, meas, unit, meas - base, (base > 0 ? meas / base : 0)
}
END {
    split("launch2 launch8 launch32 malloc memcpy memcpyfr graph16", ops, " ")
    label["launch2"] = "<<<>>> 2 args"; label["launch8"] = "<<<>>> 8 args"; label["launch32"] = "<<<>>> 32 args"
    label["malloc"] = "cudaMalloc+cudaFree 4 KiB"; label["memcpy"] = "cudaMemcpy 4KiB h2d, fresh"
    label["memcpyfr"] = "cudaMemcpy 4KiB h2d, freed"; label["graph16"] = "cudaGraphLaunch, 16 kernel nodes"
    split("nobt check default", cfgs, " ")
    cl["nobt"] = "no bt, no checks"; cl["check"] = "checks"; cl["default"] = "checks+bt (default)"
    printf "vramtrace bench: %s, %s CPUs; wall rows = min of %s runs; %d s\n", model, cpus, reps, secs
    printf "  %-58s %14s %14s %12s %9s\n", "row", "baseline", "measured", "added", "ratio"
    print "tracer cost per call, simulated device (core-ns/call = wall x min(threads,CPUs) / calls; baseline = untraced)"
    for (i = 1; i <= 7; i++) for (t = 1; t <= 8; t += 7) for (j = 1; j <= 3; j++) {
        o = ops[i]; c = cfgs[j]
        if (o == "memcpy") continue
        row(sprintf("%-26s %d thr %s", label[o], t, cl[c]), ns[key("untraced", o, t)], ns[key(c, o, t)], "ns", ".1f")
    }
    print "whole-process CPU per call, every thread (the program'"'"'s and the tracer'"'"'s drain thread; CLOCK_PROCESS_CPUTIME_ID over the timed loop)"
    for (i = 1; i <= 7; i++) for (t = 1; t <= 8; t += 7) for (j = 1; j <= 3; j += 2) {
        o = ops[i]; c = cfgs[j]
        if (o == "memcpy") continue
        row(sprintf("%-26s %d thr %s", label[o], t, cl[c]), pcpu[key("untraced", o, t)], pcpu[key(c, o, t)], "ns", ".1f")
    }
    print "registry alone: insert+lookup+remove of a 4 KiB range (core-ns/op; baseline = the same with 1 thread)"
    for (m = 1; m <= 2; m++) for (t = 1; t <= 8; t *= 2) {
        md = m == 1 ? "own" : "shared"
        if (!((md, t) in reg)) continue
        ml = m == 1 ? "each thread its own 2 MiB region (own shards)" : "all threads in one 2 MiB region (one lock)"
        row(sprintf("%d thr %s", t, ml), reg[md, 1], reg[md, t], "ns", ".1f")
    }
    if (regbad) print "  (bench_registry reported failed operations: the rows above are not valid)"
    print "whole-process instructions per call, every thread (callgrind, (Ir(2n) - Ir(n)) / calls; checks+bt, formatting included; baseline = untraced)"
    wl["fold"] = "steady, folded (default)"; wl["nofold"] = "a line each (VRAMTRACE_FOLD=0)"
    label["launch8u"] = "<<<>>> 8 args, 4 used"
    split("launch8 launch8u memcpy graph16", wops, " ")
    for (i = 1; i <= 4; i++) for (j = 1; j <= 2; j++) {
        o = wops[i]; c = j == 1 ? "fold" : "nofold"
        if (!((c, o) in wir)) continue
        row(sprintf("%-26s %s", label[o], wl[c]), wir["untraced", o], wir[c, o], "in", ".0f")
    }
    print "instructions per call in the calling thread (callgrind, 1 thread, deterministic; baseline = untraced)"
    cl["sync"] = "checks, formatted in caller (SYNC=1)"
    split("nobt check default sync", cgcfgs, " ")
    for (i = 1; i <= 7; i++) for (j = 1; j <= 4; j++) {
        o = ops[i]; c = cgcfgs[j]
        if (!((c, o) in ir)) continue
        row(sprintf("%-26s %s", label[o], cl[c]), ir["untraced", o], ir[c, o], "in", ".0f")
    }
    print "  of which, added inside each call of the malloc+free pair (hook minus the real function it wraps):"
    split("nobt default", spcfgs, " ")
    for (j = 1; j <= 2; j++) for (f = 1; f <= 2; f++) {
        c = spcfgs[j]; fn = f == 1 ? "cudaMalloc" : "cudaFree"
        if ((c, fn) in split_ir) printf "  %-58s %14s %11.0f in\n", sprintf("%-26s %s", fn, cl[c]), "", split_ir[c, fn]
    }
    if (pyseen) {
        print "Python frames in recorded stacks: a cudaMalloc+cudaFree pair from Python (ctypes, lock released), ns per pair"
        for (d = 1; d <= 32; d *= (d == 1 ? 8 : 4)) {
            row(sprintf("depth %2d, wall: Python frames on (baseline: off)", d), pyw["nopy", d], pyw["py", d], "ns", ".0f")
            row(sprintf("depth %2d, whole-process CPU: on (baseline: off)", d), pyc["nopy", d], pyc["py", d], "ns", ".0f")
            row(sprintf("depth %2d, wall: traced, frames on (baseline: untraced)", d), pyw["untraced", d], pyw["py", d], "ns", ".0f")
        }
    }
    if (nprim) {
        print "instructions that cost far more than the counts weigh them (ns each, min of 5 x 2M; all on the tracer paths)"
        for (i = 1; i <= nprim; i++) printf "  %-58s %14s %11.2f ns\n", prim[i], "", prim_ns[prim[i]]
    }
    print "trace size per event (bytes/line, default config, the traced run above)"
    for (k in sz_n) printf "  %-58s %14s %11.1f B  %s lines\n", "ev=" k, "", sz_b[k] / sz_n[k], sz_n[k]
    if (tot_n) printf "  %-58s %14s %11.1f B  %s lines, %.1f MB\n", "all events", "", tot_b / tot_n, tot_n, tot_b / 1e6
    print "tracer resident memory after the same work (kB from /proc/self/status; baseline = untraced)"
    for (j = 1; j <= 3; j++) {
        c = cfgs[j]
        row(sprintf("VmRSS   %s", cl[c]), rss["untraced"], rss[c], "kB", ".0f")
        row(sprintf("RssAnon %s", cl[c]), anon["untraced"], anon[c], "kB", ".0f")
        row(sprintf("RssFile %s (trace pages mapped)", cl[c]), file["untraced"], file[c], "kB", ".0f")
    }
    if (nsoak) {
        print "soak: a training loop on 4 threads, per step 100 launches, 10 cudaFree+cudaMalloc, 2 copies (bench/soak.cu; checks+bt)"
        printf "  %10s %8s %7s %10s %9s %11s %16s %8s %11s  %s\n", "launches", "pairs", "copies", "trace", "B/launch", "tracer RSS", "wall (untraced)", "report", "report RSS", "launches counted"
        for (i = 1; i <= nsoak; i++) {
            split(soak[i], sf, " ")
            printf "  %10d %8d %7d %7.1f MB %9.1f %+8.1f MB %6.2f s (%5.2f) %6.2f s %8.1f MB  %s\n", sf[2], sf[3], sf[4], sf[9] / 1e6, sf[9] / sf[2],
                   (sf[8] - sf[6]) / 1024, sf[7], sf[5], sf[10], sf[11] / 1024, sf[12]
        }
    }
    if ("report" in rep_s) {
        printf "report throughput, %d events, %.0f MB generated trace (baseline = json-c parse of each line)\n", rep_ev["report"], rep_b["report"] / 1e6
        fs = rep_s["floor"] > 0 ? rep_s["floor"] : 1e-9; rs = rep_s["report"] > 0 ? rep_s["report"] : 1e-9
        row("events/s (M)", rep_ev["floor"] / fs / 1e6, rep_ev["report"] / rs / 1e6, "M", ".2f")
        row("MB/s", rep_b["floor"] / fs / 1e6, rep_b["report"] / rs / 1e6, "MB", ".0f")
        row("wall s", rep_s["floor"], rep_s["report"], "s", ".2f")
        row("peak RSS", rep_kb["floor"], rep_kb["report"], "kB", ".0f")
    }
}' "$R"
[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$TMP"
