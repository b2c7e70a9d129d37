#include "internal.h"
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif

static int detect(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return PW_ISA_SCALAR;
    int sse41 = (c >> 19) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!sse41) return PW_ISA_SCALAR;
    if (!osxsave || !avx) return PW_ISA_SSE41;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return PW_ISA_SSE41;  // the OS saves XMM and YMM state
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return PW_ISA_SSE41;
    int avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    int vnni = (c >> 11) & 1;
    if (!avx2) return PW_ISA_SSE41;
    if (avx512f && avx512bw && avx512vl && vnni && (lo & 0xE6) == 0xE6) return PW_ISA_AVX512VNNI;
    return PW_ISA_AVX2;
#elif defined(__aarch64__)
    unsigned long hwcap = getauxval(AT_HWCAP);
    return (hwcap & HWCAP_ASIMDDP) ? PW_ISA_NEONDOT : PW_ISA_NEON;
#else
    return PW_ISA_SCALAR;
#endif
}

static int best_isa = -1;
static int vbmi = -1;

int pw_has_avx512vbmi(void) {
    int known = __atomic_load_n(&vbmi, __ATOMIC_RELAXED);
    if (known >= 0) return known;
    int has = 0;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    // vpermi2b (AVX512_VBMI, cpuid 7.0 ECX bit 1) on top of the AVX-512 state the VNNI level checked.
    if (pw_best_isa() == PW_ISA_AVX512VNNI && __get_cpuid_count(7, 0, &a, &b, &c, &d)) has = (c >> 1) & 1;
#endif
    __atomic_store_n(&vbmi, has, __ATOMIC_RELAXED);
    return has;
}

int pw_best_isa(void) {
    int isa = __atomic_load_n(&best_isa, __ATOMIC_RELAXED);
    if (isa < 0) {
        isa = detect();
        __atomic_store_n(&best_isa, isa, __ATOMIC_RELAXED);
    }
    return isa;
}

int pw_isa_supported(int isa) {
    int best = pw_best_isa();
    if (isa == PW_ISA_SCALAR) return 1;
#if defined(__x86_64__)
    return isa >= PW_ISA_SSE41 && isa <= PW_ISA_AVX512VNNI && isa <= best;
#elif defined(__aarch64__)
    return isa == PW_ISA_NEON || (isa == PW_ISA_NEONDOT && best == PW_ISA_NEONDOT);
#else
    (void)best;
    return 0;
#endif
}

const char *pw_isa_name(int isa) {
    switch (isa) {
    case PW_ISA_SCALAR: return "scalar";
    case PW_ISA_SSE41: return "sse41";
    case PW_ISA_AVX2: return "avx2";
    case PW_ISA_AVX512VNNI: return "avx512vnni";
    case PW_ISA_NEON: return "neon";
    case PW_ISA_NEONDOT: return "neondot";
    default: return "unknown";
    }
}

int pw_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

int pw_task_size(int count, int threads, int granule) {
    int tasks = threads <= 1 ? 1 : threads * 4;
    int size = (count + tasks - 1) / tasks;
    size = (size + granule - 1) / granule * granule;
    return size < granule ? granule : size;
}
