#!/usr/bin/env python3
"""corpus.py - a generated corpus of kernel signatures and the program that checks the tracer on them.

Usage: corpus.py N SEED OUT.cu

Writes one CUDA source with N kernels (extern "C" k0 .. kN-1) whose parameters are drawn, from a
fixed seed, out of: scalars of every width, vector types (float2, float4, double2, int3), structs
with padding, packed structs (a pointer at byte 1), over-aligned structs (alignas 32), structs
holding a pointer or an array of pointers, nested structs, a union of an integer and a pointer,
and __grid_constant__ struct parameters; 1 to 64 parameters each.

The host half is the oracle, and it does not use the tracer's parser: for each kernel it prints
  layout kI OFF:SIZE ...          the parameters' offsets and sizes in the argument buffer, from
                                  offsetof/sizeof of a host struct with the same members in order
                                  (the CUDA argument buffer is laid out as that C struct), or
  layout kI over-aligned          for a kernel with an alignas(32) parameter: one aligned above 16
                                  moves with the parameter bank's per-architecture address, so the
                                  host struct is no oracle for it (docs/fatbin.md)
  expect host_pointer error kI ARG OFFSET VALUE top|struct
                                  for the one host pointer it plants in about half the kernels, in
                                  a pointer an 8-aligned-word rule can see (an 8-byte argument,
                                  "top", or an 8-aligned pointer member of a bigger one, "struct")
Every other pointer holds a live device address; scalars hold small numbers; and words inside
structs that are no pointer (a double, a stride table's unused tail) hold garbage that looks like
a heap address, so any other finding is a false one. Each kernel uses every pointer it gets as an
address, and only them, in a branch it never takes at run time: a GPU would not fault, and the
simulated device is told so (VRAMTRACE_SIM_DEREF, a table saying no kernel uses any word).
"""
import random
import sys

# name: (C type, kind); kind tells the host half how to fill it
STRUCTS = r'''
struct Pad { char a; double b; char c; };                       /* padding after a and c */
struct Ptr { int n; float *p; };                                /* pointer at 8 */
struct Arr { float *ptrs[3]; int n; };                          /* pointers at 0, 8, 16 */
struct __attribute__((packed)) Packed { char c; float *p; short s; };  /* pointer at byte 1 */
struct alignas(32) Over { int a; float *p; };                   /* over-aligned: 32 */
union IntOrPtr { long long i; float *p; };                      /* an integer or a pointer */
struct Nested { Ptr inner; double d; };                         /* pointer at 8 */
struct Small { short a; char b; };                              /* align 2, 4 bytes */
struct Ints5 { int a, b, c, d, e; };                            /* align 4 (CUB GridEvenShare) */
struct Strides { int ndim; long long sizes[6]; long long strides[6]; };  /* PyTorch-style: tail unused */
'''
# type name -> (pointer members as (byte offset expression, checkable by the word rule), fill code)
TYPES = {
    'char': [], 'short': [], 'int': [], 'long long': [], 'float': [], 'double': [],
    'float2': [], 'float4': [], 'double2': [], 'int3': [],
    'float *': [('0', True)], 'int *': [('0', True)],
    'Pad': [], 'Ptr': [('offsetof(Ptr, p)', True)],
    'Arr': [('offsetof(Arr, ptrs)', True), ('offsetof(Arr, ptrs) + 8', True), ('offsetof(Arr, ptrs) + 16', True)],
    'Packed': [('offsetof(Packed, p)', False)], 'Over': [('offsetof(Over, p)', True)],
    'IntOrPtr': [('0', True)], 'Nested': [('offsetof(Nested, inner) + offsetof(Ptr, p)', True)],
    'Small': [], 'Ints5': [], 'Strides': [],
}
WEIGHTS = [('float *', 6), ('int *', 3), ('int', 6), ('char', 2), ('short', 2), ('long long', 2), ('float', 3),
           ('double', 2), ('float2', 1), ('float4', 1), ('double2', 1), ('int3', 1), ('Pad', 2), ('Ptr', 2),
           ('Arr', 1), ('Packed', 1), ('Over', 1), ('IntOrPtr', 1), ('Nested', 1), ('Small', 1), ('Ints5', 2), ('Strides', 2)]
POOL = [t for t, w in WEIGHTS for _ in range(w)]


def touch_stmt(var, t):
    """device code using every pointer of VAR as an address (under a branch never taken), and a
    stride table's used entries as numbers"""
    if t.endswith('*'):
        return '%s[0] = 0;' % var
    if t in ('Ptr', 'Over', 'Packed', 'IntOrPtr'):
        return '%s.p[0] = 0;' % var
    if t == 'Arr':
        return '%s.ptrs[0][0] = %s.ptrs[1][0] = %s.ptrs[2][0] = 0;' % (var, var, var)
    if t == 'Nested':
        return '%s.inner.p[0] = 0;' % var
    if t == 'Strides':
        return ('for (int d = 0; d < %s.ndim; d++) sink += %s.strides[d] * (long long)(threadIdx.x %% %s.sizes[d]);'
                % (var, var, var))
    return ''


def fill_stmt(var, t):
    """C++ statements giving VAR of type T its value: every pointer a live device address (dev),
    every scalar a small number; words that are no pointer but sit in a struct hold garbage that
    looks like a host address (hg: a heap address), as a stride table's unused tail does"""
    if t == 'Pad':
        return 'memcpy(&%s.b, &hg, 8);' % var
    if t == 'Strides':
        return ('%s.ndim = 2; %s.sizes[0] = 4; %s.sizes[1] = 8; %s.strides[0] = 8; %s.strides[1] = 1; '
                'for (int d = 2; d < 6; d++) { memcpy(&%s.sizes[d], &hg, 8); memcpy(&%s.strides[d], &hg, 8); }'
                % ((var,) * 7))
    if t.endswith('*'):
        return '%s = (%s)dev;' % (var, t)
    if t in ('Ptr', 'Over'):
        return '%s.p = (float *)dev;' % var
    if t == 'Arr':
        return 'for (int j = 0; j < 3; j++) %s.ptrs[j] = (float *)dev;' % var
    if t == 'Packed':
        return '%s.p = (float *)dev;' % var
    if t == 'IntOrPtr':
        return '%s.p = (float *)dev;' % var
    if t == 'Nested':
        return '%s.inner.p = (float *)dev; memcpy(&%s.d, &hg, 8);' % (var, var)
    return ''


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    kernels = []
    for i in range(n):
        # mostly small signatures, some up to 64 parameters
        np_ = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64])
        params = [rng.choice(POOL) for _ in range(np_)]
        gc = [t in ('Ptr', 'Pad', 'Nested', 'Ints5') and rng.random() < 0.3 for t in params]
        leaves = [(j, expr) for j, t in enumerate(params) for expr, ok in TYPES[t] if ok]
        plant = rng.choice(leaves) if leaves and rng.random() < 0.5 else None
        kernels.append((params, gc, plant))

    w = []
    w.append('// Generated by tests/gen/corpus.py %d %d: do not edit.\n' % (n, seed))
    w.append('#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n')
    w.append('#include <cuda_runtime.h>\n')
    w.append(STRUCTS)
    w.append('__device__ int never;        /* 0: the kernels never take the branch that uses their arguments */\n')
    w.append('__device__ long long sink;\n')
    for i, (params, gc, plant) in enumerate(kernels):
        decl = ', '.join(('__grid_constant__ const ' if g else '') + '%s a%d' % (t, j) for j, (t, g) in enumerate(zip(params, gc)))
        body = ' '.join(touch_stmt('a%d' % j, t) for j, t in enumerate(params))
        w.append('extern "C" __global__ void k%d(%s) { if (never) { %s } }\n' % (i, decl, body))
        w.append('struct P%d { %s };\n' % (i, ' '.join('%s a%d;' % (t, j) for j, t in enumerate(params))))
    w.append('\nint main()\n{\n    char *dev;\n    if (cudaMalloc(&dev, 1 << 20)) return 2;\n')
    w.append('    char *host = (char *)malloc(4096);   /* the planted host pointer */\n')
    w.append('    char *garbage = (char *)malloc(4096);  /* what garbage words hold */\n')
    w.append('    uint64_t hg = (uint64_t)(uintptr_t)garbage;\n')
    w.append('    int bad = 0;\n')
    for i, (params, gc, plant) in enumerate(kernels):
        w.append('    {\n')
        if 'Over' in params:
            # A parameter aligned above 16 moves with the parameter bank's address, which is per
            # architecture (docs/fatbin.md): the host struct is no oracle for it or what follows.
            w.append('        printf("layout k%d over-aligned\\n");\n' % i)
        else:
            offs = ' '.join('%zu:%zu' for _ in params)
            args = ', '.join('offsetof(P%d, a%d), sizeof(((P%d *)0)->a%d)' % (i, j, i, j) for j in range(len(params)))
            w.append('        printf("layout k%d %s\\n", %s);\n' % (i, offs, args))
        for j, t in enumerate(params):
            w.append('        %s a%d; memset(&a%d, 0, sizeof a%d); a%d = {}; %s\n' % (
                t, j, j, j, j, fill_stmt('a%d' % j, t)) if not t.endswith('*') else
                '        %s a%d = (%s)dev;\n' % (t, j, t))
            if t in ('int', 'short', 'char', 'long long'):
                w.append('        a%d = (%s)(%d);\n' % (j, t, 3 + j))
        if plant:
            j, expr = plant
            w.append('        { void *h = host; memcpy((char *)&a%d + (%s), &h, sizeof h); }\n' % (j, expr))
            where = 'top' if params[j].endswith('*') or params[j] == 'IntOrPtr' else 'struct'  # an 8-byte argument, or inside a bigger one
            w.append('        printf("expect host_pointer error k%d %d %%zu 0x%%llx %s\\n", (size_t)(%s), '
                     '(unsigned long long)(uintptr_t)host);\n' % (i, j, where, expr))
        w.append('        k%d<<<1, 1>>>(%s);\n' % (i, ', '.join('a%d' % j for j in range(len(params)))))
        w.append('        bad |= cudaGetLastError() != cudaSuccess;\n    }\n')
    w.append('    bad |= cudaDeviceSynchronize() != cudaSuccess;\n')
    w.append('    cudaFree(dev);\n    free(host);\n    free(garbage);\n    printf("done %d kernels, errors %%d\\n", bad);\n    return bad;\n}\n' % n)
    with open(out, 'w') as f:
        f.write(''.join(w))


if __name__ == '__main__':
    main()
