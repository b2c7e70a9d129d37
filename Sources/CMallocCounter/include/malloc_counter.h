// Counts heap allocations in the process that links this target, for allocation benchmarks.
//
// Linking it interposes malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign (the
// executable's definitions win over libc's), counting each call and forwarding to glibc's
// __libc_* entry points. Only the benchmark executable links it; posewatch itself does not.
#ifndef POSEWATCH_MALLOC_COUNTER_H
#define POSEWATCH_MALLOC_COUNTER_H
#include <stdint.h>

/// Allocations (malloc, calloc, realloc, aligned variants) since the process started.
uint64_t pw_allocation_count(void);

#endif
