/* life_helper.c - native code that life.py loads with ctypes (tests/cases/py_life.sh): threads
 * Python never started, a C thread calling back into Python, a loop of CUDA calls made without
 * the interpreter's lock while the interpreter shuts down, and a library destructor that runs
 * after it has finalized. The CUDA runtime is looked up with dlsym, as a framework's own
 * libraries find it (the tracer's hooks answer). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
static malloc_fn cuda_malloc;
static free_fn cuda_free;
static atomic_long busy_pairs;
static atomic_int busy_state; /* 0 running, 1 asked to stop, 2 stopped */

static int load(void)
{
    if (cuda_malloc) return 0;
    void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return -1;
    cuda_free = (free_fn)dlsym(h, "cudaFree");
    cuda_malloc = (malloc_fn)dlsym(h, "cudaMalloc");
    return cuda_malloc && cuda_free ? 0 : -1;
}

/* a thread that never ran Python: it allocates N bytes and keeps them */
static void *c_alloc_main(void *n)
{
    void *p;
    return (void *)(intptr_t)cuda_malloc(&p, (size_t)n);
}

int c_thread_alloc(size_t n)
{
    pthread_t t;
    void *rc;
    if (load() || pthread_create(&t, NULL, c_alloc_main, (void *)n)) return -1;
    pthread_join(t, &rc);
    return (int)(intptr_t)rc;
}

/* a thread started here that calls into Python (a ctypes callback takes the lock itself) */
static void *callback_main(void *cb)
{
    ((void (*)(void))cb)();
    return NULL;
}

int c_thread_callback(void (*cb)(void))
{
    pthread_t t;
    if (pthread_create(&t, NULL, callback_main, (void *)cb)) return -1;
    return pthread_join(t, NULL);
}

/* what a framework op does with the lock released: CUDA calls one after another, 4 KiB allocated
 * and freed every 50 us, through the interpreter's whole finalization, until its last step
 * (Py_AtExit) stops it: no call of it is left for exit() to cut off */
void busy_loop(void)
{
    if (load()) return;
    while (!atomic_load(&busy_state)) {
        void *p;
        if (cuda_malloc(&p, 4096) == 0 && cuda_free(p) == 0) atomic_fetch_add(&busy_pairs, 1);
        usleep(50);
    }
    atomic_store(&busy_state, 2);
}

static void stop_busy(void)
{
    atomic_store(&busy_state, 1);
    while (atomic_load(&busy_state) != 2) usleep(100);
}

int busy_stop_at_exit(void)
{
    int (*at_exit)(void (*)(void)) = (int (*)(void (*)(void)))dlsym(RTLD_DEFAULT, "Py_AtExit");
    return at_exit ? at_exit(stop_busy) : -1;
}

long busy_count(void) { return atomic_load(&busy_pairs); }

/* a library's destructor after the interpreter has finalized (a C++ static's, a framework's cache):
 * it runs after the tracer's own destructor, and its pair must still be in the trace */
__attribute__((destructor)) static void at_unload(void)
{
    void *p;
    if (cuda_malloc && cuda_malloc(&p, 8192) == 0) cuda_free(p);
}
