/* rt_stream.c - simulated runtime streams, events, stream capture and graphs, forwarded to the
 * driver table (rt_dpt for the _ptsz exports). Test fixture. */
#include "rt.h"

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int prio)
{
    RT_ENTER();
    if (!s) return rt_ret(cudaErrorInvalidValue);
    RT_CALL(rt_d.cuStreamCreateWithPriority(s, flags, prio));
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) { return cudaStreamCreateWithPriority(s, flags, 0); }
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, 0, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s) { RT_ENTER(); RT_CALL(rt_d.cuStreamDestroy(s)); }

#define PAIR(ret, name, params, call) \
    ret name params { RT_ENTER(); const rt_driver *d = &rt_d; RT_CALL(call); } \
    ret name##_ptsz params { RT_ENTER(); const rt_driver *d = &rt_dpt; RT_CALL(call); }

PAIR(cudaError_t, cudaStreamSynchronize, (cudaStream_t s), d->cuStreamSynchronize(s))
PAIR(cudaError_t, cudaStreamQuery, (cudaStream_t s), d->cuStreamQuery(s))
PAIR(cudaError_t, cudaStreamWaitEvent, (cudaStream_t s, cudaEvent_t e, unsigned int f), d->cuStreamWaitEvent(s, e, f))
PAIR(cudaError_t, cudaEventRecord, (cudaEvent_t e, cudaStream_t s), d->cuEventRecord(e, s))
PAIR(cudaError_t, cudaEventRecordWithFlags, (cudaEvent_t e, cudaStream_t s, unsigned int f), d->cuEventRecordWithFlags(e, s, f))
PAIR(cudaError_t, cudaStreamBeginCapture, (cudaStream_t s, enum cudaStreamCaptureMode m), d->cuStreamBeginCapture(s, (CUstreamCaptureMode)m))
PAIR(cudaError_t, cudaStreamEndCapture, (cudaStream_t s, cudaGraph_t *g), d->cuStreamEndCapture(s, g))
PAIR(cudaError_t, cudaStreamIsCapturing, (cudaStream_t s, enum cudaStreamCaptureStatus *st), d->cuStreamIsCapturing(s, (CUstreamCaptureStatus *)st))
PAIR(cudaError_t, cudaGraphLaunch, (cudaGraphExec_t e, cudaStream_t s), d->cuGraphLaunch(e, s))

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    RT_ENTER();
    if (!e) return rt_ret(cudaErrorInvalidValue);
    RT_CALL(rt_d.cuEventCreate(e, flags));
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventQuery(cudaEvent_t e) { RT_ENTER(); RT_CALL(rt_d.cuEventQuery(e)); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { RT_ENTER(); RT_CALL(rt_d.cuEventSynchronize(e)); }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { RT_ENTER(); RT_CALL(rt_d.cuEventElapsedTime(ms, a, b)); }
cudaError_t cudaEventDestroy(cudaEvent_t e) { RT_ENTER(); RT_CALL(rt_d.cuEventDestroy(e)); }

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphInstantiateWithFlags(e, g, flags));
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    return cudaGraphInstantiate(e, g, flags);
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) { RT_ENTER(); RT_CALL(rt_d.cuGraphDestroy(g)); }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { RT_ENTER(); RT_CALL(rt_d.cuGraphExecDestroy(e)); }
