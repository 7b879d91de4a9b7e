"""vramtrace - the device memory tracer's command, packaged for pip.

`vramtrace ARGS` (the console script) and `python -m vramtrace ARGS` replace the Python process
with the bundled `vramtrace` binary, so `vramtrace run -- python train.py` traces train.py exactly
as the installed command would, with no Python process left in between.
"""
import os
import sys

try:
    from importlib.metadata import version as _version
    __version__ = _version("vramtrace")
except Exception:  # not installed (a checkout on sys.path)
    __version__ = "unknown"

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin")


def binary():
    """The bundled vramtrace command."""
    return os.path.join(_BIN, "vramtrace")


def library():
    """The bundled tracer, libvramtrace.so (what `vramtrace run` preloads)."""
    return os.path.join(_BIN, "libvramtrace.so")


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("vramtrace: the command is missing from the package (%s); reinstall it with pip\n" % exe)
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["vramtrace"] + args)
    return 1
