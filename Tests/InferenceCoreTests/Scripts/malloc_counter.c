// An LD_PRELOAD shim that counts malloc-family calls, so a test can prove `invoke()` allocates
// nothing. Built and used by count_allocations.sh; the test finds the counter with dlsym.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdatomic.h>

static atomic_long calls;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);

// dlsym may call calloc before real_calloc is known: serve those from a small static pool.
static char bootstrap[4096];
static size_t bootstrap_used;

long posewatch_malloc_calls(void) { return atomic_load(&calls); }

// Diagnostics: with POSEWATCH_MALLOC_TRACE set, posewatch_malloc_trace(1) prints a backtrace of
// every counted call until posewatch_malloc_trace(0).
#include <execinfo.h>
#include <stdlib.h>
#include <unistd.h>
static _Thread_local int tracing, inside;
void posewatch_malloc_trace(int on) { tracing = on; }
static void trace(void) {
    if (!tracing || inside) return;
    inside = 1;
    void *frames[24];
    int count = backtrace(frames, 24);
    backtrace_symbols_fd(frames, count, 2);
    static const char separator[] = "----\n";
    (void)!write(2, separator, sizeof separator - 1);
    inside = 0;
}


void *malloc(size_t size) {
    if (!real_malloc) real_malloc = dlsym(RTLD_NEXT, "malloc");
    atomic_fetch_add(&calls, 1);
    trace();
    return real_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (!real_calloc) {
        static int resolving;
        if (resolving) {
            size_t bytes = (count * size + 15) & ~(size_t)15;
            if (bootstrap_used + bytes > sizeof bootstrap) return NULL;
            void *result = bootstrap + bootstrap_used;
            bootstrap_used += bytes;
            return result;
        }
        resolving = 1;
        real_calloc = dlsym(RTLD_NEXT, "calloc");
        resolving = 0;
    }
    atomic_fetch_add(&calls, 1);
    trace();
    return real_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (!real_realloc) real_realloc = dlsym(RTLD_NEXT, "realloc");
    atomic_fetch_add(&calls, 1);
    return real_realloc(pointer, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (!real_posix_memalign) real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    atomic_fetch_add(&calls, 1);
    return real_posix_memalign(result, alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!real_aligned_alloc) real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    atomic_fetch_add(&calls, 1);
    return real_aligned_alloc(alignment, size);
}
