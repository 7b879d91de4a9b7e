#!/bin/sh
# hooks_table.sh - `make check-hooks`: hook tables, exports and the real CUDA symbols agree.
. tests/lib.sh
sh tools/check-hooks.sh "$BUILD" "${CUDA_HOME:-/usr/local/cuda}"
