#!/usr/bin/env python3
"""check-layers.py - the dependency rules of src/ and tools/, checked from what the toolchain says.

Usage: tools/check-layers.py BUILD_DIR [CFLAG...]   (make check-layers)

A module is a .c file with the header of the same name beside it (a header without a .c is a
module of its own).  Module A depends on module B when A's source or header includes one of B's
files directly (from `cc -H`, which prints the include tree) or when A's object file has an
undefined symbol that B's object file defines (from `nm`).  Calls made through a function pointer
(a callback, a table) are not dependencies: that is how a lower layer hands news upward.

The rules:
  * src/ is layered, top to bottom: hooks, core, fatbin, trace, platform (each folder's README
    says what it owns).  A module may depend on its own folder and on folders below it only.
  * src/ never depends on tools/ (the CLI sits above the library).
  * no circles: no two modules of src/ or of tools/ depend on each other, directly or through
    others, even inside one folder.
Each breach is one line naming the two files and the include or symbol that ties them; the exit
status is 1 when there is any, 0 otherwise.
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

SRC_LAYERS = ["hooks", "core", "fatbin", "trace", "platform"]   # top first


def module_of(path, sources):
    """the module a project file belongs to: its .c when it is a header with one beside it"""
    stem, ext = os.path.splitext(path)
    if ext == ".h" and stem + ".c" in sources:
        return stem + ".c"
    return path


def layer_of(mod):
    parts = mod.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return None


def includes(src, cflags, root):
    """[(includer, included)] direct include edges between project files, from cc -H"""
    p = subprocess.run(["cc", "-E", "-H", "-o", os.devnull, *cflags, src], cwd=root,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("check-layers: cc -H failed on %s:\n%s" % (src, p.stderr))
    edges, stack = [], [src]
    for line in p.stderr.splitlines():
        m = re.match(r"^(\.+) (.*)$", line)
        if not m:
            continue
        depth, path = len(m.group(1)), os.path.normpath(m.group(2))
        del stack[depth:]
        rel = os.path.relpath(os.path.realpath(os.path.join(root, path)), root)
        parent = stack[-1]
        if parent is not None and not rel.startswith("..") and not os.path.isabs(rel):
            edges.append((parent, rel))
            stack.append(rel)
        else:
            stack.append(None)           # outside the project: its includes do not matter
    return edges


def symbols(obj):
    """(defined, undefined) global symbol names of an object file, from nm"""
    p = subprocess.run(["nm", "-P", obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("check-layers: nm failed on %s: %s" % (obj, p.stderr.strip()))
    defined, undefined = set(), set()
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) < 2 or f[0].startswith("__gnu_lto"):
            continue
        (undefined if f[1] in ("U", "w", "v") else defined if f[1].isupper() and f[1] != "U" else set()).add(f[0])
    return defined, undefined


def interposed_globs(mapfile):
    """the CUDA/libc entry points libvramtrace.so exports to interpose (its version script's
    global list, less the project's own vt_ ABI): a module calling one calls the real API through
    the dynamic linker, which is not a dependency on the hook that happens to define it"""
    text = re.sub(r"/\*.*?\*/", "", open(mapfile).read(), flags=re.S)
    m = re.search(r"global:(.*?)local:", text, re.S)
    return [g for g in re.findall(r"[^\s;]+", m.group(1) if m else "") if not g.startswith("vt_")]


def circles(nodes, deps):
    """strongly connected components with more than one module (Tarjan, iterative)"""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(deps.get(start, {}))))]
        index[start] = low[start] = n[0]; n[0] += 1; stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(deps.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def cycle_in(comp, deps):
    """one concrete cycle through the component's first module, for the message"""
    members, start = set(comp), comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(deps.get(v, {})):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in prev:
                    prev[w] = v; nxt.append(w)
        frontier = nxt
    return comp


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check-layers.py BUILD_DIR [CFLAG...]")
    build, cflags = sys.argv[1], sys.argv[2:]
    root = os.getcwd()
    sources = sorted(glob.glob("src/*/*.c") + glob.glob("tools/*.c") + glob.glob("tools/*/*.c"))
    srcset = set(sources)
    deps = {}          # module -> {module: why}

    def depend(a, b, why):
        if a != b:
            deps.setdefault(a, {}).setdefault(b, why)

    # Include edges.  A header with no .c of its own (a private header shared by a folder's
    # files, a table of types) is checked for layers like any file, but is transparent for
    # circles: including it depends on what it includes, not on the files that include it too.
    inc = {}
    for src in sources:
        for a, b in includes(src, cflags, root):
            inc.setdefault(a, set()).add(b)
    upward = []        # (module, file, why) for the layer check, header-only files included
    def through(f, seen):
        """the modules reached from file F's includes, header-only headers looked through"""
        for b in sorted(inc.get(f, ())):
            if b in seen:
                continue
            seen.add(b)
            mb = module_of(b, srcset)
            if mb.endswith(".h"):
                yield from through(b, seen)
            else:
                yield mb, b
    for f in sorted(inc):
        ma = module_of(f, srcset)
        if ma.endswith(".h"):
            continue
        for b in sorted(inc[f]):
            upward.append((ma, module_of(b, srcset), "includes " + b))
        for mb, b in through(f, set()):
            depend(ma, mb, "includes " + b)
    owner, undef = {}, {}
    for src in sources:
        obj = os.path.join(build, "obj", os.path.splitext(src)[0] + ".o")
        if not os.path.exists(obj):
            sys.exit("check-layers: %s is not built (run make first)" % obj)
        d, u = symbols(obj)
        undef[src] = u
        for s in d:
            owner.setdefault(s, src)
    api = interposed_globs("src/libvramtrace.map")
    for src in sources:
        for s in sorted(undef[src]):
            if s in owner and not any(fnmatch.fnmatchcase(s, g) for g in api):
                depend(src, owner[s], "calls " + s)

    problems = []
    for a in sorted(deps):
        upward.extend((a, b, why) for b, why in sorted(deps[a].items()))
    done = set()
    for a, b, why in upward:
        if a == b or (a, b) in done:
            continue
        done.add((a, b))
        if True:
            la, lb = layer_of(a), layer_of(b)
            if a.startswith("src/") and b.startswith("tools/"):
                problems.append("%s %s (%s): the library may not depend on the CLI" % (a, why, b))
            elif la in SRC_LAYERS and lb in SRC_LAYERS and SRC_LAYERS.index(lb) < SRC_LAYERS.index(la):
                problems.append("%s %s (%s): %s/ may not depend on %s/, a layer above it" % (a, why, b, la, lb))
    nodes = set(deps) | {b for d in deps.values() for b in d}
    for comp in circles(nodes, deps):
        cyc = cycle_in(comp, deps)
        steps = ", ".join("%s %s" % (cyc[i], deps[cyc[i]][cyc[i + 1]]) for i in range(len(cyc) - 1))
        problems.append("circle of %d modules (%s): %s" % (len(comp), " ".join(os.path.basename(c) for c in comp), steps))
    for p in problems:
        print("check-layers: " + p)
    if problems:
        print("check-layers: %d problem(s)" % len(problems))
        return 1
    print("check-layers: %d modules, no upward dependency, no circle" % len(nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
