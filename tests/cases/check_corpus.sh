#!/bin/sh
# check_corpus.sh - the tracer against an oracle it does not share (issue 32, slice 2): the
# generated corpus (tests/gen/corpus.py, 320 kernels: scalars of every width, vector types, padded,
# packed, over-aligned and nested structs, pointer arrays, unions, __grid_constant__, 1 to 64
# parameters) compiled six ways (mk/corpus.mk). Its host half prints each kernel's true layout from
# the host compiler's offsetof/sizeof and the host pointers it plants; the trace must hold exactly
# those layouts (from the image: ELF, or PTX for the PTX-only build; the simulated driver's
# cuFuncGetParamInfo is off) and exactly those findings: every planted pointer found, no other.
# Then the simulated driver's own layout reader against the same oracle.
. tests/lib.sh
need_sim
[ -x "$PROGS/corpus_sm90" ] || { skip "check_corpus: corpus not built"; exit 0; }

# the tracer's view, in the program's words
layouts() { jqs "$1" '.[]|select(.ev=="kernel")|"layout \(.name) \(.params|map("\(.[0]):\(.[1])")|join(" "))"' | sort; }
sources() { jqs "$1" '[.[]|select(.ev=="kernel")|.layout]|unique|join(",")'; }
findings() {
    jqs "$1" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k
        | .[] | select(.ev=="finding") | "expect \(.kind) \(.severity) \($k[.k|tostring]) \(.arg) \(.offset) \(.value)"' | sort
}
# Ground truth for the simulated device: every corpus kernel uses its pointers only in a branch
# it never takes, so at run time it dereferences no argument word and a GPU never faults.
echo '* ' >"$TMP/deref"
for v in sm90 sm80 none size rdc ptx; do
    t="$TMP/$v.jsonl"
    VRAMTRACE_SIM_DEREF="$TMP/deref" VRAMTRACE_SIM_NO_PARAMINFO=1 "$VT" run --sim -o "$t" -- "$PROGS/corpus_$v" \
        >"$TMP/$v.out" 2>"$TMP/$v.err"; rc=$?
    # sm_80 code cannot run on the sm_90 device: the driver JITs its compute_80 PTX, and the
    # tracer reads the layouts from that PTX too
    case $v in ptx|sm80) want_src=ptx ;; *) want_src=elf ;; esac
    check_eq "$v: the program ran all 320 kernels" "$rc $(tail -1 "$TMP/$v.out")" "0 done 320 kernels, errors 0"
    check_eq "$v: every layout from the image ($want_src)" "$(sources "$t")" "$want_src"
    # kernels with an over-aligned parameter have no host-compiler oracle for their layout
    grep '^layout ' "$TMP/$v.out" | grep -v ' over-aligned$' | sort >"$TMP/$v.want_layout"
    grep ' over-aligned$' "$TMP/$v.out" | awk '{print $2}' >"$TMP/$v.over"
    layouts "$t" >"$TMP/$v.all_layout"
    grep -v -w -F -f "$TMP/$v.over" "$TMP/$v.all_layout" >"$TMP/$v.got_layout" || true
    check_eq "$v: 320 kernel records; the $(wc -l <"$TMP/$v.want_layout" | tr -d ' ') layouts the host compiler knows are its offsetof/sizeof" \
        "$(wc -l <"$TMP/$v.all_layout" | tr -d ' ') $(diff "$TMP/$v.want_layout" "$TMP/$v.got_layout" | grep -c '^[<>]')" "320 0"
    # With the kernels' PTX in the image every planted pointer is an error and nothing else is
    # found (the garbage words are never used as addresses). Without it (the -rdc build keeps no
    # PTX) a word inside a struct cannot be told from padding: a planted pointer there is a note
    # (not a finding), and the garbage may be noted once per word, but is never a finding.
    case $v in rdc) sev='s/ error \(.*\) struct$/ note \1/; s/ top$//' ;; *) sev='s/ \(top\|struct\)$//' ;; esac
    grep '^expect ' "$TMP/$v.out" | sed "$sev" | sort >"$TMP/$v.want_find"
    findings "$t" >"$TMP/$v.got_find"
    missed=$(comm -23 "$TMP/$v.want_find" "$TMP/$v.got_find" | wc -l | tr -d ' ')
    false=$(comm -13 "$TMP/$v.want_find" "$TMP/$v.got_find" | grep -c ' error ')
    extra=$(comm -13 "$TMP/$v.want_find" "$TMP/$v.got_find" | wc -l | tr -d ' ')
    check_eq "$v: $(wc -l <"$TMP/$v.want_find" | tr -d ' ') planted host pointers: missed, false errors" "$missed $false" "0 0"
    case $v in
    rdc) check_eq "$v: no other finding (garbage words are notes at most)" \
        "$(comm -13 "$TMP/$v.want_find" "$TMP/$v.got_find" | grep -vc ' note ')" 0 ;;
    *) check_eq "$v: no other finding (garbage words never used as addresses)" "$extra" 0 ;;
    esac
    echo "$v $(wc -l <"$TMP/$v.want_find" | tr -d ' ') $missed $false $extra" >>"$TMP/rates"
    comm -3 "$TMP/$v.want_find" "$TMP/$v.got_find" | head -3
done
check "the corpus plants at least 100 host pointers" test "$(wc -l <"$TMP/sm90.want_find")" -ge 100
check "at least 200 layouts are checked against the host compiler" test "$(wc -l <"$TMP/sm90.want_layout")" -ge 200
check_eq "the corpus has kernels of 1 and of 64 parameters" \
    "$(awk '{print NF - 2}' "$TMP/sm90.want_layout" | sort -n | sed -n '1p;$p' | tr '\n' ' ')" "1 64 "

# The simulated driver reads layouts with its own reader (tests/sim/sim_layout.c, not the
# tracer's parser): with cuFuncGetParamInfo on, the tracer records the driver's answer, which must
# be the host compiler's too, for the SASS (sm90, rdc, compressed) and the JIT (ptx) builds.
for v in sm90 size rdc ptx; do
    t="$TMP/drv_$v.jsonl"
    VRAMTRACE_SIM_DEREF="$TMP/deref" "$VT" run --sim -o "$t" -- "$PROGS/corpus_$v" >"$TMP/drv_$v.out" 2>&1
    layouts "$t" | grep -v -w -F -f "$TMP/$v.over" >"$TMP/drv_$v.got_layout" || true
    check_eq "$v: every layout from the simulated driver's cuFuncGetParamInfo" "$(sources "$t")" paraminfo
    check_eq "$v: the simulated driver's $(wc -l <"$TMP/drv_$v.got_layout" | tr -d ' ') layouts are the host compiler's" \
        "$(diff "$TMP/$v.want_layout" "$TMP/drv_$v.got_layout" | grep -c '^[<>]')" 0
done
