/*
 * rss_probe.c: LD_PRELOAD into a program run under qemu-user to report the *guest's* resident
 * memory, which getrusage and /proc/self/status cannot give there (they describe the whole QEMU
 * process: its translation cache, its own heap and libraries).
 *
 * Under qemu-user (QEMU 7.2) /proc/self/maps is emulated: it lists only the guest's mappings, in
 * guest addresses. /proc/self/smaps is not: it is the QEMU process's, with the resident size (Rss)
 * of every host mapping. Guest mappings are host mappings at guest address + guest_base, so the
 * guest's RSS is the sum of Rss over host mappings that start where a guest mapping starts.
 * guest_base is found from a file both lists name (the program's own binary).
 *
 * A thread samples every 20 ms; at exit the probe prints to stderr the peak and final guest RSS,
 * the part of it that is file pages of files whose path contains $RSS_PROBE_EXCLUDE (the input
 * clip, which a camera does not have), and the QEMU process's VmHWM for comparison.
 * On a native run (no emulation) the same sums are simply the process's own mappings.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MAPS 8192
struct range { uint64_t start, end; char path[160]; };
static struct range guest[MAX_MAPS];
static int guest_count;
static long peak_kb, peak_excluded_kb;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t guest_base;

static int read_maps(const char *file, struct range *out, int max, long *rss_kb_or_null) {
    FILE *f = fopen(file, "r");
    if (!f) return 0;
    char line[512];
    int n = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b;
        char path[160] = "";
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %159[^\n]", &a, &b, path) >= 2 && strchr(line, '-') < strchr(line, ' ')) {
            if (n + 1 >= max) break;
            n++;
            out[n].start = a; out[n].end = b;
            strcpy(out[n].path, path);
            if (rss_kb_or_null) rss_kb_or_null[n] = 0;
        } else if (rss_kb_or_null && n >= 0 && strncmp(line, "Rss:", 4) == 0) {
            rss_kb_or_null[n] = strtol(line + 4, NULL, 10);
        }
    }
    fclose(f);
    return n + 1;
}

static struct range host[MAX_MAPS];
static long host_rss[MAX_MAPS];

static void sample(long *total_kb, long *excluded_kb) {
    const char *exclude = getenv("RSS_PROBE_EXCLUDE");
    guest_count = read_maps("/proc/self/maps", guest, MAX_MAPS, NULL);
    int hosts = read_maps("/proc/self/smaps", host, MAX_MAPS, host_rss);
    /* guest_base: host start - guest start of the first file mapping both name. */
    int64_t base = 0;
    guest_base = 0;
    int found = 0;
    for (int g = 0; g < guest_count && !found; g++) {
        if (guest[g].path[0] != '/') continue;
        for (int h = 0; h < hosts; h++) {
            if (strcmp(host[h].path, guest[g].path) == 0) { base = (int64_t)(host[h].start - guest[g].start); guest_base = base; found = 1; break; }
        }
    }
    long total = 0, excluded = 0;
    for (int h = 0; h < hosts; h++) {
        for (int g = 0; g < guest_count; g++) {
            if (guest[g].start + (uint64_t)base == host[h].start) {
                total += host_rss[h];
                if (exclude && *exclude && strstr(host[h].path, exclude)) excluded += host_rss[h];
                break;
            }
        }
    }
    *total_kb = total; *excluded_kb = excluded;
}

static void record(void) {
    long total, excluded;
    pthread_mutex_lock(&lock);
    sample(&total, &excluded);
    if (total - excluded > peak_kb - peak_excluded_kb) { peak_kb = total; peak_excluded_kb = excluded; }
    pthread_mutex_unlock(&lock);
}

static void *sampler(void *unused) {
    (void)unused;
    for (;;) { record(); usleep(20000); }
    return NULL;
}

static void report(void) {
    long total, excluded;
    pthread_mutex_lock(&lock);
    sample(&total, &excluded);
    if (total - excluded > peak_kb - peak_excluded_kb) { peak_kb = total; peak_excluded_kb = excluded; }
    long hwm = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) if (strncmp(line, "VmHWM:", 6) == 0) hwm = strtol(line + 6, NULL, 10);
        fclose(f);
    }
    /* The largest guest mappings at exit, by resident size, to see where the memory is. */
    const char *exclude = getenv("RSS_PROBE_EXCLUDE");
    (void)exclude;
    int hosts = read_maps("/proc/self/smaps", host, MAX_MAPS, host_rss);
    for (int shown = 0; shown < 12; shown++) {
        int best = -1;
        for (int h = 0; h < hosts; h++) {
            if (host_rss[h] <= 0) continue;
            int is_guest = 0;
            for (int g = 0; g < guest_count && !is_guest; g++) is_guest = guest[g].start + (uint64_t)guest_base == host[h].start;
            if (is_guest && (best < 0 || host_rss[h] > host_rss[best])) best = h;
        }
        if (best < 0) break;
        fprintf(stderr, "rss_probe: mapping %6ld kB %s\n", host_rss[best], host[best].path[0] ? host[best].path : "[anonymous]");
        host_rss[best] = -1;
    }
    fprintf(stderr, "rss_probe: guest peak RSS %ld kB (of which %ld kB file pages of the excluded input), peak without it %ld kB; at exit %ld kB (%ld kB excluded); whole QEMU process VmHWM %ld kB\n",
            peak_kb, peak_excluded_kb, peak_kb - peak_excluded_kb, total, excluded, hwm);
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void start(void) {
    pthread_t thread;
    atexit(report);
    if (pthread_create(&thread, NULL, sampler, NULL) == 0) pthread_detach(thread);
}
