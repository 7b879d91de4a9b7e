"""deep.py - one cudaMalloc of 4096 bytes through ctypes at the bottom of a Python recursion
DEPTH calls deep (argv[1]), for how many Python frames a recorded stack keeps
(tests/cases/py_frames.sh). The stack at the call: down(0) (at:malloc), DEPTH frames of down()
(at:down), the module (at:main): DEPTH + 2 Python frames, innermost first."""
import ctypes
import sys

rt = ctypes.CDLL("libcudart.so.13")


def down(n):
    if n == 0:
        p = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096)) == 0  # at:malloc
        return
    down(n - 1)  # at:down


down(int(sys.argv[1]))  # at:main
