/*
 * Accuracy of the profiler core against exact Mattson LRU curves.
 * For every trace in the traces directory plus synthetic Zipf and scan/loop mixes, and for the
 * current size N at 10% and 30% of the distinct keys, replays the trace through the core (with
 * the LRU emulator standing in for memcached) and scores the curve:
 *   MAE over 100 points evenly spaced on (0, N] and on (N, 2N], in percentage points.
 * usage: accuracy [--estimator rounder|stacker] [--buckets B] [--filters F] [--sample-keys M] [--sample-rate R]
 *                 [--ghost-factor K] [--quick] [--only NAME] [--rows]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "core/profile.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"
#include "workloads.h"


typedef struct { double lo, hi, max; } score;
static int g_dump = 0;

static score evaluate(const workload *w, const mattson *m, const hc_profile_config *cfg, uint64_t N)
{
    const char *err;
    hc_profile *p = hc_profile_new(cfg, &err);
    if (!p) { fprintf(stderr, "profile: %s\n", err); exit(1); }
    hc_profile_set_capacity(p, 0, N, 1);
    for (uint64_t i = 0; i < w->n; i++) hc_profile_get(p, 0, w->keys[i], 1);
    score s = {0, 0, 0};
    /* hc_profile_hit_ratio_at re-integrates the curve per call; 200 calls are cheap enough */
    for (int i = 1; i <= 100; i++) {
        double x = i * (double)N / 100;
        double e = fabs(hc_profile_hit_ratio_at(p, 0, x) - mattson_ratio_at(m, x)) * 100;
        s.lo += e / 100;
        if (e > s.max) s.max = e;
        double x2 = N + x;
        double e2 = fabs(hc_profile_hit_ratio_at(p, 0, x2) - mattson_ratio_at(m, x2)) * 100;
        s.hi += e2 / 100;
        if (e2 > s.max) s.max = e2;
        if (g_dump) printf("  x=%10.1f est=%.4f exact=%.4f | x=%10.1f est=%.4f exact=%.4f\n", x, hc_profile_hit_ratio_at(p, 0, x), mattson_ratio_at(m, x), x2, hc_profile_hit_ratio_at(p, 0, x2), mattson_ratio_at(m, x2));
    }
    hc_profile_free(p);
    return s;
}

int main(int argc, char **argv)
{
    hc_profile_config cfg;
    hc_profile_config_default(&cfg);
    cfg.emulate_lru = 1;
    int quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--buckets") && i + 1 < argc) cfg.buckets = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--filters") && i + 1 < argc) cfg.ghost_filters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ghost-factor") && i + 1 < argc) cfg.ghost_factor = atof(argv[++i]);
        else if (!strcmp(argv[i], "--resolution") && i + 1 < argc) cfg.resolution = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sample-keys") && i + 1 < argc) { cfg.sampling = HC_SAMPLE_FIXED_SIZE; cfg.sample_max_keys = strtoull(argv[++i], 0, 10); }
        else if (!strcmp(argv[i], "--sample-rate") && i + 1 < argc) { cfg.sampling = HC_SAMPLE_RATE; cfg.sample_rate = atof(argv[++i]); }
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--dump")) g_dump = 1;
        else if (!strcmp(argv[i], "--mimir")) { cfg.ghost_keep_coverage = 0; cfg.rounder_balanced = 0; }
        else if (!strcmp(argv[i], "--ghost-flush")) cfg.ghost_keep_coverage = 0;
        else if (!strcmp(argv[i], "--balanced")) cfg.rounder_balanced = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--estimator") && i + 1 < argc) {
            cfg.estimator = hc_estimator_parse(argv[++i]);
            if (cfg.estimator < 0) { fprintf(stderr, "accuracy: --estimator must be rounder or stacker\n"); return 2; }
        }
        else { fprintf(stderr, "accuracy: bad argument %s\n", argv[i]); return 2; }
    }
    int ntr = BENCH_NTRACES;
    int nsyn = BENCH_NSYN;
    printf("# accuracy vs exact LRU (Mattson): estimator=%s B=%u filters=%u k=%.1f sampling=%s",
           hc_estimator_name(cfg.estimator), cfg.buckets, cfg.ghost_filters, cfg.ghost_factor,
           cfg.sampling == HC_SAMPLE_OFF ? "off" : cfg.sampling == HC_SAMPLE_RATE ? "rate" : "fixed-size");
    if (cfg.sampling == HC_SAMPLE_FIXED_SIZE) printf(" max_keys=%llu", (unsigned long long)cfg.sample_max_keys);
    if (cfg.sampling == HC_SAMPLE_RATE) printf(" R=%g", cfg.sample_rate);
    printf("\n%-14s %9s %9s %8s %11s %11s %8s\n", "workload", "requests", "distinct", "N", "MAE[0,N]pp", "MAE[N,2N]pp", "max pp");
    double sum_lo = 0, sum_hi = 0, worst = 0;
    double sum_lo_tr = 0, sum_hi_tr = 0;
    int rows = 0, rows_tr = 0;
    char worst_name[160] = "";
    for (int t = 0; t < ntr + nsyn; t++) {
        workload w;
        if (bench_workload(t, quick, only, &w)) continue;
        mattson *m = mattson_new(w.n + 1);
        for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
        for (int f = 0; f < 2; f++) {
            uint64_t N = (uint64_t)llround(w.distinct * (f ? 0.30 : 0.10));
            if (N < 1) N = 1;
            score s = evaluate(&w, m, &cfg, N);
            printf("%-14s %9llu %9llu %8llu %11.3f %11.3f %8.3f\n", w.name, (unsigned long long)w.n,
                   (unsigned long long)w.distinct, (unsigned long long)N, s.lo, s.hi, s.max);
            fflush(stdout);
            sum_lo += s.lo; sum_hi += s.hi; rows++;
            if (t < ntr) { sum_lo_tr += s.lo; sum_hi_tr += s.hi; rows_tr++; }
            double wm = s.lo > s.hi ? s.lo : s.hi;
            if (wm > worst) { worst = wm; snprintf(worst_name, sizeof(worst_name), "%s N=%llu", w.name, (unsigned long long)N); }
        }
        mattson_free(m);
        refwl_free(&w);
    }
    if (rows) {
        printf("%-14s %9s %9s %8s %11.3f %11.3f\n", "mean(real)", "", "", "", rows_tr ? sum_lo_tr / rows_tr : 0, rows_tr ? sum_hi_tr / rows_tr : 0);
        printf("%-14s %9s %9s %8s %11.3f %11.3f\n", "mean(all)", "", "", "", sum_lo / rows, sum_hi / rows);
        printf("worst row MAE: %.3f pp (%s)   targets: mean <= 1.0 [0,N], <= 2.0 [N,2N], no row > 4\n", worst, worst_name);
    }
    return 0;
}
