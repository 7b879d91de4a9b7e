/* render_diff.c - `report --diff BASE NEW`: two runs side by side (heaptrack's diff, for VRAM):
 * the summary figures of each, the sites at the peak by how much they changed, and the achieved
 * bandwidth of each kind of copy. A side is every trace given for it (a file or a directory).
 *
 * Sites are matched by their label; sites left over whose labels differ only in line numbers
 * (the code moved between the runs) are matched in line order when each side has as many of
 * them. Nothing here prints diagnostics: errors are returned (-1). */
#include "report/render.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define U(x) ((unsigned long long)(x))

struct side_sum {
    size_t traces;
    uint64_t peak, ooms, leaked, allocs, alloc_bytes, findings, errors, warnings, failed;
    int growth;                        /* VT_GROWTH_*: the fastest growing process's, else the first process's with steps */
    int64_t growth_rate;               /* bytes per step when growing, else 0 */
    uint64_t steps;
};
static const char *const growth_names[] = { "none", "flat", "warmup", "steady" };

static struct side_sum summarize(struct vt_proc *const *procs, size_t n)
{
    struct side_sum s = { .traces = n };
    for (size_t i = 0; i < n; i++) {
        const struct vt_proc *p = procs[i];
        if (p->peak > s.peak) s.peak = p->peak;
        s.ooms += p->oom_count; vt_sat_add(&s.leaked, p->leak_bytes); s.allocs += p->alloc_count;
        vt_sat_add(&s.alloc_bytes, p->alloc_bytes); s.findings += p->finding_count; s.failed += p->error_count;
        s.errors += p->finding_errors; s.warnings += p->finding_warnings;
        const struct vt_growth *g = &p->growth;
        if (g->kind == VT_GROWTH_NONE) continue;
        if (s.growth == VT_GROWTH_NONE || (g->kind == VT_GROWTH_STEADY && g->rate_bytes > s.growth_rate)) {
            s.growth = g->kind;
            s.growth_rate = g->kind == VT_GROWTH_STEADY ? g->rate_bytes : 0;
            s.steps = p->steps.count;
        }
    }
    return s;
}

/* A matched pair of sites; either side may be missing (bytes 0, label NULL). */
struct row { const char *base, *now; uint64_t base_bytes, new_bytes; };

/* LABEL without its line numbers ("f (a.cu:12) <- g (a.cu:30)" -> "f (a.cu) <- g (a.cu)") in BUF. */
static const char *unlined(const char *label, char *buf, size_t n)
{
    size_t k = 0;
    for (const char *c = label; *c && k + 1 < n; c++) {
        if (*c == ':' && isdigit((unsigned char)c[1])) {
            const char *e = c + 1;
            while (isdigit((unsigned char)*e)) e++;
            if (*e == ')') { c = e - 1; continue; }
        }
        buf[k++] = *c;
    }
    buf[k] = 0;
    return buf;
}

/* The line numbers of a label in order, compared as numbers: "f (a.cu:9) <- g (a.cu:30)" before
 * "f (a.cu:9) <- g (a.cu:31)". */
static int cmp_lines(const char *a, const char *b)
{
    for (;;) {
        while (*a && !(*a == ':' && isdigit((unsigned char)a[1]))) a++;
        while (*b && !(*b == ':' && isdigit((unsigned char)b[1]))) b++;
        if (!*a || !*b) return (*a != 0) - (*b != 0);   /* fewer numbers first */
        char *ea, *eb;
        long la = strtol(a + 1, &ea, 10), lb = strtol(b + 1, &eb, 10);
        if (la != lb) return la < lb ? -1 : 1;
        a = ea; b = eb;
    }
}

/* IDX[0..N) (indices into M) in line order; N is small (at most 64). */
static void sort_by_lines(const struct vt_merged_site *m, long *idx, long n)
{
    for (long i = 1; i < n; i++)
        for (long k = i; k > 0 && cmp_lines(m[idx[k - 1]].label, m[idx[k]].label) > 0; k--) {
            long t = idx[k]; idx[k] = idx[k - 1]; idx[k - 1] = t;
        }
}

static int by_change(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    uint64_t da = a->new_bytes > a->base_bytes ? a->new_bytes - a->base_bytes : a->base_bytes - a->new_bytes;
    uint64_t db = b->new_bytes > b->base_bytes ? b->new_bytes - b->base_bytes : b->base_bytes - b->new_bytes;
    if (da != db) return da < db ? 1 : -1;
    return strcmp(a->now ? a->now : a->base, b->now ? b->now : b->base);
}

/* The sites at the peak of both sides, paired, by change (largest first): *OUT (malloc'd). */
static long pair_sites(struct vt_proc *const *a, size_t na, struct vt_proc *const *b, size_t nb, struct row **out)
{
    struct vt_merged_site *ma = NULL, *mb = NULL;
    long ka = vt_merge_sites(a, na, 0, &ma), kb = vt_merge_sites(b, nb, 0, &mb);
    struct row *rows = NULL;
    uint8_t *used_a = NULL, *used_b = NULL;
    long n = -1;
    if (ka < 0 || kb < 0) goto done;
    rows = calloc((size_t)(ka + kb) + 1, sizeof *rows);
    used_a = calloc((size_t)ka + 1, 1);
    used_b = calloc((size_t)kb + 1, 1);
    if (!rows || !used_a || !used_b) goto done;
    n = 0;
    for (long j = 0; j < kb; j++)                   /* the same label */
        for (long i = 0; i < ka; i++)
            if (!used_a[i] && !strcmp(ma[i].label, mb[j].label)) {
                rows[n++] = (struct row){ ma[i].label, mb[j].label, ma[i].bytes, mb[j].bytes };
                used_a[i] = used_b[j] = 1;
                break;
            }
    /* the same label but for its lines: the code moved. Where a group (say, the calls from main)
     * has as many sites left on each side, they pair in line order; otherwise nothing is guessed */
    char x[1024], y[1024];
    for (long j = 0; j < kb; j++) {
        if (used_b[j]) continue;
        unlined(mb[j].label, y, sizeof y);
        long ia[64], ib[64], on_a = 0, on_b = 0;
        for (long i = 0; i < ka && on_a < 64; i++)
            if (!used_a[i] && !strcmp(unlined(ma[i].label, x, sizeof x), y)) ia[on_a++] = i;
        for (long k = j; k < kb && on_b < 64; k++)   /* j is the first of its group: the rest come after */
            if (!used_b[k] && !strcmp(unlined(mb[k].label, x, sizeof x), y)) ib[on_b++] = k;
        if (on_a != on_b || on_b == 64) {   /* 2: the whole group looked at and left unmatched */
            for (long k = j; k < kb; k++)
                if (!used_b[k] && !strcmp(unlined(mb[k].label, x, sizeof x), y)) used_b[k] = 2;
            continue;
        }
        sort_by_lines(ma, ia, on_a);
        sort_by_lines(mb, ib, on_b);
        for (long k = 0; k < on_a; k++) {
            rows[n++] = (struct row){ ma[ia[k]].label, mb[ib[k]].label, ma[ia[k]].bytes, mb[ib[k]].bytes };
            used_a[ia[k]] = used_b[ib[k]] = 1;
        }
    }
    for (long j = 0; j < kb; j++) if (used_b[j] != 1) rows[n++] = (struct row){ NULL, mb[j].label, 0, mb[j].bytes };
    for (long i = 0; i < ka; i++) if (!used_a[i]) rows[n++] = (struct row){ ma[i].label, NULL, ma[i].bytes, 0 };
    qsort(rows, (size_t)n, sizeof *rows, by_change);
done:
    /* the labels live in the processes' string tables, not in the merged arrays */
    free(ma); free(mb); free(used_a); free(used_b);
    if (n < 0) { free(rows); rows = NULL; }
    *out = rows;
    return n;
}

/* "+1.50 GiB", "-64.00 MiB", "0 B" */
static const char *signed_bytes(char *buf, size_t n, uint64_t from, uint64_t to)
{
    char b[32];
    if (from == to) snprintf(buf, n, "0 B");
    else snprintf(buf, n, "%c%s", to > from ? '+' : '-', vtr_fmt_bytes(b, sizeof b, to > from ? to - from : from - to));
    return buf;
}

static void who(FILE *f, struct vt_proc *const *procs, size_t n)
{
    /* text output goes through the caller's vt_text_filter: names are shown, never obeyed */
    if (n == 1) fprintf(f, "%s (%s, pid %lld)\n", procs[0]->path, procs[0]->program, (long long)procs[0]->pid);
    else fprintf(f, "%zu traces (%s ...)\n", n, procs[0]->path);
}

static int text(FILE *f, struct vt_proc *const *a, size_t na, struct vt_proc *const *b, size_t nb, const struct vt_render_opts *o)
{
    struct side_sum sa = summarize(a, na), sb = summarize(b, nb);
    char x[32], y[32], d[48];
    fputs("vramtrace report --diff\n  base: ", f);
    who(f, a, na);
    fputs("  new:  ", f);
    who(f, b, nb);
    fprintf(f, "\n  %-14s %12s %12s %14s\n", "", "base", "new", "change");
    fprintf(f, "  %-14s %12s %12s %14s\n", "peak VRAM", vtr_fmt_bytes(x, sizeof x, sa.peak), vtr_fmt_bytes(y, sizeof y, sb.peak),
            signed_bytes(d, sizeof d, sa.peak, sb.peak));
    fprintf(f, "  %-14s %12s %12s %14s\n", "leaked", vtr_fmt_bytes(x, sizeof x, sa.leaked), vtr_fmt_bytes(y, sizeof y, sb.leaked),
            signed_bytes(d, sizeof d, sa.leaked, sb.leaked));
    fprintf(f, "  %-14s %12s %12s %14s\n", "allocated", vtr_fmt_bytes(x, sizeof x, sa.alloc_bytes),
            vtr_fmt_bytes(y, sizeof y, sb.alloc_bytes), signed_bytes(d, sizeof d, sa.alloc_bytes, sb.alloc_bytes));
    if (sa.growth != VT_GROWTH_NONE || sb.growth != VT_GROWTH_NONE) { /* live VRAM per step (docs/report.md, Growth) */
        char gx[40], gy[40];
        static const char *const word[] = { "no steps", "flat", "warm-up", "" };
        if (sa.growth == VT_GROWTH_STEADY) snprintf(gx, sizeof gx, "+%s", vtr_fmt_bytes(x, sizeof x, (uint64_t)sa.growth_rate));
        else snprintf(gx, sizeof gx, "%s", word[sa.growth]);
        if (sb.growth == VT_GROWTH_STEADY) snprintf(gy, sizeof gy, "+%s", vtr_fmt_bytes(y, sizeof y, (uint64_t)sb.growth_rate));
        else snprintf(gy, sizeof gy, "%s", word[sb.growth]);
        fprintf(f, "  %-14s %12s %12s %14s\n", "growth/step", gx, gy,
                signed_bytes(d, sizeof d, (uint64_t)sa.growth_rate, (uint64_t)sb.growth_rate));
    }
    const struct { const char *name; uint64_t base, now; } counts[] = {
        { "allocations", sa.allocs, sb.allocs }, { "OOMs", sa.ooms, sb.ooms },
        { "errors", sa.errors, sb.errors }, { "warnings", sa.warnings, sb.warnings }, { "failed calls", sa.failed, sb.failed },
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].now == counts[i].base) fprintf(f, "  %-14s %12llu %12llu %14s\n", counts[i].name, U(counts[i].base), U(counts[i].now), "0");
        else fprintf(f, "  %-14s %12llu %12llu %+14lld\n", counts[i].name, U(counts[i].base), U(counts[i].now),
                     (long long)counts[i].now - (long long)counts[i].base);

    struct row *rows = NULL;
    long n = pair_sites(a, na, b, nb, &rows);
    if (n < 0) return -1;
    if (n) fputs("\nSites at the peak, by change (a site whose lines moved is matched by its functions and files):\n", f);
    for (long i = 0; i < n && i < o->top; i++) {
        const struct row *r = &rows[i];
        fprintf(f, "  %12s  %10s -> %10s  %s", signed_bytes(d, sizeof d, r->base_bytes, r->new_bytes),
                vtr_fmt_bytes(x, sizeof x, r->base_bytes), vtr_fmt_bytes(y, sizeof y, r->new_bytes), r->now ? r->now : r->base);
        if (!r->base) fputs("  (new)", f);
        else if (!r->now) fputs("  (gone)", f);
        else if (strcmp(r->base, r->now)) fprintf(f, "  (was %s)", r->base);
        fputc('\n', f);
    }
    if (n > o->top) fprintf(f, "  ... %ld more sites\n", n - o->top);
    free(rows);

    int head = 0, h;
    enum vt_dir dir;
    for (size_t row = 0; vt_transfer_row(row, &dir, &h); row++) {
        struct vt_dirstat da = vt_dirstat_all(a, na, dir, h), db = vt_dirstat_all(b, nb, dir, h);
        if (!da.count && !db.count) continue;
        if (!head++) fputs("\nTransfers (achieved = bytes / host time of synchronous copies):\n", f);
        fprintf(f, "  %-4s %-9s %10s -> %10s", vt_rd_dir_name(dir), vt_transfer_host_name(h),
                vtr_fmt_bytes(x, sizeof x, da.bytes), vtr_fmt_bytes(y, sizeof y, db.bytes));
        if (da.gbps > 0 && db.gbps > 0)
            fprintf(f, ", %.2f -> %.2f GB/s (%+.0f%%)", da.gbps, db.gbps, 100.0 * (db.gbps - da.gbps) / da.gbps);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

static void side_json(FILE *f, const struct side_sum *s)
{
    vt_esc_printf(f, VT_ESC_JSON, "{\"traces\":%zu,\"peak_bytes\":%llu,\"leaked_bytes\":%llu,\"alloc_count\":%llu,\"alloc_bytes\":%llu,"
                  "\"oom_count\":%llu,\"finding_count\":%llu,\"finding_errors\":%llu,\"finding_warnings\":%llu,\"failed_calls\":%llu,"
                  "\"steps\":%llu,\"growth\":\"%s\",\"growth_bytes_per_step\":%lld}",
                  s->traces, U(s->peak), U(s->leaked), U(s->allocs), U(s->alloc_bytes), U(s->ooms), U(s->findings), U(s->errors),
                  U(s->warnings), U(s->failed), U(s->steps), growth_names[s->growth], (long long)s->growth_rate);
}

static void str_or_null(FILE *f, const char *s) { if (s) vt_json_str(f, s); else fputs("null", f); }

static int json(FILE *f, struct vt_proc *const *a, size_t na, struct vt_proc *const *b, size_t nb)
{
    struct side_sum sa = summarize(a, na), sb = summarize(b, nb);
    fputs("{\"format\":\"vramtrace-diff\",\"version\":1,\"base\":", f);
    side_json(f, &sa);
    fputs(",\"new\":", f);
    side_json(f, &sb);
    struct row *rows = NULL;
    long n = pair_sites(a, na, b, nb, &rows);
    if (n < 0) return -1;
    fputs(",\"peak_sites\":[", f);
    for (long i = 0; i < n; i++) {
        fputs(i ? ",{\"site\":" : "{\"site\":", f);
        str_or_null(f, rows[i].now);
        fputs(",\"base_site\":", f);
        str_or_null(f, rows[i].base);
        vt_esc_printf(f, VT_ESC_JSON, ",\"base_bytes\":%llu,\"new_bytes\":%llu,\"delta_bytes\":%lld}", U(rows[i].base_bytes),
                      U(rows[i].new_bytes), (long long)(rows[i].new_bytes - rows[i].base_bytes));
    }
    free(rows);
    fputs("],\"transfers\":[", f);
    int k = 0, h;
    enum vt_dir dir;
    for (size_t row = 0; vt_transfer_row(row, &dir, &h); row++) {
        struct vt_dirstat da = vt_dirstat_all(a, na, dir, h), db = vt_dirstat_all(b, nb, dir, h);
        if (!da.count && !db.count) continue;
        vt_esc_printf(f, VT_ESC_JSON, "%s{\"dir\":\"%s\",\"host\":\"%s\",\"base_bytes\":%llu,\"new_bytes\":%llu,\"base_gbps\":", k++ ? "," : "",
                      vt_rd_dir_name(dir), vt_transfer_host_name(h), U(da.bytes), U(db.bytes));
        if (da.gbps > 0) vt_esc_printf(f, VT_ESC_JSON, "%.3f", da.gbps); else fputs("null", f);
        fputs(",\"new_gbps\":", f);
        if (db.gbps > 0) vt_esc_printf(f, VT_ESC_JSON, "%.3f", db.gbps); else fputs("null", f);
        fputc('}', f);
    }
    fputs("]}\n", f);
    return ferror(f) ? -1 : 0;
}

int vt_render_diff(FILE *f, struct vt_proc *const *a, size_t na, struct vt_proc *const *b, size_t nb,
                   const struct vt_render_opts *o, int as_json)
{
    return as_json ? json(f, a, na, b, nb) : text(f, a, na, b, nb, o);
}
