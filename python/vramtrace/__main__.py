"""python -m vramtrace ARGS: the vramtrace command (see vramtrace/__init__.py)."""
import sys

from vramtrace import main

sys.exit(main())
