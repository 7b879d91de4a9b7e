#!/bin/sh
# install.sh - `make install` / `make uninstall` with PREFIX and DESTDIR (issue 51 slice 3): the
# files where the GNU conventions put them, the installed binary finding its installed library
# and tracing a program, the header through pkg-config, man pages and completions that say what
# the installed binary's --help says, and uninstall removing every file it put there.
. "$ROOT/tests/lib.sh"
R="$TMP/dest dir"           # DESTDIR with a space
P=/opt/vt
make -s -C "$ROOT" BUILD="$BUILD" SAN="$SAN" install DESTDIR="$R" PREFIX="$P" >"$TMP/make.out" 2>&1
check_eq "make install: exit 0" "$?" 0
check_eq "the installed files, nothing else" "$(cd "$R" && find . -type f | sort | tr '\n' ' ')" \
    "./opt/vt/bin/vramtrace ./opt/vt/include/vramtrace/trace.h ./opt/vt/include/vramtrace/vramtrace.h ./opt/vt/lib/pkgconfig/vramtrace.pc ./opt/vt/lib/vramtrace/libvramtrace.so ./opt/vt/share/bash-completion/completions/vramtrace ./opt/vt/share/man/man1/vramtrace-bandwidth.1 ./opt/vt/share/man/man1/vramtrace-report.1 ./opt/vt/share/man/man1/vramtrace-run.1 ./opt/vt/share/man/man1/vramtrace.1 ./opt/vt/share/zsh/site-functions/_vramtrace "
check_eq "modes: programs 755, the rest 644" \
    "$(cd "$R$P" && stat -c '%a %n' bin/vramtrace lib/vramtrace/libvramtrace.so include/vramtrace/vramtrace.h lib/pkgconfig/vramtrace.pc share/man/man1/vramtrace.1 | tr '\n' ' ')" \
    "755 bin/vramtrace 755 lib/vramtrace/libvramtrace.so 644 include/vramtrace/vramtrace.h 644 lib/pkgconfig/vramtrace.pc 644 share/man/man1/vramtrace.1 "
IVT="$R$P/bin/vramtrace"
want="vramtrace $(sed -n 's/^#define VRAMTRACE_VERSION "\([^"]*\)".*/\1/p' "$ROOT/include/vramtrace/vramtrace.h")"
check_eq "the installed binary: its version" "$("$IVT" --version)" "$want"

# the library `run` preloads is the installed one, from ../lib/vramtrace (no VRAMTRACE_LIB)
got=$(env -u VRAMTRACE_LIB "$IVT" run -q -- sh -c 'grep -o "/.*libvramtrace.so" /proc/$$/maps | sort -u')
check_eq "run preloads the installed library" "$got" "$R$P/lib/vramtrace/libvramtrace.so"
if [ -f "$SIM/libcudart.so.13" ] && [ -x "$PROGS/rel_fork" ]; then
    # rel_fork alloc: 2 cudaMalloc of 1 MiB, 1 cudaFree
    VRAMTRACE_SIM_DIR="$SIM" "$IVT" run --sim -q -o "$TMP/t.jsonl" -- "$PROGS/rel_fork" alloc >/dev/null 2>"$TMP/run.err"
    check_eq "the installed binary traces a program: exit 0, 2 allocations, 1 free" \
        "$?:$(jqs "$TMP/t.jsonl" '[([.[] | select(.ev == "alloc")] | length), ([.[] | select(.ev == "free")] | length)] | join(",")')" "0:2,1"
    check_eq "... and reports it: peak 2 MiB, 1 MiB leaked" \
        "$("$IVT" report --json "$TMP/t.jsonl" | jq -c '[.peak_bytes,.leaked_bytes]')" "[2097152,1048576]"
else
    skip "installed binary on a program: simulated device or test programs not built"
fi

# pkg-config: the header, the preload's path
# prefix moved to where DESTDIR staged it (pkgconf 1.8 garbles a sysroot with a space in it)
PC() { PKG_CONFIG_PATH="$R$P/lib/pkgconfig" pkg-config --define-variable=prefix="$R$P" "$@" vramtrace; }
if command -v pkg-config >/dev/null 2>&1; then
    check_eq "pkg-config --modversion" "$(PC --modversion)" "${want#vramtrace }"
    check_eq "pkg-config --variable=preload: where run finds the tracer" \
        "$(PKG_CONFIG_PATH="$R$P/lib/pkgconfig" pkg-config --variable=preload vramtrace)" "$P/lib/vramtrace/libvramtrace.so"
    cat >"$TMP/api.c" <<'C'
#include <stdio.h>
#include <vramtrace/vramtrace.h>
int main(void) { const char *v = vramtrace_version(); printf("%d %s\n", vramtrace_api_version(), v ? v : "none"); return 0; }
C
    cflags=$(PC --cflags | sed "s/ *$//"); libs=$(PC --libs | sed "s/ *$//")
    check_eq "pkg-config --cflags: the installed include directory; --libs: -ldl" "$cflags|$libs" "-I$R$P/include|-ldl"
    # shellcheck disable=SC2086
    cc -o "$TMP/api" "$TMP/api.c" -I"${cflags#-I}" $libs 2>"$TMP/cc.err"
    check_eq "a program built against the installed header" "$?" 0
    check_eq "... without the tracer: no version" "$("$TMP/api")" "0 none"
    check_eq "... under the installed vramtrace: the tracer's version" "$("$IVT" run -q -- "$TMP/api")" "1 ${want#vramtrace }"
else
    skip "pkg-config: NOT TESTED - no pkg-config here"
fi

# man pages: each command's, every option its --help lists, and none it does not
opts() { grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u; }
for cmd in run report bandwidth; do
    man="$R$P/share/man/man1/vramtrace-$cmd.1"
    "$IVT" help "$cmd" | sed -n '/^options:$/,/^$/p' | grep -E '^  -' | sed -E 's/^  //; s/  .*//' | opts >"$TMP/h.$cmd"
    MANWIDTH=200 env -u LD_PRELOAD man -l "$man" 2>/dev/null | sed -n '/^OPTIONS/,/^NOTES/p' | grep -E '^       -' | sed 's/^ *//' | opts >"$TMP/m.$cmd"
    check "vramtrace-$cmd(1): the options of 'vramtrace help $cmd' ($(wc -l <"$TMP/h.$cmd" | tr -d ' ')), no more, no fewer" \
        sh -c '[ -s "$1" ] && cmp -s "$1" "$2"' _ "$TMP/h.$cmd" "$TMP/m.$cmd"
    check "vramtrace-$cmd(1): its synopsis is the usage line" \
        sh -c 'MANWIDTH=200 env -u LD_PRELOAD man -l "$1" 2>/dev/null | sed -n "/^SYNOPSIS/{n;p}" | sed "s/^ *//" | grep -qxF "$(vt=$2; "$vt" help "$3" | head -1 | sed "s/^usage: //")"' _ "$man" "$IVT" "$cmd"
done
check "vramtrace(1) lists the commands" sh -c 'MANWIDTH=200 env -u LD_PRELOAD man -l "$1" 2>/dev/null | grep -q "^       report \[options\] TRACE... | DIR"' _ "$R$P/share/man/man1/vramtrace.1"

# bash completion: commands, each command's options, files after an option that takes one
if command -v bash >/dev/null 2>&1; then
    comp() { bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vramtrace; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ \
        "$R$P/share/bash-completion/completions/vramtrace" "$@"; }
    check_eq "bash: 'vramtrace r' -> run report" "$(comp vramtrace r)" "report run "
    check_eq "bash: 'vramtrace report --max-' -> its two limits" "$(comp vramtrace report --max-)" "--max-increase --max-peak "
    check_eq "bash: 'vramtrace run --ch' -> --check" "$(comp vramtrace run --ch)" "--check "
    check_eq "bash: 'vramtrace bandwidth --no-' -> --no-gpu --no-host" "$(comp vramtrace bandwidth --no-)" "--no-gpu --no-host "
    mkdir -p "$TMP/cw" && : >"$TMP/cw/trace-a.jsonl"
    check_eq "bash: a file after --html" "$(cd "$TMP/cw" && comp vramtrace report --html tr)" "trace-a.jsonl "
    check_eq "bash: every option of 'help report' is offered" \
        "$(comp vramtrace report - | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')" "$(tr '\n' ' ' <"$TMP/h.report")"
fi
if command -v zsh >/dev/null 2>&1; then
    check "zsh completion: a valid zsh script" zsh -n "$R$P/share/zsh/site-functions/_vramtrace"
else
    skip "zsh completion: NOT TESTED - no zsh here (its text is generated with the bash one)"
fi

make -s -C "$ROOT" BUILD="$BUILD" SAN="$SAN" uninstall DESTDIR="$R" PREFIX="$P" >"$TMP/make.out" 2>&1
check_eq "make uninstall: exit 0, no file left, the vramtrace directories gone" \
    "$?:$(find "$R" -type f | wc -l | tr -d ' '):$(ls -d "$R$P/lib/vramtrace" "$R$P/include/vramtrace" 2>/dev/null | wc -l | tr -d ' ')" "0:0:0"
