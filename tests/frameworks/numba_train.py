"""numba_train.py - a small training loop written the way numba-cuda users write one, plus one
deliberate bug (tests/cases/fw_numba.sh, issue 46 slice 3).

A linear model y = w*x + b fitted by SGD with cuda.jit kernels: N = 4096 float32 samples in device
arrays, the gradient reduced with atomics, EPOCHS = 5 steps of three kernels each; a pinned
staging buffer and a managed array as users keep them. What the trace must show follows from
this file alone:
  device allocations  x, y: 4096 * 4 = 16384 B each; params: 2 * 4 = 8 B; grad: 8 B
  managed allocation  1024 * 4 = 4096 B;  pinned host allocation  4096 * 4 = 16384 B
  h2d copies          x, y (16384 B each, from the pinned buffer), params (8 B, pageable)
  d2h copies          params (8 B) once at the end
  launches            3 per epoch * 5 = 15, plus the buggy one = 16
  findings            exactly one: the last launch's array `a` is a host buffer (its data
                      pointer is argument 4 of the flattened array: meminfo, parent, nitems,
                      itemsize, data), an error
  steps               5, one per epoch, marked with vramtrace_step() where the tracer is loaded
                      (ctypes finds its entry point; untraced there is none): live VRAM at each
                      start 16384 + 16384 + 8 + 8 = 32784 B, nothing allocated in the loop: flat
The simulated device runs no kernel, so the figures printed are the arithmetic's, not results.
"""
import ctypes

import numpy as np
from numba import cuda

# include/vramtrace/vramtrace.h's vramtrace_step(), as a Python program reaches it: the traced
# process exports vramtrace_step_v1; untraced, nothing does
vramtrace_step = getattr(ctypes.CDLL(None), "vramtrace_step_v1", None)

N, EPOCHS, LR = 4096, 5, 0.01


@cuda.jit
def zero_grad(grad):
    grad[0] = 0.0
    grad[1] = 0.0


@cuda.jit
def gradients(x, y, params, grad, n):
    i = cuda.grid(1)
    if i < n:
        err = params[0] * x[i] + params[1] - y[i]
        cuda.atomic.add(grad, 0, 2.0 * err * x[i] / n)
        cuda.atomic.add(grad, 1, 2.0 * err / n)


@cuda.jit
def step(params, grad, lr):
    params[0] -= lr * grad[0]
    params[1] -= lr * grad[1]


@cuda.jit
def scale(a, f, n):
    i = cuda.grid(1)
    if i < n:
        a[i] *= f


staging = cuda.pinned_array(N, np.float32)                    # pinned host, 16384 B
staging[:] = np.linspace(0.0, 1.0, N, dtype=np.float32)
x = cuda.to_device(staging)                                    # 16384 B, h2d from pinned
staging[:] = 3.0 * staging + 1.0
y = cuda.to_device(staging)                                    # 16384 B, h2d from pinned
params = cuda.to_device(np.zeros(2, np.float32))               # 8 B, h2d pageable
grad = cuda.device_array(2, np.float32)                        # 8 B
history = cuda.managed_array(1024, np.float32)                 # managed, 4096 B

for epoch in range(EPOCHS):
    if vramtrace_step:
        vramtrace_step()
    zero_grad[1, 1](grad)
    gradients[N // 256, 256](x, y, params, grad, N)
    step[1, 1](params, grad, LR)
fitted = params.copy_to_host()                                 # 8 B d2h
print("fitted", fitted.shape[0], "epochs", EPOCHS)

# the bug: a host array's address wrapped as if it were device memory and handed to a kernel
host = np.ones(1024, np.float32)
fake = cuda.from_cuda_array_interface({"data": (host.ctypes.data, False), "shape": (1024,),
                                       "typestr": "<f4", "version": 2}, owner=host, sync=False)
scale[4, 256](fake, 2.0, 1024)
try:
    cuda.synchronize()
    print("sync ok")
except Exception as e:  # a GPU (and the simulated device) reports the illegal address here
    print("sync failed", type(e).__name__)
