"""probe.py - the frames the tracer reads from this script (tests/cases/py_layout.sh): three
functions deep, the innermost calling the probe through ctypes (the lock released). Prints the
frame count, then per frame, innermost first, "NAME FILE FIRSTLINE LINE": LINE is what CPython
itself says the probe's instruction offset is (code.co_lines()), so the offsets are checked
against the interpreter, not against the tracer."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
buf = ctypes.create_string_buffer(4096)


def inner():
    return lib.vt_probe(buf, len(buf))


def middle():
    return inner()


class Outer:
    def run(self):
        return middle()


n = Outer().run()
codes = {"inner": inner.__code__, "middle": middle.__code__, "run": Outer.run.__code__,
         "Outer.run": Outer.run.__code__, "<module>": sys.modules["__main__"].__loader__.get_code("__main__")}
print(n)
for row in buf.value.decode().splitlines():
    name, file, first, offset, _ = row.split("\t")
    line = next((ln for start, end, ln in codes[name].co_lines() if start <= int(offset) < end), None)
    print(name, file, first, line)
