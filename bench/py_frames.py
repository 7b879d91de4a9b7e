"""py_frames.py - the cost of Python frames in recorded stacks (issue 47; docs/performance.md):
N cudaMalloc + cudaFree pairs through ctypes from DEPTH nested Python functions, on the simulated
device. Prints "WALL_NS CPU_NS N DEPTH": per pair, the calling thread's wall time and the whole
process's CPU time (every thread: the tracer's drain thread too); bench/py_frames.sh and `make
bench` run it untraced, traced without Python frames (VRAMTRACE_PYTHON_FRAMES=0) and with them."""
import ctypes
import sys
import time

rt = ctypes.CDLL("libcudart.so.13")
N, DEPTH = int(sys.argv[1]), int(sys.argv[2])
p = ctypes.c_void_p()


def pairs(n):
    for _ in range(n):
        rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
        rt.cudaFree(p)


def nest(d, n):
    return pairs(n) if d <= 1 else nest(d - 1, n)


nest(DEPTH, 100)  # warm: the code objects' records, the tracer's first calls
t0, c0 = time.perf_counter_ns(), time.process_time_ns()
nest(DEPTH, N)
t1, c1 = time.perf_counter_ns(), time.process_time_ns()
print((t1 - t0) / N, (c1 - c0) / N, N, DEPTH)
