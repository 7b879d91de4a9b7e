/* findings.h - the `finding` record (findings.c): what kind of bad pointer, where it was
 * handed, and its message; counts for the exit summary. */
#ifndef VT_FINDINGS_H
#define VT_FINDINGS_H
#include <stdint.h>

#include <vramtrace/trace.h>

#include "kernels.h"
#include "tracer.h"

/* finding kinds, in vramtrace/trace.h's order (the trace's "kind" names) */
enum vt_finding_kind {
#define VT_X(id) VT_F_##id,
    VT_TRACE_FINDINGS(VT_X)
#undef VT_X
    VT_F_COUNT
};
struct vt_finding {
    int kind, error;            /* error: 1 error, 0 warning */
    int note;                   /* not a finding: a word nothing can verify (severity "note"); not
                                 * counted, not on stderr, never stops the program */
    const char *api;
    vt_kernel *k; int arg; uint64_t offset;
    uint64_t value;
    const char *cls, *mapping;  /* classification of a host value */
    uint64_t alloc_base, alloc_size; int has_alloc;
    int alloc_mem;              /* has_alloc: the allocation's kind (enum vt_mem) */
    int alloc_dev;              /* WRONG_DEVICE: the allocation's device */
    int dev;                    /* a launch finding (k set): the launch's device */
    const char *why;            /* extra explanation appended to the message, may be NULL */
};
void vt_ev_finding(const struct vt_finding *f);
/* Findings and notes this thread has made (vt_ev_finding): a call whose checks raised the count
 * keeps its line (fold.h). */
extern VT_TLS unsigned long vt_findings_made;

/* Writes the final count of each launch finding repeated since its last line (at exit, before
 * the journal closes). */
void vt_findings_flush(void);
/* Exit summary: findings of KIND so far, repeats included (notes are none). */
uint64_t vt_findings_count(int kind);
/* Of all findings so far, the errors (the others are warnings). */
uint64_t vt_findings_errors(void);
/* Fork child: no finding yet. */
void vt_findings_reset_after_fork(void);
/* Tests: the "id" a finding with repeat key KEY gets (its slot + 1), claiming the slot; 0 when
 * the probes from its home slot are all taken (the finding is then written whole each time). */
long vt_findings_repeat_id(uint64_t key);
#endif
