/* sim_nvml.c - libnvidia-ml.so.1 for the simulated device (test fixture): the NVML calls CUDA
 * frameworks make beside the driver. On a real machine the driver package always installs NVML,
 * and PyTorch relies on it: its expandable segments ask NVML for the GPU's fabric (get_fabric_access
 * calls nvmlInit_v2 without checking that the library loaded), torch.cuda.device_count() asks it
 * first. So `run --sim` puts this one beside the simulated driver (LD_LIBRARY_PATH, and
 * sim_redirect.c for a dlopen by path).
 *
 * It knows the devices the simulated driver has (VRAMTRACE_SIM_DEVICES, read the same way, and the
 * driver's PCI bus ids 0000:1X:00.0) and nothing else: no NVLink, no fabric, no process list, no
 * sensors (NVML_ERROR_NOT_SUPPORTED, as NVML says for a GPU without them). Declarations are its
 * own (the toolkit ships no nvml.h); values per NVML's documentation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"   /* SIM_MAX_DEV, SIM_DRIVER_VERSION */

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
       NVML_ERROR_NOT_FOUND = 6 };
typedef struct nvmlDevice_st *nvmlDevice_t;   /* here: 1 + the device's index */

static int inits; /* nvmlInit/nvmlShutdown pairs, as NVML counts them */

static unsigned sim_devices(void)
{
    const char *nd = getenv("VRAMTRACE_SIM_DEVICES"); /* as sim_driver.c reads it */
    int n = nd && *nd ? atoi(nd) : 1;
    return n < 0 ? 0 : n > SIM_MAX_DEV ? SIM_MAX_DEV : (unsigned)n;
}

static int index_of(nvmlDevice_t d)
{
    uintptr_t i = (uintptr_t)d;
    return i >= 1 && i <= sim_devices() ? (int)(i - 1) : -1;
}

nvmlReturn_t nvmlInit_v2(void) { inits++; return NVML_SUCCESS; }
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { return nvmlInit_v2(); }
nvmlReturn_t nvmlShutdown(void)
{
    if (!inits) return NVML_ERROR_UNINITIALIZED;
    inits--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    if (!v) return NVML_ERROR_INVALID_ARGUMENT;
    *v = SIM_DRIVER_VERSION;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return nvmlSystemGetCudaDriverVersion_v2(v); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (!inits) return NVML_ERROR_UNINITIALIZED;
    if (!n) return NVML_ERROR_INVALID_ARGUMENT;
    *n = sim_devices();
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (!inits) return NVML_ERROR_UNINITIALIZED;
    if (!d || i >= sim_devices()) return NVML_ERROR_INVALID_ARGUMENT;
    *d = (nvmlDevice_t)(uintptr_t)(i + 1);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }

/* "0000:10:00.0", "00000000:10:00.0", "10:00.0": domain 0, bus 0x10 + index, device 0 */
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *d)
{
    if (!inits) return NVML_ERROR_UNINITIALIZED;
    if (!bus_id || !d) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned dom = 0, bus, dev, fn = 0;
    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) < 3 && (dom = 0, sscanf(bus_id, "%x:%x.%x", &bus, &dev, &fn) < 2))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (dom || dev || fn || bus < 0x10 || bus - 0x10 >= sim_devices()) return NVML_ERROR_NOT_FOUND;
    *d = (nvmlDevice_t)(uintptr_t)(bus - 0x10 + 1);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *bus_id, nvmlDevice_t *d) { return nvmlDeviceGetHandleByPciBusId_v2(bus_id, d); }

/* What the simulated GPU does not have: NVLink, a fabric, per-process accounting. */
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link, int *type)
{
    return index_of(d) < 0 ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, void *pci)
{
    return index_of(d) < 0 ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, void *info)
{
    return index_of(d) < 0 ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *count, void *infos)
{
    return index_of(d) < 0 || !count ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, void *infos)
{
    return nvmlDeviceGetComputeRunningProcesses(d, count, infos);
}
