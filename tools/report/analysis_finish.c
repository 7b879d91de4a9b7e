/* analysis_finish.c - end of a trace: leaks, symbolization of call stacks into sites, peak and
 * OOM holder tables, cross-process site merging, and freeing an analysis. */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_holding(const void *x, const void *y)
{
    const struct vt_holding *a = x, *b = y;
    return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : a->site - b->site;
}

static int cmp_kernel(const void *x, const void *y)
{
    const struct vt_kernel_stat *a = x, *b = y;
    return a->launches < b->launches ? 1 : a->launches > b->launches ? -1 : 0;
}

static void leak(struct vt_proc *p, struct vtr_hmap *m)
{
    struct vt_an_private *a = p->priv;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        struct live *l = &a->lives[m->vals[i]];
        struct stack *s = &a->stacks[l->stack];
        enum vt_mem mem = (enum vt_mem)l->mem;
        if ((unsigned)mem < VT_MEM__COUNT) { vt_sat_add(&p->leak_kind_bytes[mem], l->size); p->leak_kind_count[mem]++; }
        if (mem == VT_MEM_DEVICE || mem == VT_MEM_ASYNC || mem == VT_MEM_VMM) {
            vt_sat_add(&s->leak_bytes, l->size); s->leak_count++;
            vt_sat_add(&p->leak_bytes, l->size); p->leak_count++;
        } else if (mem == VT_MEM_MANAGED) { vt_sat_add(&s->managed_leak, l->size); vt_sat_add(&p->managed_leak_bytes, l->size); }
        else { vt_sat_add(&s->host_leak, l->size); vt_sat_add(&p->host_leak_bytes, l->size); }
    }
}

/* The source frame after F in stack S (F at pc index *J): the function F was inlined into, else
 * the next pc's innermost frame; NULL at the end. */
static const struct vt_frame *next_frame(struct vt_sym *sym, const struct stack *s, size_t *j, const struct vt_frame *f)
{
    if (f->outer) return f->outer;
    return ++*j < s->n ? vt_sym_lookup(sym, s->pcs[*j]) : NULL;
}

/* The interpreter itself: a frame of libpython or of the python executable. */
static int interpreter_frame(const struct vt_frame *f)
{
    return !f->python && f->module && (!strncmp(f->module, "libpython", 9) || !strncmp(f->module, "python", 6));
}

/* A Python frame of the program's own code: not a framework's package or the standard library. */
static int user_python(const struct vt_frame *f)
{
    const char *p = f->path ? f->path : "";
    return f->python && !strstr(p, "/site-packages/") && !strstr(p, "/dist-packages/") && !strstr(p, "/lib/python3") &&
           strncmp(p, "<frozen", 7) != 0;
}

/* The frames of stack S as the report shows them, in *OUT (malloc'd; the count): every source
 * frame of its native pcs, inlined ones included; with Python frames (tagged pcs, after the
 * native ones), those take the place of the interpreter's native frames: the native frames up
 * to the first interpreter frame, then the Python frames, innermost first. -1 out of memory. */
static long stack_view(struct vt_sym *sym, const struct stack *s, const struct vt_frame ***out)
{
    size_t nat = 0, npy = 0, cap = 0;
    while (nat < s->n && !(s->pcs[nat] & VT_PYFRAME_TAG)) nat++;
    npy = s->n - nat;
    size_t j = 0;
    if (nat)
        for (const struct vt_frame *f = vt_sym_lookup(sym, s->pcs[0]); f; f = next_frame(sym, s, &j, f)) {
            if (j >= nat) break;
            cap++;
        }
    const struct vt_frame **v = malloc((cap + npy + 1) * sizeof *v);
    if (!v) return -1;
    size_t n = 0;
    j = 0;
    if (nat)
        for (const struct vt_frame *f = vt_sym_lookup(sym, s->pcs[0]); f && n < cap; f = next_frame(sym, s, &j, f)) {
            if (j >= nat) break;
            if (npy && interpreter_frame(f)) break; /* the Python frames say where the interpreter was */
            v[n++] = f;
        }
    for (size_t i = nat; i < s->n; i++) v[n++] = vt_sym_lookup(sym, s->pcs[i]);
    *out = v;
    return (long)n;
}

/* The Python frame that names a site: the program's own innermost one (outside a framework's
 * package and the standard library), else the innermost Python frame; -1 with none. */
static long python_pick(const struct vt_frame **v, long n)
{
    for (long i = 0; i < n; i++) if (user_python(v[i])) return i;
    for (long i = 0; i < n; i++) if (v[i]->python) return i;
    return -1;
}

/* Label of a stack's site: its first source frame (inlined ones included) outside
 * vramtrace/CUDA plumbing and CUDA's headers (the innermost frame when all are); inside one of
 * NVIDIA's libraries (vt_sym_is_vendor_module), the outermost frame of that run of library
 * frames: the entry point the program called. *CALLER gets the label of the frame after it (not
 * C start-up code), or NULL; *ALWAYS says the caller belongs in the label whatever other stacks
 * say (a library entry point alone does not say which of the program's calls it was). */
static const char *site_label(struct vt_sym *sym, const struct stack *s, const char **caller, int *always)
{
    *caller = NULL;
    *always = 0;
    if (!s->n) return "(no backtrace)";
    const struct vt_frame **v;
    long n = stack_view(sym, s, &v);
    if (n < 0) return "?";
    if (n == 0) { free(v); return vt_sym_lookup(sym, s->pcs[0])->label; }
    const char *label = NULL;
    /* with Python frames: the program's own line (the innermost Python frame outside a
     * framework's package and the standard library; else the innermost one), and its caller */
    long py = python_pick(v, n);
    if (py >= 0) {
        label = v[py]->label;
        if (py + 1 < n) *caller = v[py + 1]->label;
        free(v);
        return label;
    }
    long pick = -1;
    int after_stub = 0;
    for (long i = 0; i < n && pick < 0; i++) {
        /* the frame calling nvcc's __device_stub__ is the kernel's host wrapper (named like the
         * kernel, at its __global__ line): the launch site is the one after it */
        if (!v[i]->internal && !after_stub && !v[i]->startup) pick = i;
        after_stub = v[i]->func && !strncmp(v[i]->func, "__device_stub__", 15);
    }
    if (pick < 0) { label = v[0]->label; free(v); return label; }
    if (vt_sym_is_vendor_module(v[pick]->module)) {
        *always = 1;
        while (pick + 1 < n && vt_sym_is_vendor_module(v[pick + 1]->module)) pick++;
    }
    if (pick + 1 < n && !v[pick + 1]->startup) *caller = v[pick + 1]->label;
    label = v[pick]->label;
    free(v);
    return label;
}

/* Maps every stack to a site, merged by site label.  Where stacks with the same site frame come
 * from different callers (a common allocation helper), the caller is added to the label:
 * "grab (oom.cu:16) <- alloc_attention (oom.cu:30)". */
static int make_sites(struct vt_proc *p)
{
    struct vt_an_private *a = p->priv;
    struct vtr_hmap by_label = { 0 }, callers = { 0 };   /* label id -> site; label id -> caller id + 1 or ~0 */
    size_t cap = 0;
    for (size_t i = 0; i < a->nstacks; i++) {
        const char *caller;
        int always;
        int64_t lid = vtr_strtab_intern(&a->strs, site_label(a->sym, &a->stacks[i], &caller, &always));
        int64_t cid = caller ? vtr_strtab_intern(&a->strs, caller) : -1;
        if (lid < 0 || (caller && cid < 0)) goto oom;
        uint64_t *c = vtr_hmap_get(&callers, (uint64_t)lid);
        if (!c) { if (vtr_hmap_put(&callers, (uint64_t)lid, (uint64_t)(cid + 1)) < 0) goto oom; }
        else if (*c != (uint64_t)(cid + 1)) *c = UINT64_MAX;
    }
    for (size_t i = 0; i < a->nstacks; i++) {
        struct stack *s = &a->stacks[i];
        int always;
        const char *caller, *label = site_label(a->sym, s, &caller, &always);
        char buf[2048];
        int64_t lid = vtr_strtab_intern(&a->strs, label);
        if (lid < 0) goto oom;
        /* a label the first pass did not see (symbolizing it failed then for want of memory):
         * its caller is added, as for a helper with several */
        const uint64_t *callers_of = vtr_hmap_get(&callers, (uint64_t)lid);
        if (caller && (always || !callers_of || *callers_of == UINT64_MAX)) {
            snprintf(buf, sizeof buf, "%s <- %s", label, caller);
            if ((lid = vtr_strtab_intern(&a->strs, buf)) < 0) goto oom;
        }
        uint64_t *site = vtr_hmap_get(&by_label, (uint64_t)lid);
        if (site) { s->site = (int)*site; continue; }
        const struct vt_frame **frames = NULL;
        size_t nf = 0;
        if (s->n) {   /* every source frame, inlined ones included, Python ones in the interpreter's place */
            long k = stack_view(a->sym, s, &frames);
            if (k < 0) goto oom;
            nf = (size_t)k;
            /* a Python site: its frame and the Python frames out from it (what its "from" lines
             * show); the native frames are inside the line, below the interpreter */
            long py = python_pick(frames, k);
            if (py >= 0) {
                const struct vt_frame **o = malloc((nf ? nf : 1) * sizeof *o);
                if (!o) { free(frames); goto oom; }
                size_t m = 0;
                for (long x = py; x < k; x++) o[m++] = frames[x];
                free(frames);
                frames = o;
                nf = m;
            }
        }
        if (p->nsites == cap) {
            cap = cap ? cap * 2 : 64;
            struct vt_site *ns = realloc(p->sites, cap * sizeof *ns);
            if (!ns) { free(frames); goto oom; }
            p->sites = ns;
        }
        struct vt_site *t = &p->sites[p->nsites];
        memset(t, 0, sizeof *t);
        t->nvtx = "";
        t->label = vtr_strtab_get(&a->strs, lid);
        t->frames = frames;
        t->nframes = nf;
        t->no_backtrace = !s->n;
        s->site = (int)p->nsites++;
        if (vtr_hmap_put(&by_label, (uint64_t)lid, (uint64_t)s->site) < 0) goto oom;
    }
    vtr_hmap_free(&by_label);
    vtr_hmap_free(&callers);
    for (size_t i = 0; i < a->nstacks; i++) {
        struct stack *s = &a->stacks[i];
        struct vt_site *t = &p->sites[s->site];
        if (s->range_seen) {   /* one range for all the site's stacks, else "(several ranges)" */
            char path[1024] = "";
            if (s->range_mixed) snprintf(path, sizeof path, "(several ranges)");
            else if (s->range_node) vt_an_node_path(p, s->range_node, path, sizeof path);
            if (!t->nvtx_set) { t->nvtx = vt_an_keep(p, path); t->nvtx_set = 1; }
            else if (strcmp(t->nvtx, path)) t->nvtx = "(several ranges)";
        }
        vt_sat_add(&t->peak_bytes, s->snap_bytes); t->peak_count += s->snap_count;
        vt_sat_add(&t->alloc_bytes, s->alloc_bytes); t->alloc_count += s->alloc_count;
        vt_sat_add(&t->leak_bytes, s->leak_bytes); t->leak_count += s->leak_count;
        vt_sat_add(&t->host_leak_bytes, s->host_leak); vt_sat_add(&t->managed_leak_bytes, s->managed_leak);
        vt_sat_add(&t->reset_bytes, s->reset_bytes); t->reset_count += s->reset_count;
        vt_sat_add(&t->copy_bytes, s->copy_bytes); t->copy_count += s->copy_count; t->copy_ns += s->copy_ns;
        vt_sat_add(&t->pageable_bytes[0], s->pageable_bytes[0]); vt_sat_add(&t->pageable_bytes[1], s->pageable_bytes[1]);
        t->pageable_count += s->pageable_count; t->d2h_sync_count += s->d2h_sync_count; t->staged_count += s->staged_count;
    }
    return 0;
oom:
    vtr_hmap_free(&by_label);
    vtr_hmap_free(&callers);
    return VT_AN_ENOMEM;
}

/* Rewrites a holdings list from stack ids to merged, sorted site ids. SCRATCH has nsites slots. */
static void holdings_to_sites(struct vt_proc *p, struct vt_holding *h, size_t *n, struct vt_holding *scratch)
{
    size_t out = 0;
    for (size_t i = 0; i < *n; i++) {
        struct vt_holding cur = h[i];
        int site = p->priv->stacks[cur.site].site;
        if (!scratch[site].bytes && !scratch[site].count) {
            scratch[site].site = (int)out;           /* remember where it goes */
            h[out++] = (struct vt_holding){ site, 0, 0 };
        }
        struct vt_holding *dst = &h[scratch[site].site];
        vt_sat_add(&dst->bytes, cur.bytes); dst->count += cur.count;
        scratch[site].bytes = 1;
    }
    for (size_t i = 0; i < out; i++) scratch[h[i].site] = (struct vt_holding){ 0, 0, 0 };
    *n = out;
    qsort(h, out, sizeof *h, cmp_holding);
}

int vt_proc_finish(struct vt_proc *p, char *err, size_t errlen)
{
    struct vt_an_private *a = p->priv;
    if (a->peak_pending) vt_an_snapshot(p);
    if (p->pause_depth > 0) p->paused_ns += p->t_end - p->pause_t0;   /* ended while paused */
    leak(p, &a->by_addr);
    leak(p, &a->by_handle);
    if (vt_an_settle_notes(p) < 0) goto oom;
    if (make_sites(p) < 0) goto oom;
    char stale[2048];
    if (vt_sym_stale_modules(p->priv->sym, 0, stale, sizeof stale)) p->stale_modules = vt_an_keep(p, stale);
    if (vt_sym_stale_modules(p->priv->sym, 1, stale, sizeof stale)) p->missing_modules = vt_an_keep(p, stale);
    if (p->caching_allocator && !strncmp(p->caching_allocator, "PyTorch", 7)) {
        /* its cudaMallocAsync backend caches nothing itself: each tensor is an allocation (the
         * driver's pool keeps freed memory, counted as pools) */
        int async = p->torch_async_conf && p->async_allocs;
        p->torch_backend = async ? "cudaMallocAsync" : "native";
        if (async) p->caching_allocator = NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->nsites; i++) n += p->sites[i].peak_bytes > 0;
    if (!(p->peak_sites = calloc(n ? n : 1, sizeof *p->peak_sites))) goto oom;
    for (size_t i = 0; i < p->nsites; i++)
        if (p->sites[i].peak_bytes)
            p->peak_sites[p->npeak_sites++] = (struct vt_holding){ (int)i, p->sites[i].peak_bytes, p->sites[i].peak_count };
    qsort(p->peak_sites, p->npeak_sites, sizeof *p->peak_sites, cmp_holding);
    struct vt_holding *scratch = calloc(p->nsites ? p->nsites : 1, sizeof *scratch);
    if (!scratch) goto oom;
    for (size_t i = 0; i < p->nooms; i++) {
        struct vt_oom *o = &p->ooms[i];
        o->site = a->stacks[o->site].site;
        if (o->holders) holdings_to_sites(p, o->holders, &o->nholders, scratch);
    }
    for (size_t i = 0; i < p->nsnapshots; i++) holdings_to_sites(p, p->snapshots[i].holders, &p->snapshots[i].nholders, scratch);
    for (size_t i = 0; i < p->ndevices; i++) {   /* each device's own peak, from its cells */
        struct vt_device *d = &p->devices[i];
        if (d->peak_pending) vt_an_device_snapshot(p, d);
        if (!d->peak) continue;
        size_t k = 0;
        for (size_t c = 0; c < a->ncells; c++) k += a->cells[c].dev == d->dev && a->cells[c].snap;
        if (!(d->peak_sites = calloc(k ? k : 1, sizeof *d->peak_sites))) { free(scratch); goto oom; }
        for (size_t c = 0; c < a->ncells; c++)
            if (a->cells[c].dev == d->dev && a->cells[c].snap)
                d->peak_sites[d->npeak_sites++] = (struct vt_holding){ (int)a->cells[c].stack, a->cells[c].snap, a->cells[c].snap_count };
        holdings_to_sites(p, d->peak_sites, &d->npeak_sites, scratch);
    }
    free(scratch);
    for (size_t i = 0; i < p->nlargest; i++) p->largest[i].site = a->stacks[p->largest[i].site].site;
    for (size_t i = 0; i < p->nfindings; i++)
        if (p->findings[i].site >= 0) p->findings[i].site = a->stacks[p->findings[i].site].site;
    for (size_t i = 0; i < p->nnotes; i++)
        if (p->notes[i].site >= 0) p->notes[i].site = a->stacks[p->notes[i].site].site;
    for (size_t i = 0; i < p->nerrors; i++) p->errors[i].site = a->stacks[p->errors[i].site].site;
    for (size_t i = 0; i < p->ntimeline; i++)
        if (p->timeline[i].used && p->timeline[i].big_site >= 0)
            p->timeline[i].big_site = a->stacks[p->timeline[i].big_site].site;
    if (p->nkernels) qsort(p->kernels, p->nkernels, sizeof *p->kernels, cmp_kernel);
    if (vt_an_range_finish(p) < 0 || vt_an_steps_finish(p) < 0) goto oom;
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory", p->path);
    return VT_AN_ENOMEM;
}

void vt_proc_free(struct vt_proc *p)
{
    if (!p) return;
    struct vt_an_private *a = p->priv;
    for (size_t i = 0; i < p->nsites; i++) free((void *)p->sites[i].frames);
    free(p->sites);
    free(p->peak_sites);
    for (size_t i = 0; i < p->nooms; i++) free(p->ooms[i].holders);
    for (size_t i = 0; i < p->nsnapshots; i++) free(p->snapshots[i].holders);
    free(p->snapshots);
    free(p->ooms);
    free(p->findings);
    free(p->notes);
    for (size_t i = 0; i < p->nkernels; i++) free(p->kernels[i].params);
    free(p->kernels);
    for (size_t i = 0; i < p->ndevices; i++) free(p->devices[i].peak_sites);
    free(p->devices);
    free(p->ranges);
    vt_an_steps_free(p);
    if (a) {
        for (size_t i = 0; i < a->nstacks; i++) free(a->stacks[i].pcs);
        free(a->stacks);
        vtr_hmap_free(&a->stack_index);
        free(a->lives);
        free(a->freelist);
        vtr_hmap_free(&a->by_addr);
        vtr_hmap_free(&a->by_handle);
        vtr_hmap_free(&a->map_handle);
        vtr_hmap_free(&a->map_size);
        free(a->touched);
        vtr_strtab_free(&a->strs);
        free(a->rnodes);
        vtr_hmap_free(&a->rchild);
        vtr_hmap_free(&a->tid_node);
        free(a->open);
        free(a->rstats);
        vtr_hmap_free(&a->rstat_by_hash);
        vtr_hmap_free(&a->kernel_by_id);
        vtr_hmap_free(&a->finding_by_id);
        free(a->words);
        vtr_hmap_free(&a->note_words);
        free(a->changes);
        free(a->pending);
        vtr_hmap_free(&a->staged);
        vtr_hmap_free(&a->await_stack);
        free(a->cells);
        vtr_hmap_free(&a->cell_index);
        free(a->ctouched);
        vtr_hmap_free(&a->await_stream);
        vt_sym_free(a->sym);
        free(a);
    }
    free(p);
}

static int cmp_merged(const void *x, const void *y)
{
    const struct vt_merged_site *a = x, *b = y;
    return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : strcmp(a->label, b->label);
}

long vt_merge_sites(struct vt_proc *const *procs, size_t n, int which, struct vt_merged_site **out)
{
    size_t len = 0, cap = 0;
    struct vt_merged_site *m = NULL;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < procs[i]->nsites; j++) {
            const struct vt_site *s = &procs[i]->sites[j];
            uint64_t bytes = which == 2 ? s->reset_bytes : which ? s->leak_bytes : s->peak_bytes;
            uint64_t count = which == 2 ? s->reset_count : which ? s->leak_count : s->peak_count;
            if (!bytes) continue;
            size_t k = 0;
            while (k < len && strcmp(m[k].label, s->label)) k++;   /* sites per trace are few */
            if (k == len) {
                if (len == cap) {
                    cap = cap ? cap * 2 : 64;
                    struct vt_merged_site *nm = realloc(m, cap * sizeof *nm);
                    if (!nm) { free(m); return -1; }
                    m = nm;
                }
                m[len++] = (struct vt_merged_site){ s->label, 0, 0 };
            }
            vt_sat_add(&m[k].bytes, bytes); m[k].count += count;
        }
    if (len) qsort(m, len, sizeof *m, cmp_merged);
    *out = m;
    return (long)len;
}
