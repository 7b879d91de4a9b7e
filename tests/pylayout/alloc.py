"""alloc.py - a Python program calling the CUDA runtime through ctypes (which releases the
interpreter's lock around each call), for the Python frames in recorded stacks (issue 47;
tests/cases/py_frames.sh finds the lines by their "# at:" markers). What it does:
  malloc(n): cudaMalloc (at:malloc), the helper every allocation goes through
  weights(): 3 MiB (at:weights), from model() (at:model_w), from the module (at:main_model)
  activations(): 1 MiB (at:acts), twice, from model() (at:model_acts, a comprehension: 3.11
                 and earlier give it a frame of its own, <listcomp>; 3.12 inlines it)
  upload(): cudaMemcpy h2d of 4096 bytes into the weights (at:copy), from the module (at:main_upload)
The four allocations stay live: the peak is all of them."""
import ctypes
import sys

rt = ctypes.CDLL("libcudart.so.13")
MiB = 1 << 20


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # at:malloc
    return p


def weights():
    return malloc(3 * MiB)  # at:weights


def activations():
    return malloc(1 * MiB)  # at:acts


def model():
    w = weights()  # at:model_w
    acts = [activations() for _ in range(2)]  # at:model_acts
    return w, acts


def upload(w):
    host = ctypes.create_string_buffer(4096)
    return rt.cudaMemcpy(w, host, ctypes.c_size_t(4096), 1)  # at:copy (cudaMemcpyHostToDevice)


w, acts = model()  # at:main_model
print("upload", upload(w))  # at:main_upload
sys.stdout.flush()
