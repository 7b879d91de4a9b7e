/* rangemap.h - the sorted map of non-overlapping address ranges under registry.c.
 *
 * One map is one `struct vt_rm` (zero-initialised is empty); registry.c keeps many, each with its
 * own lock. Blocks of up to 32 sorted entries, indexed by a sorted array of each block's first base: an
 * insert or removal moves at most one block's entries (plus, on a split or an emptied block, one
 * pointer per block), so the cost stays flat with tens of thousands of live allocations; a lookup
 * is two binary searches. Reads (vt_rm_lookup) are lock-free under the map's seqlock; every other
 * call needs the map's lock held (the caller's). Blocks and index arrays are never returned to the system (a
 * reader may still be reading an old one; the seqlock makes it retry), only reused.
 */
#ifndef VT_RANGEMAP_H
#define VT_RANGEMAP_H
#include <stdint.h>

#include <stdatomic.h>
#include <stddef.h>

struct vt_rm_ent {
    uint64_t base, end;
    uint32_t meta;
    uint32_t at; /* where the entry sits (vt_rm_update_meta) or sat (vt_rm_remove): a hint; 0 none */
};

struct vt_rm_index;
struct vt_rm_blk;
struct vt_rm {
    _Atomic uint64_t seq;               /* odd while a writer is inside */
    _Atomic(struct vt_rm_index *) idx;
    _Atomic size_t nblk;
    struct vt_rm_blk *free_blks;
};

/* Position hints (`at`, 0 none) skip a search while the map has not moved the entry; every use
 * checks the hint against the entries it names (a stale or bogus hint only costs the search).
 *
 * Insert [base, end). `hint`: where an entry of this map sat (vt_rm_remove's out->at), tried as the
 * insert position. *at_out (may be NULL) gets where the entry now sits. 0, -1 out of memory,
 * -2 it overlaps an entry (nothing changed). */
int vt_rm_insert(struct vt_rm *m, uint64_t base, uint64_t end, uint32_t meta, uint32_t hint, uint32_t *at_out);
/* Remove the entry starting exactly at base; `at`: where it sits (vt_rm_insert's *at_out or
 * vt_rm_update_meta's out->at). 0 found (filled, out->at where it sat), -1 none. */
int vt_rm_remove(struct vt_rm *m, uint64_t base, uint32_t at, struct vt_rm_ent *out);
/* meta = (meta | set) & ~clear for the entry starting at base (`at` as for remove); fills *out
 * (after, out->at where it sits) when not NULL. 0 found, -1 none. */
int vt_rm_update_meta(struct vt_rm *m, uint64_t base, uint32_t at, uint32_t set, uint32_t clear, struct vt_rm_ent *out);
/* The last entry with base <= addr (locked). 0 found, -1 none. */
int vt_rm_floor(struct vt_rm *m, uint64_t addr, struct vt_rm_ent *out);
/* The last entry with base < before, the first with base > after (locked). 0 / -1. */
int vt_rm_prev(struct vt_rm *m, uint64_t before, struct vt_rm_ent *out);
int vt_rm_next(struct vt_rm *m, uint64_t after, struct vt_rm_ent *out);
/* The entry containing addr, without the lock. 0 found, -1 none, -2 writers kept the seqlock
 * busy (ask vt_rm_floor under the lock). */
int vt_rm_lookup(struct vt_rm *m, uint64_t addr, struct vt_rm_ent *out);
/* The entry starting exactly at base, without the lock; `at` as for remove (out->at: where it
 * sits). 0 found, -1 none, -2 as vt_rm_lookup. */
int vt_rm_get_lockfree(struct vt_rm *m, uint64_t base, uint32_t at, struct vt_rm_ent *out);
/* vt_rm_floor without the lock: 0, -1, or -2 as vt_rm_lookup. */
int vt_rm_floor_lockfree(struct vt_rm *m, uint64_t addr, struct vt_rm_ent *out);
/* Seqlock reads a lock-free search tries before answering -2 (64). Only tests change it: 0 makes
 * every search answer -2, so the callers' locked fallbacks, otherwise reached only when writers
 * race, are checked deterministically. */
extern int vt_rm_lockfree_tries;
void vt_rm_foreach(struct vt_rm *m, void (*fn)(const struct vt_rm_ent *, void *), void *ctx);
/* Fork child: empty (memory is reused, not freed). */
void vt_rm_reset(struct vt_rm *m);

#endif
