"""torch_train.py - PyTorch used the way training code uses it, plus one deliberate bug
(tests/cases/fw_torch.sh, issue 46 slice 3). Run under each PYTORCH_CUDA_ALLOC_CONF the test sets
(the caching allocator's default, expandable_segments:True, and backend:cudaMallocAsync through
`vramtrace run --torch-tensors`); the test finds lines by their "# at:" markers.

Usage: torch_train.py KERNEL.fatbin   (the fatbin holds extern "C" vt_scale(float *p, int n, float f))

What it does, and what the trace must show because of it (N = 2**18 float32 = 1 MiB tensors):
  copies   x_cpu.to(cuda)                  h2d pageable 1 MiB
           x_pin.to(cuda, non_blocking)     h2d pinned   1 MiB  (x_pin: pin_memory(), one pinned
                                                               host allocation of 1 MiB)
           c.clone()                        d2d 1 MiB
           torch.sort(c)                    d2d 1 MiB (sort copies its input into the values
                                                       tensor and sorts that in place)
           scattered.cpu()                  d2h pageable 1 MiB
           nothing else copies: indices come from torch.arange on the device
  ops      elementwise (a * 2 + b), sum, sort, cumsum, softmax, index_select, gather, scatter_,
           three SGD steps of y = w * a + bias on the mean squared error, gradients written
           out (elementwise and reductions only: matmul needs cuBLAS, which needs the real
           driver: tools/gpu-check.sh)
  memory   the allocator's own counters are printed (memory_stats): "segments" (cudaMalloc
           calls) and the reserved peak after the work, the segments freed and the bytes still
           reserved after torch.cuda.empty_cache(), and at the end (one 4 KiB tensor live);
           every tensor the script makes on the device is printed with its storage's size
           ("tensor NAME BYTES")
  bug      vt_scale launched with the cuda driver API through ctypes: first on a CUDA tensor
           (fine), then on a CPU tensor's data pointer (printed as "cpu_ptr 0x..."): exactly one
           finding, host_pointer error, argument 0. On a GPU the launch faults; the simulated
           device says so at the next synchronize ("bug sync <exception type>").
Nothing prints a computed value: the simulated device runs no kernel.
"""
import ctypes
import sys

import torch

N = 1 << 18
dev = torch.device("cuda")
made = []


def keep(name, t):
    made.append((name, t.untyped_storage().nbytes()))
    return t


x_cpu = torch.ones(N)
x_pin = torch.ones(N).pin_memory()
a = keep("a", x_cpu.to(dev))
b = keep("b", x_pin.to(dev, non_blocking=True))
c = keep("c", a * 2.0 + b)
d = keep("d", c.clone())
s = keep("s", torch.sum(d))
v, i = torch.sort(c)  # at:sort (values 1 MiB float32, indices 2 MiB int64)
keep("sort_values", v), keep("sort_indices", i)
cs = keep("cs", torch.cumsum(d, 0))
sm = keep("sm", torch.softmax(d, 0))
idx = keep("idx", torch.arange(0, N, 2, device=dev))  # at:arange (N/2 int64: 1 MiB)
sel = keep("sel", d.index_select(0, idx))
g = keep("g", torch.gather(d, 0, idx))
scattered = keep("scattered", torch.zeros_like(d).scatter_(0, idx, g))
back = scattered.cpu()

# y = w * a + bias fitted to target by SGD, the gradients written out (what autograd would do
# adds copies of its own: not this test's subject)
w = keep("w", torch.zeros(1, device=dev))
bias = keep("bias", torch.zeros(1, device=dev))
target = keep("target", 3.0 * a + 1.0)
for step in range(3):
    err = w * a + bias - target
    loss = (err ** 2).mean()
    w -= 0.01 * (2.0 * err * a).mean()
    bias -= 0.01 * (2.0 * err).mean()
torch.cuda.synchronize()

for name, nbytes in made:
    print("tensor", name, nbytes)
st = torch.cuda.memory_stats()
print("segments", st.get("segment.all.allocated", 0), "reserved_peak", st.get("reserved_bytes.all.peak", 0),
      "max_reserved", torch.cuda.max_memory_reserved(), "max_allocated", torch.cuda.max_memory_allocated())
del a, b, c, d, s, v, i, cs, sm, idx, sel, g, scattered, w, bias, target, err, loss, made
torch.cuda.empty_cache()
st = torch.cuda.memory_stats()
print("after_empty_cache segments_freed", st.get("segment.all.freed", 0), "reserved", torch.cuda.memory_reserved())

cu = ctypes.CDLL("libcuda.so.1")
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
rc = (cu.cuModuleLoad(ctypes.byref(mod), sys.argv[1].encode()), cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"vt_scale"))
print("module", *rc)


def vt_scale(ptr, n):
    p, nn, f = ctypes.c_void_p(ptr), ctypes.c_int(n), ctypes.c_float(2.0)
    args = (ctypes.c_void_p * 3)(ctypes.addressof(p), ctypes.addressof(nn), ctypes.addressof(f))
    return cu.cuLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, None, args, None)  # at:launch


t = torch.ones(1024, device=dev)
print("launch cuda tensor", vt_scale(t.data_ptr(), 1024))
torch.cuda.synchronize()
print("end reserved", torch.cuda.memory_reserved(), "segments", torch.cuda.memory_stats().get("segment.all.allocated", 0))
h = torch.ones(1024)
print("cpu_ptr", hex(h.data_ptr()))
print("launch cpu tensor", vt_scale(h.data_ptr(), 1024))  # at:bug
try:
    torch.cuda.synchronize()
    print("bug sync ok")
except Exception as e:  # the launch faulted: CUDA reports it at the next synchronisation
    print("bug sync", type(e).__name__)
