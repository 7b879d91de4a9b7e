/* rangemap.h - the sorted map of non-overlapping address ranges under registry.c.
 *
 * Blocks of up to 64 sorted entries, indexed by a sorted array of each block's first base: an
 * insert or removal moves at most one block's entries (plus, on a split or an emptied block, one
 * pointer per block), so the cost stays flat with tens of thousands of live allocations; a lookup
 * is two binary searches. Reads (vt_rm_lookup) are lock-free under a seqlock; every other call
 * needs the registry lock held. Blocks and index arrays are never returned to the system (a
 * reader may still be reading an old one; the seqlock makes it retry), only reused.
 */
#ifndef VT_RANGEMAP_H
#define VT_RANGEMAP_H
#include <stdint.h>

struct vt_rm_ent {
    uint64_t base, end;
    uint32_t meta;
};

/* Insert [base, end) (the caller has removed any overlap). 0, or -1 out of memory. */
int vt_rm_insert(uint64_t base, uint64_t end, uint32_t meta);
/* Remove the entry starting exactly at base. 0 found (filled), -1 none. */
int vt_rm_remove(uint64_t base, struct vt_rm_ent *out);
/* Replace the meta word of the entry starting at base. 0 found, -1 none. */
int vt_rm_set_meta(uint64_t base, uint32_t meta);
/* The last entry with base <= addr (locked). 0 found, -1 none. */
int vt_rm_floor(uint64_t addr, struct vt_rm_ent *out);
/* The last entry with base < before, the first with base > after (locked). 0 / -1. */
int vt_rm_prev(uint64_t before, struct vt_rm_ent *out);
int vt_rm_next(uint64_t after, struct vt_rm_ent *out);
/* The entry containing addr, without the lock. 0 found, -1 none. */
int vt_rm_lookup(uint64_t addr, struct vt_rm_ent *out);
void vt_rm_foreach(void (*fn)(const struct vt_rm_ent *, void *), void *ctx);
/* Fork child: empty (memory is reused, not freed). */
void vt_rm_reset(void);

#endif
