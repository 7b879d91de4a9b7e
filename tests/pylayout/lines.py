"""lines.py - CPython's own answer for line numbers (tests/cases/py_lines.sh): every code object of
a few standard modules (nested ones included), as its line table's bytes and, for each
instruction offset, the line code.co_lines() gives it. Output: "C VERSION FIRSTLINE HEX" per
code object, then "O OFFSET LINE" per instruction (LINE -1 for none). With the argument "fresh",
the modules' sources compiled by this interpreter instead of their imported functions."""
import argparse, json, sys, types, dis, inspect  # noqa: E401  (their code is the sample)

ver = sys.version_info[0] * 100 + sys.version_info[1]


def codes(obj, seen):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    for c in obj.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c, seen)


def emit(code):
    print("C", ver, code.co_firstlineno, code.co_linetable.hex())
    for start, end, line in code.co_lines():
        for off in range(start, end, 2):
            print("O", off, -1 if line is None else line)


seen = set()
n = 0
modules = (argparse, json.decoder, json.encoder, dis, inspect)
if sys.argv[1:] == ["fresh"]:
    # the modules' sources compiled now, so this interpreter's options apply (with -X
    # no_debug_ranges, 3.11+ writes its tables without columns: the "no columns" entries)
    tops = []  # kept alive: `seen` holds ids, and a freed code object's id can come back
    for mod in modules:
        with open(mod.__file__, encoding="utf-8") as f:
            tops.append(compile(f.read(), mod.__file__, "exec"))
        for code in codes(tops[-1], seen):
            emit(code)
            n += 1
else:
    for mod in modules:
        for name, value in vars(mod).items():
            for fn in ([value] if inspect.isfunction(value) else
                       [v for v in vars(value).values() if inspect.isfunction(v)] if inspect.isclass(value) else []):
                for code in codes(fn.__code__, seen):
                    emit(code)
                    n += 1
print("N", n)
