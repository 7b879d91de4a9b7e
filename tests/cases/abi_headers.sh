#!/bin/sh
# abi_headers.sh - src/core/cuda_abi.h (the tracer's own CUDA declarations, so it builds without the
# toolkit) has the same struct layouts and constants as the toolkit's cuda.h / driver_types.h.
. tests/lib.sh
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA_HOME/include/cuda.h" ] || { skip "no CUDA headers"; exit 0; }
cat >"$TMP/probe.h" <<'P'
#include <stdio.h>
#include <stddef.h>
#define F(t, m) printf(#t "." #m " %zu %zu\n", offsetof(t, m), sizeof(((t *)0)->m))
#define S(t) printf(#t " %zu\n", sizeof(t))
#define C(x) printf(#x " %d\n", (int)(x))
typedef struct cudaPitchedPtr PitchedPtr;
typedef struct cudaExtent Extent;
typedef struct cudaPos Pos;
typedef struct cudaMemcpy3DParms Memcpy3DParms;
typedef struct cudaMemsetParams MemsetParams;
static void probe(void) {
    F(CUDA_MEMCPY2D, srcMemoryType); F(CUDA_MEMCPY2D, srcHost); F(CUDA_MEMCPY2D, srcDevice); F(CUDA_MEMCPY2D, srcPitch);
    F(CUDA_MEMCPY2D, dstMemoryType); F(CUDA_MEMCPY2D, dstHost); F(CUDA_MEMCPY2D, dstDevice); F(CUDA_MEMCPY2D, dstPitch);
    F(CUDA_MEMCPY2D, WidthInBytes); F(CUDA_MEMCPY2D, Height); S(CUDA_MEMCPY2D);
    F(CUlaunchConfig, sharedMemBytes); F(CUlaunchConfig, hStream); F(CUlaunchConfig, numAttrs); S(CUlaunchConfig);
    F(cudaLaunchConfig_t, gridDim); F(cudaLaunchConfig_t, blockDim); F(cudaLaunchConfig_t, dynamicSmemBytes);
    F(cudaLaunchConfig_t, stream); S(cudaLaunchConfig_t);
    F(CUmemAllocationProp, location); S(CUmemAllocationProp);
    F(PitchedPtr, pitch); S(PitchedPtr); S(Extent); S(Pos);
    F(Memcpy3DParms, srcPos); F(Memcpy3DParms, srcPtr); F(Memcpy3DParms, dstArray); F(Memcpy3DParms, dstPos);
    F(Memcpy3DParms, dstPtr); F(Memcpy3DParms, extent); F(Memcpy3DParms, kind); S(Memcpy3DParms);
    F(CUDA_MEMCPY3D, srcXInBytes); F(CUDA_MEMCPY3D, srcY); F(CUDA_MEMCPY3D, srcZ); F(CUDA_MEMCPY3D, srcMemoryType);
    F(CUDA_MEMCPY3D, srcHost); F(CUDA_MEMCPY3D, srcDevice); F(CUDA_MEMCPY3D, srcPitch); F(CUDA_MEMCPY3D, srcHeight);
    F(CUDA_MEMCPY3D, dstXInBytes); F(CUDA_MEMCPY3D, dstY); F(CUDA_MEMCPY3D, dstZ); F(CUDA_MEMCPY3D, dstMemoryType);
    F(CUDA_MEMCPY3D, dstHost); F(CUDA_MEMCPY3D, dstDevice); F(CUDA_MEMCPY3D, dstPitch); F(CUDA_MEMCPY3D, dstHeight);
    F(CUDA_MEMCPY3D, WidthInBytes); F(CUDA_MEMCPY3D, Height); F(CUDA_MEMCPY3D, Depth); S(CUDA_MEMCPY3D);
    F(MemsetParams, dst); F(MemsetParams, pitch); F(MemsetParams, value); F(MemsetParams, elementSize);
    F(MemsetParams, width); F(MemsetParams, height); S(MemsetParams);
    F(CUDA_MEMSET_NODE_PARAMS, dst); F(CUDA_MEMSET_NODE_PARAMS, pitch); F(CUDA_MEMSET_NODE_PARAMS, value);
    F(CUDA_MEMSET_NODE_PARAMS, elementSize); F(CUDA_MEMSET_NODE_PARAMS, width); F(CUDA_MEMSET_NODE_PARAMS, height);
    S(CUDA_MEMSET_NODE_PARAMS);
    C(CU_POINTER_ATTRIBUTE_MEMORY_TYPE); C(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL); C(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
    C(CU_POINTER_ATTRIBUTE_RANGE_SIZE); C(CU_MEMORYTYPE_HOST); C(CU_MEMORYTYPE_DEVICE); C(CU_MEMORYTYPE_UNIFIED);
    C(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE); C(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    C(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS); C(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    C(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM); C(cudaMemcpyDefault); C(cudaErrorNotSupported);
    C(CUDA_ERROR_NOT_SUPPORTED); C(CUDA_ERROR_OUT_OF_MEMORY);
}
P
cat >"$TMP/real.c" <<'P'
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "probe.h"
int main(void) { probe(); return 0; }
P
cat >"$TMP/ours.c" <<'P'
#include "cuda_abi.h"
#include "probe.h"
int main(void) { probe(); return 0; }
P
# the generic node parameters: offsets inside a union, named differently in the two headers
cat >>"$TMP/real.c" <<'P'
typedef struct cudaGraphNodeParams RtNodeParams;
#define O(t, m) printf(#t "." #m " %zu\n", offsetof(t, m))
int generic(void) {
    O(RtNodeParams, memcpy.copyParams); O(CUgraphNodeParams, memcpy.copyParams);
    O(RtNodeParams, memset); O(CUgraphNodeParams, memset); O(RtNodeParams, graph.graph);
    O(CUgraphNodeParams, graph.graph); O(RtNodeParams, conditional.handle); O(CUgraphNodeParams, conditional.handle);
    O(RtNodeParams, conditional.size); O(CUgraphNodeParams, conditional.size);
    O(RtNodeParams, conditional.phGraph_out); O(CUgraphNodeParams, conditional.phGraph_out);
    C(cudaGraphNodeTypeKernel); C(cudaGraphNodeTypeMemcpy); C(cudaGraphNodeTypeMemset); C(cudaGraphNodeTypeGraph);
    C(cudaGraphNodeTypeConditional); C(cudaGraphNodeTypeMemAlloc); C(cudaGraphNodeTypeMemFree);
    O(RtNodeParams, alloc.bytesize); O(CUgraphNodeParams, alloc.bytesize); O(RtNodeParams, alloc.dptr);
    O(CUgraphNodeParams, alloc.dptr); O(RtNodeParams, free.dptr); O(CUgraphNodeParams, free.dptr);
    return 0;
}
P
cat >>"$TMP/ours.c" <<'P'
#define O(t, m, v) printf(#t "." #m " %d\n", (int)(v))
typedef int RtNodeParams;
int generic(void) {
    O(RtNodeParams, memcpy.copyParams, VT_NODE_PARAMS_MEMCPY); O(CUgraphNodeParams, memcpy.copyParams, VT_NODE_PARAMS_MEMCPY);
    O(RtNodeParams, memset, VT_NODE_PARAMS_MEMSET); O(CUgraphNodeParams, memset, VT_NODE_PARAMS_MEMSET);
    O(RtNodeParams, graph.graph, VT_NODE_PARAMS_CHILD); O(CUgraphNodeParams, graph.graph, VT_NODE_PARAMS_CHILD);
    O(RtNodeParams, conditional.handle, VT_NODE_PARAMS_COND_HANDLE);
    O(CUgraphNodeParams, conditional.handle, VT_NODE_PARAMS_COND_HANDLE);
    O(RtNodeParams, conditional.size, VT_NODE_PARAMS_COND_SIZE); O(CUgraphNodeParams, conditional.size, VT_NODE_PARAMS_COND_SIZE);
    O(RtNodeParams, conditional.phGraph_out, VT_NODE_PARAMS_COND_GRAPHS);
    O(CUgraphNodeParams, conditional.phGraph_out, VT_NODE_PARAMS_COND_GRAPHS);
    printf("cudaGraphNodeTypeKernel %d\ncudaGraphNodeTypeMemcpy %d\ncudaGraphNodeTypeMemset %d\ncudaGraphNodeTypeGraph %d\n"
           "cudaGraphNodeTypeConditional %d\ncudaGraphNodeTypeMemAlloc %d\ncudaGraphNodeTypeMemFree %d\n", VT_GRAPH_NODE_KERNEL,
           VT_GRAPH_NODE_MEMCPY, VT_GRAPH_NODE_MEMSET, VT_GRAPH_NODE_GRAPH, VT_GRAPH_NODE_CONDITIONAL, VT_GRAPH_NODE_MEM_ALLOC,
           VT_GRAPH_NODE_MEM_FREE);
    O(RtNodeParams, alloc.bytesize, VT_NODE_PARAMS_ALLOC_BYTES); O(CUgraphNodeParams, alloc.bytesize, VT_NODE_PARAMS_ALLOC_BYTES);
    O(RtNodeParams, alloc.dptr, VT_NODE_PARAMS_ALLOC_DPTR); O(CUgraphNodeParams, alloc.dptr, VT_NODE_PARAMS_ALLOC_DPTR);
    O(RtNodeParams, free.dptr, VT_NODE_PARAMS_FREE); O(CUgraphNodeParams, free.dptr, VT_NODE_PARAMS_FREE);
    return 0;
}
P
sed -i 's/int main(void) { probe(); return 0; }//' "$TMP/real.c" "$TMP/ours.c"
echo 'int main(void) { probe(); return generic(); }' >>"$TMP/real.c"
echo 'int main(void) { probe(); return generic(); }' >>"$TMP/ours.c"
cc -I"$CUDA_HOME/include" -I"$TMP" -o "$TMP/real" "$TMP/real.c" && "$TMP/real" >"$TMP/real.txt"
cc -Isrc/core -I"$TMP" -o "$TMP/ours" "$TMP/ours.c" && "$TMP/ours" >"$TMP/ours.txt"
check "probe programs built and ran" test -s "$TMP/real.txt" -a -s "$TMP/ours.txt"
while read -r name rest; do
    check_eq "cuda_abi.h: $name" "$(grep "^$name " "$TMP/ours.txt" | cut -d' ' -f2-)" "$rest"
done <"$TMP/real.txt"
