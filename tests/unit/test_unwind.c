/* test_unwind.c - src/unwind.c against glibc backtrace() taken at the same place: deep recursion,
 * RBP-based frames (alloca, VLA), frames with and without a frame pointer (one that uses RBP as
 * a scratch register), callbacks from libc (qsort, pthread_once, atexit) and the dynamic loader
 * (dl_iterate_phdr), several threads at once, the cut at max, the cache (hit the second time,
 * dropped by vt_unwind_invalidate), and the fallbacks: a signal frame, a handler on sigaltstack,
 * a makecontext stack and a hand-written frame whose CFA is based on R12. */
#include <alloca.h>
#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ucontext.h>

#include "unwind.h"
#include "vt_test.h"

#define MAXF 80

#if defined(__GNUC__) && !defined(__clang__)
#define WITH_FP __attribute__((noinline, optimize("no-omit-frame-pointer")))
#define WITHOUT_FP __attribute__((noinline, optimize("omit-frame-pointer")))
#define CAN_CLOBBER_RBP 1
#else
#define WITH_FP __attribute__((noinline))
#define WITHOUT_FP __attribute__((noinline))
#define CAN_CLOBBER_RBP 0
#endif

struct bt {
    int max;
    int nf, ng;
    uint64_t fast[MAXF];
    uint64_t glibc[MAXF];
};

/* Both stacks from the same frame: entry 0 differs (two call sites in here), the rest must not.
 * A sanitizer's backtrace interceptor (in its own object) adds frames above ours to glibc's
 * answer: dropped. */
__attribute__((noinline)) static void capture(struct bt *b)
{
    void *g[MAXF + 4];
    b->nf = vt_unwind(b->fast, b->max);
    int n = backtrace(g, b->max + 2), skip = 0;
    Dl_info self, di;
    if (dladdr((void *)(uintptr_t)capture, &self))
        while (skip < n && dladdr(g[skip], &di) && di.dli_fbase != self.dli_fbase) skip++;
    b->ng = n - skip > b->max ? b->max : n - skip;
    for (int i = 0; i < b->ng; i++) b->glibc[i] = (uint64_t)(uintptr_t)g[skip + i];
    __asm__ volatile("" ::: "memory");
}

/* Frames equal from entry 1 on, same count; the fast path taken unless fallback is expected. */
static int same(const struct bt *b, int want_fast)
{
    if (b->nf < 0) return !want_fast;
    if (!want_fast || b->nf != b->ng || b->nf < 1) return 0;
    for (int i = 1; i < b->nf; i++)
        if (b->fast[i] != b->glibc[i]) return 0;
    return 1;
}

static void dump(const struct bt *b)
{
    printf("# fast %d:", b->nf);
    for (int i = 0; i < b->nf; i++) printf(" %llx", (unsigned long long)b->fast[i]);
    printf("\n# glibc %d:", b->ng);
    for (int i = 0; i < b->ng; i++) printf(" %llx", (unsigned long long)b->glibc[i]);
    printf("\n");
}

static volatile unsigned sink; /* kept small: the calls are what matters */
/* A return address into this executable (the test's own calls) */
static int ours_exe(uint64_t v)
{
    Dl_info self, di;
    return dladdr((void *)(uintptr_t)ours_exe, &self) && dladdr((void *)(uintptr_t)v, &di) &&
           di.dli_fbase == self.dli_fbase;
}
/* The walk alone: too small a body to save RBP (capture() saves it, and the walk then reads the
 * caller's RBP from a stack word) */
WITHOUT_FP static void walk_only(struct bt *b) { b->nf = vt_unwind(b->fast, b->max); }
__attribute__((noinline)) static int alloca_walk(struct bt *b)
{
    volatile char *p = alloca(32);
    p[0] = 1;
    walk_only(b);
    return p[0];
}
__attribute__((noinline)) static int plain_walk(struct bt *b)
{
    walk_only(b);
    sink = (sink + 1) & 0xff;
    return (int)sink;
}

__attribute__((noinline)) static int recurse(int n, struct bt *b)
{
    int r = n > 0 ? recurse(n - 1, b) : (capture(b), 0);
    sink = (sink + (unsigned)r) & 0xff; /* no tail call, no loop */
    return r + 1;
}

__attribute__((noinline)) static int with_alloca(int n, struct bt *b)
{
    volatile char *p = alloca((size_t)(n + 1) * 32);
    p[0] = (char)n;
    int r = n > 0 ? with_alloca(n - 1, b) : (capture(b), 0);
    return r + p[0];
}

__attribute__((noinline)) static int with_vla(int n, struct bt *b)
{
    volatile char v[n * 24 + 8];
    v[0] = (char)n;
    int r = n > 0 ? with_vla(n - 1, b) : (capture(b), 0);
    return r + v[0];
}

WITH_FP static int fp_inner(struct bt *b)
{
    capture(b);
    sink = (sink + 1) & 0xff;
    return (int)sink;
}

/* Uses RBP as a scratch register across the call: only its CFI says where the caller's is. */
WITHOUT_FP static int rbp_scratch(struct bt *b)
{
#if CAN_CLOBBER_RBP
    __asm__ volatile("movq $0x5151, %%rbp" ::: "rbp");
#endif
    int r = fp_inner(b);
    sink = (sink + (unsigned)r) & 0xff;
    return r;
}

WITHOUT_FP static int nofp_mid(struct bt *b)
{
    int r = rbp_scratch(b);
    sink = (sink + (unsigned)r) & 0xff;
    return r;
}

WITH_FP static int fp_outer(int n, struct bt *b)
{
    volatile char v[n + 16]; /* CFA from RBP */
    v[0] = 1;
    int r = nofp_mid(b);
    return r + v[0];
}

__attribute__((noinline)) static void counted(int depth, struct bt *b, struct vt_unwind_stats *before,
                                              struct vt_unwind_stats *after)
{
    *b = (struct bt){ .max = 64 };
    vt_unwind_get_stats(before);
    recurse(depth, b);
    vt_unwind_get_stats(after);
}

/* A call to a noreturn function can be a function's last instruction: its return address is
 * then the first byte of whatever follows, and only PC-1 finds the caller's CFI. */
static jmp_buf jump_back;
__attribute__((noinline, noreturn)) static void capture_and_jump(struct bt *b)
{
    capture(b);
    longjmp(jump_back, 1);
}
__attribute__((noinline)) static void ends_in_call(struct bt *b)
{
    sink = (sink + 1) & 0xff;
    capture_and_jump(b);
}

static struct bt qsort_bt;
static int qsort_captured;
static int cmp_int(const void *a, const void *b)
{
    if (!qsort_captured) {
        qsort_captured = 1;
        capture(&qsort_bt);
    }
    return *(const int *)a - *(const int *)b;
}

static struct bt phdr_bt, once_bt, atexit_bt;
static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (void)data;
    capture(&phdr_bt);
    return 1;
}
static void once_fn(void) { capture(&once_bt); }
static void at_exit(void)
{
    capture(&atexit_bt);
    if (!same(&atexit_bt, 1)) {
        dump(&atexit_bt);
        printf("not ok - at exit (atexit handler): same frames\n");
        fflush(stdout);
        _exit(1);
    }
    printf("ok - at exit (atexit handler, %d frames): same frames\n", atexit_bt.nf);
    fflush(stdout);
}

/* Hand-written CFI: CFA = R12 + 16 while the callback runs, which the cached rules cannot say. */
int vt_test_r12_frame(void (*fn)(struct bt *), struct bt *b);
__asm__(".text\n"
        ".globl vt_test_r12_frame\n"
        ".type vt_test_r12_frame,@function\n"
        "vt_test_r12_frame:\n"
        ".cfi_startproc\n"
        "pushq %r12\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_offset r12, -16\n"
        "movq %rsp, %r12\n"
        ".cfi_def_cfa_register r12\n"
        "movq %rdi, %rax\n"
        "movq %rsi, %rdi\n"
        "call *%rax\n"
        "movq %r12, %rsp\n"
        ".cfi_def_cfa_register rsp\n"
        "popq %r12\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore r12\n"
        "xorl %eax, %eax\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size vt_test_r12_frame, .-vt_test_r12_frame\n");

static struct bt sig_bt;
static void on_signal(int sig)
{
    (void)sig;
    capture(&sig_bt);
}

#ifndef __SANITIZE_ADDRESS__ /* ASan does not follow swapcontext */
static struct bt co_bt;
static ucontext_t uc_main, uc_co;
static void co_main(void) { capture(&co_bt); }
#endif

struct worker { int id, ok, fast; };
static void *worker_main(void *p)
{
    struct worker *w = p;
    w->ok = 1;
    w->fast = 1;
    for (int i = 0; i < 300 && w->ok; i++) {
        struct bt b = { .max = (i % 7) ? 64 : 1 + i % 5 };
        if ((i + w->id) % 3 == 0) recurse(i % 23, &b);
        else if ((i + w->id) % 3 == 1) with_vla(i % 9, &b);
        else fp_outer(i % 5, &b);
        if (!same(&b, 1)) { w->ok = 0; dump(&b); }
    }
    return NULL;
}

int main(void)
{
    struct vt_unwind_stats s0, s1;
    struct bt b = { .max = 64 };

    recurse(0, &b);
    VT_CHECK(same(&b, 1), "shallow stack: same frames as backtrace() (%d), down to _start", b.nf);
    if (!same(&b, 1)) dump(&b);
    VT_CHECK(b.nf < 64, "the walk reached the end of the stack (%d frames)", b.nf);

    b = (struct bt){ .max = 64 };
    recurse(40, &b);
    VT_CHECK(same(&b, 1) && b.nf > 40, "recursion 40 deep: same frames (%d)", b.nf);
    b = (struct bt){ .max = 64 };
    recurse(200, &b);
    VT_CHECK(same(&b, 1) && b.nf == 64, "recursion 200 deep, cut at 64: same frames (%d)", b.nf);
    for (int max = 1; max <= 6; max++) {
        b = (struct bt){ .max = max };
        recurse(10, &b);
        VT_CHECK(b.nf == max && same(&b, 1), "cut at max=%d (%d, %d)", max, b.nf, b.ng);
    }

    b = (struct bt){ .max = 64 };
    with_alloca(6, &b);
    VT_CHECK(same(&b, 1), "alloca frames (CFA from RBP): same frames (%d)", b.nf);
    b = (struct bt){ .max = 64 };
    with_vla(5, &b);
    VT_CHECK(same(&b, 1), "VLA frames: same frames (%d)", b.nf);
    b = (struct bt){ .max = 64 };
    fp_outer(3, &b);
    VT_CHECK(same(&b, 1), "frames with and without a frame pointer, RBP used as scratch: same (%d)", b.nf);
    if (!same(&b, 1)) dump(&b);

    b = (struct bt){ .max = 64 };
    if (!setjmp(jump_back)) ends_in_call(&b);
    VT_CHECK(same(&b, 1), "caller whose last instruction is a noreturn call: same frames (%d)", b.nf);

    int v[64];
    for (int i = 0; i < 64; i++) v[i] = (i * 37) % 64;
    qsort_bt.max = 64;
    qsort(v, 64, sizeof v[0], cmp_int);
    VT_CHECK(qsort_captured && same(&qsort_bt, 1), "through libc (qsort callback): same frames (%d)", qsort_bt.nf);

    phdr_bt.max = once_bt.max = atexit_bt.max = 64;
    dl_iterate_phdr(phdr_cb, NULL);
    VT_CHECK(same(&phdr_bt, 1), "through the dynamic loader (dl_iterate_phdr callback): same frames (%d)", phdr_bt.nf);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, once_fn);
    VT_CHECK(same(&once_bt, 1), "pthread_once callback: same frames (%d)", once_bt.nf);
    atexit(at_exit);

    /* the memo: the same stack again (one call site: the loop must not unroll) is answered
     * whole, no rule looked up */
    for (volatile int i = 0; i < 2; i++) counted(3, &b, &s0, &s1);
    VT_CHECK(same(&b, 1) && s1.memo_hits == s0.memo_hits + 1 && s1.misses == s0.misses && s1.hits == s0.hits,
             "second walk of a stack: from the memo (%llu memo hits, %llu rule hits, %llu misses)",
             (unsigned long long)(s1.memo_hits - s0.memo_hits), (unsigned long long)(s1.hits - s0.hits),
             (unsigned long long)(s1.misses - s0.misses));
    /* the rule cache: a deeper stack (its own stack pointer: no memo) of the same functions, from
     * a call site walked once already */
    for (volatile int i = 0; i < 2; i++) counted(4 + i, &b, &s0, &s1);
    VT_CHECK(same(&b, 1) && s1.memo_hits == s0.memo_hits && s1.misses == s0.misses && s1.hits > s0.hits,
             "a new stack of known functions: every rule from the cache (%llu hits, %llu misses)",
             (unsigned long long)(s1.hits - s0.hits), (unsigned long long)(s1.misses - s0.misses));
    /* vt_unwind_checkable: one alloca frame (its CFA from RBP): the walk depends on an RBP value
     * (the register's, or a stack word's that is no return address), so it is never vouched
     * for. The same depth without it depends only on return addresses into this program. */
    volatile char top = 0;
    uint64_t above = (uint64_t)(uintptr_t)&top; /* main's frame: the words below are the test's calls */
    b = (struct bt){ .max = 64 };
    alloca_walk(&b);
    int alloca_checkable = vt_unwind_checkable(vt_unwind_serial(), above, ours_exe);
    b = (struct bt){ .max = 64 };
    plain_walk(&b);
    int plain_checkable = vt_unwind_checkable(vt_unwind_serial(), above, ours_exe);
    VT_CHECK(alloca_checkable == 0, "a walk an RBP value steered is not checkable (%d)", alloca_checkable);
#if defined(__SANITIZE_ADDRESS__)
    /* every frame keeps RBP under ASan (main's too): no walk here is of return addresses only */
    (void)plain_checkable;
#else
    VT_CHECK(plain_checkable == 1, "a walk of return addresses only is checkable (%d)", plain_checkable);
#endif
    vt_unwind_invalidate(); /* what the dlclose interposer does */
    b = (struct bt){ .max = 64 };
    recurse(3, &b);
    vt_unwind_get_stats(&s0);
    VT_CHECK(same(&b, 1) && s0.misses > s1.misses, "after invalidation the rules are derived again (%llu misses)",
             (unsigned long long)(s0.misses - s1.misses));

    /* fallbacks: the answer is then glibc's (the caller calls backtrace()) */
    vt_unwind_get_stats(&s0);
    sig_bt.max = 64;
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);
    vt_unwind_get_stats(&s1);
    VT_CHECK(sig_bt.nf == -1 && s1.fallbacks == s0.fallbacks + 1 && sig_bt.ng > 3,
             "from a signal handler: falls back to backtrace() (%d, %d glibc frames)", sig_bt.nf, sig_bt.ng);
    static char altstack[64 * 1024];
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
    struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_ONSTACK };
    sig_bt = (struct bt){ .max = 64 };
    if (sigaltstack(&ss, NULL) == 0 && sigaction(SIGUSR2, &sa, NULL) == 0) {
        raise(SIGUSR2);
        VT_CHECK(sig_bt.nf == -1 && sig_bt.ng > 3, "from a handler on sigaltstack: falls back (%d glibc frames)",
                 sig_bt.ng);
    }
#ifndef __SANITIZE_ADDRESS__
    static char co_stack[128 * 1024];
    co_bt.max = 64;
    getcontext(&uc_co);
    uc_co.uc_stack.ss_sp = co_stack;
    uc_co.uc_stack.ss_size = sizeof co_stack;
    uc_co.uc_link = &uc_main;
    makecontext(&uc_co, co_main, 0);
    swapcontext(&uc_main, &uc_co);
    VT_CHECK(co_bt.nf == -1 && co_bt.ng >= 2, "on a makecontext stack: falls back (%d glibc frames)", co_bt.ng);
#endif
    b = (struct bt){ .max = 64 };
    vt_test_r12_frame(capture, &b);
    VT_CHECK(b.nf == -1 && b.ng > 3, "CFA from another register: falls back (%d)", b.nf);
    b = (struct bt){ .max = 0 };
    recurse(1, &b);
    VT_CHECK(b.nf == 0 && b.ng == 0, "max 0: no frames, as backtrace()");

    enum { NT = 6 };
    pthread_t th[NT];
    struct worker w[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (struct worker){ .id = i };
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    int all = 1;
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        all &= w[i].ok;
    }
    VT_CHECK(all, "%d threads at once, 300 stacks each (ending in clone): same frames", NT);
    return vt_test_finish();
}
