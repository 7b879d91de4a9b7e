"""numba_lines.py - numba-cuda memory named by this script's lines (tests/cases/fw_lines.sh, issue
47 slice 3; the lines by their "# at:" markers), run on a simulated device of 64 MiB
(VRAMTRACE_SIM_MEM). What it does, and so what the report must say:
  build()        weights(): one 3 MiB device array (at:weights), called at at:build_w;
                 activations(): 1 MiB, called twice in a loop (at:acts, at:build_acts)
  the peak       5 MiB, all three live: 3 MiB at the weights' line, 2 MiB in 2 arrays at the
                 activations' line, each called from build()
  grow()         asks for 128 MiB (at:oom), more than the device has: an OOM whose holders are
                 the 5 MiB above; numba raises CudaAPIError (printed as "oom CudaAPIError")
  the bug        a host array wrapped as device memory and handed to scale (at:bug), from
                 launch_bad() called at at:call_bug: one host_pointer error named by that line
The simulated device runs no kernel."""
import numpy as np
from numba import cuda

MiB = 1 << 20


@cuda.jit
def scale(a, f, n):
    i = cuda.grid(1)
    if i < n:
        a[i] *= f


def weights():
    return cuda.device_array(3 * MiB // 4, np.float32)  # at:weights


def activations():
    return cuda.device_array(MiB // 4, np.float32)  # at:acts


def build():
    w = weights()  # at:build_w
    acts = []
    for _ in range(2):
        acts.append(activations())  # at:build_acts
    return w, acts


def grow():
    return cuda.device_array(128 * MiB // 4, np.float32)  # at:oom


def launch_bad():
    host = np.ones(1024, np.float32)
    fake = cuda.from_cuda_array_interface({"data": (host.ctypes.data, False), "shape": (1024,),
                                           "typestr": "<f4", "version": 2}, owner=host, sync=False)
    scale[4, 256](fake, 2.0, 1024)  # at:bug
    return host


model = build()  # at:main_build
try:
    grow()  # at:call_oom
    print("oom none")
except Exception as e:
    print("oom", type(e).__name__)
kept = launch_bad()  # at:call_bug
try:
    cuda.synchronize()
    print("sync ok")
except Exception as e:  # the launch faulted: reported at the next synchronisation
    print("sync failed", type(e).__name__)
