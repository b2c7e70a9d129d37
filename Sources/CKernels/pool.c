// A fixed pool of pthreads. One 64-bit word holds the current run: generation (32 bits), task
// count and next unclaimed task (16 bits each). A run publishes (fn, context), then the word with a
// new generation; every thread, the caller included, claims tasks with a compare-and-swap on that
// word, so a claim can only succeed for the generation whose fn/context it read (a worker that
// was preempted between two runs can never run a task of one run with the function of another).
//
// Between runs workers spin briefly (an invoke runs ~100 operators back to back, and a futex
// wake-up per operator would cost more than small operators themselves), yielding their core now
// and then: on a machine with more runnable threads than cores, a spinning worker may share a
// core with the caller, and it must not keep the caller off it. After ~0.2 ms they sleep on a
// condition variable.
//
// Tasks are claimed dynamically, so a worker that is not running costs nothing; only a worker
// preempted while it holds a task makes the caller wait, for as long as the scheduler keeps it off
// a core (milliseconds on a loaded machine). When the caller had to wait that long, it runs the
// next runs on its own (256, then 512, ... up to 16384 runs, halved again after every 1024 runs
// without such a wait): on a loaded machine one thread beats two that wait for each other, and
// once the load is gone the pool runs threaded again when its current back-off has run out.
#include "internal.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sched.h>
#include <time.h>
#if defined(__x86_64__)
#define PW_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define PW_PAUSE() __asm__ volatile("yield")
#else
#define PW_PAUSE() ((void)0)
#endif

#define CACHE_LINE 64

struct pw_pool {
    int threads;
    pthread_t *workers;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    _Atomic int sleepers;
    _Atomic int stop;
    // The claim word and the completion count on lines of their own (written by every thread).
    _Alignas(CACHE_LINE) _Atomic uint64_t state;  // generation << 32 | tasks << 16 | next
    _Alignas(CACHE_LINE) _Atomic int remaining;
    _Alignas(CACHE_LINE) _Atomic(pw_task_fn) fn;
    _Atomic(void *) context;
    // Caller-only: runs still to do inline after a long wait, the current back-off, and runs
    // without a long wait since the back-off last changed.
    int inline_runs, backoff, calm_runs;
};

typedef struct { pw_pool *pool; int index; } worker_start;

enum {
    MAX_TASKS = 0xFFFF,
    WORKER_SPIN_NS = 200000,       // spinning between runs before sleeping
    YIELD_EVERY_SPINS = 512,       // a worker yields its core every ~10–30 µs of spinning
    CALLER_SPIN_NS = 20000,        // the caller spins this long for a worker's task, then yields
    LONG_WAIT_NS = 200000,         // a wait this long means the worker was preempted
    // One such wait costs about a scheduler time slice (milliseconds), as much as two threads save
    // over several invokes (~75 runs each): back off for a few invokes at once, up to ~200.
    BACKOFF_FIRST = 256, BACKOFF_MAX = 16384, CALM_RUNS_TO_HALVE = 1024,
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/// Claims and runs tasks of the current generation until none is left.
static void work(pw_pool *pool, int thread) {
    uint64_t s = atomic_load_explicit(&pool->state, memory_order_acquire);
    for (;;) {
        uint32_t next = (uint32_t)(s & 0xFFFF), tasks = (uint32_t)((s >> 16) & 0xFFFF);
        if (next >= tasks) return;
        // Read between the load that saw this generation and the claim that proves it still runs.
        pw_task_fn fn = atomic_load_explicit(&pool->fn, memory_order_relaxed);
        void *context = atomic_load_explicit(&pool->context, memory_order_relaxed);
        if (!atomic_compare_exchange_weak_explicit(&pool->state, &s, s + 1, memory_order_acquire,
                                                   memory_order_acquire)) {
            continue;  // s now holds the current word
        }
        fn(context, (int)next, thread);
        atomic_fetch_sub_explicit(&pool->remaining, 1, memory_order_release);
        s = atomic_load_explicit(&pool->state, memory_order_acquire);
    }
}

static void *worker_main(void *argument) {
    worker_start start = *(worker_start *)argument;
    free(argument);
    pw_pool *pool = start.pool;
    uint32_t seen = 0;
    for (;;) {
        uint32_t now = (uint32_t)(atomic_load_explicit(&pool->state, memory_order_acquire) >> 32);
        if (now == seen) {
            uint64_t started = now_ns();
            for (int spins = 1; now == seen; spins++) {
                PW_PAUSE();
                if (spins % YIELD_EVERY_SPINS == 0) {
                    if (now_ns() - started > WORKER_SPIN_NS) break;
                    sched_yield();
                }
                now = (uint32_t)(atomic_load_explicit(&pool->state, memory_order_acquire) >> 32);
            }
        }
        if (now == seen) {
            pthread_mutex_lock(&pool->mutex);
            atomic_fetch_add(&pool->sleepers, 1);
            while ((now = (uint32_t)(atomic_load(&pool->state) >> 32)) == seen && !atomic_load(&pool->stop)) {
                pthread_cond_wait(&pool->wake, &pool->mutex);
            }
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->mutex);
        }
        if (atomic_load(&pool->stop)) return NULL;
        seen = now;
        work(pool, start.index);
    }
}

pw_pool *pw_pool_create(int threads) {
    if (threads < 1) threads = 1;
    if (threads > PW_MAX_THREADS) threads = PW_MAX_THREADS;
    pw_pool *pool = aligned_alloc(CACHE_LINE, (sizeof(pw_pool) + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE);
    if (!pool) return NULL;
    memset(pool, 0, sizeof(pw_pool));
    pool->threads = threads;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pool->workers = calloc((size_t)threads, sizeof(pthread_t));
    // Workers start with every signal blocked (a new thread inherits its creator's mask): a
    // process-directed signal such as SIGTERM goes to a thread that does not block it, and a
    // worker must never be that thread, or the default action kills the process before the frame
    // loop's signalfd sees it. This holds whatever order the program creates pools and signalfds in.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    for (int i = 1; i < threads; i++) {
        worker_start *start = malloc(sizeof(worker_start));
        start->pool = pool;
        start->index = i;
        if (pthread_create(&pool->workers[i], NULL, worker_main, start) != 0) {
            free(start);
            pool->threads = i;
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return pool;
}

void pw_pool_destroy(pw_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->stop, 1);
    uint64_t s = atomic_load(&pool->state);
    atomic_store(&pool->state, ((s >> 32) + 1) << 32);  // a new generation with no tasks
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 1; i < pool->threads; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->mutex);
    free(pool->workers);
    free(pool);
}

int pw_pool_threads(const pw_pool *pool) { return pool ? pool->threads : 1; }

static void calm_run(pw_pool *pool) {
    if (pool->backoff > 0 && ++pool->calm_runs >= CALM_RUNS_TO_HALVE) {
        pool->backoff /= 2;
        pool->calm_runs = 0;
    }
}

void pw_pool_run(pw_pool *pool, int tasks, pw_task_fn fn, void *context) {
    if (tasks <= 0) return;
    if (!pool || pool->threads == 1 || tasks == 1 || tasks > MAX_TASKS || pool->inline_runs > 0) {
        if (pool && pool->inline_runs > 0 && tasks > 1) pool->inline_runs--;
        for (int t = 0; t < tasks; t++) fn(context, t, 0);
        return;
    }
    atomic_store_explicit(&pool->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&pool->context, context, memory_order_relaxed);
    atomic_store_explicit(&pool->remaining, tasks, memory_order_relaxed);
    // No thread can claim anything now (every task of the last run was claimed and finished),
    // so a plain store publishes the new run; release makes fn, context and remaining visible.
    uint64_t generation = (atomic_load_explicit(&pool->state, memory_order_relaxed) >> 32) + 1;
    atomic_store_explicit(&pool->state, generation << 32 | (uint64_t)tasks << 16, memory_order_release);
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mutex);
    }
    work(pool, 0);
    if (atomic_load_explicit(&pool->remaining, memory_order_acquire) == 0) {
        calm_run(pool);
        return;
    }
    // A worker holds a task: spin for it, then yield the core (it may be waiting for this one).
    uint64_t started = now_ns(), waited = 0;
    for (int spins = 1; atomic_load_explicit(&pool->remaining, memory_order_acquire) > 0; spins++) {
        PW_PAUSE();
        if (spins % 64 == 0) {
            waited = now_ns() - started;
            if (waited > CALLER_SPIN_NS) sched_yield();
        }
    }
    if (waited > LONG_WAIT_NS) {
        pool->backoff = pool->backoff < BACKOFF_FIRST ? BACKOFF_FIRST : pool->backoff * 2;
        if (pool->backoff > BACKOFF_MAX) pool->backoff = BACKOFF_MAX;
        pool->inline_runs = pool->backoff;
        pool->calm_runs = 0;
    } else {
        calm_run(pool);
    }
}
