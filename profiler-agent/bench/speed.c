/*
 * Speed of the core update path, keys already in memory: an exact LRU of N items turns a Zipf
 * key stream into the HIT / MISS+EVICT+SET events memcached would report; the events are stored
 * and then fed to hc_profile_event on one core (the agent's path, without parsing). Also times
 * the offline path (GET through the core's LRU emulator).
 * Rates are per second of this thread's CPU time (the 2-core machine is shared; wall time
 * would measure the neighbours).
 * usage: speed [--requests R] [--keys K] [--cache N] [--alpha A]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/profile.h"
#include "core/lruemu.h"
#include "../ref/workload.h"

typedef struct { uint64_t key; uint8_t op; } event;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* CPU time: the machine is shared */
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double run_events(const hc_profile_config *cfg, const event *ev, uint64_t n, uint64_t N, size_t *mem)
{
    hc_profile *p = hc_profile_new(cfg, NULL);
    hc_profile_set_capacity(p, 1, N, 100);
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) hc_profile_event(p, ev[i].op, 1, ev[i].key, 100);
    double t = now_s() - t0;
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    *mem = st.total_bytes;
    hc_profile_free(p);
    return n / t;
}

static double run_gets(const hc_profile_config *cfg0, const workload *w, uint64_t N)
{
    hc_profile_config cfg = *cfg0;
    cfg.emulate_lru = 1;
    hc_profile *p = hc_profile_new(&cfg, NULL);
    hc_profile_set_capacity(p, 0, N, 100);
    double t0 = now_s();
    for (uint64_t i = 0; i < w->n; i++) hc_profile_get(p, 0, w->keys[i], 100);
    double t = now_s() - t0;
    hc_profile_free(p);
    return w->n / t;
}

int main(int argc, char **argv)
{
    uint64_t requests = 4000000, keys = 1000000, N = 100000;
    double alpha = 0.9;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--requests")) requests = strtoull(argv[i + 1], 0, 10);
        else if (!strcmp(argv[i], "--keys")) keys = strtoull(argv[i + 1], 0, 10);
        else if (!strcmp(argv[i], "--cache")) N = strtoull(argv[i + 1], 0, 10);
        else if (!strcmp(argv[i], "--alpha")) alpha = atof(argv[i + 1]);
    }
    workload w;
    refwl_zipf(&w, "zipf", requests, keys, alpha, 11);
    event *ev = malloc(requests * 3 * sizeof(event));
    uint64_t n = 0, hits = 0;
    lruemu e;
    lruemu_init(&e, N);
    for (uint64_t i = 0; i < w.n; i++) {
        uint64_t k = w.keys[i], v;
        if (lruemu_access(&e, k)) { ev[n++] = (event){k, HC_EV_HIT}; hits++; continue; }
        ev[n++] = (event){k, HC_EV_MISS};
        if (lruemu_insert(&e, k, &v)) ev[n++] = (event){v, HC_EV_EVICT};
        ev[n++] = (event){k, HC_EV_SET};
    }
    lruemu_free(&e);
    printf("# speed: Zipf(%.2f) over %llu keys, %llu requests, N=%llu items, LRU hit ratio %.3f, %llu events\n",
           alpha, (unsigned long long)keys, (unsigned long long)requests, (unsigned long long)N,
           (double)hits / requests, (unsigned long long)n);
    printf("%-34s %14s %14s %12s\n", "configuration", "events/s (M)", "GETs/s (M)", "memory KiB");
    struct { const char *name; int B, F, bal, keep; double k; int est; } C[] = {
        {"MIMIR aging+rotation (B=128, F=3)", 128, 3, 0, 0, 2, HC_EST_ROUNDER},
        {"defaults (B=128 balanced, F=9)", 128, 9, 1, 1, 2, HC_EST_ROUNDER},
        {"STACKER, defaults otherwise", 128, 9, 1, 1, 2, HC_EST_STACKER},
        {"STACKER, no ghost (k=1)", 128, 9, 1, 1, 1, HC_EST_STACKER},
        {"balanced B=128, F=5", 128, 5, 1, 1, 2, HC_EST_ROUNDER},
        {"balanced B=128, F=17", 128, 17, 1, 1, 2, HC_EST_ROUNDER},
        {"balanced B=512, F=9", 512, 9, 1, 1, 2, HC_EST_ROUNDER},
        {"defaults, k=4", 128, 9, 1, 1, 4, HC_EST_ROUNDER},
        {"no ghost (k=1), B=128 balanced", 128, 9, 1, 1, 1, HC_EST_ROUNDER},
    };
    for (size_t c = 0; c < sizeof(C) / sizeof(C[0]); c++) {
        hc_profile_config cfg;
        hc_profile_config_default(&cfg);
        cfg.buckets = C[c].B;
        cfg.ghost_filters = C[c].F;
        cfg.rounder_balanced = C[c].bal;
        cfg.ghost_keep_coverage = C[c].keep;
        cfg.ghost_factor = C[c].k;
        cfg.estimator = C[c].est;
        size_t mem;
        double evs = run_events(&cfg, ev, n, N, &mem);
        double gets = run_gets(&cfg, &w, N);
        printf("%-34s %14.2f %14.2f %12.0f\n", C[c].name, evs / 1e6, gets / 1e6, mem / 1024.0);
        fflush(stdout);
    }
    printf("reference: issue target >= 10 M events/s (ROUNDER + ghost, defaults, one core)\n");
    free(ev);
    refwl_free(&w);
    return 0;
}
