#!/bin/sh
# fw_torch.sh - PyTorch traced on the simulated device (issue 46 slice 3): tests/frameworks/torch_train.py
# (what it does, and so what the trace must hold, is written there) under each allocator setting
# a training job uses: the caching allocator's default, expandable_segments:True (VMM) and
# backend:cudaMallocAsync. Figures come from the script's arithmetic and PyTorch's own counters
# (torch.cuda.memory_stats(), max_memory_reserved(), each tensor's storage size), which the script
# prints; exactly one finding (the CPU tensor handed to a custom kernel), none on PyTorch's own
# kernels. The environment comes from tools/setup-frameworks.sh (`make test-frameworks`); without
# it the case is skipped, loudly.
. tests/lib.sh
need_sim
need_framework torch PyTorch
NVCC=${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}
[ -x "$NVCC" ] || { skip "PyTorch: NOT TESTED - no nvcc for the custom kernel"; exit 0; }
S="$ROOT/tests/frameworks/torch_train.py"
printf '%s\n' 'extern "C" __global__ void vt_scale(float *p, int n, float f)' \
    '{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= f; }' >"$TMP/vt_scale.cu"
"$NVCC" -fatbin -arch=sm_90 -o "$TMP/vt_scale.fatbin" "$TMP/vt_scale.cu" || { check "nvcc builds the custom kernel" false; exit 0; }
# What the simulated device takes as each kernel's dereferenced words (its ground truth, from the
# sources): vt_scale uses p (byte 0); PyTorch's kernels touch only their tensors' device memory,
# so nothing they are handed faults (the default rule, "every top-level 8-byte parameter is
# used", would read PyTorch's 8-byte lambda closures as pointers).
printf '%s\n' '* ' 'vt_scale 0' >"$TMP/deref"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" PYTHONWARNINGS=ignore VRAMTRACE_SIM_DEREF="$TMP/deref"
# the script's lines, without the CPU tensor's address (it differs from run to run)
lines() { grep -v '^cpu_ptr ' "$1" | tr '\n' '|'; }
num() { sed -n "s/^$2 //p" "$TMP/$1.out"; }            # num RUN KEY: the rest of the line
field() { num "$1" "$2" | awk -v k="$3" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'; }

# untraced, on the simulated device with the redirect run --sim uses: what the program prints
env LD_LIBRARY_PATH="$SIM" VRAMTRACE_SIM_DIR="$SIM" LD_PRELOAD="$(preload "$SIM/libvtsimredirect.so" "$SIM/libcudart.so.13")" \
    "$PY" "$S" "$TMP/vt_scale.fatbin" >"$TMP/plain.out" 2>"$TMP/plain.err"
check_eq "untraced: exit 0, the module loads, both launches return 0, the bug's sync fails" \
    "$?:$(grep -v '^tensor\|^segments\|^after_empty\|^end \|^cpu_ptr' "$TMP/plain.out" | tr '\n' '|')" \
    "0:module 0 0|launch cuda tensor 0|launch cpu tensor 0|bug sync AcceleratorError|"

at() { grep -n "# at:$1\b" "$S" | cut -d: -f1; }
unset PYTORCH_ALLOC_CONF
for conf in default expandable_segments:True backend:cudaMallocAsync; do
    n=${conf%%:*}
    unset PYTORCH_CUDA_ALLOC_CONF
    opt=
    case $conf in
    default) ;;
    backend:cudaMallocAsync) opt=--torch-tensors ;;   # what the option sets
    *) export PYTORCH_CUDA_ALLOC_CONF=$conf ;;
    esac
    "$VT" run --sim $opt -o "$TMP/$n.jsonl" -- "$PY" "$S" "$TMP/vt_scale.fatbin" >"$TMP/$n.out" 2>"$TMP/$n.err"
    rc=$?
    T="$TMP/$n.jsonl"
    if [ $conf = default ]; then
        check_eq "$n: traced, the program prints what it printed untraced" "$rc:$(lines "$TMP/$n.out")" "0:$(lines "$TMP/plain.out")"
    else
        check_eq "$n: exit 0, the bug's sync fails" "$rc:$(num $n 'bug sync')" "0:AcceleratorError"
    fi
    cpu=$(num $n cpu_ptr)
    check_eq "$n: exactly one finding: the CPU tensor ($cpu, heap) as argument 0 of vt_scale, an error" \
        "$(jqs "$T" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k
            | [.[]|select(.ev=="finding" and .severity!="note")|"\(.kind) \(.severity) \($k[.k|tostring]) \(.arg) \(.offset) \(.class) \(.value)"]|join(";")')" \
        "host_pointer error vt_scale 0 0 heap $cpu"
    check_eq "$n: the exit summary and the footer say the same" \
        "$(grep -o 'findings: [^)]*)' "$TMP/$n.err") $(jqs "$T" '.[]|select(.ev=="footer")|.findings')" \
        "findings: 1 error, 0 warnings (1 host pointer) 1"
    check_eq "$n: copies: h2d pageable and pinned, d2h, two d2d (clone, sort's copy of its input), 1 MiB each" \
        "$(jqs "$T" '[.[]|select(.ev=="copy")|"\(.dir) \(.host // "-") \(.size)"]|sort|join(", ")')" \
        "d2d - 1048576, d2d - 1048576, d2h pageable 1048576, h2d pageable 1048576, h2d pinned 1048576"
    check_eq "$n: one pinned host allocation: pin_memory()'s 1 MiB" \
        "$(jqs "$T" '[.[]|select(.ev=="alloc" and .mem=="pinned")|.size]|join(" ")')" 1048576
    # index_select of a 1-D tensor runs as PyTorch's gather kernel: index_select, gather and
    # scatter_ are three launches of its scatter/gather kernels
    check_eq "$n: vt_scale launched twice, the scatter/gather kernels 3 times; sum, sort, cumsum, softmax and elementwise kernels ran" \
        "$(jqs "$T" '(map(select(.ev=="kernel")) | map({key: (.id|tostring), value: .name}) | from_entries) as $k | [.[]|select(.ev=="launch")|$k[.k|tostring]] as $l
            | [($l|map(select(.=="vt_scale"))|length), ($l|map(select(test("scatter_gather")))|length)]
              + (["reduce_kernel","sort","DeviceScan","softmax","elementwise_kernel"] | map(. as $p | $l|map(select(test($p; "i")))|length > 0))
            | map(tostring) | join(" ")')" "2 3 true true true true true"
    "$VT" report --json "$T" >"$TMP/$n.json" 2>/dev/null
    check_eq "$n: report: 1 error, 0 warnings" "$(jq -c '[.finding_errors, .finding_warnings]' "$TMP/$n.json")" "[1,0]"
    check_eq "$n: the finding's stack is the script's launch line, called from the bug's line (the lock released by ctypes)" \
        "$(jq -r '.findings[0] | "\(.site) / \(.stack | join(" | "))"' "$TMP/$n.json")" \
        "vt_scale (torch_train.py:$(at launch)) / vt_scale (torch_train.py:$(at launch)) | <module> (torch_train.py:$(at bug))"
    check_eq "$n: text: the finding's caller line under its site" \
        "$("$VT" report "$T" 2>/dev/null | grep -A2 '^  error  *host_pointer' | sed -n 3p | sed 's/^ *//')" "from <module> (torch_train.py:$(at bug))"
    # VRAM at the end: PyTorch's own reserved bytes (one 4 KiB tensor live, in its 2 MiB segment
    # or, under cudaMallocAsync, the pool's 4 KiB)
    check_eq "$n: VRAM live at exit = torch.cuda.memory_reserved() at the end" \
        "$(jqs "$T" '.[]|select(.ev=="footer")|.live_bytes')" "$(field $n end reserved)"
    # where the toolkit's nvdisasm is at hand, the notes on PyTorch's kernels (words of by-value
    # structs in SASS-only code) are settled from their machine code: none is used as an address
    NVD="$PY_CACHE/nvdisasm/nvidia/cu13/bin/nvdisasm"
    if [ $conf = default ] && [ -x "$NVD" ]; then
        VRAMTRACE_NVDISASM="$NVD" "$VT" report --json "$T" >"$TMP/$n.sass.json" 2>/dev/null
        check_eq "$n: settled from the SASS (nvdisasm): every noted word read, none an address; still 1 error, no note" \
            "$(jq -c '[.finding_errors, .finding_warnings, (.notes|length), .processes[0].sass.findings, .processes[0].sass.unsettled_kernels, .processes[0].sass.words > 0]' "$TMP/$n.sass.json")" \
            "[1,0,0,0,0,true]"
    fi
    if [ $conf = backend:cudaMallocAsync ]; then
        check_eq "$n: the header says the option and the setting it made" \
            "$(head -1 "$T" | jq -c '[.torch_cuda_alloc_conf, .torch_tensors]')" '["backend:cudaMallocAsync",true]'
        check_eq "$n: the report: PyTorch's tensors seen one by one (no caching allocator), by the option" \
            "$(jq -c '.processes[0] | [.caching_allocator, .torch_backend, .torch_tensors]' "$TMP/$n.json")" '[null,"cudaMallocAsync",true]'
        check_eq "$n: every site at the peak is a line of the script, and they add up to the peak" \
            "$(jq -c '[([.peak_sites[].site | test("^<module> \\(torch_train.py:[0-9]+\\)$")] | all), ([.peak_sites[].bytes] | add) == .peak_bytes]' "$TMP/$n.json")" '[true,true]'
        check_eq "$n: at the peak, the sort's line holds its values and indices (1 + 2 MiB, 2 tensors), arange's its 1 MiB" \
            "$(jq -r --arg s "<module> (torch_train.py:$(at sort))" --arg a "<module> (torch_train.py:$(at arange))" \
                '[(.peak_sites[] | select(.site == $s) | "\(.bytes) \(.count)"), (.peak_sites[] | select(.site == $a) | "\(.bytes) \(.count)")] | join(", ")' "$TMP/$n.json")" \
            "3145728 2, 1048576 1"
    else
        check_eq "$n: the report: PyTorch's caching allocator (native), its segments; the note points at --torch-tensors" \
            "$(jq -c '.processes[0] | [.caching_allocator, .torch_backend, .torch_tensors]' "$TMP/$n.json"):$("$VT" report "$T" 2>/dev/null | grep -c 'vramtrace run --torch-tensors. makes each tensor an allocation of its own')" \
            '["PyTorch (c10 CUDACachingAllocator)","native",false]:1'
    fi
    case $conf in
    default)
        check_eq "$n: cudaMalloc calls = PyTorch's segment count; cudaFree calls = its segments freed by empty_cache" \
            "$(jqs "$T" '[([.[]|select(.ev=="alloc" and .api=="cudaMalloc")]|length), ([.[]|select(.ev=="free" and .api=="cudaFree")]|length)]|join(" ")')" \
            "$(field $n end segments) $(num $n 'after_empty_cache segments_freed' | awk '{print $1}')"
        check_eq "$n: peak VRAM = max_memory_reserved(); the segments made before empty_cache add up to it" \
            "$(jq '.peak_bytes' "$TMP/$n.json") $(jqs "$T" '[.[]|select(.ev=="alloc" and .api=="cudaMalloc")|.size]|.[:-1]|add')" \
            "$(field $n segments max_reserved) $(field $n segments reserved_peak)" ;;
    expandable_segments:True)
        check_eq "$n: VMM: peak VRAM = max_memory_reserved(); empty_cache releases all of it (its reserved bytes before)" \
            "$(jq '.peak_bytes' "$TMP/$n.json") $(jqs "$T" '[.[]|select(.ev=="free" and .api=="cuMemRelease")|.size]|add')" \
            "$(field $n segments max_reserved) $(field $n segments reserved_peak)"
        check_eq "$n: no cudaMalloc: every byte of VRAM is cuMemCreate'd and cuMemMap'd" \
            "$(jqs "$T" '[([.[]|select(.ev=="alloc" and .api=="cudaMalloc")]|length), ([.[]|select(.ev=="alloc" and .api=="cuMemCreate")]|length) == ([.[]|select(.ev=="map")]|length)]|map(tostring)|join(" ")')" \
            "0 true" ;;
    backend:cudaMallocAsync)
        # each tensor is one cudaMallocAsync of its storage's size (PyTorch's backend asks CUDA's
        # pool per allocation); the others are its kernels' scratch space
        jqs "$T" '.[]|select(.ev=="alloc" and .api=="cudaMallocAsync")|.size' | sort >"$TMP/async.got"
        num $n tensor | awk '{print $2}' | sort >"$TMP/async.want"
        check_eq "$n: every tensor the script made ($(wc -l <"$TMP/async.want" | tr -d ' ')) is a cudaMallocAsync of its size" \
            "$(comm -23 "$TMP/async.want" "$TMP/async.got" | wc -l | tr -d ' ')" 0
        check_eq "$n: no cudaMalloc, and every stream-ordered allocation but the live tensor freed" \
            "$(jqs "$T" '[([.[]|select(.ev=="alloc" and .api=="cudaMalloc")]|length), ([.[]|select(.ev=="alloc" and .mem=="async")]|length) - ([.[]|select(.ev=="free" and .mem=="async")]|length)]|map(tostring)|join(" ")')" \
            "0 1" ;;
    esac
done
