#!/bin/sh
# setup-frameworks.sh - the Python environments `make test-frameworks` traces, installed once into
# a cache outside the checkout and reused (issue 46 slice 3):
#   $VT_PY_CACHE/numba   numba-cuda (pinned below), from PyPI
#   $VT_PY_CACHE/numba-py3N  the same under each CPython 3.N (10-13) installed here
#   $VT_PY_CACHE/torch   PyTorch with its CUDA 13 wheels (pinned below; about 5 GB, 2 minutes on
#                        a fast line), from PyPI
#   $VT_PY_CACHE/nvdisasm  the CUDA toolkit's nvdisasm (NVIDIA's nvidia-cuda-nvdisasm wheel, 4 MB),
#                        for the report's SASS reader when the toolkit here has none:
#                        $VT_PY_CACHE/nvdisasm/nvidia/cu13/bin/nvdisasm
# `setup-frameworks.sh mutants` installs only $VT_PY_CACHE/mutants: universalmutator, for
# `make mutants` (tools/mutants.py).
# VT_PY_CACHE defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/vramtrace/py. An environment that cannot
# be installed (no network, no venv module) is reported in one loud line; the tests that need it
# then count a skip, never a pass. Exit 0 either way: the tests say what ran.
NUMBA_CUDA=${VT_NUMBA_CUDA:-numba-cuda==0.30.4}
TORCH=${VT_TORCH:-torch==2.15.0}
NVDISASM=${VT_NVDISASM:-nvidia-cuda-nvdisasm==13.2.86}
cache=${VT_PY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vramtrace/py}
mkdir -p "$cache" || { echo "setup-frameworks: SKIPPED: cannot create $cache" >&2; exit 0; }
# ready: a python that imports the package, and the pin it was made with
ready() { [ -x "$cache/$1/bin/python" ] && [ "$(cat "$cache/$1/.pin" 2>/dev/null)" = "$2" ] &&
          "$cache/$1/bin/python" -c "import $3" >/dev/null 2>&1; }
install() { # NAME PIN MODULE [MORE-PINS]  (the interpreter: $PYTHON, else python3)
    ready "$1" "$2${4:+ $4}" "$3" && { echo "setup-frameworks: $1 ready ($2${4:+ $4}) in $cache/$1"; return 0; }
    rm -rf "$cache/$1.new"
    echo "setup-frameworks: installing $2${4:+ $4} into $cache/$1 (once; reused after)"
    # shellcheck disable=SC2086 # MORE-PINS are words
    if "${PYTHON:-python3}" -m venv "$cache/$1.new" >"$cache/$1.log" 2>&1 &&
       "$cache/$1.new/bin/pip" install -q --disable-pip-version-check "$2" $4 >>"$cache/$1.log" 2>&1 &&
       "$cache/$1.new/bin/python" -c "import $3" >>"$cache/$1.log" 2>&1; then
        echo "$2${4:+ $4}" >"$cache/$1.new/.pin"
        rm -rf "$cache/$1" && mv "$cache/$1.new" "$cache/$1"
        echo "setup-frameworks: $1 installed"
    else
        rm -rf "$cache/$1.new"
        echo "setup-frameworks: SKIPPED: could not install $2 ($(tail -1 "$cache/$1.log" 2>/dev/null)); its tests will count as skipped" >&2
    fi
}
if [ "${1:-}" = mutants ]; then
    install mutants "${VT_UNIVERSALMUTATOR:-universalmutator==1.14.1}" universalmutator.mutator
    exit 0
fi
install numba "$NUMBA_CUDA" numba.cuda
# numba-cuda again under each CPython 3.10-3.13 installed here (the Python line is read per
# version: tests/cases/fw_lines.sh); numpy below 2.5, which dropped what this numba-cuda uses
for minor in 10 11 12 13; do
    for cand in "$HOME"/.pyenv/versions/3.$minor*/bin/python3.$minor "$(command -v python3.$minor 2>/dev/null)"; do
        if [ -x "$cand" ] && "$cand" -c "import sys; sys.exit(sys.version_info[:2] != (3, $minor))" 2>/dev/null; then
            PYTHON=$cand install "numba-py3$minor" "$NUMBA_CUDA" numba.cuda "numpy<2.5"
            break
        fi
    done
done
install torch "$TORCH" torch
# nvdisasm: a binary, no Python module: unpacked with pip --target and checked by running it
nvd="$cache/nvdisasm/nvidia/cu13/bin/nvdisasm"
if [ -x "$nvd" ] && [ "$(cat "$cache/nvdisasm/.pin" 2>/dev/null)" = "$NVDISASM" ] && "$nvd" --version >/dev/null 2>&1; then
    echo "setup-frameworks: nvdisasm ready ($NVDISASM) in $cache/nvdisasm"
else
    rm -rf "$cache/nvdisasm.new"
    echo "setup-frameworks: installing $NVDISASM into $cache/nvdisasm (once; reused after)"
    if python3 -m pip install -q --disable-pip-version-check --no-deps --target "$cache/nvdisasm.new" "$NVDISASM" >"$cache/nvdisasm.log" 2>&1 &&
       chmod +x "$cache/nvdisasm.new/nvidia/cu13/bin/nvdisasm" 2>/dev/null &&
       "$cache/nvdisasm.new/nvidia/cu13/bin/nvdisasm" --version >>"$cache/nvdisasm.log" 2>&1; then
        echo "$NVDISASM" >"$cache/nvdisasm.new/.pin"
        rm -rf "$cache/nvdisasm" && mv "$cache/nvdisasm.new" "$cache/nvdisasm"
        echo "setup-frameworks: nvdisasm installed"
    else
        rm -rf "$cache/nvdisasm.new"
        echo "setup-frameworks: SKIPPED: could not install $NVDISASM ($(tail -1 "$cache/nvdisasm.log" 2>/dev/null)); its tests will count as skipped" >&2
    fi
fi
