/* param_types.h - what a C++ kernel's mangled name says about its top-level parameters.
 *
 * A kernel's argument buffer says where each parameter is, not what it is: an int64_t seed that
 * happens to equal a host heap address looks like a host pointer, and so does an 8-byte lambda
 * closure. The mangled name carries the types (`_Z5scalePfl`: float *, long), so an arithmetic
 * parameter (an integer of any width, a bool, a floating type) is never read as an address, and
 * a class passed by value is a by-value struct whatever its size. The name is demangled by the C++ runtime
 * already in the process (__cxa_demangle); without one, or for a name that is not C++ (extern
 * "C", numba's, Triton's), nothing is known and every parameter keeps the pointer check.
 *
 * Invariants: pure string work, no allocation in vt_param_types_parse; a signature it cannot
 * read with certainty gives -1 (unknown), never a guess. */
#ifndef VT_PARAM_TYPES_H
#define VT_PARAM_TYPES_H
#include <stdint.h>

enum vt_param_type {
    VT_PT_OTHER = 0,  /* not read with certainty (a reference, an array, anything unusual): may be an address */
    VT_PT_ARITH = 1,  /* a built-in integer, bool or floating type, std::nullptr_t: never an address */
    VT_PT_POINTER = 2, /* a pointer (to data or a function): the address itself */
    VT_PT_CLASS = 3,  /* a class, struct, union, enum or lambda closure passed by value: its words are
                       * a by-value struct's, whatever its size (an 8-byte closure is no pointer) */
};

/* The demangled signature DEMANGLED ("void k<float>(float*, long)"): the type of each of its
 * top-level parameters into kinds[0..max) (enum vt_param_type). Returns the number of
 * parameters (0 for "()"), or -1 when the text is no signature it can read or has more than max. */
int vt_param_types_parse(const char *demangled, uint8_t *kinds, uint32_t max);

/* The mangled kernel name MANGLED demangled by the process's C++ runtime and parsed as above;
 * -1 when it is no C++ name, no demangler is loaded, or the parse fails. */
int vt_param_types_of(const char *mangled, uint8_t *kinds, uint32_t max);
#endif
