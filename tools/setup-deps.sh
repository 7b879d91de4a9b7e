#!/bin/sh
# tools/setup-deps.sh - make sure the Debian packages vramtrace builds and tests with are present.
# Installs what is missing with apt-get (as root, or through sudo); otherwise names the packages
# in a one-line error. Quiet and fast when everything is there.
# VT_DEPS_BUILD_ONLY=1: only what building the library and the CLI needs (pip install .);
# VT_DEPS_NO_INSTALL=1: name what is missing, install nothing.
missing=""
need_hdr() { # header package
    for d in /usr/include /usr/local/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
        [ -f "$d/$1" ] && return 0
    done
    missing="$missing $2"
}
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need_hdr json-c/json.h libjson-c-dev
need_hdr zstd.h libzstd-dev
need_hdr lz4.h liblz4-dev
need_hdr elfutils/libdwfl.h libdw-dev
need_hdr gelf.h libelf-dev
need_cmd cc gcc
need_cmd make make
need_cmd python3 python3   # the kernel corpus generator (tests/gen), make check-layers, the man pages
if [ -z "${VT_DEPS_BUILD_ONLY:-}" ]; then
need_cmd jq jq
need_cmd c++ g++           # the fatbin fixtures' expected layouts (tests/data/fatbin/kernels_layout.cpp)
fi
[ -n "${VT_WANT_CHROMIUM:-}" ] && { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing="$missing chromium"; }
[ -z "$missing" ] && exit 0
if [ -n "${VT_DEPS_NO_INSTALL:-}" ]; then SUDO=none
elif [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else SUDO=none; fi
if [ "$SUDO" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "vramtrace: missing packages:$missing (install them with apt-get, or as root run: sh tools/setup-deps.sh)" >&2
    exit 1
fi
echo "vramtrace: installing missing packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends $missing; } >/tmp/vramtrace-apt.log 2>&1; then
    echo "vramtrace: apt-get install of$missing failed (see /tmp/vramtrace-apt.log)" >&2
    exit 1
fi
