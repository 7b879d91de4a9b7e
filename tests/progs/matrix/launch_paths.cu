// launch_paths.cu - one kernel launched through each launch path, with each kind of pointer
// (issue 34's detection matrix; built four ways by mk/launch_matrix.mk: sm_90, sm_80,
// --compress-mode=none, -rdc=true). Each mode is one path; it launches a live device buffer (no
// finding), a heap buffer (a host pointer: error) and a freed device buffer (a use after free:
// error, naming it), and prints, derived from what it does:
//   expect KIND SEVERITY KERNEL ARG OFFSET VALUE ALLOC_ADDR ALLOC_SIZE ALLOC_KIND DEV
//                        (as verdicts.cu, and the device of the launch it is found in)
//   launch API DEV ROLE  one per launch the trace must record, in order; ROLE "-" for work done
//                        then, "captured" for a launch captured into a graph (nothing runs),
//                        "graph" for one a graph launch did
//   report KEY N         the report's counts (graph modes)
//   rc NAME CODE         what each call returned
//   done MODE
// The kernel uses its pointer only in a branch never taken, and waits at a grid-wide barrier
// (a cooperative kernel): the device never faults, the verdicts are the tracer's.
//   chevron        <<<>>> (CUDA 13 lowers it to __cudaLaunchKernel)
//   rt_launch      cudaLaunchKernel(fn, ...)
//   rt_pending     cudaLaunchKernel(fn, ...) while the program has an error pending (a failed
//                  cudaMalloc): the error is still there for its cudaGetLastError after the
//                  launch ("pending FIRST LAST": the failed call's result and what it then reads)
//   rt_coop        cudaLaunchCooperativeKernel (the C API)
//   rt_coop_tmpl   the C++ template cudaLaunchCooperativeKernel(T *, ...) (inline over the C API)
//   rt_ex_coop     cudaLaunchKernelEx (C++ template over cudaLaunchKernelExC) with
//                  cudaLaunchAttributeCooperative
//   drv_coop       cuLaunchCooperativeKernel, the CUfunction from cudaGetFuncBySymbol
//   drv_ex_coop    cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE
//   graph_rt       stream capture (cudaStreamBeginCapture) of a copy, a memset and two launches
//                  (a live buffer, a heap buffer), cudaGraphLaunch 10 times, the live buffer
//                  freed, once more: each replay re-checks each kernel node (the heap buffer at
//                  capture and at every replay, one finding; the freed buffer at the last replay)
//                  and counts as work done (launches, copies, memsets)
//   graph_drv      the same through the driver API (cuStreamBeginCapture, cuLaunchKernel,
//                  cuMemcpyHtoDAsync, cuMemsetD32Async, cuGraphLaunch)
//   graph_join     cross-stream capture: stream 2 joins stream 1's capture by waiting on an event
//                  recorded in it (cuEventRecord + cuStreamWaitEvent), allocates a graph buffer,
//                  copies into it and launches on it there, rejoins; the graph launched 3 times
//   nodes_rt       a kernel node added by hand (cudaGraphAddKernelNode) with a live buffer, the
//                  graph launched; the exec's node given a heap buffer
//                  (cudaGraphExecKernelNodeSetParams), launched; the graph's node given a freed
//                  buffer (cudaGraphKernelNodeSetParams: the exec keeps the heap buffer), launched;
//                  the exec updated from the graph (cudaGraphExecUpdate), launched: each change is
//                  checked when made and at every launch ("count KIND N": occurrences)
//   nodes_drv      the same through the driver API (cuGraphAddKernelNode, ...)
//   gnodes_rt      the same through the generic node calls (cudaGraphAddNode, cudaGraphNodeSetParams,
//                  cudaGraphExecNodeSetParams, with cudaGraphNodeParams of type kernel)
//   gnodes_drv     ... and the driver's (cuGraphAddNode, cuGraphNodeSetParams, cuGraphExecNodeSetParams)
//   drv_extra      cuLaunchKernel with the arguments in one packed buffer (CU_LAUNCH_PARAM_BUFFER_*):
//                  coop_scale (uses its pointer) and ignore_ptr (never does: nothing to report,
//                  as for the kernelParams form), each with the heap buffer, directly and
//                  captured into a graph launched twice
//   child_rt       a graph holding a kernel node (a live buffer) added as a child graph node
//                  (cudaGraphAddChildGraphNode) to a second graph, followed there by a child graph
//                  node (cudaGraphAddNode, type graph) with a kernel node on buffer T; both freed,
//                  the second graph launched twice: each launch checks the child's kernel and T's
//                  node (a use after free each);
//                  the exec's child node given a graph whose kernel has a live buffer
//                  (cudaGraphExecChildGraphNodeSetParams), launched twice: T's only; given one
//                  with a heap buffer, launched once: a host pointer (and when that node was made)
//                  and T's (T's node, after the child's, is kept by every change: 5 in all)
//   child_drv      the same with cuGraphAddChildGraphNode, cuGraphExecChildGraphNodeSetParams
//   capset_rt      a kernel captured (<<<>>>) with buffer A and instantiated; its node found the way
//                  programs find it (cudaGraphGetNodes) and read (cudaGraphKernelNodeGetParams);
//                  the exec's node given B (cudaGraphExecKernelNodeSetParams), A freed, launched
//                  twice: nothing (the exec runs B); given C, C freed, launched twice: a use after
//                  free of C at each; the graph's node given a heap buffer
//                  (cudaGraphKernelNodeSetParams: checked when set), a second exec instantiated
//                  from the graph and launched once: the heap buffer again (issue 50: a captured
//                  node's handle)
//   capset_drv     the same through the driver API (cuLaunchKernel, cuGraphGetNodes,
//                  cuGraphKernelNodeGetParams, cuGraphExecKernelNodeSetParams, ...)
//   clone_rt       a kernel captured with buffer P, the graph cloned (cudaGraphClone) and the
//                  clone instantiated; P freed, launched twice: a use after free at each; the
//                  clone's node (cudaGraphNodeFindInClone) given a heap buffer: at the set and when
//                  an exec of the clone runs; an exec of the original (cudaGraphInstantiateWithFlags)
//                  runs P still: the use after free once more
//   clone_drv      the same with cuGraphClone, cuGraphNodeFindInClone
//   withparams_rt  a capture that fails first (a heap buffer's launch, found when captured, then a
//                  stream callback, which invalidates it: no graph); then a kernel captured with
//                  buffer P on the same stream, instantiated with cudaGraphInstantiateWithParams
//                  (uploaded to the stream); P freed, launched twice: a use after free at each,
//                  nothing of the failed capture
//   withparams_drv the same with cuGraphInstantiateWithParams
//   tograph_rt     a graph with a kernel node by hand on buffer P; a heap buffer's launch captured
//                  into that graph (cudaStreamBeginCaptureToGraph): found at capture, recorded as
//                  captured; P freed, the graph launched twice: both kernels at each launch
//   tograph_drv    the same with cuStreamBeginCaptureToGraph
//   cnodes_rt      copy and memset nodes (no kernel): a memcpy node (pinned -> buffer Q, 4096 bytes,
//                  cudaGraphAddMemcpyNode1D) and a memset node (Q, 1024 x 4 bytes,
//                  cudaGraphAddMemsetNode) made, the exec uploaded (cudaGraphUpload: nothing runs)
//                  and launched twice: nothing to say, 2 copies and 2 memsets done; the exec's
//                  copy given Q + 2048 (cudaGraphExecMemcpyNodeSetParams1D): out of bounds when
//                  set and at the next launch; the graph's memset given Q + 4000, 200 bytes
//                  (cudaGraphMemsetNodeSetParams): when set; the exec updated from the graph
//                  (its copy back to Q) and launched: the memset's at the launch; then a
//                  captured cudaMemcpyAsync's node (found with cudaGraphGetNodes) given Q + 2048
//                  in its exec: when set and at its launch ("oob" lines: VALUE what is wrong)
//   cnodes_drv     the same through cuGraphAddMemcpyNode, cuGraphAddMemsetNode, cuGraphUpload,
//                  cuGraphExecMemcpyNodeSetParams, cuGraphMemsetNodeSetParams, cuMemcpyHtoDAsync
//   snodes_rt      the other SetParams calls on the copy and memset nodes of cnodes_rt: the graph's
//                  copy node given Q + 2048 (cudaGraphMemcpyNodeSetParams1D: when set), then Q
//                  again (cudaGraphMemcpyNodeSetParams, 3D parameters: nothing); instantiated and
//                  launched; the exec's copy given Q + 2048 (cudaGraphExecMemcpyNodeSetParams):
//                  when set and at the launch; the exec's memset given Q + 4000, 200 bytes
//                  (cudaGraphExecMemsetNodeSetParams): when set, and at the launch with the copy
//   snodes_drv     the same through cuGraphMemcpyNodeSetParams (both changes),
//                  cuGraphExecMemcpyNodeSetParams and cuGraphExecMemsetNodeSetParams
//   cond_rt        the generic node calls (cudaGraphAddNode) for a memcpy node (pinned -> Q), a
//                  memset node (Q) and an IF/ELSE conditional node (size 2, CUDA 12.8: its
//                  handle's default 1) whose if body holds a kernel node on buffer P and whose
//                  else body one on a malloc'd host buffer HB; P freed, launched twice: both
//                  bodies' kernels checked at each launch (the device decides which body runs: a
//                  use after free and a host pointer, which is also checked when its node is
//                  added), not counted as launches; the copy and memset counted; the exec's memcpy
//                  node given Q + 2048 (cudaGraphExecNodeSetParams): out of bounds when set and
//                  at the third launch
//   cond_drv       the same with cuGraphConditionalHandleCreate, cuGraphAddNode, cuGraphExecNodeSetParams
//   fcopies_rt     copies and memsets of a freed device buffer (issue 50 slice 4): cudaMemcpy from it
//                  and to it, cudaMemsetAsync on it, a copy into a live buffer from it, cudaMemset,
//                  cudaMemcpy2D from it and cudaMemcpy2DAsync to it: a use after free naming it at
//                  each (not a direction mismatch); the buffer's address allocated again: a copy
//                  there is nothing
//   fcopies_drv    the same with cuMemcpyDtoH, cuMemcpyHtoD, cuMemsetD32Async, cuMemcpyDtoD,
//                  cuMemsetD8, cuMemcpy2D, cuMemcpy2DAsync
//   galloc_rt      a graph memory allocation node and a free node through the generic call
//                  (cudaGraphAddNode, types MemAlloc and MemFree), a kernel node by hand on the
//                  allocation between them; launched twice: each launch allocates (1 MiB), runs the
//                  kernel on live memory (nothing to say) and frees ("graph_alloc 2": allocations and
//                  frees the launches made)
//   galloc_drv     the same with cuGraphAddNode
//   calloc_rt      stream-ordered allocations captured into a graph (cudaMallocAsync 64 KiB and
//                  cudaMallocFromPoolAsync 128 KiB from the device's default pool, a kernel on the
//                  first, both freed with cudaFreeAsync, all on the capturing stream); launched
//                  twice: each launch allocates both and frees both ("graph_alloc 4"), its kernel
//                  on live memory (nothing to say)
//   calloc_drv     the same with cuMemAllocAsync, cuMemAllocFromPoolAsync, cuLaunchKernel, cuMemFreeAsync
//   drv_multi      cuLaunchCooperativeKernelMultiDevice over two devices (VRAMTRACE_SIM_DEVICES=2),
//                  each entry on its own device's stream: each entry is checked against its
//                  device (device 1's buffer in device 0's entry is another device's memory)
//   drv_multi64    the same over 64 devices (VRAMTRACE_SIM_DEVICES=64, the most devices the tracer
//                  follows): every entry is a launch; the 64th entry's host buffer is reported
#include <cooperative_groups.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

extern "C" __global__ void coop_scale(float *p, int n)
{
    if (n < 0) p[0] = 1.0f;
    cg::this_grid().sync();
}

// Never uses its pointer: no launch of it is a bug, whatever it is given.
extern "C" __global__ void ignore_ptr(float *p, int n) {}

static unsigned long long u(const void *p) { return (unsigned long long)(uintptr_t)p; }

static void expect(const char *kind, const void *value, const void *alloc, size_t size, int dev)
{
    if (alloc) printf("expect %s error coop_scale 0 0 0x%llx 0x%llx %zu device %d\n", kind, u(value), u(alloc), size, dev);
    else printf("expect %s error coop_scale 0 0 0x%llx - - - %d\n", kind, u(value), dev);
}

// Launches p through the mode's path (one device); returns the call's result.
static int launch_one(const char *m, float *p)
{
    int n = 1;
    void *args[] = { &p, &n };
    dim3 g(2), b(32);
    if (!strcmp(m, "chevron")) {
        printf("launch __cudaLaunchKernel 0 -\n");
        coop_scale<<<g, b>>>(p, n);
        return (int)cudaGetLastError();
    }
    if (!strcmp(m, "rt_launch")) {
        printf("launch cudaLaunchKernel 0 -\n");
        return (int)cudaLaunchKernel((const void *)coop_scale, g, b, args, 0, 0);
    }
    if (!strcmp(m, "rt_coop")) {
        printf("launch cudaLaunchCooperativeKernel 0 -\n");
        return (int)cudaLaunchCooperativeKernel((const void *)coop_scale, g, b, args, 0, 0);
    }
    if (!strcmp(m, "rt_coop_tmpl")) {
        printf("launch cudaLaunchCooperativeKernel 0 -\n");
        return (int)cudaLaunchCooperativeKernel(coop_scale, g, b, args);
    }
    if (!strcmp(m, "rt_ex_coop")) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeCooperative;
        attr[0].val.cooperative = 1;
        cfg.gridDim = g;
        cfg.blockDim = b;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        printf("launch cudaLaunchKernelExC 0 -\n");
        return (int)cudaLaunchKernelEx(&cfg, coop_scale, p, n);
    }
    cudaFunction_t fn;
    int r = (int)cudaGetFuncBySymbol(&fn, (const void *)coop_scale);
    if (r) return r;
    if (!strcmp(m, "drv_coop")) {
        printf("launch cuLaunchCooperativeKernel 0 -\n");
        return (int)cuLaunchCooperativeKernel((CUfunction)fn, g.x, 1, 1, b.x, 1, 1, 0, NULL, args);
    }
    if (!strcmp(m, "drv_ex_coop")) {
        CUlaunchAttribute attr[1];
        memset(attr, 0, sizeof attr);
        attr[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr[0].value.cooperative = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = g.x; cfg.gridDimY = 1; cfg.gridDimZ = 1;
        cfg.blockDimX = b.x; cfg.blockDimY = 1; cfg.blockDimZ = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        printf("launch cuLaunchKernelEx 0 -\n");
        return (int)cuLaunchKernelEx(&cfg, (CUfunction)fn, args, NULL);
    }
    fprintf(stderr, "launch_paths: unknown mode %s\n", m);
    exit(2);
}

// Two devices, one entry each on its own device's stream: p0 goes to device 0's entry, p1 to
// device 1's.
enum { MULTI_MAX = 64 };

// One cooperative launch of coop_scale over devices 0..nd-1, entry d given p[d] on device d's stream.
static int launch_multi(int nd, CUfunction *f, cudaStream_t *s, float **p)
{
    int n = 1;
    void *args[MULTI_MAX][2];
    CUDA_LAUNCH_PARAMS e[MULTI_MAX];
    for (int d = 0; d < nd; d++) {
        args[d][0] = &p[d];
        args[d][1] = &n;
        e[d].function = f[d];
        e[d].gridDimX = 2; e[d].gridDimY = 1; e[d].gridDimZ = 1;
        e[d].blockDimX = 32; e[d].blockDimY = 1; e[d].blockDimZ = 1;
        e[d].sharedMemBytes = 0;
        e[d].hStream = (CUstream)s[d];
        e[d].kernelParams = args[d];
        printf("launch cuLaunchCooperativeKernelMultiDevice %d -\n", d);
    }
    return (int)cuLaunchCooperativeKernelMultiDevice(e, (unsigned)nd, 0);
}

// nd devices (VRAMTRACE_SIM_DEVICES=nd): all live, a host buffer in the last entry, a freed
// buffer in the first, entries 0 and 1 given each other's buffers.
static int multi(int nd)
{
    CUfunction f[MULTI_MAX];
    cudaStream_t s[MULTI_MAX];
    float *live[MULTI_MAX], *p[MULTI_MAX], *freed;
    for (int d = 0; d < nd; d++) {
        cudaSetDevice(d);
        cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking);
        cudaMalloc(&live[d], 4096);
        cudaFunction_t fn;
        printf("rc getfunc%d %d\n", d, (int)cudaGetFuncBySymbol(&fn, (const void *)coop_scale));
        f[d] = (CUfunction)fn;
    }
    cudaSetDevice(0);
    cudaMalloc(&freed, 4096);
    cudaFree(freed);
    float *h = (float *)malloc(4096);
    printf("rc live %d\n", launch_multi(nd, f, s, live));
    memcpy(p, live, sizeof live);
    p[nd - 1] = h;
    expect("host_pointer", h, NULL, 0, nd - 1);         // the last device's entry
    printf("rc host %d\n", launch_multi(nd, f, s, p));
    memcpy(p, live, sizeof live);
    p[0] = freed;
    expect("use_after_free", freed, freed, 4096, 0);    // device 0's entry
    printf("rc freed %d\n", launch_multi(nd, f, s, p));
    // Each buffer in the other device's entry: both are another device's memory (no peer access)
    memcpy(p, live, sizeof live);
    p[0] = live[1];
    p[1] = live[0];
    expect("wrong_device", live[1], live[1], 4096, 0);
    expect("wrong_device", live[0], live[0], 4096, 1);
    printf("rc swapped %d\n", launch_multi(nd, f, s, p));
    int rc = (int)cudaDeviceSynchronize();
    free(h);
    return rc;
}

// Capture, replay REPLAYS times, free the live buffer, replay once more.
static int graph(int drv)
{
    enum { REPLAYS = 10, N = 4096 };
    float *live, *freed_later, *h = (float *)malloc(N), *q;
    void *pinned;
    cudaMalloc(&live, N);
    cudaMalloc(&q, N);                       // the copy's and memset's target: stays live
    cudaMallocHost(&pinned, N);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaFunction_t fn;
    cudaGetFuncBySymbol(&fn, (const void *)coop_scale);
    int n = 1;
    const char *launch_api = drv ? "cuLaunchKernel" : "__cudaLaunchKernel", *replay_api = drv ? "cuGraphLaunch" : "cudaGraphLaunch";
    printf("rc begin %d\n", drv ? (int)cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL)
                                : (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    if (drv) {
        printf("rc copy %d\n", (int)cuMemcpyHtoDAsync((CUdeviceptr)q, pinned, N, (CUstream)s));
        printf("rc set %d\n", (int)cuMemsetD32Async((CUdeviceptr)q, 0, N / 4, (CUstream)s));
    } else {
        printf("rc copy %d\n", (int)cudaMemcpyAsync(q, pinned, N, cudaMemcpyHostToDevice, s));
        printf("rc set %d\n", (int)cudaMemsetAsync(q, 0, N, s));
    }
    float *ptrs[2] = { live, h };
    expect("host_pointer", h, NULL, 0, 0);   // at capture; the replays repeat it (the same finding)
    for (int i = 0; i < 2; i++) {
        printf("launch %s 0 captured\n", launch_api);
        if (drv) {
            void *args[] = { &ptrs[i], &n };
            printf("rc launch %d\n", (int)cuLaunchKernel((CUfunction)fn, 2, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL));
        } else {
            coop_scale<<<2, 32, 0, s>>>(ptrs[i], n);
            printf("rc launch %d\n", (int)cudaGetLastError());
        }
    }
    cudaGraph_t g;
    cudaGraphExec_t e;
    printf("rc end %d\n", drv ? (int)cuStreamEndCapture((CUstream)s, (CUgraph *)&g) : (int)cudaStreamEndCapture(s, &g));
    printf("rc instantiate %d\n", drv ? (int)cuGraphInstantiate((CUgraphExec *)&e, (CUgraph)g, 0)
                                      : (int)cudaGraphInstantiate(&e, g, 0));
    for (int r = 0; r <= REPLAYS; r++) {
        if (r == REPLAYS) {                   // the live buffer freed between capture and this replay
            freed_later = live;
            cudaFree(live);
            expect("use_after_free", freed_later, freed_later, N, 0);
        }
        for (int i = 0; i < 2; i++) printf("launch %s 0 graph\n", replay_api);
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s) : (int)cudaGraphLaunch(e, s));
    }
    int rc = (int)cudaStreamSynchronize(s);
    // every replay did one copy, one memset and two launches; the capture did none of them
    printf("report launches %d\nreport graph_launches %d\nreport graph_copies %d\nreport graph_sets %d\n"
           "report captured %d\nreport h2d_count %d\nreport set_count %d\n",
           2 * (REPLAYS + 1), 2 * (REPLAYS + 1), REPLAYS + 1, REPLAYS + 1, 4, REPLAYS + 1, REPLAYS + 1);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    cudaFree(q);
    cudaFreeHost(pinned);
    free(h);
    return rc;
}

static int extra(void)
{
    float *h = (float *)malloc(4096);
    int n = 1;
    unsigned char buf[16];
    memcpy(buf, &h, 8);
    memcpy(buf + 8, &n, 4);
    memset(buf + 12, 0, 4);
    size_t len = sizeof buf;
    void *cfg[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &len, CU_LAUNCH_PARAM_END };
    cudaFunction_t fs, fi;
    cudaGetFuncBySymbol(&fs, (const void *)coop_scale);
    cudaGetFuncBySymbol(&fi, (const void *)ignore_ptr);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    expect("host_pointer", h, NULL, 0, 0);   // coop_scale: directly, at capture and at each replay
#ifdef __CUDACC_RDC__
    // -rdc=true images carry no PTX: nothing tells that ignore_ptr never uses its pointer, so
    // every top-level pointer argument is checked (docs/detection.md)
    printf("expect host_pointer error ignore_ptr 0 0 0x%llx - - - 0\n", u(h));
#endif
    printf("launch cuLaunchKernel 0 -\n");
    printf("rc scale %d\n", (int)cuLaunchKernel((CUfunction)fs, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, cfg));
    printf("launch cuLaunchKernel 0 -\n");
    printf("rc ignore %d\n", (int)cuLaunchKernel((CUfunction)fi, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, cfg));
    printf("rc begin %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 2; i++) {
        printf("launch cuLaunchKernel 0 captured\n");
        printf("rc capture %d\n", (int)cuLaunchKernel((CUfunction)(i ? fi : fs), 2, 1, 1, 32, 1, 1, 0, (CUstream)s, NULL, cfg));
    }
    cudaGraph_t g;
    cudaGraphExec_t e;
    printf("rc end %d\n", (int)cudaStreamEndCapture(s, &g));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    for (int r = 0; r < 2; r++) {
        printf("launch cudaGraphLaunch 0 graph\nlaunch cudaGraphLaunch 0 graph\n");
        printf("rc replay %d\n", (int)cudaGraphLaunch(e, s));
    }
    printf("count host_pointer %d\n", 1 + 1 + 2);   // coop_scale's
#ifdef __CUDACC_RDC__
    printf("count host_pointer %d\n", 1 + 1 + 2);   // ignore_ptr's
#endif
    int rc = (int)cudaStreamSynchronize(s);
    free(h);
    return rc;
}

static int pending(void)
{
    float *live, *none;
    cudaMalloc(&live, 4096);
    int first = (int)cudaMalloc(&none, (size_t)1 << 50);   // cudaErrorMemoryAllocation, left pending
    int n = 1;
    void *args[] = { &live, &n };
    printf("launch cudaLaunchKernel 0 -\n");
    printf("rc launch %d\n", (int)cudaLaunchKernel((const void *)coop_scale, dim3(2), dim3(32), args, 0, 0));
    int last = (int)cudaGetLastError();
    printf("pending %d %d\n", first, last);
    printf("expect_pending %d %d\n", (int)cudaErrorMemoryAllocation, (int)cudaErrorMemoryAllocation);
    return (int)cudaDeviceSynchronize();
}

static int join(void)
{
    enum { REPLAYS = 3, N = 4096 };
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEvent_t fork, back;
    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&back, cudaEventDisableTiming);
    void *pinned;
    cudaMallocHost(&pinned, N);
    float *ga = NULL;
    printf("rc begin %d\n", (int)cuStreamBeginCapture((CUstream)s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    printf("rc fork_record %d\n", (int)cuEventRecord((CUevent)fork, (CUstream)s1));
    printf("rc fork_wait %d\n", (int)cuStreamWaitEvent((CUstream)s2, (CUevent)fork, 0));   // s2 joins
    printf("rc alloc %d\n", (int)cudaMallocAsync(&ga, N, s2));    // exists only while the graph runs
    printf("rc copy %d\n", (int)cuMemcpyHtoDAsync((CUdeviceptr)ga, pinned, N, (CUstream)s2));
    printf("launch __cudaLaunchKernel 0 captured\n");
    coop_scale<<<2, 32, 0, s2>>>(ga, 1);
    printf("rc launch %d\n", (int)cudaGetLastError());
    printf("rc free %d\n", (int)cudaFreeAsync(ga, s2));
    printf("rc back_record %d\n", (int)cuEventRecord((CUevent)back, (CUstream)s2));
    printf("rc back_wait %d\n", (int)cuStreamWaitEvent((CUstream)s1, (CUevent)back, 0));
    cudaGraph_t g;
    cudaGraphExec_t e;
    printf("rc end %d\n", (int)cuStreamEndCapture((CUstream)s1, (CUgraph *)&g));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    for (int r = 0; r < REPLAYS; r++) {
        printf("launch cudaGraphLaunch 0 graph\n");
        printf("rc replay %d\n", (int)cudaGraphLaunch(e, s1));
    }
    int rc = (int)cudaStreamSynchronize(s1);
    printf("report launches %d\nreport graph_launches %d\nreport graph_copies %d\nreport graph_sets 0\n"
           "report captured 2\nreport h2d_count %d\nreport set_count 0\n", REPLAYS, REPLAYS, REPLAYS, REPLAYS);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    cudaFreeHost(pinned);
    return rc;
}

static int generic_nodes; // gnodes_*: the generic node calls

static void drv_kernel_params(CUDA_KERNEL_NODE_PARAMS *kp, void **args)
{
    memset(kp, 0, sizeof *kp);
    cudaFunction_t fn;
    cudaGetFuncBySymbol(&fn, (const void *)coop_scale);
    kp->func = (CUfunction)fn;
    kp->gridDimX = 2; kp->gridDimY = 1; kp->gridDimZ = 1;
    kp->blockDimX = 32; kp->blockDimY = 1; kp->blockDimZ = 1;
    kp->kernelParams = args;
}

static void rt_generic_params(cudaGraphNodeParams *np, void **args)
{
    np->type = cudaGraphNodeTypeKernel;
    np->kernel.func = (void *)coop_scale;
    np->kernel.gridDim = dim3(2);
    np->kernel.blockDim = dim3(32);
    np->kernel.kernelParams = args;
}

static void drv_generic_params(CUgraphNodeParams *np, void **args)
{
    memset(np, 0, sizeof *np);
    np->type = CU_GRAPH_NODE_TYPE_KERNEL;
    drv_kernel_params((CUDA_KERNEL_NODE_PARAMS *)&np->kernel, args);
}

// Kernel node parameters, through the runtime or the driver API.
static int add_node(int drv, cudaGraphNode_t *node, cudaGraph_t g, float **p, int *n)
{
    void *args[] = { p, n };
    if (generic_nodes && drv) {
        CUgraphNodeParams np;
        drv_generic_params(&np, args);
        return (int)cuGraphAddNode((CUgraphNode *)node, (CUgraph)g, NULL, NULL, 0, &np);
    }
    if (generic_nodes) { // (its union holds dim3s: no default constructor, so not on the stack)
        cudaGraphNodeParams *np = (cudaGraphNodeParams *)calloc(1, sizeof *np);
        rt_generic_params(np, args);
        int r = (int)cudaGraphAddNode(node, g, NULL, NULL, 0, np);
        free(np);
        return r;
    }
    if (drv) {
        CUDA_KERNEL_NODE_PARAMS kp;
        drv_kernel_params(&kp, args);
        return (int)cuGraphAddKernelNode((CUgraphNode *)node, (CUgraph)g, NULL, 0, &kp);
    }
    cudaKernelNodeParams kp = {};
    kp.func = (void *)coop_scale;
    kp.gridDim = dim3(2);
    kp.blockDim = dim3(32);
    kp.kernelParams = args;
    return (int)cudaGraphAddKernelNode(node, g, NULL, 0, &kp);
}

// which: 0 the graph's node, 1 the exec's
static int set_node(int drv, int which, cudaGraphExec_t e, cudaGraphNode_t node, float **p, int *n)
{
    void *args[] = { p, n };
    if (generic_nodes && drv) {
        CUgraphNodeParams np;
        drv_generic_params(&np, args);
        return which ? (int)cuGraphExecNodeSetParams((CUgraphExec)e, (CUgraphNode)node, &np)
                     : (int)cuGraphNodeSetParams((CUgraphNode)node, &np);
    }
    if (generic_nodes) {
        cudaGraphNodeParams *np = (cudaGraphNodeParams *)calloc(1, sizeof *np);
        rt_generic_params(np, args);
        int r = which ? (int)cudaGraphExecNodeSetParams(e, node, np) : (int)cudaGraphNodeSetParams(node, np);
        free(np);
        return r;
    }
    if (drv) {
        CUDA_KERNEL_NODE_PARAMS kp;
        drv_kernel_params(&kp, args);
        return which ? (int)cuGraphExecKernelNodeSetParams((CUgraphExec)e, (CUgraphNode)node, &kp)
                     : (int)cuGraphKernelNodeSetParams((CUgraphNode)node, &kp);
    }
    cudaKernelNodeParams kp = {};
    kp.func = (void *)coop_scale;
    kp.gridDim = dim3(2);
    kp.blockDim = dim3(32);
    kp.kernelParams = args;
    return which ? (int)cudaGraphExecKernelNodeSetParams(e, node, &kp) : (int)cudaGraphKernelNodeSetParams(node, &kp);
}

// A child graph node holding G, by the generic call (CUDA 12.2+)
static int add_child_generic(int drv, cudaGraphNode_t *node, cudaGraph_t parent, cudaGraph_t g)
{
    if (drv) {
        CUgraphNodeParams np;
        memset(&np, 0, sizeof np);
        np.type = CU_GRAPH_NODE_TYPE_GRAPH;
        np.graph.graph = (CUgraph)g;
        return (int)cuGraphAddNode((CUgraphNode *)node, (CUgraph)parent, NULL, NULL, 0, &np);
    }
    cudaGraphNodeParams *np = (cudaGraphNodeParams *)calloc(1, sizeof *np); // (no default constructor)
    np->type = cudaGraphNodeTypeGraph;
    np->graph.graph = g;
    int r = (int)cudaGraphAddNode(node, parent, NULL, NULL, 0, np);
    free(np);
    return r;
}

static int child(int drv)
{
    float *p, *q, *t, *h = (float *)malloc(4096);
    int n = 1;
    cudaMalloc(&p, 4096);
    cudaMalloc(&q, 4096);
    cudaMalloc(&t, 4096);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t inner, outer, live_child, heap_child;
    cudaGraphExec_t e;
    cudaGraphNode_t kn, cn;
    cudaGraphCreate(&inner, 0);
    cudaGraphCreate(&outer, 0);
    cudaGraphCreate(&live_child, 0);
    cudaGraphCreate(&heap_child, 0);
    printf("rc add %d\n", add_node(drv, &kn, inner, &p, &n));
    printf("rc child %d\n", drv ? (int)cuGraphAddChildGraphNode((CUgraphNode *)&cn, (CUgraph)outer, NULL, 0, (CUgraph)inner)
                                : (int)cudaGraphAddChildGraphNode(&cn, outer, NULL, 0, inner));
    // a kernel node on t after the child node, in a second child graph added by the generic call
    // (cudaGraphAddNode / cuGraphAddNode, type graph): every change of the first child keeps it
    cudaGraph_t tail;
    cudaGraphNode_t tn;
    cudaGraphCreate(&tail, 0);
    printf("rc add %d\n", add_node(drv, &kn, tail, &t, &n));
    printf("rc addchild %d\n", add_child_generic(drv, &tn, outer, tail));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, outer, 0));
    cudaFree(p);
    cudaFree(t);
    expect("use_after_free", p, p, 4096, 0); // (T's, at the same kernel's argument, is counted with it)
#define LAUNCH(times) for (int r_ = 0; r_ < (times); r_++) { /* a launch record per kernel node: the child's, T's */ \
        for (int k_ = 0; k_ < 2; k_++) printf("launch %s 0 graph\n", drv ? "cuGraphLaunch" : "cudaGraphLaunch"); \
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s) : (int)cudaGraphLaunch(e, s)); }
#define SET_CHILD(c) printf("rc setchild %d\n", drv ? (int)cuGraphExecChildGraphNodeSetParams((CUgraphExec)e, (CUgraphNode)cn, (CUgraph)(c)) \
                                                      : (int)cudaGraphExecChildGraphNodeSetParams(e, cn, c))
    LAUNCH(2)
    // the exec's child node takes a graph of the same shape on a live buffer: nothing more
    // (the freed one is gone from the exec), then one on a heap buffer: at its node's making and
    // at the launch
    printf("rc add %d\n", add_node(drv, &kn, live_child, &q, &n));
    SET_CHILD(live_child);
    LAUNCH(2)
    expect("host_pointer", h, NULL, 0, 0);
    printf("rc add %d\n", add_node(drv, &kn, heap_child, &h, &n));
    SET_CHILD(heap_child);
    LAUNCH(1)
#undef LAUNCH
#undef SET_CHILD
    printf("count use_after_free 7\ncount host_pointer 2\n"); // 2 launches x (the child's p, T), then T at 3
    printf("report launches 10\nreport graph_launches 10\nreport graph_copies 0\nreport graph_sets 0\n"
           "report captured 0\nreport h2d_count 0\nreport set_count 0\n");
    int rc = (int)cudaStreamSynchronize(s);
    cudaGraphExecDestroy(e);
    cudaFree(q);
    free(h);
    return rc;
}

static int nodes(int drv)
{
    float *live, *freed, *h = (float *)malloc(4096);
    int n = 1;
    cudaMalloc(&live, 4096);
    cudaMalloc(&freed, 4096);
    cudaFree(freed);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaGraphNode_t node;
    cudaGraphCreate(&g, 0);
    const char *replay_api = drv ? "cuGraphLaunch" : "cudaGraphLaunch";
    int launches = 0;
#define LAUNCH(times) for (int i_ = 0; i_ < (times); i_++, launches++) { \
        printf("launch %s 0 graph\n", replay_api); \
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s) : (int)cudaGraphLaunch(e, s)); }
    printf("rc add %d\n", add_node(drv, &node, g, &live, &n));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    LAUNCH(2)                                           // live: nothing
    expect("host_pointer", h, NULL, 0, 0);
    printf("rc exec_set %d\n", set_node(drv, 1, e, node, &h, &n));   // checked now ...
    LAUNCH(2)                                           // ... and at each launch
    expect("use_after_free", freed, freed, 4096, 0);
    printf("rc graph_set %d\n", set_node(drv, 0, e, node, &freed, &n));
    LAUNCH(1)                                           // the exec still has the heap buffer
    cudaGraphExecUpdateResultInfo info;
    printf("rc update %d\n", drv ? (int)cuGraphExecUpdate((CUgraphExec)e, (CUgraph)g, (CUgraphExecUpdateResultInfo *)&info)
                                 : (int)cudaGraphExecUpdate(e, g, &info));
    LAUNCH(1)                                           // now the freed buffer
#undef LAUNCH
    int rc = (int)cudaStreamSynchronize(s);
    printf("count host_pointer %d\ncount use_after_free %d\n", 1 + 2 + 1, 1 + 1);
    printf("report launches %d\nreport graph_launches %d\nreport graph_copies 0\nreport graph_sets 0\n"
           "report captured 0\nreport h2d_count 0\nreport set_count 0\n", launches, launches);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    cudaFree(live);
    free(h);
    return rc;
}

// The kernel node's parameters with argument 0 = *p: the node's own read back (its kernel and
// geometry as captured), given a new argument array as the documentation asks (the node's own
// array and values are not to be changed).
struct node_params { cudaKernelNodeParams rt; CUDA_KERNEL_NODE_PARAMS drv; void *args[2]; };
static int get_params(int drv, cudaGraphNode_t node, struct node_params *np, float *expect_arg)
{
    void **kp;
    int r, geometry;
    if (drv) {
        r = (int)cuGraphKernelNodeGetParams((CUgraphNode)node, &np->drv);
        kp = np->drv.kernelParams;
        geometry = np->drv.gridDimX == 2 && np->drv.blockDimX == 32;
    } else {
        r = (int)cudaGraphKernelNodeGetParams(node, &np->rt);
        kp = np->rt.kernelParams;
        geometry = np->rt.gridDim.x == 2 && np->rt.blockDim.x == 32 && np->rt.func == (void *)coop_scale;
    }
    printf("rc getparams %d\n", r);
    printf("rc nodeargs %d\n", !(r == 0 && kp && *(float **)kp[0] == expect_arg && geometry));
    if (drv) np->drv.kernelParams = np->args;
    else np->rt.kernelParams = np->args;
    return r;
}

static int set_captured(int drv, cudaGraphExec_t e, cudaGraphNode_t node, struct node_params *np, float **p, int *n)
{
    np->args[0] = p;
    np->args[1] = n;
    if (drv) return e ? (int)cuGraphExecKernelNodeSetParams((CUgraphExec)e, (CUgraphNode)node, &np->drv)
                      : (int)cuGraphKernelNodeSetParams((CUgraphNode)node, &np->drv);
    return e ? (int)cudaGraphExecKernelNodeSetParams(e, node, &np->rt) : (int)cudaGraphKernelNodeSetParams(node, &np->rt);
}

static int capset(int drv)
{
    float *a, *b, *c, *h = (float *)malloc(4096);
    int n = 1;
    cudaMalloc(&a, 4096);
    cudaMalloc(&b, 4096);
    cudaMalloc(&c, 4096);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaFunction_t fn;
    cudaGetFuncBySymbol(&fn, (const void *)coop_scale);
    const char *replay_api = drv ? "cuGraphLaunch" : "cudaGraphLaunch";
    cudaGraph_t g;
    cudaGraphExec_t e, e2;
    printf("rc begin %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    printf("launch %s 0 captured\n", drv ? "cuLaunchKernel" : "__cudaLaunchKernel");
    if (drv) {
        void *args[] = { &a, &n };
        printf("rc launch %d\n", (int)cuLaunchKernel((CUfunction)fn, 2, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL));
    } else {
        coop_scale<<<2, 32, 0, s>>>(a, n);
        printf("rc launch %d\n", (int)cudaGetLastError());
    }
    printf("rc end %d\n", (int)cudaStreamEndCapture(s, &g));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    cudaGraphNode_t node = NULL;
    size_t num = 1;
    int r = drv ? (int)cuGraphGetNodes((CUgraph)g, (CUgraphNode *)&node, &num) : (int)cudaGraphGetNodes(g, &node, &num);
    printf("rc getnodes %d\n", r || num != 1);
    struct node_params np;
    get_params(drv, node, &np, a);
#define LAUNCH(x, times) for (int i_ = 0; i_ < (times); i_++) { \
        printf("launch %s 0 graph\n", replay_api); \
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)(x), (CUstream)s) : (int)cudaGraphLaunch(x, s)); }
    printf("rc execset %d\n", set_captured(drv, e, node, &np, &b, &n));
    cudaFree(a);                                        // the exec no longer uses it
    LAUNCH(e, 2)
    printf("rc execset %d\n", set_captured(drv, e, node, &np, &c, &n));
    cudaFree(c);
    expect("use_after_free", c, c, 4096, 0);
    LAUNCH(e, 2)
    expect("host_pointer", h, NULL, 0, 0);
    printf("rc graphset %d\n", set_captured(drv, NULL, node, &np, &h, &n));   // checked now ...
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e2, g, 0));
    LAUNCH(e2, 1)                                       // ... and when the new exec runs
#undef LAUNCH
    int rc = (int)cudaStreamSynchronize(s);
    printf("count use_after_free 2\ncount host_pointer 2\n");
    printf("report launches 5\nreport graph_launches 5\nreport graph_copies 0\nreport graph_sets 0\n"
           "report captured 1\nreport h2d_count 0\nreport set_count 0\n");
    cudaGraphExecDestroy(e2);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    cudaFree(b);
    free(h);
    return rc;
}

// One kernel launch on P captured into S's capture (begun by the caller).
static void capture_one(int drv, cudaStream_t s, float **p, int *n)
{
    printf("launch %s 0 captured\n", drv ? "cuLaunchKernel" : "__cudaLaunchKernel");
    if (drv) {
        cudaFunction_t fn;
        cudaGetFuncBySymbol(&fn, (const void *)coop_scale);
        void *args[] = { p, n };
        printf("rc launch %d\n", (int)cuLaunchKernel((CUfunction)fn, 2, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL));
    } else {
        coop_scale<<<2, 32, 0, s>>>(*p, *n);
        printf("rc launch %d\n", (int)cudaGetLastError());
    }
}

static void CUDART_CB rt_callback(cudaStream_t, cudaError_t, void *) {}
static void CUDA_CB drv_callback(CUstream, CUresult, void *) {}

// A graph of one kernel on P, captured.
static cudaGraph_t captured_graph(int drv, cudaStream_t s, float **p, int *n)
{
    cudaGraph_t g = NULL;
    printf("rc begin %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    capture_one(drv, s, p, n);
    printf("rc end %d\n", (int)cudaStreamEndCapture(s, &g));
    return g;
}

// clone_*, withparams_*, tograph_*: graphs made other ways than instantiating the captured one.
static int made_graphs(int drv, const char *m)
{
    float *p, *h = (float *)malloc(4096);
    int n = 1, launches = 0, captured = 1;
    cudaMalloc(&p, 4096);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const char *replay_api = drv ? "cuGraphLaunch" : "cudaGraphLaunch";
    cudaGraphExec_t e;
#define LAUNCH(x, kernels, times) for (int i_ = 0; i_ < (times); i_++) { \
        for (int k_ = 0; k_ < (kernels); k_++, launches++) printf("launch %s 0 graph\n", replay_api); \
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)(x), (CUstream)s) : (int)cudaGraphLaunch(x, s)); }
    if (!strncmp(m, "clone_", 6)) {
        cudaGraph_t g = captured_graph(drv, s, &p, &n), gc = NULL;
        printf("rc clone %d\n", drv ? (int)cuGraphClone((CUgraph *)&gc, (CUgraph)g) : (int)cudaGraphClone(&gc, g));
        cudaGraphNode_t node = NULL, nc = NULL;
        size_t num = 1;
        printf("rc getnodes %d\n", (int)cudaGraphGetNodes(g, &node, &num) || num != 1);
        printf("rc findinclone %d\n", drv ? (int)cuGraphNodeFindInClone((CUgraphNode *)&nc, (CUgraphNode)node, (CUgraph)gc)
                                          : (int)cudaGraphNodeFindInClone(&nc, node, gc));
        printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, gc, 0));
        cudaFree(p);
        expect("use_after_free", p, p, 4096, 0);
        LAUNCH(e, 1, 2)                                 // the clone's copy of the node: P, freed
        struct node_params np;
        get_params(drv, nc, &np, p);
        expect("host_pointer", h, NULL, 0, 0);
        printf("rc cloneset %d\n", set_captured(drv, NULL, nc, &np, &h, &n));   // the clone's node only
        cudaGraphExec_t e2, e3;
        printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e2, gc, 0));
        LAUNCH(e2, 1, 1)                                // the heap buffer
        // (instantiated as CUDA 11.4+ programs may: cudaGraphInstantiateWithFlags)
        printf("rc instantiate %d\n", (int)cudaGraphInstantiateWithFlags(&e3, g, 0));
        LAUNCH(e3, 1, 1)                                // the original still runs P
        printf("count use_after_free 3\ncount host_pointer 2\n");
    } else if (!strncmp(m, "withparams_", 11)) {
        // first a capture on the same stream that fails: the heap buffer's launch captured (found
        // then), then a stream callback, which CUDA cannot capture: the capture is invalidated and
        // ends with no graph. Nothing of it may reach the next capture's graph.
        cudaGraph_t bad = NULL;
        printf("rc begin %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        expect("host_pointer", h, NULL, 0, 0);
        capture_one(drv, s, &h, &n);
        captured++;
        printf("err callback %d\n", drv ? (int)cuStreamAddCallback((CUstream)s, drv_callback, NULL, 0)
                                        : (int)cudaStreamAddCallback(s, rt_callback, NULL, 0));
        int ended = drv ? (int)cuStreamEndCapture((CUstream)s, (CUgraph *)&bad) : (int)cudaStreamEndCapture(s, &bad);
        printf("err end %d %d\n", ended, bad != NULL);
        cudaGetLastError();
        cudaGraph_t g = captured_graph(drv, s, &p, &n);
        cudaGraphInstantiateParams ip = {};
        ip.flags = cudaGraphInstantiateFlagUpload;
        ip.uploadStream = s;
        printf("rc instantiate %d\n", drv ? (int)cuGraphInstantiateWithParams((CUgraphExec *)&e, (CUgraph)g, (CUDA_GRAPH_INSTANTIATE_PARAMS *)&ip)
                                          : (int)cudaGraphInstantiateWithParams(&e, g, &ip));
        printf("rc instantiate_result %d\n", (int)ip.result_out);
        cudaFree(p);
        expect("use_after_free", p, p, 4096, 0);
        LAUNCH(e, 1, 2)
        printf("count host_pointer 1\ncount use_after_free 2\n");
    } else {                                            // tograph_*
        cudaGraph_t g, out = NULL;
        cudaGraphNode_t kn;
        cudaGraphCreate(&g, 0);
        printf("rc add %d\n", add_node(drv, &kn, g, &p, &n));
        printf("rc begin %d\n", drv ? (int)cuStreamBeginCaptureToGraph((CUstream)s, (CUgraph)g, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL)
                                    : (int)cudaStreamBeginCaptureToGraph(s, g, NULL, NULL, 0, cudaStreamCaptureModeGlobal));
        expect("host_pointer", h, NULL, 0, 0);          // at capture ...
        capture_one(drv, s, &h, &n);
        printf("rc end %d\n", (int)cudaStreamEndCapture(s, &out));
        printf("rc samegraph %d\n", out != g);
        printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
        cudaFree(p);
        expect("use_after_free", p, p, 4096, 0);
        LAUNCH(e, 2, 2)                                 // ... and at each launch, with the node by hand
        printf("count host_pointer 3\ncount use_after_free 2\n");
    }
#undef LAUNCH
    printf("report launches %d\nreport graph_launches %d\nreport graph_copies 0\nreport graph_sets 0\n"
           "report captured %d\nreport h2d_count 0\nreport set_count 0\n", launches, launches, captured);
    int rc = (int)cudaStreamSynchronize(s);
    free(h);
    return rc;
}

// A finding of a copy or memset at VALUE inside Q (4096 bytes), as the matrix prints findings.
static void expect_oob(const void *value, const void *q)
{
    printf("expect oob_copy error - - - 0x%llx 0x%llx 4096 device 0\n", u(value), u(q));
}

static CUDA_MEMCPY3D h2d_params(void *dst, const void *src, size_t n)
{
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = (CUdeviceptr)dst;
    c.WidthInBytes = n;
    c.Height = c.Depth = 1;
    return c;
}

/* What copy_nodes and set_nodes start from: buffer Q (4096 bytes, device), pinned HP, a stream,
 * the current context, and a graph with a memcpy node (HP -> Q, 4096 bytes) and a memset node
 * (Q, 1024 x 4 bytes), added through the runtime or the driver; mp and dmp are the memset's
 * parameters, for the callers to change. */
struct copy_set_graph {
    char *q;
    void *hp;
    cudaStream_t s;
    CUcontext ctx;
    cudaGraph_t g;
    cudaGraphNode_t cn, sn;
    cudaMemsetParams mp;
    CUDA_MEMSET_NODE_PARAMS dmp;
};
static struct copy_set_graph copy_set_graph(int drv)
{
    struct copy_set_graph x = {};
    cudaMalloc(&x.q, 4096);
    cudaMallocHost(&x.hp, 4096);
    cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking);
    cuCtxGetCurrent(&x.ctx);
    cudaGraphCreate(&x.g, 0);
    CUDA_MEMCPY3D c3 = h2d_params(x.q, x.hp, 4096);
    x.mp.dst = x.q; x.mp.value = 0; x.mp.elementSize = 4; x.mp.width = 1024; x.mp.height = 1;
    x.dmp = CUDA_MEMSET_NODE_PARAMS{ (CUdeviceptr)x.q, 0, 0, 4, 1024, 1 };
    printf("rc addcopy %d\n", drv ? (int)cuGraphAddMemcpyNode((CUgraphNode *)&x.cn, (CUgraph)x.g, NULL, 0, &c3, x.ctx)
                                  : (int)cudaGraphAddMemcpyNode1D(&x.cn, x.g, NULL, 0, x.q, x.hp, 4096, cudaMemcpyHostToDevice));
    printf("rc addset %d\n", drv ? (int)cuGraphAddMemsetNode((CUgraphNode *)&x.sn, (CUgraph)x.g, NULL, 0, &x.dmp, x.ctx)
                                 : (int)cudaGraphAddMemsetNode(&x.sn, x.g, NULL, 0, &x.mp));
    return x;
}

static int copy_nodes(int drv)
{
    struct copy_set_graph x = copy_set_graph(drv);
    CUDA_MEMCPY3D c3;
    cudaGraph_t g2;
    cudaGraphExec_t e, e2;
    cudaGraphNode_t n2 = NULL;
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, x.g, 0));
    printf("rc upload %d\n", drv ? (int)cuGraphUpload((CUgraphExec)e, (CUstream)x.s) : (int)cudaGraphUpload(e, x.s));
#define LAUNCH(ex, times) for (int i_ = 0; i_ < (times); i_++) \
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)(ex), (CUstream)x.s) : (int)cudaGraphLaunch(ex, x.s));
    LAUNCH(e, 2)
    expect_oob(x.q + 2048, x.q);                            // when set ...
    c3 = h2d_params(x.q + 2048, x.hp, 4096);
    printf("rc execset %d\n", drv ? (int)cuGraphExecMemcpyNodeSetParams((CUgraphExec)e, (CUgraphNode)x.cn, &c3, x.ctx)
                                  : (int)cudaGraphExecMemcpyNodeSetParams1D(e, x.cn, x.q + 2048, x.hp, 4096, cudaMemcpyHostToDevice));
    expect_oob(x.q + 2048, x.q);                            // ... and at the launch
    LAUNCH(e, 1)
    expect_oob(x.q + 4000, x.q);
    x.mp.dst = x.q + 4000; x.mp.elementSize = 1; x.mp.width = 200;
    x.dmp.dst = (CUdeviceptr)(x.q + 4000); x.dmp.elementSize = 1; x.dmp.width = 200;
    printf("rc graphset %d\n", drv ? (int)cuGraphMemsetNodeSetParams((CUgraphNode)x.sn, &x.dmp) : (int)cudaGraphMemsetNodeSetParams(x.sn, &x.mp));
    cudaGraphExecUpdateResultInfo info;
    printf("rc update %d\n", (int)cudaGraphExecUpdate(e, x.g, &info));   // the graph's copy (to Q) and memset
    expect_oob(x.q + 4000, x.q);
    LAUNCH(e, 1)
    printf("rc begin %d\n", (int)cudaStreamBeginCapture(x.s, cudaStreamCaptureModeGlobal));
    printf("rc capcopy %d\n", drv ? (int)cuMemcpyHtoDAsync((CUdeviceptr)x.q, x.hp, 4096, (CUstream)x.s)
                                  : (int)cudaMemcpyAsync(x.q, x.hp, 4096, cudaMemcpyHostToDevice, x.s));
    printf("rc end %d\n", (int)cudaStreamEndCapture(x.s, &g2));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e2, g2, 0));
    size_t num = 1;
    printf("rc getnodes %d\n", (int)cudaGraphGetNodes(g2, &n2, &num) || num != 1);
    expect_oob(x.q + 2048, x.q);
    c3 = h2d_params(x.q + 2048, x.hp, 4096);
    printf("rc execset %d\n", drv ? (int)cuGraphExecMemcpyNodeSetParams((CUgraphExec)e2, (CUgraphNode)n2, &c3, x.ctx)
                                  : (int)cudaGraphExecMemcpyNodeSetParams1D(e2, n2, x.q + 2048, x.hp, 4096, cudaMemcpyHostToDevice));
    expect_oob(x.q + 2048, x.q);
    LAUNCH(e2, 1)
#undef LAUNCH
    int rc = (int)cudaStreamSynchronize(x.s);
    // replays: 4 of e (a copy and a memset each), 1 of e2 (a copy); captured: the 2 nodes made, the
    // 2 changes, the captured copy and its change
    printf("report launches 0\nreport graph_launches 0\nreport graph_copies 5\nreport graph_sets 4\n"
           "report captured 6\nreport h2d_count 5\nreport set_count 4\n");
    // bytes: 5 copies of 4096; memsets of 1024 words (4096 bytes) at the first 3 replays, of 200
    // bytes once the graph's node was changed and the exec updated
    printf("report_bytes h2d 20480 set 12488\n");
    cudaGraphExecDestroy(e2);
    cudaGraphExecDestroy(e);
    cudaFree(x.q);
    cudaFreeHost(x.hp);
    return rc;
}

// Generic node parameters (calloc'd: the runtime's union holds dim3s, no default constructor).
static void *generic_params(int drv, int type)
{
    void *p = calloc(1, drv ? sizeof(CUgraphNodeParams) : sizeof(cudaGraphNodeParams));
    *(int *)p = type;   // both keep the type first
    return p;
}

static void set_generic_copy(int drv, void *np, void *dst, void *src, CUcontext ctx)
{
    if (drv) {
        ((CUgraphNodeParams *)np)->memcpy.copyParams = h2d_params(dst, src, 4096);
        ((CUgraphNodeParams *)np)->memcpy.copyCtx = ctx;
        return;
    }
    cudaMemcpy3DParms *c = &((cudaGraphNodeParams *)np)->memcpy.copyParams;
    memset(c, 0, sizeof *c);
    c->srcPtr = make_cudaPitchedPtr(src, 4096, 4096, 1);
    c->dstPtr = make_cudaPitchedPtr(dst, 4096, 4096, 1);
    c->extent = make_cudaExtent(4096, 1, 1);
    c->kind = cudaMemcpyHostToDevice;
}

static struct cudaMemcpy3DParms rt_h2d(void *dst, void *src)
{
    struct cudaMemcpy3DParms c;
    memset(&c, 0, sizeof c);
    c.srcPtr = make_cudaPitchedPtr(src, 4096, 4096, 1);
    c.dstPtr = make_cudaPitchedPtr(dst, 4096, 4096, 1);
    c.extent = make_cudaExtent(4096, 1, 1);
    c.kind = cudaMemcpyHostToDevice;
    return c;
}

static int set_nodes(int drv)
{
    struct copy_set_graph x = copy_set_graph(drv);
    CUDA_MEMCPY3D c3;
    cudaGraphExec_t e;
    expect_oob(x.q + 2048, x.q);                            // the graph's copy: when set
    c3 = h2d_params(x.q + 2048, x.hp, 4096);
    printf("rc graphcopy %d\n", drv ? (int)cuGraphMemcpyNodeSetParams((CUgraphNode)x.cn, &c3)
                                    : (int)cudaGraphMemcpyNodeSetParams1D(x.cn, x.q + 2048, x.hp, 4096, cudaMemcpyHostToDevice));
    c3 = h2d_params(x.q, x.hp, 4096);                       // and back to Q: nothing to say
    struct cudaMemcpy3DParms p3 = rt_h2d(x.q, x.hp);
    printf("rc graphcopy3d %d\n", drv ? (int)cuGraphMemcpyNodeSetParams((CUgraphNode)x.cn, &c3) : (int)cudaGraphMemcpyNodeSetParams(x.cn, &p3));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, x.g, 0));
#define LAUNCH() printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)x.s) : (int)cudaGraphLaunch(e, x.s));
    LAUNCH()
    expect_oob(x.q + 2048, x.q);                            // the exec's copy: when set ...
    c3 = h2d_params(x.q + 2048, x.hp, 4096);
    p3 = rt_h2d(x.q + 2048, x.hp);
    printf("rc execcopy %d\n", drv ? (int)cuGraphExecMemcpyNodeSetParams((CUgraphExec)e, (CUgraphNode)x.cn, &c3, x.ctx)
                                   : (int)cudaGraphExecMemcpyNodeSetParams(e, x.cn, &p3));
    expect_oob(x.q + 2048, x.q);                            // ... and at the launch
    LAUNCH()
    expect_oob(x.q + 4000, x.q);                            // the exec's memset: when set ...
    x.mp.dst = x.q + 4000; x.mp.elementSize = 1; x.mp.width = 200;
    x.dmp.dst = (CUdeviceptr)(x.q + 4000); x.dmp.elementSize = 1; x.dmp.width = 200;
    printf("rc execset %d\n", drv ? (int)cuGraphExecMemsetNodeSetParams((CUgraphExec)e, (CUgraphNode)x.sn, &x.dmp, x.ctx)
                                  : (int)cudaGraphExecMemsetNodeSetParams(e, x.sn, &x.mp));
    expect_oob(x.q + 2048, x.q);                            // ... and at the launch, after the copy's
    expect_oob(x.q + 4000, x.q);
    LAUNCH()
#undef LAUNCH
    int rc = (int)cudaStreamSynchronize(x.s);
    // 3 replays of a copy and a memset; captured: the 2 nodes made and their 4 changes
    printf("report launches 0\nreport graph_launches 0\nreport graph_copies 3\nreport graph_sets 3\n"
           "report captured 6\nreport h2d_count 3\nreport set_count 3\n");
    // bytes: 3 copies of 4096; memsets of 4096 bytes twice, then of 200
    printf("report_bytes h2d 12288 set 8392\n");
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(x.g);
    cudaFree(x.q);
    cudaFreeHost(x.hp);
    cudaStreamDestroy(x.s);
    return rc;
}

static int conditional(int drv)
{
    float *p, *hb = (float *)malloc(4096);
    char *q;
    void *hp;
    int n = 1;
    cudaMalloc(&p, 4096);
    cudaMalloc(&q, 4096);
    cudaMallocHost(&hp, 4096);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    CUcontext ctx = NULL;
    cuCtxGetCurrent(&ctx);
    cudaGraph_t g, body = NULL, orelse = NULL;
    cudaGraphExec_t e;
    cudaGraphNode_t mn, sn, cn, kn, kn2;
    cudaGraphCreate(&g, 0);
    void *np = generic_params(drv, drv ? (int)CU_GRAPH_NODE_TYPE_MEMCPY : (int)cudaGraphNodeTypeMemcpy);
    set_generic_copy(drv, np, q, hp, ctx);
    printf("rc addcopy %d\n", drv ? (int)cuGraphAddNode((CUgraphNode *)&mn, (CUgraph)g, NULL, NULL, 0, (CUgraphNodeParams *)np)
                                  : (int)cudaGraphAddNode(&mn, g, NULL, NULL, 0, (cudaGraphNodeParams *)np));
    void *sp = generic_params(drv, drv ? (int)CU_GRAPH_NODE_TYPE_MEMSET : (int)cudaGraphNodeTypeMemset);
    if (drv) ((CUgraphNodeParams *)sp)->memset = (CUDA_MEMSET_NODE_PARAMS_v2){ (CUdeviceptr)q, 0, 0, 4, 1024, 1, ctx };
    else { cudaGraphNodeParams *r = (cudaGraphNodeParams *)sp; r->memset.dst = q; r->memset.elementSize = 4; r->memset.width = 1024; r->memset.height = 1; }
    printf("rc addset %d\n", drv ? (int)cuGraphAddNode((CUgraphNode *)&sn, (CUgraph)g, NULL, NULL, 0, (CUgraphNodeParams *)sp)
                                 : (int)cudaGraphAddNode(&sn, g, NULL, NULL, 0, (cudaGraphNodeParams *)sp));
    void *cp = generic_params(drv, drv ? (int)CU_GRAPH_NODE_TYPE_CONDITIONAL : (int)cudaGraphNodeTypeConditional);
    if (drv) {
        CUgraphConditionalHandle h;
        printf("rc handle %d\n", (int)cuGraphConditionalHandleCreate(&h, (CUgraph)g, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
        CUDA_CONDITIONAL_NODE_PARAMS *c = &((CUgraphNodeParams *)cp)->conditional;
        c->handle = h; c->type = CU_GRAPH_COND_TYPE_IF; c->size = 2; c->ctx = ctx;
        printf("rc addcond %d\n", (int)cuGraphAddNode((CUgraphNode *)&cn, (CUgraph)g, NULL, NULL, 0, (CUgraphNodeParams *)cp));
        body = c->phGraph_out ? (cudaGraph_t)c->phGraph_out[0] : NULL;
        orelse = c->phGraph_out ? (cudaGraph_t)c->phGraph_out[1] : NULL;
    } else {
        cudaGraphConditionalHandle h;
        printf("rc handle %d\n", (int)cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
        cudaConditionalNodeParams *c = &((cudaGraphNodeParams *)cp)->conditional;
        c->handle = h; c->type = cudaGraphCondTypeIf; c->size = 2;
        printf("rc addcond %d\n", (int)cudaGraphAddNode(&cn, g, NULL, NULL, 0, (cudaGraphNodeParams *)cp));
        body = c->phGraph_out ? c->phGraph_out[0] : NULL;
        orelse = c->phGraph_out ? c->phGraph_out[1] : NULL;
    }
    printf("rc body %d\n", body == NULL || orelse == NULL);
    printf("rc add %d\n", add_node(drv, &kn, body, &p, &n));
    expect("host_pointer", hb, NULL, 0, 0); // when the else body's node is added, and at each launch
    printf("rc add %d\n", add_node(drv, &kn2, orelse, &hb, &n));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    cudaFree(p);
    expect("use_after_free", p, p, 4096, 0);
#define LAUNCH(times) for (int i_ = 0; i_ < (times); i_++) \
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s) : (int)cudaGraphLaunch(e, s));
    LAUNCH(2)
    expect_oob(q + 2048, q);
    set_generic_copy(drv, np, q + 2048, hp, ctx);
    printf("rc execset %d\n", drv ? (int)cuGraphExecNodeSetParams((CUgraphExec)e, (CUgraphNode)mn, (CUgraphNodeParams *)np)
                                  : (int)cudaGraphExecNodeSetParams(e, mn, (cudaGraphNodeParams *)np));
    expect_oob(q + 2048, q);
    LAUNCH(1)
#undef LAUNCH
    int rc = (int)cudaStreamSynchronize(s);
    printf("count host_pointer 4\ncount use_after_free 3\ncount oob_copy 1\ncount oob_copy 1\n");
    // 3 launches of a copy and a memset; captured: the 2 nodes made and the copy's change
    printf("report launches 0\nreport graph_launches 0\nreport graph_copies 3\nreport graph_sets 3\n"
           "report captured 3\nreport h2d_count 3\nreport set_count 3\n");
    printf("report_bytes h2d 12288 set 12288\n");   // 3 replays of a 4096-byte copy and a 1024-word memset
    free(np); free(sp); free(cp); free(hb);
    return rc;
}

static void expect_freed(const void *value, const void *alloc)
{
    printf("expect use_after_free error - - - 0x%llx 0x%llx 4096 device 0\n", u(value), u(alloc));
}

static int freed_copies(int drv)
{
    char *d, *live, h[256];
    cudaMalloc(&d, 4096);
    cudaMalloc(&live, 4096);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaFree(d);
    // the calls fail on a freed pointer (as CUDA's do): their results are not what this checks
    expect_freed(d, d);
    drv ? (void)cuMemcpyDtoH(h, (CUdeviceptr)d, 64) : (void)cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost);
    expect_freed(d + 128, d);
    drv ? (void)cuMemcpyHtoD((CUdeviceptr)(d + 128), h, 64) : (void)cudaMemcpy(d + 128, h, 64, cudaMemcpyHostToDevice);
    expect_freed(d + 256, d);
    drv ? (void)cuMemsetD32Async((CUdeviceptr)(d + 256), 0, 16, (CUstream)s) : (void)cudaMemsetAsync(d + 256, 0, 64, s);
    expect_freed(d, d);
    drv ? (void)cuMemcpyDtoD((CUdeviceptr)live, (CUdeviceptr)d, 64) : (void)cudaMemcpy(live, d, 64, cudaMemcpyDeviceToDevice);
    // a synchronous memset and the 2D copies (in the per-thread build: cudaMemset_ptds,
    // cudaMemcpy2D_ptds, cudaMemcpy2DAsync_ptsz, cuMemsetD8_v2_ptds, cuMemcpy2D_v2_ptds, ...)
    expect_freed(d + 512, d);
    drv ? (void)cuMemsetD8((CUdeviceptr)(d + 512), 0, 64) : (void)cudaMemset(d + 512, 0, 64);
    expect_freed(d + 640, d);                           // 2 rows of 64 bytes, 128 apart, to h
    expect_freed(d + 1024, d);                          // ... and from h
    if (drv) {
        CUDA_MEMCPY2D c = {};
        c.srcMemoryType = CU_MEMORYTYPE_DEVICE; c.srcDevice = (CUdeviceptr)(d + 640); c.srcPitch = 128;
        c.dstMemoryType = CU_MEMORYTYPE_HOST; c.dstHost = h; c.dstPitch = 64;
        c.WidthInBytes = 64; c.Height = 2;
        (void)cuMemcpy2D(&c);
        c.srcMemoryType = CU_MEMORYTYPE_HOST; c.srcHost = h; c.srcPitch = 64;
        c.dstMemoryType = CU_MEMORYTYPE_DEVICE; c.dstDevice = (CUdeviceptr)(d + 1024); c.dstPitch = 128;
        (void)cuMemcpy2DAsync(&c, (CUstream)s);
    } else {
        (void)cudaMemcpy2D(h, 64, d + 640, 128, 64, 2, cudaMemcpyDeviceToHost);
        (void)cudaMemcpy2DAsync(d + 1024, 128, h, 64, 64, 2, cudaMemcpyHostToDevice, s);
    }
    cudaGetLastError();
    char *again;
    cudaMalloc(&again, 4096);
    printf("rc again %d\n", drv ? (int)cuMemcpyHtoD((CUdeviceptr)again, h, 64) : (int)cudaMemcpy(again, h, 64, cudaMemcpyHostToDevice));
    cudaFree(again);
    cudaFree(live);
    return (int)cudaStreamSynchronize(s);
}

static int generic_alloc(int drv)
{
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaGraphNode_t an, kn, fn;
    cudaGraphCreate(&g, 0);
    int n = 1;
    float *buf = NULL;
    if (drv) {
        CUgraphNodeParams *np = (CUgraphNodeParams *)generic_params(1, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
        np->alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        np->alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        np->alloc.poolProps.location.id = 0;
        np->alloc.bytesize = 1 << 20;
        printf("rc addalloc %d\n", (int)cuGraphAddNode((CUgraphNode *)&an, (CUgraph)g, NULL, NULL, 0, np));
        buf = (float *)(uintptr_t)np->alloc.dptr;
        free(np);
    } else {
        cudaGraphNodeParams *np = (cudaGraphNodeParams *)generic_params(0, cudaGraphNodeTypeMemAlloc);
        np->alloc.poolProps.allocType = cudaMemAllocationTypePinned;
        np->alloc.poolProps.location.type = cudaMemLocationTypeDevice;
        np->alloc.poolProps.location.id = 0;
        np->alloc.bytesize = 1 << 20;
        printf("rc addalloc %d\n", (int)cudaGraphAddNode(&an, g, NULL, NULL, 0, np));
        buf = (float *)np->alloc.dptr;
        free(np);
    }
    printf("rc add %d\n", add_node(drv, &kn, g, &buf, &n));
    if (drv) {
        CUgraphNodeParams *np = (CUgraphNodeParams *)generic_params(1, CU_GRAPH_NODE_TYPE_MEM_FREE);
        np->free.dptr = (CUdeviceptr)buf;
        printf("rc addfree %d\n", (int)cuGraphAddNode((CUgraphNode *)&fn, (CUgraph)g, NULL, NULL, 0, np));
        free(np);
    } else {
        cudaGraphNodeParams *np = (cudaGraphNodeParams *)generic_params(0, cudaGraphNodeTypeMemFree);
        np->free.dptr = buf;
        printf("rc addfree %d\n", (int)cudaGraphAddNode(&fn, g, NULL, NULL, 0, np));
        free(np);
    }
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    for (int i = 0; i < 2; i++) {
        printf("launch %s 0 graph\n", drv ? "cuGraphLaunch" : "cudaGraphLaunch");
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s) : (int)cudaGraphLaunch(e, s));
    }
    printf("graph_alloc 2\n");
    printf("report launches 2\nreport graph_launches 2\nreport graph_copies 0\nreport graph_sets 0\n"
           "report captured 0\nreport h2d_count 0\nreport set_count 0\n");
    return (int)cudaStreamSynchronize(s);
}

static int captured_alloc(int drv)
{
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    cudaFunction_t fn;
    cudaGetFuncBySymbol(&fn, (const void *)coop_scale);
    float *a = NULL, *b = NULL;
    int n = 1;
    printf("rc begin %d\n", drv ? (int)cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL)
                                : (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    printf("rc alloc %d\n", drv ? (int)cuMemAllocAsync((CUdeviceptr *)&a, 64 << 10, (CUstream)s)
                                : (int)cudaMallocAsync((void **)&a, 64 << 10, s));
    printf("rc poolalloc %d\n", drv ? (int)cuMemAllocFromPoolAsync((CUdeviceptr *)&b, 128 << 10, (CUmemoryPool)pool, (CUstream)s)
                                    : (int)cudaMallocFromPoolAsync((void **)&b, 128 << 10, pool, s));
    printf("launch %s 0 captured\n", drv ? "cuLaunchKernel" : "__cudaLaunchKernel");
    if (drv) {
        void *args[] = { &a, &n };
        printf("rc launch %d\n", (int)cuLaunchKernel((CUfunction)fn, 2, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL));
    } else {
        coop_scale<<<2, 32, 0, s>>>(a, n);
        printf("rc launch %d\n", (int)cudaGetLastError());
    }
    printf("rc free %d\n", drv ? (int)cuMemFreeAsync((CUdeviceptr)a, (CUstream)s) : (int)cudaFreeAsync(a, s));
    printf("rc poolfree %d\n", drv ? (int)cuMemFreeAsync((CUdeviceptr)b, (CUstream)s) : (int)cudaFreeAsync(b, s));
    cudaGraph_t g;
    cudaGraphExec_t e;
    printf("rc end %d\n", drv ? (int)cuStreamEndCapture((CUstream)s, (CUgraph *)&g) : (int)cudaStreamEndCapture(s, &g));
    printf("rc instantiate %d\n", (int)cudaGraphInstantiate(&e, g, 0));
    for (int i = 0; i < 2; i++) {
        printf("launch %s 0 graph\n", drv ? "cuGraphLaunch" : "cudaGraphLaunch");
        printf("rc replay %d\n", drv ? (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s) : (int)cudaGraphLaunch(e, s));
    }
    printf("graph_alloc 4\n");
    // each launch replays the kernel; the captured launch is counted as captured, not as a launch
    printf("report launches 2\nreport graph_launches 2\nreport graph_copies 0\nreport graph_sets 0\n"
           "report captured 1\nreport h2d_count 0\nreport set_count 0\n");
    int rc = (int)cudaStreamSynchronize(s);
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argc > 1 ? argv[1] : "chevron";
    int rc;
    if (!strcmp(m, "drv_multi")) {
        rc = multi(2);
    } else if (!strcmp(m, "drv_multi64")) {
        rc = multi(64);
    } else if (!strcmp(m, "rt_pending")) {
        rc = pending();
    } else if (!strncmp(m, "child_", 6)) {
        rc = child(!strcmp(m, "child_drv"));
    } else if (!strcmp(m, "drv_extra")) {
        rc = extra();
    } else if (!strncmp(m, "clone_", 6) || !strncmp(m, "withparams_", 11) || !strncmp(m, "tograph_", 8)) {
        rc = made_graphs(!!strstr(m, "_drv"), m);
    } else if (!strncmp(m, "galloc_", 7)) {
        rc = generic_alloc(!strcmp(m, "galloc_drv"));
    } else if (!strncmp(m, "calloc_", 7)) {
        rc = captured_alloc(!strcmp(m, "calloc_drv"));
    } else if (!strncmp(m, "fcopies_", 8)) {
        rc = freed_copies(!strcmp(m, "fcopies_drv"));
    } else if (!strncmp(m, "cond_", 5)) {
        rc = conditional(!strcmp(m, "cond_drv"));
    } else if (!strncmp(m, "cnodes_", 7)) {
        rc = copy_nodes(!strcmp(m, "cnodes_drv"));
    } else if (!strncmp(m, "snodes_", 7)) {
        rc = set_nodes(!strcmp(m, "snodes_drv"));
    } else if (!strncmp(m, "capset_", 7)) {
        rc = capset(!strcmp(m, "capset_drv"));
    } else if (!strcmp(m, "graph_join")) {
        rc = join();
    } else if (!strncmp(m, "nodes_", 6) || !strncmp(m, "gnodes_", 7)) {
        generic_nodes = m[0] == 'g';
        rc = nodes(!strcmp(m, "nodes_drv") || !strcmp(m, "gnodes_drv"));
    } else if (!strncmp(m, "graph_", 6)) {
        rc = graph(!strcmp(m, "graph_drv"));
    } else {
        float *live, *freed, *h = (float *)malloc(4096);
        cudaMalloc(&live, 4096);
        cudaMalloc(&freed, 4096);
        cudaFree(freed);
        printf("rc live %d\n", launch_one(m, live));
        expect("host_pointer", h, NULL, 0, 0);
        printf("rc host %d\n", launch_one(m, h));
        expect("use_after_free", freed, freed, 4096, 0);
        printf("rc freed %d\n", launch_one(m, freed));
        rc = (int)cudaDeviceSynchronize();
        cudaFree(live);
        free(h);
    }
    printf("done %s %d\n", m, rc);
    return 0;
}
