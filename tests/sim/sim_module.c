/* sim_module.c - simulated driver modules, libraries, functions and kernel launches. Kernels are
 * never run: cuLaunchKernel looks at the argument words the kernel dereferences (sim_layout.c:
 * the sim's own layout reader and the test's ground truth, never the tracer's parser or rule)
 * and on a host pointer or a dangling device address sets the context's sticky
 * CUDA_ERROR_ILLEGAL_ADDRESS, as a GPU would (test fixture). */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD_MAGIC 0x5c30d001
#define FUNC_MAGIC 0x5cf0c001
#define LIB_MAGIC 0x5c11b001

struct CUmod_st { int magic; sim_kfunc *kernels; struct CUfunc_st *funcs; sim_global *globals; };
struct CUfunc_st {
    int magic;
    struct CUmod_st *mod;
    char *name;
    const sim_kfunc *lay; /* NULL when the image held no kernels the sim could read */
    struct CUfunc_st *next;
};
struct CUlib_st { int magic; struct CUmod_st *mod; };

static struct CUfunc_st *func_of(const void *f)
{
    struct CUfunc_st *x = (struct CUfunc_st *)f;
    return x && x->magic == FUNC_MAGIC ? x : NULL;
}

/* Modules load into the current context; libraries (need_ctx 0) are context-independent. */
static CUresult load_in(struct CUmod_st **out, const void *image, int need_ctx)
{
    sim_ctx *c;
    CUresult r = need_ctx ? sim_cur_ctx(&c) : sim_init_check();
    if (r) return r;
    if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    m->kernels = sim_layouts_read(image);
    m->globals = sim_globals_read(image);
    if (!m->kernels && sim_verbose) fprintf(stderr, "vramtrace-sim: no kernel layouts in the image\n");
    m->magic = MOD_MAGIC;
    *out = m;
    return CUDA_SUCCESS;
}

static CUresult load(struct CUmod_st **out, const void *image) { return load_in(out, image, 1); }

CUresult cuModuleLoadData(CUmodule *mod, const void *image) { return load((struct CUmod_st **)mod, image); }
CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n, CUjit_option *o, void **v)
{
    return load((struct CUmod_st **)mod, image);
}
CUresult cuModuleLoadFatBinary(CUmodule *mod, const void *fatbin) { return load((struct CUmod_st **)mod, fatbin); }

/* A cubin, fatbin or PTX file, read whole (a NUL after it ends PTX text). */
static char *read_image_file(const char *path)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    char *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
        if (fread(buf, 1, (size_t)n, f) == (size_t)n) buf[n] = '\0';
        else { free(buf); buf = NULL; }
    }
    if (f) fclose(f);
    return buf;
}

CUresult cuModuleLoad(CUmodule *mod, const char *path)
{
    char *image = read_image_file(path);
    if (!image) return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = load((struct CUmod_st **)mod, image); /* parsed at load: the buffer is not kept */
    free(image);
    return r;
}

static void unload(struct CUmod_st *m)
{
    pthread_mutex_lock(&sim_lock);
    for (struct CUfunc_st *f = m->funcs, *n; f; f = n) {
        n = f->next;
        f->magic = 0;
        free(f->name);
        free(f);
    }
    for (sim_global *g = m->globals; g; g = g->next)
        if (g->reg) sim_dev_free(g->reg);
    pthread_mutex_unlock(&sim_lock);
    sim_layouts_free(m->kernels);
    sim_globals_free(m->globals);
    m->magic = 0;
    free(m);
}

CUresult cuModuleUnload(CUmodule mod)
{
    if (!mod || mod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    unload(mod);
    return CUDA_SUCCESS;
}

static CUresult get_func(struct CUfunc_st **out, struct CUmod_st *m, const char *name)
{
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!m || m->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    const sim_kfunc *lay = sim_layout_find(m->kernels, name);
    if (m->kernels && !lay) return CUDA_ERROR_NOT_FOUND;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    struct CUfunc_st *f;
    for (f = m->funcs; f && strcmp(f->name, name) != 0; f = f->next) {}
    if (!f && (f = calloc(1, sizeof *f)) && (f->name = strdup(name))) {
        f->magic = FUNC_MAGIC;
        f->mod = m;
        f->lay = lay;
        f->next = m->funcs;
        m->funcs = f;
    } else if (!f || !f->name) {
        free(f);
        f = NULL;
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&sim_lock);
    *out = f;
    return r;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
    return get_func((struct CUfunc_st **)f, mod, name);
}

/* CUDA 12.4: every function of a module, in no promised order (the layouts' list order here). */
CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!mod || mod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    unsigned n = 0;
    for (const sim_kfunc *k = mod->kernels; k; k = k->next) n++;
    *count = n;
    return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions(CUfunction *fns, unsigned int num, CUmodule mod)
{
    if (!fns) return CUDA_ERROR_INVALID_VALUE;
    if (!mod || mod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    unsigned i = 0;
    for (const sim_kfunc *k = mod->kernels; k && i < num; k = k->next, i++) {
        CUresult r = get_func((struct CUfunc_st **)&fns[i], mod, k->name);
        if (r) return r;
    }
    return CUDA_SUCCESS;
}

/* A module variable's device memory, made on the first lookup on the current context's device
 * (zeroed: initial values in the image are not copied) and given back when the module unloads.
 * A library's variables live where the first lookup made them. */
static CUresult get_global(CUdeviceptr *d, size_t *bytes, struct CUmod_st *m, const char *name)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    sim_global *g;
    for (g = m->globals; g && strcmp(g->name, name) != 0; g = g->next) {}
    if (!g) return CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&sim_lock);
    if (!g->addr) r = sim_dev_alloc(c->dev, g->size, SIM_K_DEVICE, &g->addr, &g->reg);
    pthread_mutex_unlock(&sim_lock);
    if (r) return r;
    if (d) *d = (CUdeviceptr)g->addr;
    if (bytes) *bytes = g->size;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *d, size_t *bytes, CUmodule mod, const char *name)
{
    if (!mod || mod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(d, bytes, mod, name);
}

CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv, unsigned int nj,
                           CUlibraryOption *lo, void **lv, unsigned int nl)
{
    if (!lib) return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m;
    CUresult r = load_in(&m, code, 0);
    if (r) return r;
    struct CUlib_st *l = calloc(1, sizeof *l);
    if (!l) { unload(m); return CUDA_ERROR_OUT_OF_MEMORY; }
    l->magic = LIB_MAGIC;
    l->mod = m;
    *lib = l;
    return CUDA_SUCCESS;
}

CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *path, CUjit_option *jo, void **jv, unsigned int nj,
                               CUlibraryOption *lo, void **lv, unsigned int nl)
{
    char *image = read_image_file(path);
    if (!image) return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = cuLibraryLoadData(lib, image, jo, jv, nj, lo, lv, nl);
    free(image);
    return r;
}

CUresult cuLibraryUnload(CUlibrary lib)
{
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    unload(lib->mod);
    lib->magic = 0;
    free(lib);
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetModule(CUmodule *mod, CUlibrary lib)
{
    if (!mod) return CUDA_ERROR_INVALID_VALUE;
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    *mod = lib->mod;
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *d, size_t *bytes, CUlibrary lib, const char *name)
{
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(d, bytes, lib->mod, name);
}

/* __managed__ variables: the same lookup; the sim keeps them in device memory (managed variables'
 * host access is not modelled). NOT_FOUND for a name the image does not declare. */
CUresult cuLibraryGetManaged(CUdeviceptr *d, size_t *bytes, CUlibrary lib, const char *name)
{
    return cuLibraryGetGlobal(d, bytes, lib, name);
}

/* Unified functions (device functions callable through a pointer): none is modelled. */
CUresult cuLibraryGetUnifiedFunction(void **fptr, CUlibrary lib, const char *name)
{
    if (!fptr || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_ERROR_NOT_FOUND;
}

/* A CUkernel is the same object as the CUfunction it resolves to. */
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return get_func((struct CUfunc_st **)k, lib->mod, name);
}

CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    if (!f) return CUDA_ERROR_INVALID_VALUE;
    if (!func_of(k)) return CUDA_ERROR_INVALID_HANDLE;
    *f = (CUfunction)(void *)k;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction hf)
{
    struct CUfunc_st *f = func_of(hf);
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel k) { return cuFuncGetName(name, (CUfunction)(void *)k); }

CUresult cuFuncGetModule(CUmodule *mod, CUfunction hf)
{
    struct CUfunc_st *f = func_of(hf);
    if (!mod) return CUDA_ERROR_INVALID_VALUE;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    *mod = f->mod;
    return CUDA_SUCCESS;
}

/* Answers from the fatbin layout. With VRAMTRACE_SIM_NO_PARAMINFO=1, or when the image had no
 * parsable layout, CUDA_ERROR_NOT_SUPPORTED (an older driver); index past the end: INVALID_VALUE. */
CUresult cuFuncGetParamInfo(CUfunction hf, size_t idx, size_t *off, size_t *size)
{
    struct CUfunc_st *f = func_of(hf);
    if (sim_no_paraminfo) return CUDA_ERROR_NOT_SUPPORTED;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!f->lay) return CUDA_ERROR_NOT_SUPPORTED;
    if (idx >= f->lay->n) return CUDA_ERROR_INVALID_VALUE;
    if (off) *off = f->lay->p[idx].off;
    if (size) *size = f->lay->p[idx].size;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel k, size_t idx, size_t *off, size_t *size)
{
    return cuFuncGetParamInfo((CUfunction)(void *)k, idx, off, size);
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction hf)
{
    struct CUfunc_st *f = func_of(hf);
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = 49152; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

/* cuKernel*: a CUkernel is its CUfunction here (context-independent by construction); the device
 * must be a valid ordinal, as the documentation requires. */
static CUresult check_dev(CUdevice dev)
{
    int n = 0;
    CUresult r = cuDeviceGetCount(&n);
    if (r) return r;
    return dev >= 0 && dev < n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice dev)
{
    CUresult r = check_dev(dev);
    return r ? r : cuFuncGetAttribute(v, a, (CUfunction)(void *)k);
}

CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice dev)
{
    CUresult r = check_dev(dev);
    return r ? r : func_of(k) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice dev)
{
    CUresult r = check_dev(dev);
    return r ? r : func_of(k) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The library's kernels: those the sim's layout reader found in its image. */
CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    unsigned n = 0;
    for (const sim_kfunc *k = lib->mod->kernels; k; k = k->next) n++;
    *count = n;
    return CUDA_SUCCESS;
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int num, CUlibrary lib)
{
    if (!kernels) return CUDA_ERROR_INVALID_VALUE;
    if (!lib || lib->magic != LIB_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    unsigned i = 0;
    for (const sim_kfunc *k = lib->mod->kernels; k && i < num; k = k->next, i++) {
        CUresult r = get_func((struct CUfunc_st **)&kernels[i], lib->mod, k->name);
        if (r) return r;
    }
    return CUDA_SUCCESS;
}

/* Occupancy of the simulated H100-like device: 2048 resident threads per SM, blocks of at most
 * 1024 threads (cuFuncGetAttribute's MAX_THREADS_PER_BLOCK); shared memory never limits. */
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f, int block, size_t smem)
{
    if (!blocks || block <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!func_of(f)) return CUDA_ERROR_INVALID_HANDLE;
    *blocks = block > 1024 ? 0 : 2048 / block;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction f, int block, size_t smem,
                                                              unsigned int flags)
{
    return cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, block, smem);
}

CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f, CUoccupancyB2DSize smem_of,
                                          size_t smem, int limit)
{
    if (!min_grid || !block) return CUDA_ERROR_INVALID_VALUE;
    if (!func_of(f)) return CUDA_ERROR_INVALID_HANDLE;
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    int b = limit > 0 && limit < 1024 ? limit : 1024, sms = 0;
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev);
    *block = b;
    *min_grid = sms * (2048 / b);
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block, CUfunction f, CUoccupancyB2DSize smem_of,
                                                   size_t smem, int limit, unsigned int flags)
{
    return cuOccupancyMaxPotentialBlockSize(min_grid, block, f, smem_of, smem, limit);
}

CUresult cuFuncSetAttribute(CUfunction hf, CUfunction_attribute a, int v)
{
    return func_of(hf) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuFuncSetCacheConfig(CUfunction hf, CUfunc_cache c)
{
    return func_of(hf) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- launches ----------------------------------------------------------------------------- */
/* The 8-byte argument word at buffer offset off: from the flat buffer, or from the parameter
 * (per the layout) that holds it. 0 when no parameter holds all of it. */
static int arg_word(const struct CUfunc_st *f, void **params, const char *buf, size_t bufsize,
                    uint32_t off, uint64_t *v, uint32_t *which)
{
    if (buf) {
        if ((size_t)off + 8 > bufsize) return 0;
        memcpy(v, buf + off, 8);
        return 1;
    }
    for (uint32_t i = 0; f->lay && i < f->lay->n; i++) {
        const sim_param *p = &f->lay->p[i];
        if (off >= p->off && off + 8 <= p->off + p->size && params[i]) {
            memcpy(v, (const char *)params[i] + (off - p->off), 8);
            *which = i;
            return 1;
        }
    }
    return 0;
}

CUresult sim_launch_check(CUfunction hf, void **params, const void *argbuf, size_t argsize)
{
    struct CUfunc_st *f = func_of(hf);
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    uint32_t offs[SIM_MAX_DEREF], which = 0, at = 0;
    int n = (argbuf || params) ? sim_deref_words(f->name, f->lay, offs, SIM_MAX_DEREF) : 0, kind = 0;
    uint64_t bad = 0;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < n && !kind; i++) {
        uint64_t v;
        if (arg_word(f, params, argbuf, argsize, offs[i], &v, &which) && (kind = sim_classify_kernel_word(v, c->dev))) {
            bad = v;
            at = offs[i];
        }
    }
    if (kind) c->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    pthread_mutex_unlock(&sim_lock);
    if (kind && sim_verbose)
        fprintf(stderr, "vramtrace-sim: kernel %s argument word at %u (param %u): %s 0x%llx -> illegal address\n",
                f->name, at, which, kind == 1 ? "host pointer" : "unallocated device address", (unsigned long long)bad);
    return CUDA_SUCCESS;
}

/* size of the argument buffer implied by the layout (0 if unknown) */
static size_t layout_bytes(const struct CUfunc_st *f)
{
    size_t n = 0;
    for (uint32_t i = 0; f->lay && i < f->lay->n; i++)
        if (f->lay->p[i].off + f->lay->p[i].size > n)
            n = f->lay->p[i].off + f->lay->p[i].size;
    return n;
}

/* `extra`'s CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE (as documented: nothing else is accepted, nor
 * both kernelParams and extra). */
static CUresult packed_args(void **params, void **extra, const void **buf, size_t *size)
{
    for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) *buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) *size = *(size_t *)extra[i + 1];
        else return CUDA_ERROR_INVALID_VALUE;
    }
    return params && extra ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* A kernel node's argument buffer, flattened from kernelParams by the layout, or copied from
 * `extra`'s buffer (malloc'd into *out; NULL when neither gives bytes). */
CUresult sim_node_args(CUfunction hf, void **params, void **extra, void **out, size_t *len)
{
    struct CUfunc_st *f = func_of(hf);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    *out = NULL;
    *len = 0;
    const void *buf = NULL;
    size_t bufsize = 0;
    CUresult pr = packed_args(params, extra, &buf, &bufsize);
    if (pr) return pr;
    size_t n = buf ? bufsize : layout_bytes(f);
    if (!n) return CUDA_SUCCESS;
    char *b = calloc(1, n);
    if (!b) return CUDA_ERROR_OUT_OF_MEMORY;
    if (buf) memcpy(b, buf, n);
    else
        for (uint32_t i = 0; params && i < f->lay->n; i++)
            if (params[i]) memcpy(b + f->lay->p[i].off, params[i], f->lay->p[i].size);
    *out = b;
    *len = n;
    return CUDA_SUCCESS;
}

void **sim_param_ptrs(CUfunction hf, void *argbuf, size_t argsize)
{
    struct CUfunc_st *f = func_of(hf);
    if (!f || !f->lay) return NULL;
    void **v = calloc(f->lay->n ? f->lay->n : 1, sizeof *v);
    for (uint32_t i = 0; v && i < f->lay->n; i++)
        if (argbuf && f->lay->p[i].off + f->lay->p[i].size <= argsize) v[i] = (char *)argbuf + f->lay->p[i].off;
    return v;
}

static CUresult launch(CUfunction hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    struct CUfunc_st *f = func_of(hf);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024 || bz > 64 ||
        gy > 65535 || gz > 65535)
        return CUDA_ERROR_INVALID_VALUE;
    const void *buf = NULL;
    size_t bufsize = 0;
    CUresult pr = packed_args(params, extra, &buf, &bufsize);
    if (pr) return pr;
    if (!sim_is_default_stream(s)) {
        sim_op op = {.type = 3, .f = hf, .argbuf = (void *)buf, .argsize = bufsize,
                     .grid = {gx, gy, gz}, .block = {bx, by, bz}, .shmem = shmem};
        char *copy = NULL;
        size_t n = layout_bytes(f);
        if (params && n && (copy = calloc(1, n))) { /* flatten for replay */
            for (uint32_t i = 0; i < f->lay->n; i++)
                if (params[i]) memcpy(copy + f->lay->p[i].off, params[i], f->lay->p[i].size);
            op.argbuf = copy;
            op.argsize = n;
        }
        int captured = sim_capture_op(s, &op);
        free(copy);
        if (captured) return CUDA_SUCCESS;
    }
    return buf ? sim_launch_check(hf, NULL, buf, bufsize) : sim_launch_check(hf, params, NULL, 0);
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
SIM_ALIAS(cuLaunchKernel, cuLaunchKernel_ptsz);

CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    if (!cfg) return CUDA_ERROR_INVALID_VALUE;
    return launch(f, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX, cfg->blockDimY,
                  cfg->blockDimZ, cfg->sharedMemBytes, cfg->hStream, params, extra);
}
SIM_ALIAS(cuLaunchKernelEx, cuLaunchKernelEx_ptsz);

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}
SIM_ALIAS(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz);

/* Deprecated, still in CUDA 13's cuda.h: one cooperative kernel per device. As documented: each
 * entry's stream may not be a default stream, the geometry must match across entries, at most one
 * entry per device; each kernel runs in its stream's context (checked there, as a launch). */
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *list, unsigned int n, unsigned int flags)
{
    (void)flags;
    CUresult r = sim_init_check();
    if (r) return r;
    if (!list || !n || n > (unsigned)sim_ndev) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        const CUDA_LAUNCH_PARAMS *e = &list[i], *z = &list[0];
        if (!sim_stream_ctx(e->hStream)) return sim_is_default_stream(e->hStream) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
        if (e->gridDimX != z->gridDimX || e->gridDimY != z->gridDimY || e->gridDimZ != z->gridDimZ ||
            e->blockDimX != z->blockDimX || e->blockDimY != z->blockDimY || e->blockDimZ != z->blockDimZ ||
            e->sharedMemBytes != z->sharedMemBytes)
            return CUDA_ERROR_INVALID_VALUE;
        for (unsigned j = 0; j < i; j++)
            if (sim_stream_ctx(list[j].hStream)->dev == sim_stream_ctx(e->hStream)->dev) return CUDA_ERROR_INVALID_VALUE;
    }
    for (unsigned i = 0; i < n && !r; i++) {
        const CUDA_LAUNCH_PARAMS *e = &list[i];
        sim_ctx *prev = sim_swap_ctx(sim_stream_ctx(e->hStream));
        r = launch(e->function, e->gridDimX, e->gridDimY, e->gridDimZ, e->blockDimX, e->blockDimY, e->blockDimZ,
                   e->sharedMemBytes, e->hStream, e->kernelParams, NULL);
        sim_swap_ctx(prev);
    }
    return r;
}
