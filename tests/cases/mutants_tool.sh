#!/bin/sh
# mutants_tool.sh - what `make mutants` (tools/mutants.py) relies on without running it (a run
# takes minutes a mutant; docs/testing.md): every C source of src/ and tools/report/ is in exactly
# one module, tests/mutants-equivalent.txt parses, and each record in it names a line its file
# still has (a stale record would hide nothing, but says a review was done that no longer holds).
. "$(dirname "$0")/../lib.sh"
cd "$ROOT" || exit 1
python3 - >"$TMP/out" 2>&1 <<'PY'
import os, sys, glob
sys.path.insert(0, "tools")
import mutants as m
owners = {}
for mod in m.MODULES:
    files = m.module_files(mod)
    print(("ok" if files else "not ok") + f" - module {mod} has sources ({len(files)})")
    for f in files:
        owners.setdefault(f, []).append(mod)
all_c = sorted(glob.glob("src/*/*.c") + glob.glob("tools/report/*.c"))
bad = [f"{f}: {owners.get(f, 'no module')}" for f in all_c if len(owners.get(f, [])) != 1]
print(("ok" if not bad else "not ok") + f" - each of {len(all_c)} sources in exactly one module" + (f" ({'; '.join(bad)})" if bad else ""))
table = m.read_equivalents(m.EQUIVALENTS)
stale = []
for (f, orig, mut), why in table.items():
    try:
        lines = {m.normalize(l) for l in open(f, encoding="utf-8")}
    except OSError:
        lines = set()
    if orig not in lines or not why:
        stale.append(f"{f}: {orig}")
print(("ok" if not stale else "not ok") + f" - {len(table)} listed equivalents each name a line their file has" + (f" (stale: {stale})" if stale else ""))
PY
cat "$TMP/out"
grep -q '^\(not \)\?ok - ' "$TMP/out" || not_ok "mutants_tool: the checks did not run: $(tail -3 "$TMP/out")"
# the parser rejects a record missing a line, naming the file and line
printf 'file: src/core/registry.c\n- a\nwhy: x\n\n' >"$TMP/eq.txt"
out=$(cd tools && python3 -c 'import mutants, sys; mutants.read_equivalents(sys.argv[1])' "$TMP/eq.txt" 2>&1)
check_eq "an equivalents record without its '+' line is refused with its place" \
    "$(printf '%s' "$out" | grep -c "eq.txt:4: an equivalent needs")" 1
# a kill counts only when the failing test passes without the mutant (confirm_kill): a test that
# fails on the unmutated copy too makes the verdict "void"; a test seen passing is not run again
out=$(cd tools && python3 - 2>&1 <<'PY'
import mutants
class Fake:
    def __init__(self, broken): self.broken, self.runs = broken, []
    def make(self): return 0, ""
    def tests(self, patterns=(), exclude=()):
        self.runs.append(list(patterns))
        bad = [t for t in patterns if t in self.broken]
        return (1 if bad else 0), bad, ""
t, passing = Fake({"report_perfetto"}), set()
print(mutants.confirm_kill(t, "by check_pointers", passing)[0])
print(mutants.confirm_kill(t, "by check_pointers", passing)[0], len(t.runs))
print(mutants.confirm_kill(t, "by report_perfetto", passing)[0])
print(mutants.confirm_kill(t, "by report_perfetto, check_verdicts", passing)[0])
PY
)
check_eq "confirm_kill: a real kill counts (its test run once on the copy), a kill by a test broken without the mutant is void" \
    "$(printf '%s' "$out" | tr '\n' ';')" "killed;killed 1;void;killed"
# a mutant of several lines (universalmutator inserts "break;" after a statement) shows the inserted
# line signed "+": printed as context, the survivor read as no change at all
out=$(cd tools && python3 -c 'import mutants; print(mutants.diff_of("r.c", 214, "  n++;\n", "  n++;\n  break;\n"), end="")' 2>&1)
check_eq "a survivor's diff signs each inserted line" "$(printf '%s' "$out" | tr '\n' ';')" "--- a/r.c:214;+++ b/r.c:214;@@ -1,0 +2 @@;+  break;"
