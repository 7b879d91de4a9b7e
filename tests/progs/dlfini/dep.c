/* dep.c - libdep.so: needs libnext.so (see next.c). */
int next_value(void);
int dep_probe(void) { return next_value() + 1; }
