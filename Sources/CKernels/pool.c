// A fixed pool of pthreads. A run publishes (fn, context, tasks) and bumps a generation counter;
// workers spin briefly on it (an invoke runs ~100 operators back to back, and a futex wake-up per
// operator would cost more than small operators themselves), then sleep on a condition variable.
// Tasks are claimed with an atomic counter; the caller works too and waits for the last task.
#include "internal.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sched.h>
#if defined(__x86_64__)
#define PW_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define PW_PAUSE() __asm__ volatile("yield")
#else
#define PW_PAUSE() ((void)0)
#endif

struct pw_pool {
    int threads;
    pthread_t *workers;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    _Atomic uint64_t generation;
    _Atomic int sleepers;
    _Atomic int next_task;
    _Atomic int remaining;
    _Atomic int stop;
    int tasks;
    pw_task_fn fn;
    void *context;
};

typedef struct { pw_pool *pool; int index; } worker_start;

static void work(pw_pool *pool, int thread) {
    for (;;) {
        int task = atomic_fetch_add_explicit(&pool->next_task, 1, memory_order_acq_rel);
        if (task >= pool->tasks) return;
        pool->fn(pool->context, task, thread);
        atomic_fetch_sub_explicit(&pool->remaining, 1, memory_order_acq_rel);
    }
}

// ~1 ms of pause-spinning between operators before a worker sleeps; the caller, waiting for a
// task another thread holds, yields its core after a short spin (on a loaded machine the holder
// may be waiting for exactly that core).
enum { SPIN_ITERATIONS = 20000, CALLER_SPINS_BEFORE_YIELD = 2000 };

static void *worker_main(void *argument) {
    worker_start start = *(worker_start *)argument;
    free(argument);
    pw_pool *pool = start.pool;
    uint64_t seen = 0;
    for (;;) {
        uint64_t now = atomic_load_explicit(&pool->generation, memory_order_acquire);
        int spins = 0;
        while (now == seen && spins < SPIN_ITERATIONS) {
            PW_PAUSE();
            spins++;
            now = atomic_load_explicit(&pool->generation, memory_order_acquire);
        }
        if (now == seen) {
            pthread_mutex_lock(&pool->mutex);
            atomic_fetch_add(&pool->sleepers, 1);
            while ((now = atomic_load(&pool->generation)) == seen && !atomic_load(&pool->stop)) {
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
    pw_pool *pool = calloc(1, sizeof(pw_pool));
    if (!pool) return NULL;
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
    atomic_fetch_add(&pool->generation, 1);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 1; i < pool->threads; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->mutex);
    free(pool->workers);
    free(pool);
}

int pw_pool_threads(const pw_pool *pool) { return pool ? pool->threads : 1; }

void pw_pool_run(pw_pool *pool, int tasks, pw_task_fn fn, void *context) {
    if (tasks <= 0) return;
    if (!pool || pool->threads == 1 || tasks == 1) {
        for (int t = 0; t < tasks; t++) fn(context, t, 0);
        return;
    }
    pool->fn = fn;
    pool->context = context;
    pool->tasks = tasks;
    atomic_store_explicit(&pool->remaining, tasks, memory_order_relaxed);
    atomic_store_explicit(&pool->next_task, 0, memory_order_release);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_acq_rel);
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mutex);
    }
    work(pool, 0);
    int spins = 0;
    while (atomic_load_explicit(&pool->remaining, memory_order_acquire) > 0) {
        if (++spins < CALLER_SPINS_BEFORE_YIELD) PW_PAUSE();
        else sched_yield();
    }
}
