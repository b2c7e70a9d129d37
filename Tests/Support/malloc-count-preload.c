// A malloc-counting preload library for allocation tests: build with
//   cc -shared -fPIC -O2 -o /tmp/libpw-malloc-count.so Tests/Support/malloc-count-preload.c
// and run the test binary with LD_PRELOAD=/tmp/libpw-malloc-count.so. It exports
// pw_thread_allocation_count (allocations made by the calling thread) and pw_allocation_count
// (process-wide, the same name as the benchmark's CMallocCounter). Tests look them up with dlsym,
// prefer the per-thread count, and are skipped when neither is loaded. Not part of any target: interposing malloc in the shared test binary
// would affect every test module.
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic uint64_t allocations;
// Per thread too: the test framework allocates on its own threads while a test runs, and a test
// that measures its own thread is not disturbed by that. initial-exec: a preloaded library has
// static TLS, and the default model could call malloc from inside malloc.
static _Thread_local uint64_t thread_allocations __attribute__((tls_model("initial-exec")));

uint64_t pw_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }
uint64_t pw_thread_allocation_count(void) { return thread_allocations; }

static inline void count(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    thread_allocations++;
}

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *pointer, size_t size) { count(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
    count();
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
