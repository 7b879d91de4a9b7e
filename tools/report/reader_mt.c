/* reader_mt.c - chunked parallel parsing in front of the sequential reader (see reader_mt.h). */
#include "report/reader_mt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MT_MIN_FILE (64ull << 20)
#define MT_CHUNK (2ull << 20)
#define MT_OVER (256u << 10) /* how far a chunk's last line may run into the next chunk */
#define MT_MAX_WORKERS 8

struct batch {
    long k;                   /* chunk held (valid while ready) */
    int ready;
    char *data;
    size_t dcap;
    char *arena;              /* the events' strings; never grown while a batch fills */
    size_t acap, alen;
    struct vt_event *ev;
    long *lidx;               /* each event's line, counted from the chunk's first */
    uint64_t *off;            /* each event's line offset in the file */
    size_t *bto;              /* each event's backtrace (a kernel's parameters, packed offset << 32 | size), as an index into bt[] */
    size_t n, ecap;
    uint64_t *bt;
    size_t nbt, btcap;
    long nlines;              /* lines (newline-terminated) that start in the chunk */
    int has_end;
    uint64_t end_off;         /* where the next chunk's first line starts */
    int anomaly;              /* the line at a_off (event index a_ev) is for the sequential reader */
    size_t a_ev;
    long a_lidx;
    uint64_t a_off;           /* UINT64_MAX: the chunk could not be read; resume where the last ended */
};

struct vt_mreader {
    char *path;
    vt_reader_warn_fn warn;
    void *wctx;
    struct vt_reader *seq;    /* the sequential reader, when it has taken over */
    uint32_t params[2 * VT_READER_MAX_PARAMS]; /* the kernel record returned last: its parameters */
    int fd;
    uint64_t size, chunk;
    long nchunks;
    int nworkers, nslots, started;
    pthread_t th[MT_MAX_WORKERS];
    struct batch *slots;
    pthread_mutex_t lock;
    pthread_cond_t ready_cv, free_cv;
    long next, consumed;      /* under lock */
    int stop;
    long k;                   /* the caller's side: chunk being taken, event in it */
    size_t pos;
    long base_line, returned;
    uint64_t resume_off;
};

static int has_content(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) if (p[i] != '\0') return 1;
    return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static const char *keep(struct batch *b, const char *s, int *ok)
{
    if (!s || !*s) return "";
    size_t n = strlen(s) + 1;
    if (b->alen + n > b->acap) { *ok = 0; return ""; }
    char *d = b->arena + b->alen;
    memcpy(d, s, n);
    b->alen += n;
    return d;
}

/* Copy a parsed event into the batch: its strings lived in the worker's per-line arena. */
static int append(struct batch *b, const struct vt_event *src, long lidx, uint64_t off)
{
    if (b->n == b->ecap) { /* the four per-event arrays grow together */
        size_t nc = b->ecap ? b->ecap * 2 : 1024;
        void *ev_n = realloc(b->ev, nc * sizeof *b->ev);
        if (ev_n) b->ev = ev_n;
        void *lidx_n = realloc(b->lidx, nc * sizeof *b->lidx);
        if (lidx_n) b->lidx = lidx_n;
        void *off_n = realloc(b->off, nc * sizeof *b->off);
        if (off_n) b->off = off_n;
        void *bto_n = realloc(b->bto, nc * sizeof *b->bto);
        if (bto_n) b->bto = bto_n;
        if (!ev_n || !lidx_n || !off_n || !bto_n) return -1; /* ecap stays: the grown ones are just larger */
        b->ecap = nc;
    }
    if (grow((void **)&b->bt, &b->btcap, b->nbt + src->nbt + src->nparams, sizeof *b->bt)) return -1;
    struct vt_event *e = &b->ev[b->n];
    *e = *src;
    int ok = 1;
    const char **strs[] = { &e->api, &e->name, &e->kind, &e->severity, &e->msg, &e->cls, &e->mapping, &e->path,
                            &e->format, &e->tracer, &e->program, &e->hostname, &e->checks, &e->file, &e->linetable,
                            &e->pci, &e->build_id, &e->label, &e->error, &e->torch_alloc_conf, &e->torch_cuda_alloc_conf };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) *strs[i] = keep(b, *strs[i], &ok);
    if (!ok) return -1;
    if (src->nbt) memcpy(b->bt + b->nbt, src->bt, src->nbt * sizeof *b->bt);
    b->bto[b->n] = b->nbt;
    b->nbt += src->nbt;
    for (size_t i = 0; i < src->nparams; i++) /* after the backtrace (a kernel record has none) */
        b->bt[b->nbt++] = (uint64_t)src->params[2 * i] << 32 | src->params[2 * i + 1];
    e->params = NULL;
    b->lidx[b->n] = lidx;
    b->off[b->n] = off;
    b->n++;
    return 0;
}

static void flag(struct batch *b, long lidx, uint64_t off)
{
    b->anomaly = 1;
    b->a_ev = b->n;
    b->a_lidx = lidx;
    b->a_off = off;
}

/* Parse the lines that start in chunk k. Stops at the first line that is not clean. */
static void parse_chunk(struct vt_mreader *m, struct vt_reader *r, struct batch *b, long k)
{
    uint64_t lo = (uint64_t)k * m->chunk, hi = lo + m->chunk < m->size ? lo + m->chunk : m->size;
    uint64_t rlo = lo ? lo - 1 : 0, rhi = hi + MT_OVER < m->size ? hi + MT_OVER : m->size;
    size_t len = (size_t)(rhi - rlo);
    b->n = b->nbt = b->alen = 0;
    b->nlines = 0;
    b->anomaly = b->has_end = 0;
    if (!r || grow((void **)&b->data, &b->dcap, len + 1, 1) || grow((void **)&b->arena, &b->acap, len + 64, 1)) {
        flag(b, 0, UINT64_MAX);
        return;
    }
    for (size_t got = 0; got < len;) {
        ssize_t n = pread(m->fd, b->data + got, len - got, (off_t)(rlo + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { flag(b, 0, UINT64_MAX); return; } /* the sequential reader says why */
        got += (size_t)n;
    }
    char *d = b->data, *end = d + len, *p = d;
    if (lo) { /* the line under way at lo belongs to the previous chunk */
        p = d + 1;
        if (d[0] != '\n') {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) return; /* no line starts here: the previous chunk's worker met a long line */
            p = nl + 1;
        }
    }
    int first = k == 0;
    char err[512];
    while (p < d + (hi - rlo)) {
        uint64_t off = rlo + (uint64_t)(p - d);
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            /* at the end of the file only NULs (the pre-grown tail) may follow the last line */
            if (rhi < m->size || has_content(p, (size_t)(end - p))) flag(b, b->nlines, off);
            return;
        }
        size_t ln = (size_t)(nl - p);
        if (memchr(p, '\0', ln)) { flag(b, b->nlines, off); return; }
        long lidx = b->nlines;
        while (ln && (p[ln - 1] == '\r' || p[ln - 1] == ' ' || p[ln - 1] == '\t')) ln--;
        if (ln) {
            struct vt_event ev;
            if (vt_reader_parse_line(r, p, ln, first, &ev, err, sizeof err) != 1 || append(b, &ev, lidx, off) != 0) {
                flag(b, lidx, off);
                return;
            }
            first = 0;
        }
        b->nlines++;
        p = nl + 1;
    }
    b->has_end = 1;
    b->end_off = rlo + (uint64_t)(p - d);
}

static void *worker(void *arg)
{
    struct vt_mreader *m = arg;
    struct vt_reader *r = vt_reader_new_mem(m->path); /* NULL: every chunk goes to the fallback */
    for (;;) {
        pthread_mutex_lock(&m->lock);
        while (!m->stop && m->next < m->nchunks && m->next >= m->consumed + m->nslots)
            pthread_cond_wait(&m->free_cv, &m->lock);
        if (m->stop || m->next >= m->nchunks) { pthread_mutex_unlock(&m->lock); break; }
        long k = m->next++;
        struct batch *b = &m->slots[k % m->nslots];
        pthread_mutex_unlock(&m->lock);
        parse_chunk(m, r, b, k);
        pthread_mutex_lock(&m->lock);
        b->k = k;
        b->ready = 1;
        pthread_cond_broadcast(&m->ready_cv);
        pthread_mutex_unlock(&m->lock);
    }
    vt_reader_close(r);
    return NULL;
}

static void stop_workers(struct vt_mreader *m)
{
    if (!m->started) return;
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_broadcast(&m->free_cv);
    pthread_cond_broadcast(&m->ready_cv);
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < m->started; i++) pthread_join(m->th[i], NULL);
    m->started = 0;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *endp;
    long x = v && *v ? strtol(v, &endp, 10) : dflt;
    return v && *v && *endp == '\0' && x > 0 ? x : dflt;
}

struct vt_mreader *vt_mreader_open(const char *path, vt_reader_warn_fn warn, void *warn_ctx, char *err, size_t errlen)
{
    /* non-blocking: a FIFO named like a trace would block the open (the reader then says what it is) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return NULL; }
    return vt_mreader_open_fd(fd, path, warn, warn_ctx, err, errlen);
}

struct vt_mreader *vt_mreader_open_fd(int fd, const char *path, vt_reader_warn_fn warn, void *warn_ctx, char *err,
                                      size_t errlen)
{
    struct vt_mreader *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        close(fd);
        snprintf(err, errlen, "%s: out of memory", path);
        errno = ENOMEM;
        return NULL;
    }
    m->warn = warn;
    m->wctx = warn_ctx;
    m->fd = -1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), threads = env_long("VRAMTRACE_REPORT_THREADS", cpus);
    long chunk = env_long("VRAMTRACE_REPORT_CHUNK", 0);
    if (threads > MT_MAX_WORKERS) threads = MT_MAX_WORKERS;
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular) m->size = (uint64_t)st.st_size;
    if (threads >= 2 && regular && st.st_size > 0 && (m->size >= MT_MIN_FILE || chunk)) {
        m->fd = fd;
        m->chunk = chunk ? (uint64_t)chunk : MT_CHUNK;
        m->nchunks = (long)((m->size + m->chunk - 1) / m->chunk);
        m->nworkers = (int)(threads < m->nchunks ? threads : m->nchunks);
        m->nslots = 2 * m->nworkers;
        m->slots = calloc((size_t)m->nslots, sizeof *m->slots);
        pthread_mutex_init(&m->lock, NULL);
        pthread_cond_init(&m->ready_cv, NULL);
        pthread_cond_init(&m->free_cv, NULL);
        for (int i = 0; m->slots && i < m->nworkers; i++)
            if (pthread_create(&m->th[i], NULL, worker, m) == 0) m->started++;
        if (m->started) return m;
        free(m->slots);
        m->slots = NULL;
    }
    m->fd = -1;
    m->seq = vt_reader_open_fd(fd, path, warn, warn_ctx, err, errlen);
    if (!m->seq) {
        int e = errno;
        vt_mreader_close(m);
        errno = e;
        return NULL;
    }
    return m;
}

/* Hand the rest of the file, from the line at OFF (number LINE), to the sequential reader. */
static int take_over(struct vt_mreader *m, uint64_t off, long line, struct vt_event *ev, char *err, size_t errlen)
{
    stop_workers(m);
    /* the same file, never the path again: it may name another file by now */
    int fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) { snprintf(err, errlen, "%s: %s", m->path, strerror(errno)); return VT_RD_EIO; }
    m->seq = vt_reader_open_fd(fd, m->path, m->warn, m->wctx, err, errlen);
    if (!m->seq) return VT_RD_EIO;
    if (vt_reader_seek(m->seq, off, line, m->returned > 0) != 0) {
        snprintf(err, errlen, "%s: cannot seek: %s", m->path, strerror(errno));
        return VT_RD_EIO;
    }
    return vt_reader_next(m->seq, ev, err, errlen);
}

int vt_mreader_next(struct vt_mreader *m, struct vt_event *ev, char *err, size_t errlen)
{
    if (m->seq) return vt_reader_next(m->seq, ev, err, errlen);
    for (;;) {
        if (m->k >= m->nchunks) {
            if (m->returned == 0) return take_over(m, 0, 1, ev, err, errlen); /* its "empty trace" error */
            return 0;
        }
        struct batch *b = &m->slots[m->k % m->nslots];
        pthread_mutex_lock(&m->lock);
        while (!(b->ready && b->k == m->k)) pthread_cond_wait(&m->ready_cv, &m->lock);
        pthread_mutex_unlock(&m->lock);
        /* the first record must be checked as the header: only chunk 0's worker did that */
        if (m->returned == 0 && m->k > 0 && m->pos < b->n && !(b->anomaly && m->pos == b->a_ev))
            return take_over(m, b->off[m->pos], m->base_line + b->lidx[m->pos] + 1, ev, err, errlen);
        if (b->anomaly && m->pos == b->a_ev) {
            if (b->a_off == UINT64_MAX) return take_over(m, m->resume_off, m->base_line + 1, ev, err, errlen);
            return take_over(m, b->a_off, m->base_line + b->a_lidx + 1, ev, err, errlen);
        }
        if (m->pos < b->n) {
            *ev = b->ev[m->pos];
            ev->line = m->base_line + b->lidx[m->pos] + 1;
            ev->bt = b->bt ? b->bt + b->bto[m->pos] : NULL;
            for (size_t i = 0; i < ev->nparams && i < VT_READER_MAX_PARAMS; i++) {
                uint64_t pk = b->bt[b->bto[m->pos] + ev->nbt + i];
                m->params[2 * i] = (uint32_t)(pk >> 32);
                m->params[2 * i + 1] = (uint32_t)pk;
            }
            ev->params = ev->nparams ? m->params : NULL;
            m->pos++;
            m->returned++;
            return 1;
        }
        m->base_line += b->nlines;
        if (b->has_end) m->resume_off = b->end_off;
        m->k++;
        m->pos = 0;
        pthread_mutex_lock(&m->lock);
        b->ready = 0;
        m->consumed = m->k;
        pthread_cond_broadcast(&m->free_cv);
        pthread_mutex_unlock(&m->lock);
    }
}

long vt_mreader_lines(const struct vt_mreader *m) { return m->seq ? vt_reader_lines(m->seq) : m->base_line; }

uint64_t vt_mreader_offset(const struct vt_mreader *m)
{
    uint64_t off = m->seq ? vt_reader_offset(m->seq) : (uint64_t)m->k * m->chunk;
    return off < m->size ? off : m->size;
}
uint64_t vt_mreader_size(const struct vt_mreader *m) { return m->size; }

void vt_mreader_plan(const struct vt_mreader *m, int *workers, uint64_t *chunk, long *nchunks)
{
    *workers = m->seq && !m->started ? 0 : m->started;
    *chunk = m->chunk;
    *nchunks = m->nchunks;
}

void vt_mreader_close(struct vt_mreader *m)
{
    if (!m) return;
    stop_workers(m);
    if (m->slots) {
        for (int i = 0; i < m->nslots; i++) {
            struct batch *b = &m->slots[i];
            free(b->data); free(b->arena); free(b->ev); free(b->lidx); free(b->off); free(b->bto); free(b->bt);
        }
        free(m->slots);
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->ready_cv);
        pthread_cond_destroy(&m->free_cv);
    }
    if (m->fd >= 0) close(m->fd);
    vt_reader_close(m->seq);
    free(m->path);
    free(m);
}
