/* nvtx_ranges.c - NVTX v3 ranges around allocations, for the NVTX attribution tests: the peak
 * happens inside "forward" (nested in "step 1"), so the report must attribute it there. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <wchar.h>

int main(void)
{
    void *a = NULL, *b = NULL, *c = NULL;
    nvtxRangePushA("step 1");
    nvtxRangePushA("forward");
    if (cudaMalloc(&a, 64 << 20) != cudaSuccess) return 1;
    if (cudaMalloc(&b, 32 << 20) != cudaSuccess) return 1;
    nvtxRangePop();
    cudaFree(a);
    nvtxEventAttributes_t attr = { 0 };
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "backward";
    nvtxRangePushEx(&attr);
    if (cudaMalloc(&c, 16 << 20) != cudaSuccess) return 1;
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangeId_t id = nvtxRangeStartA("optimizer");
    nvtxMarkA("checkpoint");
    nvtxRangeEnd(id);
    nvtxDomainHandle_t d = nvtxDomainCreateA("mylib");
    nvtxEventAttributes_t da = attr;
    da.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    da.message.registered = nvtxDomainRegisterStringA(d, "domain range");
    nvtxDomainRangePushEx(d, &da);
    nvtxDomainRangePop(d);
    nvtxRangePushW(L"wide");
    nvtxRangePop();
    /* the other forms: wide and Ex start/end and marks, a wide-named domain's mark (its string
     * registered wide) and start/end; a character above ASCII is written '?'; a mark with no message */
    nvtxRangeId_t ws = nvtxRangeStartW(L"wide start");
    nvtxRangeEnd(ws);
    nvtxMarkW(L"wide mark");
    nvtxEventAttributes_t ua = attr;
    ua.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    ua.message.unicode = L"ex mark";
    nvtxMarkEx(&ua);
    ua.message.unicode = L"ex start \u00e9";
    nvtxRangeId_t xs = nvtxRangeStartEx(&ua);
    nvtxRangeEnd(xs);
    nvtxDomainHandle_t dw = nvtxDomainCreateW(L"wlib");
    nvtxEventAttributes_t ra = attr;
    ra.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    ra.message.registered = nvtxDomainRegisterStringW(dw, L"domain mark");
    nvtxDomainMarkEx(dw, &ra);
    nvtxEventAttributes_t na = attr; /* attributes with no message (NVTX_MESSAGE_UNKNOWN): an unnamed mark */
    na.messageType = NVTX_MESSAGE_UNKNOWN;
    na.message.ascii = NULL;
    nvtxMarkEx(&na);
    ua.message.unicode = L"domain start";
    nvtxRangeId_t ds = nvtxDomainRangeStartEx(dw, &ua);
    nvtxDomainRangeEnd(dw, ds);
    cudaFree(b);
    cudaFree(c);
    printf("ok\n");
    return 0;
}
