/*
 * Hot path of the live agent at one configuration: the same event stream as bench/speed.c
 * (Zipf keys through an exact LRU of N items -> HIT / MISS+EVICT+SET events, stored first),
 * fed to hc_profile_event `--repeat` times, each on a fresh profile. Prints the best and the
 * median per-thread-CPU-time rate. On this shared 2-core VM wall and even CPU rates swing by
 * 2x (neighbours evict our cache lines), so the stable figure is instructions per event:
 *   valgrind --tool=callgrind --toggle-collect=feed build/bench/hotpath --repeat 1
 * (the "Collected" total divided by the printed event count), and cache misses per event with
 *   valgrind --tool=cachegrind --cache-sim=yes ... (whole program; subtract --repeat 0).
 * usage: hotpath [--requests R] [--keys K] [--cache N] [--alpha A] [--repeat T]
 *                [--filters F] [--ghost-factor K] [--buckets B] [--mimir]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/profile.h"
#include "core/lruemu.h"
#include "../ref/workload.h"

typedef struct { uint64_t key; uint8_t op; } event;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* noinline: the callgrind toggle point */
__attribute__((noinline)) void feed(hc_profile *p, const event *ev, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) hc_profile_event(p, ev[i].op, 1, ev[i].key, 100);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint64_t requests = 3000000, keys = 1000000, N = 100000;
    double alpha = 0.9;
    int repeat = 5;
    hc_profile_config cfg;
    hc_profile_config_default(&cfg);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(a, "--requests")) { requests = strtoull(v, 0, 10); i++; }
        else if (!strcmp(a, "--keys")) { keys = strtoull(v, 0, 10); i++; }
        else if (!strcmp(a, "--cache")) { N = strtoull(v, 0, 10); i++; }
        else if (!strcmp(a, "--alpha")) { alpha = atof(v); i++; }
        else if (!strcmp(a, "--repeat")) { repeat = atoi(v); i++; }
        else if (!strcmp(a, "--filters")) { cfg.ghost_filters = (uint32_t)atoi(v); i++; }
        else if (!strcmp(a, "--ghost-factor")) { cfg.ghost_factor = atof(v); i++; }
        else if (!strcmp(a, "--buckets")) { cfg.buckets = (uint32_t)atoi(v); i++; }
        else if (!strcmp(a, "--mimir")) { cfg.rounder_balanced = 0; cfg.ghost_keep_coverage = 0; }
        else { fprintf(stderr, "hotpath: bad argument %s\n", a); return 2; }
    }
    if (repeat > 64) repeat = 64;
    workload w;
    refwl_zipf(&w, "zipf", requests, keys, alpha, 11);
    event *ev = malloc(requests * 3 * sizeof(event));
    uint64_t n = 0, hits = 0, misses = 0;
    lruemu e;
    lruemu_init(&e, N);
    for (uint64_t i = 0; i < w.n; i++) {
        uint64_t k = w.keys[i], v;
        if (lruemu_access(&e, k)) { ev[n++] = (event){k, HC_EV_HIT}; hits++; continue; }
        ev[n++] = (event){k, HC_EV_MISS};
        misses++;
        if (lruemu_insert(&e, k, &v)) ev[n++] = (event){v, HC_EV_EVICT};
        ev[n++] = (event){k, HC_EV_SET};
    }
    lruemu_free(&e);
    refwl_free(&w);
    printf("# hotpath: Zipf(%.2f) %llu keys, %llu requests, N=%llu, B=%u F=%u k=%.1f %s; "
           "%llu events (%llu HIT, %llu MISS)\n", alpha, (unsigned long long)keys,
           (unsigned long long)requests, (unsigned long long)N, cfg.buckets, cfg.ghost_filters,
           cfg.ghost_factor, cfg.rounder_balanced ? "balanced" : "mimir", (unsigned long long)n,
           (unsigned long long)hits, (unsigned long long)misses);
    double rate[64];
    size_t mem = 0;
    double ghit = 0;
    for (int r = 0; r < repeat; r++) {
        hc_profile *p = hc_profile_new(&cfg, NULL);
        hc_profile_set_capacity(p, 1, N, 100);
        double t0 = cpu_s();
        feed(p, ev, n);
        rate[r] = n / (cpu_s() - t0);
        hc_profile_stats st;
        hc_profile_stats_get(p, &st);
        mem = st.total_bytes;
        ghit = hc_profile_hit_ratio_at(p, 1, 2.0 * N);
        hc_profile_free(p);
    }
    if (repeat > 0) {
        qsort(rate, repeat, sizeof(double), cmp_d);
        printf("events/s (M, thread CPU time): best %.2f  median %.2f  worst %.2f  (memory %.0f KiB, "
               "est. hit ratio at 2N %.4f)\n", rate[repeat - 1] / 1e6, rate[repeat / 2] / 1e6,
               rate[0] / 1e6, mem / 1024.0, ghit);
    }
    free(ev);
    return 0;
}
