"""life.py - a Python program's life cycle under the tracer (tests/cases/py_life.sh; lines by their
"# at:" markers). Usage: life.py HELPER.so MODE, MODE one of:
  fork      1 MiB in the parent (at:parent_before), fork; the child allocates 2 MiB (at:child) and
            leaves with os._exit; then the parent 3 MiB (at:parent_after). Each through malloc().
  cthreads  5 MiB from a C thread Python never ran (no Python frame); 6 MiB from a Python callback
            run on another C thread (at:callback; the main thread waits at at:c_callback, which
            is not that thread's frame).
  shutdown  a daemon thread loops allocate/free pairs of 4 KiB inside one C call (at:busy, the
            lock released) while the main thread exits, until the end of finalization; an atexit
            handler allocates 7 MiB (at:atexit); the helper's destructor allocates and frees 8 KiB
            after finalization (and after the tracer's own destructor).
  subinterp 9 MiB allocated by sub.py (at:sub) run in a sub-interpreter (at:run_sub)."""
import ctypes
import os
import sys
import threading
import time

rt = ctypes.CDLL("libcudart.so.13")
helper = ctypes.CDLL(sys.argv[1])
mode = sys.argv[2]
MiB = 1 << 20
keep = []


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # at:malloc
    keep.append(p)


def from_c():
    malloc(6 * MiB)  # at:callback


def busy():
    helper.busy_loop()  # at:busy


def cleanup():
    malloc(7 * MiB)  # at:atexit


if mode == "fork":
    malloc(1 * MiB)  # at:parent_before
    pid = os.fork()
    if pid == 0:
        malloc(2 * MiB)  # at:child
        os._exit(0)
    os.waitpid(pid, 0)
    malloc(3 * MiB)  # at:parent_after
elif mode == "cthreads":
    assert helper.c_thread_alloc(ctypes.c_size_t(5 * MiB)) == 0
    callback = ctypes.CFUNCTYPE(None)(from_c)
    assert helper.c_thread_callback(callback) == 0  # at:c_callback
elif mode == "shutdown":
    import atexit
    atexit.register(cleanup)
    helper.busy_count.restype = ctypes.c_long
    assert helper.busy_stop_at_exit() == 0
    threading.Thread(target=busy, daemon=True).start()
    while helper.busy_count() < 200:
        time.sleep(0.001)
elif mode == "subinterp":
    try:
        import _interpreters as interpreters
    except ImportError:
        import _xxsubinterpreters as interpreters
    # 3.12's default is an isolated interpreter, where ctypes cannot be loaded
    interp = interpreters.create(isolated=False) if sys.version_info[:2] == (3, 12) else interpreters.create()
    sub = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sub.py")
    interpreters.run_string(interp, "exec(compile(open(%r).read(), %r, 'exec'))" % (sub, sub))  # at:run_sub
    interpreters.destroy(interp)
print(mode, "done")
sys.stdout.flush()
