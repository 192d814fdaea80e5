/*
 * Offline reproduction of the live agent's event loss (memcached's watch stream drops events,
 * evictions first): an exact LRU cache of N items turns a key stream into the HIT / MISS /
 * EVICT / SET events memcached would log (a miss refills: MISS, EVICT of the LRU victim, SET),
 * a fraction p of the EVICT events (mode "evict") or of all events (mode "all") is dropped at
 * random (optionally in bursts, as a full logger buffer drops a run of lines), and the rest
 * drive the profile API as feed.c does (HIT/MISS/SET/EVICT, no emulation, ghost factor 4).
 * The curve is scored against the exact Mattson LRU curve of the same key stream:
 *   MAE over (0,N] and over (N,2N] (100 points each), and |error| at 2N and 4N, in pp.
 * usage: loss [--keys K] [--cache N] [--requests R] [--ghost-factor K] [--burst L]
 *             [--only zipf|scan] [--p LIST] [--modes evict,all] [--sample-keys M]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "core/profile.h"
#include "core/lruemu.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"

typedef struct { double lo, hi, at2, at4, hi4; uint64_t drops, evicts; } result;

/* Drop decision: independent with probability p, or runs of `burst` events started with
 * probability p / burst (same mean rate). */
static int drop(uint64_t *rs, double p, int burst, int *run)
{
    if (*run > 0) { (*run)--; return 1; }
    if (burst <= 1) return refwl_unif(rs) < p;
    if (refwl_unif(rs) < p / burst) { *run = burst - 1; return 1; }
    return 0;
}

static result run(const workload *w, const mattson *m, const hc_profile_config *cfg, uint64_t N,
                  double p, int all, int burst, uint64_t seed)
{
    const char *err;
    hc_profile *prof = hc_profile_new(cfg, &err);
    if (!prof) { fprintf(stderr, "profile: %s\n", err); exit(1); }
    const int C = 1;
    hc_profile_set_capacity(prof, C, N, 100);
    lruemu lru;
    if (lruemu_init(&lru, N) != 0) { fprintf(stderr, "lruemu: out of memory\n"); exit(1); }
    uint64_t rs = seed * 0x9E3779B97F4A7C15ULL + 12345;
    int runlen = 0;
    result r = {0};
#define EMIT(op, key, isevict) do { \
        int d_ = (all || (isevict)) ? drop(&rs, p, burst, &runlen) : 0; \
        if (d_) r.drops++; else hc_profile_event(prof, (op), C, (key), 100); } while (0)
    for (uint64_t i = 0; i < w->n; i++) {
        uint64_t k = w->keys[i];
        if (lruemu_access(&lru, k)) { EMIT(HC_EV_HIT, k, 0); continue; }
        EMIT(HC_EV_MISS, k, 0);
        uint64_t victim;
        if (lruemu_insert(&lru, k, &victim)) { r.evicts++; EMIT(HC_EV_EVICT, victim, 1); }
        EMIT(HC_EV_SET, k, 0);
    }
#undef EMIT
    for (int i = 1; i <= 100; i++) {
        double x = i * (double)N / 100;
        r.lo += fabs(hc_profile_hit_ratio_at(prof, C, x) - mattson_ratio_at(m, x)) * 100 / 100;
        r.hi += fabs(hc_profile_hit_ratio_at(prof, C, N + x) - mattson_ratio_at(m, N + x)) * 100 / 100;
        double x4 = N + 3 * x;
        r.hi4 += fabs(hc_profile_hit_ratio_at(prof, C, x4) - mattson_ratio_at(m, x4)) * 100 / 100;
    }
    r.at2 = (hc_profile_hit_ratio_at(prof, C, 2.0 * N) - mattson_ratio_at(m, 2.0 * N)) * 100;
    r.at4 = (hc_profile_hit_ratio_at(prof, C, cfg->ghost_factor * N) - mattson_ratio_at(m, cfg->ghost_factor * N)) * 100;
    lruemu_free(&lru);
    hc_profile_free(prof);
    return r;
}

int main(int argc, char **argv)
{
    hc_profile_config cfg;
    hc_profile_config_default(&cfg);
    cfg.ghost_factor = 4;
    cfg.ghost_filters = 7;                /* the agent's default 1 + 2(K-1) */
    uint64_t keys = 500000, N = 50000, R = 2000000;
    int burst = 1;
    const char *only = NULL, *plist = "0,0.02,0.05,0.10", *modes = "evict,all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keys") && i + 1 < argc) keys = strtoull(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--cache") && i + 1 < argc) N = strtoull(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--requests") && i + 1 < argc) R = strtoull(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--ghost-factor") && i + 1 < argc) cfg.ghost_factor = atof(argv[++i]);
        else if (!strcmp(argv[i], "--filters") && i + 1 < argc) cfg.ghost_filters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--burst") && i + 1 < argc) burst = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--p") && i + 1 < argc) plist = argv[++i];
        else if (!strcmp(argv[i], "--modes") && i + 1 < argc) modes = argv[++i];
        else if (!strcmp(argv[i], "--sample-keys") && i + 1 < argc) { cfg.sampling = HC_SAMPLE_FIXED_SIZE; cfg.sample_max_keys = strtoull(argv[++i], 0, 10); }
        else { fprintf(stderr, "usage: see the header of bench/loss.c\n"); return 2; }
    }
    double ps[16];
    int np = 0;
    for (const char *s = plist; *s && np < 16; ) {
        ps[np++] = atof(s);
        s = strchr(s, ',');
        if (!s) break;
        s++;
    }
    printf("keys %llu, N %llu, requests %llu, ghost factor %.0f, %u filters, burst %d%s\n",
           (unsigned long long)keys, (unsigned long long)N, (unsigned long long)R, cfg.ghost_factor,
           cfg.ghost_filters, burst, cfg.sampling ? ", fixed-size sampling" : "");
    printf("%-8s %-6s %6s %9s %9s %9s %9s %9s   (pp; err = estimate - exact)\n", "workload", "mode",
           "p", "MAE0-N", "MAE_N-2N", "MAE_N-4N", "err@2N", "err@4N");
    for (int wi = 0; wi < 2; wi++) {
        const char *name = wi == 0 ? "zipf" : "scan";
        if (only && strcmp(only, name)) continue;
        workload w;
        if (wi == 0) refwl_zipf(&w, "zipf0.9", R, keys, 0.9, 1);
        /* hc-loadgen --dist scan: zipf 0.9 plus 20 % of requests cycling over a disjoint range
         * of keys/5 keys */
        else refwl_mix(&w, "scan-mix", R, keys, 0.9, keys / 5, 0.2, 0, 1);
        mattson *m = mattson_new(w.n);
        for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
        for (int mode = 0; mode < 2; mode++) {
            const char *mn = mode ? "all" : "evict";
            if (!strstr(modes, mn)) continue;
            for (int j = 0; j < np; j++) {
                if (mode && ps[j] == 0) continue;      /* same as evict p = 0 */
                result r = run(&w, m, &cfg, N, ps[j], mode, burst, 7 + j);
                printf("%-8s %-6s %5.0f%% %9.3f %9.3f %9.3f %+9.3f %+9.3f\n", name, mn, ps[j] * 100,
                       r.lo, r.hi, r.hi4, r.at2, r.at4);
                fflush(stdout);
            }
        }
        mattson_free(m);
        refwl_free(&w);
    }
    return 0;
}
