#!/usr/bin/env python3
"""tools/mutants.py - `make mutants`: how many planted mistakes the test suite catches.

Plants N mutants (universalmutator's C rules: a flipped comparison, an off-by-one, a deleted
statement, a negated condition...) one at a time in a private copy of the tree, builds each and
runs the suite on it. Each mutant ends as one of:

  killed      a test failed (or hung past the timeout) with it
  survived    the whole suite passed with it: a mistake nothing checks (printed as a diff)
  no-build    it does not compile (-Werror included): the compiler caught it, not the tests
  same-code   its object file is byte for byte the original's (trivial compiler equivalence:
              compiled with -g0 and no LTO): it cannot change behaviour
  equivalent  reviewed by a person and listed, with the reason, in tests/mutants-equivalent.txt
  void        the only tests that failed with it fail without it too (a suite broken by work in
              progress, with --no-baseline): not counted, said loudly

The score of a module is killed / (killed + survived). A verdict is always the whole suite's:
the tests most likely to catch a module's mistakes run first, stopping at the first failure, and
a mutant they miss runs everything else before it is called a survivor.

Which mutants: SEED picks them (printed, so a run can be replayed), spread evenly over the
modules (MODULE= one of them), within a module a file by its number of candidate mutants, then
one of that file's. The same SEED and sources give the same mutants.

Usage: tools/mutants.py [--n N] [--module M] [--seed S] [--timeout S] [--no-baseline]
Needs universalmutator (`make mutants` installs it into the Python cache). The tree must be built
(`make test-deps`): its build folder is copied with the sources, so only what a mutant touches is
rebuilt.
"""
import argparse
import difflib
import glob
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EQUIVALENTS = "tests/mutants-equivalent.txt"

# module: (its sources, the test-name patterns that run first for it). The patterns only order
# the run; every verdict of "survived" is the whole suite's.
MODULES = {
    "hooks": (["src/hooks/*.c"], ["hooks_table", "trace_", "wl_", "check_", "graph_", "fold_", "sim_"]),
    "core": (["src/core/*.c"], ["unit-test_registry", "unit-test_rangemap", "unit-test_param",
                                "unit-test_findings", "check_", "fold_", "trace_", "wl_"]),
    "trace": (["src/trace/*.c"], ["unit-test_writer", "unit-test_records", "unit-test_jsonl", "journal",
                                  "trace_", "rel_crash", "report_basic"]),
    "fatbin": (["src/fatbin/*.c"], ["unit-test_fatbin", "fatbin_", "check_", "fw_sass"]),
    "platform": (["src/platform/*.c"], ["unit-test_config", "unit-test_resolve", "unit-test_addrspace",
                                        "unit-test_safepath", "unit-test_unwind", "unit-test_pyframes",
                                        "py_", "rel_", "trace_names"]),
    "reader": (["tools/report/reader*.c", "tools/report/inputs.c"],
               ["unit-test_report_reader", "report_malformed", "report_hostile", "report_parallel",
                "report_basic", "cli_conventions", "report_"]),
    "analysis": (["tools/report/analysis*.c", "tools/report/symbolize.c", "tools/report/refbw.c",
                  "tools/report/sass.c", "tools/report/pylines.c", "tools/report/gate.c"],
                 ["unit-test_sass", "unit-test_report_gate", "report_", "nvtx_ranges", "fw_lines",
                  "fw_sass", "steady_sites", "wl_"]),
    "renderers": (["tools/report/render*.c", "tools/report/escape.c", "tools/report/util.c",
                   "tools/report/cuda_errors.c", "tools/report/report.c"],
                  ["unit-test_report_format", "unit-test_report_util", "report_", "cli_conventions"]),
}
# lines never mutated: they change what is compiled in, not what the code does
IGNORE = [r"^\s*#\s*(include|pragma|error|warning)", r"_Static_assert|static_assert"]
RULES = ["universal.rules", "c.rules", "c_like.rules"]


def log(msg):
    print(msg, flush=True)


def run(cmd, cwd, env=None, timeout=None):
    """(status, output): a command's status and its stdout+stderr together."""
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or "") if isinstance(e.stdout, str) else ""


def module_files(module):
    files = []
    for pattern in MODULES[module][0]:
        files += sorted(glob.glob(os.path.join(ROOT, pattern)))
    return [os.path.relpath(f, ROOT) for f in files]


def outside_strings(line):
    """The line with each string literal's contents left out: universalmutator leaves mutants
    that change only string literals out, but misses them in a line of several literals with
    escaped quotes (an HTML template). Character constants are kept: they are code."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if c == "'":  # a character constant, kept whole
            j = i + 1
            while j < n and line[j] != "'":
                j += 2 if line[j] == "\\" else 1
            out.append(line[i:j + 1])
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
            i += 1
    return "".join(out)


def normalize(line):
    return " ".join(line.split())


def read_equivalents(path):
    """{(file, original, mutant): reason}. The file: records separated by blank lines, each
    'file: F', '- ORIGINAL LINE', '+ MUTANT LINE', 'why: REASON'; '#' lines are comments."""
    table = {}
    if not os.path.exists(path):
        return table
    record = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n") + [""]
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if record:
                if set(record) != {"file", "-", "+", "why"}:
                    sys.exit(f"{path}:{n}: an equivalent needs 'file:', '-', '+' and 'why:' lines")
                table[(record["file"], normalize(record["-"]), normalize(record["+"]))] = record["why"]
            record = {}
        elif line.startswith("file:"):
            record["file"] = line[5:].strip()
        elif line.startswith("why:"):
            record["why"] = line[4:].strip()
        elif line[:1] in "-+":
            record[line[0]] = line[1:]
        else:
            sys.exit(f"{path}:{n}: not an equivalents line: {line!r}")
    return table


class Candidates:
    """The mutants universalmutator makes of each file, generated once per file."""

    def __init__(self):
        import io
        import contextlib
        from universalmutator import mutator
        self._mutator, self._io, self._ctx = mutator, io, contextlib
        self._cache = {}

    def of(self, path):
        if path not in self._cache:
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                source = f.readlines()
            quiet = self._io.StringIO()
            with self._ctx.redirect_stdout(quiet):
                found = self._mutator.mutants_regexp(source, ruleFiles=RULES, ignorePatterns=IGNORE,
                                                     ignoreStringOnly=True)
            self._cache[path] = (source, [(n, text) for (n, text, _rule, _lr) in found
                                          if outside_strings(text) != outside_strings(source[n - 1])])
        return self._cache[path]


def draws(rng, module, cands, equivalents):
    """A module's mutants in the order SEED picks them, each once:
    (module, file, lineno, original, mutant, reason-if-listed-equivalent)."""
    weights = [(f, len(cands.of(f)[1])) for f in module_files(module)]
    weights = [(f, w) for f, w in weights if w]
    seen = set()
    while weights and len(seen) < sum(w for _, w in weights):
        f = rng.choices([f for f, _ in weights], weights=[w for _, w in weights])[0]
        source, muts = cands.of(f)
        lineno, text = muts[rng.randrange(len(muts))]
        if (f, lineno, text) in seen:
            continue
        seen.add((f, lineno, text))
        original = source[lineno - 1]
        yield module, f, lineno, original, text, equivalents.get((f, normalize(original), normalize(text)))


def copy_tree(dest):
    """The tracked and untracked-but-not-ignored files, and the build folder, with their times
    (make then rebuilds only what a mutant touches)."""
    out = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = os.path.join(ROOT, rel)
        if not os.path.lexists(src):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel), follow_symlinks=False)
    shutil.copytree(os.path.join(ROOT, "build"), os.path.join(dest, "build"), symlinks=True)


class Tree:
    def __init__(self, path, timeout, jobs):
        self.path, self.timeout, self.jobs = path, timeout, jobs
        self.env = dict(os.environ, BUILD="build")
        self._objects = {}
        self._commands = {}

    def make(self):
        return run(["make", "-s", f"-j{self.jobs}", "BUILD=build", "test-deps"], self.path,
                   timeout=1800)

    def compile_cmd(self, rel):
        """The compile command make uses for rel, made comparable: -g0, no LTO, no dep files."""
        obj = "build/obj/" + rel[:-2] + ".o"
        _, out = run(["make", "-n", "-B", "BUILD=build", obj], self.path)
        line = next((l for l in out.splitlines() if " -c " in l and rel in l), None)
        if line is None:
            return None
        words = shlex.split(line)
        keep = []
        skip_next = False
        for w in words:
            if skip_next:
                skip_next = False
                continue
            if w in ("-MMD", "-MP") or w.startswith("-flto") or w == "-ffat-lto-objects":
                continue
            if w == "-o":
                skip_next = True
                continue
            keep.append("-g0" if w == "-g" else w)
        return keep

    def object_of(self, rel, out):
        # asked of make once per file: the original's and every mutant's compile are the same
        if rel not in self._commands:
            self._commands[rel] = self.compile_cmd(rel)
        cmd = self._commands[rel]
        if cmd is None:
            return None
        status, msg = run(cmd + ["-o", out], self.path, timeout=300)
        if status != 0:
            return None
        with open(out, "rb") as f:
            return f.read()

    def original_object(self, rel, scratch):
        if rel not in self._objects:
            self._objects[rel] = self.object_of(rel, os.path.join(scratch, "orig.o"))
        return self._objects[rel]

    def tests(self, patterns=(), exclude=()):
        env = dict(self.env, VT_TEST_FAILFAST="1", VT_TEST_TIMEOUT=str(self.timeout),
                   VT_TEST_JOBS=str(self.jobs), VT_TEST_EXCLUDE=" ".join(exclude))
        status, out = run(["sh", "tests/run.sh", *patterns], self.path, env=env)
        failed = re.findall(r"^FAIL (\S+)", out, re.M)
        return status, failed, out


def diff_of(f, lineno, original, mutant):
    # a mutant may be several lines (universalmutator inserts a "break;" after a statement): each
    # line gets its sign, or the inserted ones read as context and the change as no change
    return "".join(difflib.unified_diff(original.splitlines(True), mutant.splitlines(True),
                                        f"a/{f}:{lineno}", f"b/{f}:{lineno}", n=0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="mutants to plant (default 20)")
    ap.add_argument("--module", choices=sorted(MODULES), help="only this module")
    ap.add_argument("--seed", type=int, help="replay a run (default: a new seed, printed)")
    ap.add_argument("--timeout", type=int, default=240, help="seconds one test may run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip checking that the suite passes on the unmutated copy first")
    ap.add_argument("--results", help="also write the per-mutant lines to this file")
    a = ap.parse_args()
    if a.n < 1:
        sys.exit("mutants: --n must be at least 1")
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    modules = [a.module] if a.module else list(MODULES)
    equivalents = read_equivalents(os.path.join(ROOT, EQUIVALENTS))
    log(f"mutants: seed {seed}, {a.n} mutant(s) over {', '.join(modules)}"
        f" (replay: make mutants SEED={seed} N={a.n}{' MODULE=' + a.module if a.module else ''})")
    cands = Candidates()
    rng = random.Random(seed)
    # N counts the mutants judged (killed or survived), spread evenly over the modules; the
    # ones that do not build or cannot change behaviour are reported but do not count
    quota = {m: a.n // len(modules) + (1 if i < a.n % len(modules) else 0) for i, m in enumerate(modules)}
    streams = {m: draws(rng, m, cands, equivalents) for m in modules}
    work = tempfile.mkdtemp(prefix="vt-mutants.")
    tree = Tree(os.path.join(work, "tree"), a.timeout, a.jobs)
    scratch = os.path.join(work, "scratch")
    os.makedirs(scratch)
    results = []
    try:
        log(f"mutants: copying the tree to {tree.path}")
        copy_tree(tree.path)
        status, out = tree.make()
        if status != 0:
            sys.exit("mutants: the unmutated copy does not build:\n" + out[-3000:])
        if not a.no_baseline:
            t0 = time.time()
            status, failed, out = tree.tests()
            if status != 0:
                sys.exit(f"mutants: the suite fails without any mutant ({', '.join(failed) or out[-500:]}):"
                         " fix that first")
            log(f"mutants: baseline: the whole suite passes ({time.time() - t0:.0f} s)")
        judged = {m: 0 for m in modules}
        tries = {m: 0 for m in modules}
        passing = set()  # tests seen passing on the unmutated copy
        i = 0
        while True:
            # round robin over the modules that still need mutants (and have not drawn 10 per
            # mutant wanted: a module of mostly unbuildable mutants must not run forever)
            open_modules = [m for m in modules if judged[m] < quota[m] and tries[m] < 10 * quota[m] + 10]
            if not open_modules:
                break
            module = open_modules[i % len(open_modules)]
            i += 1
            tries[module] += 1
            drawn = next(streams[module], None)
            if drawn is None:
                tries[module] = 10 * quota[module] + 10
                continue
            _, f, lineno, original, mutant, why = drawn
            t0 = time.time()
            head = f"[{sum(judged.values()) + 1}/{a.n}] {module} {f}:{lineno}"
            if why:
                verdict, detail = "equivalent", why
            else:
                verdict, detail = try_mutant(tree, scratch, module, f, lineno, mutant)
            if verdict == "killed":
                verdict, detail = confirm_kill(tree, detail, passing)
            if verdict in ("killed", "survived"):
                judged[module] += 1
            line = f"{head}: {verdict}{' (' + detail + ')' if detail else ''} [{time.time() - t0:.0f} s]"
            log(line)
            if verdict == "survived":
                log(diff_of(f, lineno, original, mutant).rstrip())
            results.append((module, f, lineno, original, mutant, verdict, line))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summarize(seed, modules, results, a.results)
    return 0


def try_mutant(tree, scratch, module, rel, lineno, mutant):
    path = os.path.join(tree.path, rel)
    with open(path, encoding="utf-8") as f:
        source = f.readlines()
    mutated = source[:lineno - 1] + [mutant] + source[lineno:]
    original_obj = tree.original_object(rel, scratch)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(mutated)
        obj = tree.object_of(rel, os.path.join(scratch, "mutant.o"))
        if obj is None:
            return "no-build", "does not compile"
        if original_obj is not None and obj == original_obj:
            return "same-code", ""
        status, out = tree.make()
        if status != 0:
            return "no-build", "the build fails"
        patterns = MODULES[module][1]
        status, failed, _ = tree.tests(patterns)
        if status == 0:
            status, failed, _ = tree.tests(exclude=patterns)
        if status != 0:
            return "killed", "by " + (", ".join(failed) or "the runner")
        return "survived", ""
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(source)
        # a new time, so that make rebuilds the original before the next mutant
        os.utime(path, None)


def confirm_kill(tree, detail, passing):
    """A kill counts only if the tests that failed pass without the mutant: with --no-baseline, a
    test already failing on the copy (work in progress) would "kill" every mutant. Each test is
    run on the unmutated copy once (try_mutant has put the source back; make rebuilds it)."""
    names = detail[3:].split(", ") if detail.startswith("by ") else []
    unchecked = [t for t in names if t not in passing and t != "the runner"]
    if not unchecked:
        return "killed", detail
    tree.make()
    broken = []
    for t in unchecked:
        status, failed, _ = tree.tests([t])
        if status == 0:
            passing.add(t)
        else:
            broken.append(t)
    if len(broken) == len(names):
        return "void", f"{', '.join(broken)} also fails without the mutant: fix the suite first"
    return "killed", detail


def summarize(seed, modules, results, results_path):
    log("")
    log(f"mutants: seed {seed}")
    log(f"{'module':10} {'killed':>6} {'survived':>8} {'no-build':>8} {'same-code':>9} "
        f"{'equivalent':>10} {'score':>6}")
    for m in modules + ["all"]:
        rows = [r for r in results if m == "all" or r[0] == m]
        counts = [sum(1 for r in rows if r[5] == v)
                  for v in ("killed", "survived", "no-build", "same-code", "equivalent")]
        judged = counts[0] + counts[1]
        score = f"{100 * counts[0] / judged:.0f}%" if judged else "-"
        log(f"{m:10} {counts[0]:>6} {counts[1]:>8} {counts[2]:>8} {counts[3]:>9} {counts[4]:>10} {score:>6}")
    voids = [r for r in results if r[5] == "void"]
    if voids:
        log(f"\nvoid ({len(voids)}): killed only by tests that fail without any mutant; not counted:")
        for r in voids:
            log("  " + r[6])
    survivors = [r for r in results if r[5] == "survived"]
    if survivors:
        log(f"\nsurvivors ({len(survivors)}): add a test that fails with each, or list it in "
            f"{EQUIVALENTS} with the reason it cannot change behaviour")
        for r in survivors:
            log(diff_of(r[1], r[2], r[3], r[4]).rstrip())
    if results_path:
        with open(results_path, "w", encoding="utf-8") as f:
            f.write(f"seed {seed}\n")
            for r in results:
                f.write(r[6] + "\n")
                if r[5] == "survived":
                    f.write(diff_of(r[1], r[2], r[3], r[4]))


if __name__ == "__main__":
    sys.exit(main())
