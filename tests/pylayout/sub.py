"""sub.py - run in a sub-interpreter by life.py subinterp: 9 MiB at at:sub, from sub_alloc()."""
import ctypes

rt = ctypes.CDLL("libcudart.so.13")


def sub_alloc():
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(9 << 20)) == 0  # at:sub


sub_alloc()  # at:sub_call
