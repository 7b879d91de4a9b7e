#!/bin/sh
# report_symbols.sh - offline symbolization from recorded `module` records with libdwfl: function
# (demangled C++), file:line; the site is the first frame outside libvramtrace/libcudart/libcuda.
. "$ROOT/tests/lib.sh"
CXX=$(command -v g++ || command -v c++ || command -v clang++)
if [ -z "$CXX" ]; then skip "no C++ compiler"; exit 0; fi
cat >"$TMP/symprog.cc" <<'C'
#include <cstdio>
namespace model {
__attribute__((noinline)) int build_attention(int n)
{
    volatile int x = n * 2;
    std::printf("%d\n", x);
    return x + 1;
}
}
__attribute__((noinline)) int load_weights(int n) { volatile int y = n; return y + model::build_attention(n); }
int main() { return load_weights(3) == 0; }
C
"$CXX" -g -O0 -fPIE -pie -o "$TMP/symprog" "$TMP/symprog.cc" || { not_ok "compile symprog"; exit 0; }
addr() { nm "$TMP/symprog" | awk -v s="$1" '$3 == s { print $1 }'; }
ba=$(addr _ZN5model15build_attentionEi); lw=$(addr _Z12load_weightsi)
[ -n "$ba" ] && [ -n "$lw" ] || { not_ok "symbols found with nm"; exit 0; }
BASE=0x555555554000
pc() { printf '0x%x' $((BASE + 0x$1 + $2)); }
HI=$(printf '0x%x' $((BASE + 0x100000)))
cat >"$TMP/t.jsonl" <<J
{"ev":"header","format":"vramtrace-trace","version":1,"pid":1,"t":0,"program":"$TMP/symprog"}
{"ev":"module","path":"$TMP/symprog","base":"$BASE","lo":"$BASE","hi":"$HI"}
{"ev":"module","path":"/nonexistent/libvramtrace.so","base":"0x7f0000000000","lo":"0x7f0000000000","hi":"0x7f0000100000"}
{"ev":"module","path":"/nonexistent/libcudart.so.13","base":"0x7f1000000000","lo":"0x7f1000000000","hi":"0x7f1000100000"}
{"ev":"alloc","t":10,"tid":1,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x7e0000000000","size":2147483648,"mem":"device","bt":["0x7f0000000100","0x7f1000000200","$(pc "$ba" 12)","$(pc "$lw" 20)"]}
{"ev":"alloc","t":20,"tid":1,"api":"cudaMalloc","res":2,"dev":0,"size":1073741824,"mem":"device","free_bytes":0,"total_bytes":2147483648,"bt":["0x7f0000000100","$(pc "$lw" 20)"]}
J
out=$("$VT" report "$TMP/t.jsonl"); rc=$?
check_eq "report exits 0" "$rc" 0
check "site: demangled function with file:line, internal frames skipped" sh -c 'printf "%s\n" "$1" | grep -Eq "2.00 GiB +100.0% +1 alloc +model::build_attention\(int\) \(symprog.cc:[3-8]\)"' _ "$out"
check "stack kept: caller symbolized" sh -c 'printf "%s\n" "$1" | grep -Eq "from load_weights\(int\) \(symprog.cc:10\)"' _ "$out"
check "OOM held by names file:line" sh -c 'printf "%s\n" "$1" | grep -Eq "held by:   2.00 GiB model::build_attention\(int\) \(symprog.cc:[3-8]\)"' _ "$out"
j=$("$VT" report --json "$TMP/t.jsonl")
check "json stack has internal module frames too" sh -c 'printf "%s" "$1" | jq -e ".peak_sites[0].stack[0] == \"libvramtrace.so+0x100\"" >/dev/null' _ "$j"
out=$("$VT" report --no-symbols "$TMP/t.jsonl")
check "--no-symbols: module+offset" sh -c 'printf "%s\n" "$1" | grep -Eq "symprog\+0x[0-9a-f]+"' _ "$out"
