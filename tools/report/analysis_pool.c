/* analysis_pool.c - the report's model of stream-ordered memory pools, per device, from the
 * calls (CUDA's documented behaviour): a cudaFreeAsync'd block stays reserved by its pool; a
 * later stream-ordered allocation it can hold reuses it instead of taking new memory; at a
 * synchronisation (stream, event, device) a pool gives back what it keeps beyond its release
 * threshold (0 unless the program set one: pool_attr); cu/cudaMemPoolTrimTo gives back down to
 * its argument (the pool_trim record's reserved_after, the driver's own answer, when present); a
 * device reset frees it all. Bytes, not blocks: one 4 MiB block kept free counts as room for
 * four 1 MiB allocations. Every device's pools are modelled as one (records do not name the
 * pool of an allocation). */
#include "report/analysis_priv.h"

static void note_reserved(struct vt_pool_view *v, int64_t t)
{
    uint64_t r = v->in_use + v->kept_free;
    if (r > v->reserved_peak) { v->reserved_peak = r; v->reserved_peak_t = t; }
}

void vt_an_pool_alloc(struct vt_device *d, uint64_t size, int64_t t)
{
    struct vt_pool_view *v = &d->pool;
    if (v->kept_free >= size) v->kept_free -= size;   /* reused: the reservation does not grow */
    vt_sat_add(&v->in_use, size);
    note_reserved(v, t);
}

void vt_an_pool_free(struct vt_device *d, uint64_t size)
{
    struct vt_pool_view *v = &d->pool;
    v->in_use = v->in_use > size ? v->in_use - size : 0;
    vt_sat_add(&v->kept_free, size);
}

void vt_an_pool_sync(struct vt_device *d)
{
    struct vt_pool_view *v = &d->pool;
    uint64_t room = v->threshold > v->in_use ? v->threshold - v->in_use : 0;
    if (v->kept_free > room) v->kept_free = room;
}

void vt_an_pool_trim(struct vt_device *d, uint64_t keep, int has_after, uint64_t after)
{
    struct vt_pool_view *v = &d->pool;
    uint64_t bound = has_after ? after : keep;
    uint64_t room = bound > v->in_use ? bound - v->in_use : 0;
    if (v->kept_free > room) v->kept_free = room;
}
