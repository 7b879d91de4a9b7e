#!/bin/sh
# trace_drv_ops.sh - every driver-API copy and set the tracer hooks, by each exported name (the
# _v2 forms and the per-thread default stream _ptds/_ptsz forms): tests/progs/drv_ops calls each
# once with its own byte count and prints the record it must leave ("expect API EV BYTES DIR
# ASYNC STREAM DST SRC KIND HOST SRC_DEV SHAPE VALUE", from the arguments it passed); the trace
# must hold exactly those records, one each, and each call return what it returns untraced. Then
# each driver allocation and its free (stream-ordered, from a pool, managed, pitched, pinned,
# registered) the same way, by size, kind, stream and address.
. "$ROOT/tests/lib.sh"
need_sim
"$VT" run --sim -q -o "$TMP/o.jsonl" -- "$PROGS/drv_ops" >"$TMP/out" 2>"$TMP/err" </dev/null
check_eq "drv_ops: exit 0, nothing on stderr" "$?:$(cat "$TMP/err")" "0:"
check_eq "drv_ops: 36 copies and sets (20 copies, 4 2D copies, 12 sets) and 10 allocations with their frees, each returned 0" \
    "$(grep -c '^expect [^ ]* [cs]' "$TMP/out"):$(grep -c '^expect [^ ]* alloc' "$TMP/out"):$(grep -c '^expect [^ ]* free' "$TMP/out"):$(grep '^rc ' "$TMP/out" | grep -vc ' 0$')" "36:10:10:0"
grep '^expect ' "$TMP/out" | cut -d' ' -f2- | sort >"$TMP/want"
jqs "$TMP/o.jsonl" '.[] | select(.ev == "copy" or .ev == "set" or .ev == "copies" or .ev == "sets")
    | [.api, .ev, .size, (.dir // "-"), (if .async then 1 else 0 end), (.stream // "0x0"), (.dst // .addr), (.src // "-"),
       (.kind // "-"), (.host // "-"), (.src_dev // "-"),
       (if .width then "\(.width),\(.height),\(.dpitch),\(.spitch)" else "-" end), (.value // "-")]
    | map(tostring) | join(" ")' >"$TMP/got.ops"
jqs "$TMP/o.jsonl" '.[] | select(.ev == "alloc" or .ev == "free")
    | [.api, .ev, .size, .mem, (if .stream then 1 else 0 end), (.stream // "0x0"), .addr, "-",
       (if .pitch then "\(.pitch),\(.width),\(.height)" else "-" end)]
    | map(tostring) | join(" ")' >"$TMP/got.mem"
sort "$TMP/got.ops" "$TMP/got.mem" >"$TMP/got"
check_eq "drv_ops: one record per call, each as the call was made ($(wc -l <"$TMP/want" | tr -d ' ') expected, $(wc -l <"$TMP/got" | tr -d ' ') recorded)" \
    "$(diff "$TMP/want" "$TMP/got" | grep '^[<>]' | head -6 | tr '\n' ';')" ""
# untraced: the same return codes
env LD_LIBRARY_PATH="$SIM" "$PROGS/drv_ops" >"$TMP/plain" 2>&1 </dev/null
check_eq "drv_ops: every call returns what it returns untraced" "$(grep '^rc ' "$TMP/plain")" "$(grep '^rc ' "$TMP/out")"
bad=$(record_fields_bad "$TMP/o.jsonl" | head -3 | tr '\n' ' ')
check_eq "drv_ops: no field out of place" "$bad" ""

# contexts: each allocation on the device of the context current when it was made; the pool's
# threshold and trim on device 1, whose pool it is
VRAMTRACE_SIM_DEVICES=2 "$VT" run --sim -q -o "$TMP/c.jsonl" -- "$PROGS/drv_ops" ctx >"$TMP/cout" 2>"$TMP/cerr" </dev/null
check_eq "drv_ops ctx: exit 0, 5 allocations and the pool's 2 calls expected" "$?:$(grep -c '^expect ' "$TMP/cout")" "0:7"
check_eq "drv_ops ctx: each record on the current context's device (cuCtxCreate_v4/_v2, cuCtxPushCurrent, cuCtxPopCurrent), the pool's on device 1" \
    "$(jqs "$TMP/c.jsonl" '.[] | select(.ev == "alloc" or .ev == "pool_attr" or .ev == "pool_trim")
        | if .ev == "alloc" then "\(.api) alloc \(.size) dev \(.dev)" elif .ev == "pool_attr" then "pool_attr \(.pool) \(.release_threshold) dev \(.dev)"
          else "pool_trim \(.pool) \(.keep) dev \(.dev)" end' | tr '\n' ';')" \
    "$(grep '^expect ' "$TMP/cout" | cut -d' ' -f2- | tr '\n' ';')"

# IPC by the driver: cuIpcOpenMemHandle_v2 (cuda.h's name) and the older cuIpcOpenMemHandle export,
# each recorded as an ipc_open of the handle's 1 MiB by the name called, each close as an ipc_close
"$VT" run --sim -q -o "$TMP/ipc.jsonl" -- "$PROGS/drv_ops" ipc >"$TMP/ipcout" 2>"$TMP/ipcerr" </dev/null
check_eq "drv_ops ipc: exit 0, every call 0, two distinct mappings" \
    "$?:$(grep '^rc ' "$TMP/ipcout" | grep -vc ' 0$'):$(grep '^distinct' "$TMP/ipcout")" "0:0:distinct 1"
check_eq "drv_ops ipc: an ipc_open and an ipc_close of 1 MiB for each opening, by the name called" \
    "$(jqs "$TMP/ipc.jsonl" '.[] | select(.ev == "ipc_open" or .ev == "ipc_close") | "\(.ev) \(.api) \(.size)"' | tr '\n' ';')" \
    "$(grep '^expect ' "$TMP/ipcout" | cut -d' ' -f2- | tr '\n' ';')"
