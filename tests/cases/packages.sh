#!/bin/sh
# packages.sh - the packages people install from (issue 51 slice 4), built from the tracked files
# of this tree and installed in a test: the Debian package (dpkg-buildpackage from debian/,
# installed into a private root with dpkg --root, run, removed without a trace) and the Python
# wheel (pip install . into a new virtual environment: the vramtrace command, python -m vramtrace,
# a Python script traced to its own lines). A minute or two each, so `make test-packages` runs it
# (.ci/run does); `make test` skips it.
. "$ROOT/tests/lib.sh"
if [ -z "${VT_TEST_PACKAGES:-}" ]; then skip "packages: run by make test-packages (builds a .deb and a wheel)"; exit 0; fi
VER=$(sed -n 's/^#define VRAMTRACE_VERSION "\([^"]*\)".*/\1/p' "$ROOT/include/vramtrace/vramtrace.h")
SRC="$TMP/src/vramtrace-$VER"
mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -xf - -C "$SRC"
have_sim() { [ -f "$SIM/libcudart.so.13" ] && [ -x "$PROGS/rel_fork" ]; }

# ---- Debian ---------------------------------------------------------------------------------------
if ! command -v dpkg-buildpackage >/dev/null 2>&1 || ! command -v dh >/dev/null 2>&1; then
    skip "Debian package: NOT TESTED - no dpkg-buildpackage/debhelper here (apt-get install debhelper)"
else
    (cd "$SRC" && dpkg-buildpackage -us -uc -b) >"$TMP/deb.log" 2>&1
    check_eq "dpkg-buildpackage -b: exit 0" "$?" 0
    DEB=$(ls "$TMP/src/vramtrace_${VER}_"*.deb 2>/dev/null | head -1)
    check "the package vramtrace_${VER}_ARCH.deb" test -f "$DEB"
    check_eq "its files: the command, the tracer in /usr/lib/vramtrace, header, pkg-config, man pages, completions, doc" \
        "$(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $6 }' | sort | tr '\n' ' ')" \
        "./usr/bin/vramtrace ./usr/include/vramtrace/trace.h ./usr/include/vramtrace/vramtrace.h ./usr/lib/pkgconfig/vramtrace.pc ./usr/lib/vramtrace/libvramtrace.so ./usr/share/bash-completion/completions/vramtrace ./usr/share/doc/vramtrace/changelog.gz ./usr/share/doc/vramtrace/copyright ./usr/share/man/man1/vramtrace-bandwidth.1.gz ./usr/share/man/man1/vramtrace-report.1.gz ./usr/share/man/man1/vramtrace-run.1.gz ./usr/share/man/man1/vramtrace.1.gz ./usr/share/zsh/site-functions/_vramtrace "
    check "Depends: the libraries it links (json-c, zstd, lz4, elfutils), found by dh_shlibdeps" \
        sh -c 'd=$(dpkg-deb -f "$1" Depends); for p in libc6 libjson-c5 libzstd1 liblz4-1 libdw1 libelf1; do echo "$d" | grep -q "$p" || exit 1; done' _ "$DEB"
    # a private root with its own dpkg database: the machine's own packages are not touched
    X="$TMP/dpkg root"
    mkdir -p "$X/var/lib/dpkg/info" "$X/var/lib/dpkg/updates" && : >"$X/var/lib/dpkg/status"
    DPKG() { dpkg --root="$X" --force-not-root --force-script-chrootless "$@"; }
    DPKG --force-depends -i "$DEB" >"$TMP/dpkg.log" 2>&1
    check_eq "dpkg -i: installed" "$(DPKG -s vramtrace 2>/dev/null | sed -n 's/^Status: //p')" "install ok installed"
    check_eq "the installed command: its version" "$("$X/usr/bin/vramtrace" --version)" "vramtrace $VER"
    check_eq "run preloads the package's tracer" \
        "$("$X/usr/bin/vramtrace" run -q -- sh -c 'grep -o "/.*libvramtrace.so" /proc/$$/maps | sort -u')" "$X/usr/lib/vramtrace/libvramtrace.so"
    if have_sim; then   # rel_fork alloc: 2 cudaMalloc of 1 MiB, 1 cudaFree
        VRAMTRACE_SIM_DIR="$SIM" "$X/usr/bin/vramtrace" run --sim -q -o "$TMP/deb.jsonl" -- "$PROGS/rel_fork" alloc >/dev/null 2>&1
        check_eq "the package traces a program and reports it: peak 2 MiB, 1 MiB leaked" \
            "$("$X/usr/bin/vramtrace" report --json "$TMP/deb.jsonl" | jq -c '[.peak_bytes,.leaked_bytes]')" "[2097152,1048576]"
    else
        skip "the package on a program: simulated device or test programs not built"
    fi
    check "man vramtrace-report from the package names --max-peak" sh -c 'MANWIDTH=200 env -u LD_PRELOAD man -l "$1" 2>/dev/null | grep -q -- "--max-peak"' _ "$X/usr/share/man/man1/vramtrace-report.1.gz"
    DPKG -P vramtrace >>"$TMP/dpkg.log" 2>&1
    check_eq "dpkg -P: removed, no file left under /usr" "$?:$(find "$X/usr" -type f 2>/dev/null | wc -l | tr -d ' ')" "0:0"
fi

# ---- Python wheel --------------------------------------------------------------------------------------
PYBIN=$(command -v python3 || true)
if [ -z "$PYBIN" ] || ! "$PYBIN" -m venv "$TMP/venv" >"$TMP/venv.log" 2>&1; then
    skip "Python wheel: NOT TESTED - no python3 with venv here"
    exit 0
fi
V="$TMP/venv"
# pip fetches the build requirements (setuptools, wheel) from PyPI
if ! "$V/bin/pip" install -q "$SRC" >"$TMP/pip.log" 2>&1; then
    if grep -qiE 'Could not find a version|Failed to establish|Temporary failure in name resolution|No matching distribution' "$TMP/pip.log"; then
        skip "Python wheel: NOT TESTED - pip cannot reach PyPI for setuptools/wheel: $(grep -m1 -iE 'error|could not' "$TMP/pip.log")"
        exit 0
    fi
    not_ok "pip install .: failed: $(tail -3 "$TMP/pip.log" | tr '\n' ' ')"
    exit 0
fi
ok "pip install . (a new virtual environment)"
check_eq "the vramtrace command from pip: its version" "$("$V/bin/vramtrace" --version)" "vramtrace $VER"
check_eq "python -m vramtrace: the same command" "$("$V/bin/python" -m vramtrace --version)" "vramtrace $VER"
check_eq "python -m vramtrace help report: the command's own help" "$("$V/bin/python" -m vramtrace help report | head -1)" \
    "usage: vramtrace report [options] TRACE... | DIR | -"
check_eq "a bad option: the command's one line and status 2" \
    "$("$V/bin/python" -m vramtrace report --frob 2>&1; echo "rc=$?")" "vramtrace report: unknown option '--frob' (try 'vramtrace report --help')
rc=2"
check_eq "the wheel is for the platform, any Python 3 (no extension module)" \
    "$(sed -n 's/^Tag: //p' "$V"/lib/python3*/site-packages/vramtrace-"$VER".dist-info/WHEEL)" "py3-none-linux_$(uname -m)"
if have_sim; then
    # the README's line: python -m vramtrace run -- python train.py; train.py calls the runtime
    # through ctypes: 1 MiB at line 4 (freed), 2 MiB at line 5 (never freed)
    cat >"$TMP/train.py" <<'PY'
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
rt.cudaMalloc(ctypes.byref(p), 1 << 20)
rt.cudaMalloc(ctypes.byref(ctypes.c_void_p()), 2 << 20)
rt.cudaFree(p)
PY
    VRAMTRACE_SIM_DIR="$SIM" "$V/bin/python" -m vramtrace run --sim -q -o "$TMP/py.jsonl" -- "$V/bin/python" "$TMP/train.py" >"$TMP/py.out" 2>&1
    check_eq "python -m vramtrace run -- python train.py: exit 0" "$?" 0
    check_eq "the report names train.py's lines: 2 MiB at :5 and 1 MiB at :4 at the peak, :5 leaked" \
        "$("$V/bin/vramtrace" report --json "$TMP/py.jsonl" | jq -c '[.peak_bytes, [.peak_sites[] | "\(.site)=\(.bytes)"], [.leaks[] | .site]]')" \
        '[3145728,["<module> (train.py:5)=2097152","<module> (train.py:4)=1048576"],["<module> (train.py:5)"]]'
else
    skip "the wheel on a Python script: simulated device not built"
fi
"$V/bin/pip" uninstall -q -y vramtrace >/dev/null 2>&1
check_eq "pip uninstall: the command and the package gone" \
    "$(ls "$V/bin/vramtrace" "$V"/lib/python3*/site-packages/vramtrace 2>/dev/null | wc -l | tr -d ' ')" 0
