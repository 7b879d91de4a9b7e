#!/bin/sh
# tools/check-hooks.sh - the hook tables (VT_HOOK_ENTRY in src/*/*.c), the symbols libvramtrace.so
# exports, and the real CUDA libraries agree:
#   1. every table entry is exported by the library, and every exported cu*/cuda* symbol is in a table;
#   2. with the toolkit present, every entry names a symbol the real libcudart / libcuda (stub) export;
#   3. every cuGetProcAddress base name is a driver symbol (the base itself or a _vN of it);
#   4. a driver entry is marked per-thread-default-stream exactly when its name is one of the
#      driver's per-thread variants (_ptds, _ptsz): cuGetProcAddress hands it out only for that
#      flag. Runtime entries (no base name: dlsym only) are never marked.
#   5. a runtime entry (no base name) has version 0: dlsym alone finds it;
#   6. with the toolkit's cudaTypedefs.h, every driver entry's version is one NVIDIA declares for
#      it: a PFN_<base>_v<version> typedef (or PFN_<name>_v<version> where the base is an alias, as
#      cuGraphInstantiate is of cuGraphInstantiateWithFlags), with the _ptds/_ptsz suffix of a
#      per-thread variant. A version too low would hand our wrapper to a caller asking for an
#      older ABI of the same name.
# Usage: tools/check-hooks.sh BUILD_DIR [CUDA_HOME]. Prints ok/not ok lines (tests/run.sh format).
BUILD=${1:-build}; CUDA_HOME=${2:-/usr/local/cuda}
lib="$BUILD/libvramtrace.so"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "not ok - $lib not built"; exit 1; }
# entries in code only: one commented out (/* ... */ or //) is not in the table the library uses
sed 's:/\*[^*]*\*/::g; s://.*$::' src/*/*.c >"$tmp/code"
grep -o 'VT_HOOK_ENTRY([A-Za-z0-9_]*, [^,]*' "$tmp/code" | sed 's/VT_HOOK_ENTRY(//; s/, /\t/; s/"//g' | sort -u >"$tmp/table"
cut -f1 "$tmp/table" | sort -u >"$tmp/names"
nm -D --defined-only "$lib" | awk '{print $3}' | grep -E '^(cu|cuda|__cuda)' | sort -u >"$tmp/exported"
fail=0
missing=$(comm -23 "$tmp/names" "$tmp/exported")
extra=$(comm -13 "$tmp/names" "$tmp/exported")
if [ -z "$missing" ]; then echo "ok - every hook table entry is exported ($(wc -l <"$tmp/names") hooks)"; else echo "not ok - in a table but not exported: $missing"; fail=1; fi
if [ -z "$extra" ]; then echo "ok - every exported CUDA symbol has a table entry"; else echo "not ok - exported without a table entry (never swapped in by dlsym/cuGetProcAddress): $extra"; fail=1; fi
rt="$CUDA_HOME/lib64/libcudart.so"; drv="$CUDA_HOME/lib64/stubs/libcuda.so"
if [ -f "$rt" ] && [ -f "$drv" ]; then
    { nm -D --defined-only "$rt"; nm -D --defined-only "$drv"; } | awk '{print $3}' | sed 's/@.*//' | sort -u >"$tmp/real"
    unknown=$(comm -23 "$tmp/names" "$tmp/real")
    if [ -z "$unknown" ]; then echo "ok - every hook names a real libcudart/libcuda export"; else echo "not ok - hooks with no real symbol of that name: $unknown"; fail=1; fi
    bad=""
    while IFS="	" read -r name base; do
        [ "$base" = NULL ] && continue
        grep -qE "^${base}(_v[0-9]+)?\$" "$tmp/real" || bad="$bad $base"
    done <"$tmp/table"
    if [ -z "$bad" ]; then echo "ok - every cuGetProcAddress base name is a driver symbol"; else echo "not ok - base names unknown to the driver:$bad"; fail=1; fi
else
    echo "skip - CUDA toolkit libraries not found: real-symbol checks skipped"
fi
grep -o 'VT_HOOK_ENTRY([A-Za-z0-9_]*, [^,]*, [^,]*, [^,)]*)' "$tmp/code" |
    sed 's/VT_HOOK_ENTRY(//; s/)$//; s/[",]//g' | sort -u >"$tmp/entries"   # NAME BASE VERSION FLAG (BASE NULL: dlsym only)
awk '{ print $1, $2, $4 }' "$tmp/entries" >"$tmp/ptds"   # NAME BASE FLAG
wrong=$(awk '{ per = ($2 != "NULL" && $1 ~ /_pt(ds|sz)$/); if (per != $3) print $1 "=" $3 }' "$tmp/ptds" | tr '\n' ' ')
if [ "$(cut -d" " -f1 "$tmp/ptds" | sort -u | wc -l)" -eq "$(wc -l <"$tmp/names")" ] && [ -z "$wrong" ]; then
    echo "ok - the per-thread-stream flag is set on the _ptds/_ptsz variants only ($(grep -c ' 1$' "$tmp/ptds") of them)"
else
    echo "not ok - per-thread-stream flags that do not match the name (or entries not read: $(wc -l <"$tmp/ptds") of $(wc -l <"$tmp/names")): $wrong"; fail=1
fi
# a runtime entry (no base name) is found by dlsym only: it has no cuGetProcAddress version
rtver=$(awk '$2 == "NULL" && $3 != "0" { print $1 "=" $3 }' "$tmp/entries" | tr '\n' ' ')
if [ -z "$rtver" ]; then
    echo "ok - every runtime entry (no base name) has version 0 ($(awk '$2 == "NULL"' "$tmp/entries" | wc -l) of them)"
else
    echo "not ok - runtime entries with a cuGetProcAddress version: $rtver"; fail=1
fi
typedefs="$CUDA_HOME/include/cudaTypedefs.h"
if [ -f "$typedefs" ]; then
    grep -o 'PFN_[A-Za-z0-9_]*' "$typedefs" | sort -u >"$tmp/pfn"
    awk '$2 != "NULL"' "$tmp/entries" >"$tmp/versions"   # the driver entries
    undeclared=""
    while read -r name base version flag; do
        case $name in *_ptds) suffix=_ptds ;; *_ptsz) suffix=_ptsz ;; *) suffix= ;; esac
        grep -qx "PFN_${base}_v${version}${suffix}" "$tmp/pfn" || grep -qx "PFN_${name}_v${version}" "$tmp/pfn" ||
            undeclared="$undeclared $name($base,$version)"
    done <"$tmp/versions"
    if [ -z "$undeclared" ] && [ -s "$tmp/versions" ]; then
        echo "ok - every driver entry's version is one cudaTypedefs.h declares ($(wc -l <"$tmp/versions") entries)"
    else
        echo "not ok - versions cudaTypedefs.h does not declare for that name:$undeclared"; fail=1
    fi
else
    echo "skip - $typedefs not found: version check skipped"
fi
exit $fail
