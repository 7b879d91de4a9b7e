#!/bin/sh
# torch_tensors.sh - `vramtrace run --torch-tensors` (issue 47, slice 2) without PyTorch: the
# allocator settings it hands the program (any backend item replaced by backend:cudaMallocAsync
# in each variable the user set, PYTORCH_CUDA_ALLOC_CONF always; other items kept; a backend the
# user chose said on stderr), what the trace header records, and what the report concludes from
# crafted traces: PyTorch with those settings and stream-ordered allocations took each tensor as an
# allocation ("cudaMallocAsync"); PyTorch without them is its caching allocator ("native"), whose
# note points at the option; the option given but no stream-ordered allocation: said.
# fw_torch.sh runs PyTorch itself with the option.
. tests/lib.sh
need_sim
P="$PROGS/rel_fork" # "alloc": two cudaMalloc, one cudaFree
hdr() { head -1 "$1" | jq -c '[.torch_alloc_conf, .torch_cuda_alloc_conf, .torch_tensors]'; }

env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF "$VT" run --sim --torch-tensors -o "$TMP/a.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/a.err"
check_eq "nothing set: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, the option in the header, nothing said about it" \
    "$?:$(hdr "$TMP/a.jsonl"):$(grep -c torch-tensors "$TMP/a.err")" '0:[null,"backend:cudaMallocAsync",true]:0'
env -u PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF="expandable_segments:True, backend : native" \
    "$VT" run --sim --torch-tensors -o "$TMP/b.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/b.err"
check_eq "PYTORCH_ALLOC_CONF with backend:native: its other items kept, the backend replaced, PYTORCH_CUDA_ALLOC_CONF set too" \
    "$(hdr "$TMP/b.jsonl")" '["expandable_segments:True,backend:cudaMallocAsync","backend:cudaMallocAsync",true]'
check_eq "the replaced backend is said, once" "$(grep -c "^vramtrace run: --torch-tensors: PYTORCH_ALLOC_CONF item 'backend : native' replaced by backend:cudaMallocAsync\$" "$TMP/b.err")" 1
env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync,release_lock_on_cudamalloc:True" \
    "$VT" run --sim --torch-tensors -o "$TMP/c.jsonl" -- "$P" alloc >/dev/null 2>"$TMP/c.err"
check_eq "already cudaMallocAsync: kept (moved last), nothing said" \
    "$(hdr "$TMP/c.jsonl"):$(grep -c torch-tensors "$TMP/c.err")" '[null,"release_lock_on_cudamalloc:True,backend:cudaMallocAsync",true]:0'
env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" "$VT" run --sim -o "$TMP/d.jsonl" -- "$P" alloc >/dev/null 2>&1
check_eq "without the option: the user's settings recorded as they are, no torch_tensors" "$(hdr "$TMP/d.jsonl")" '[null,"expandable_segments:True",null]'

# crafted: PyTorch's library on the allocation's stack (a module record covering its frame)
H='{"ev":"header","format":"vramtrace-trace","version":1,"pid":7,"t":1'
M='{"ev":"module","path":"/venv/torch/lib/libc10_cuda.so","base":"0x7f0000000000","lo":"0x7f0000000000","hi":"0x7f0000100000"}'
A='{"ev":"alloc","t":10,"dur":2,"tid":1,"api":"API","res":0,"dev":0,"addr":"0x7e0000000000","size":1048576,"mem":"MEM","bt":["0x7f0000001000"]}'
craft() { # NAME HEADER-TAIL API MEM
    { echo "$H$2}"; echo "$M"; echo "$A" | sed "s/API/$3/; s/MEM/$4/"; } >"$TMP/$1.jsonl"
    "$VT" report --json "$TMP/$1.jsonl" >"$TMP/$1.json" 2>/dev/null
    "$VT" report "$TMP/$1.jsonl" >"$TMP/$1.txt" 2>/dev/null
}
fields() { jq -c '.processes[0] | [.caching_allocator, .torch_backend, .torch_tensors]' "$TMP/$1.json"; }
craft async ',"torch_cuda_alloc_conf":"backend:cudaMallocAsync","torch_tensors":true' cudaMallocAsync async
check_eq "settings and a stream-ordered allocation: cudaMallocAsync, no caching allocator" "$(fields async)" '[null,"cudaMallocAsync",true]'
check_eq "text: the tensors note, naming the option" \
    "$(grep -c 'PyTorch allocated each tensor with cudaMallocAsync (backend:cudaMallocAsync, set by run --torch-tensors)' "$TMP/async.txt"):$(grep -c 'reserves from CUDA' "$TMP/async.txt")" 1:0
craft user ',"torch_alloc_conf":"backend : cudaMallocAsync"' cudaMallocAsync async
check_eq "the user's own PYTORCH_ALLOC_CONF (spaces around the colon): cudaMallocAsync, no option" "$(fields user)" '[null,"cudaMallocAsync",false]'
craft native '' cudaMalloc device
check_eq "no settings: the caching allocator, native" "$(fields native)" '["PyTorch (c10 CUDACachingAllocator)","native",false]'
check_eq "text: the segments note points at the option" \
    "$(grep -c '`vramtrace run --torch-tensors` makes each tensor an allocation of its own' "$TMP/native.txt")" 1
craft ignored ',"torch_cuda_alloc_conf":"backend:cudaMallocAsync","torch_tensors":true' cudaMalloc device
check_eq "the option given, no stream-ordered allocation: native, and said" \
    "$(fields ignored):$(grep -c 'run --torch-tensors was given, but no allocation was stream-ordered' "$TMP/ignored.txt")" \
    '["PyTorch (c10 CUDACachingAllocator)","native",true]:1'
craft other ',"torch_cuda_alloc_conf":"backend:native"' cudaMallocAsync async
check_eq "backend:native with a stream-ordered allocation (made by someone else): native" "$(fields other)" '["PyTorch (c10 CUDACachingAllocator)","native",false]'
{ echo "$H}"; echo "$A" | sed "s/API/cudaMallocAsync/; s/MEM/async/; s/,\"bt\":\[[^]]*\]//"; } >"$TMP/none.jsonl"
check_eq "no PyTorch: no torch_backend" "$("$VT" report --json "$TMP/none.jsonl" | jq -c '.processes[0] | [.torch_backend, .torch_tensors]')" '[null,false]'
"$VT" report --html "$TMP/async.html" "$TMP/async.jsonl" >/dev/null 2>&1
check_eq "HTML: the tensors note" "$(grep -c 'each tensor was allocated with cudaMallocAsync' "$TMP/async.html")" 1
