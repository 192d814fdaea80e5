/*
 * ROUNDER against STACKER, side by side, on every shared trace and the synthetic streams, with
 * MIMIR's own published figures beside ours (Sæmundsson 2014, Tables 5.1 and 5.3: MAE of the LRU curve
 * on [0, M], M = the cache size, in %).
 * Per workload and N (10 % and 30 % of the distinct keys): MAE vs exact LRU (Mattson) on
 * 100 points of [0, N] and of (N, 2N], GETs/s through the core (offline path: the core's LRU
 * emulator decides hit/miss, the estimator and the ghost follow; thread CPU time, the machine
 * is shared) and bytes per tracked key (key table slots + the estimator's state).
 * Second table: the LIRS traces at MIMIR's own cache sizes, MAE over every integer size 1..M as
 * MIMIR defines it (eq. 3.1), at B = 8 and B = 128, our two estimators next to MIMIR's.
 * usage: estimators [--quick] [--only NAME] [--sample-keys M] [--buckets B]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "core/profile.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"
#include "workloads.h"

typedef struct { double lo, hi, gets_s, bytes_key, keys; } result;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static hc_profile *replay(const workload *w, const hc_profile_config *cfg, uint64_t N, double *secs)
{
    const char *err;
    hc_profile *p = hc_profile_new(cfg, &err);
    if (!p) { fprintf(stderr, "profile: %s\n", err); exit(1); }
    hc_profile_set_capacity(p, 0, N, 1);
    double t0 = cpu_s();
    for (uint64_t i = 0; i < w->n; i++) hc_profile_get(p, 0, w->keys[i], 1);
    *secs = cpu_s() - t0;
    return p;
}

static double bytes_per_key(const hc_profile *p)
{
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    if (!st.tracked_keys) return 0;
    return ((double)st.table_slots * st.bytes_per_slot + st.estimator_bytes) / st.tracked_keys;
}

static result run(const workload *w, const mattson *m, const hc_profile_config *cfg, uint64_t N)
{
    double secs;
    hc_profile *p = replay(w, cfg, N, &secs);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    result r = {0, 0, secs > 0 ? w->n / secs : 0, bytes_per_key(p), (double)st.tracked_keys};
    for (int i = 1; i <= 100; i++) {
        double x = i * (double)N / 100;
        r.lo += fabs(hc_profile_hit_ratio_at(p, 0, x) - mattson_ratio_at(m, x));
        r.hi += fabs(hc_profile_hit_ratio_at(p, 0, N + x) - mattson_ratio_at(m, N + x));
    }
    /* the sums of 100 |errors| in [0, 1] are already the means in pp (x100 / 100) */
    hc_profile_free(p);
    return r;
}

/* MIMIR's eq. 3.1: mean |error| over every integer size 1..M, in %. */
static double mae_mimir(const workload *w, const mattson *m, const hc_profile_config *cfg, uint64_t M)
{
    double secs, s = 0;
    hc_profile *p = replay(w, cfg, M, &secs);
    for (uint64_t x = 1; x <= M; x++) s += fabs(hc_profile_hit_ratio_at(p, 0, (double)x) - mattson_ratio_at(m, (double)x));
    hc_profile_free(p);
    return 100 * s / M;
}

/* Sæmundsson 2014 Table 5.1 (ROUNDER on LRU) and 5.3 (STACKER on LRU), B = 8 and B = 128, in %. */
static const struct { const char *name; uint64_t M; double r8, r128, s8, s128; } MIMIR[] = {
    {"2_pools", 450, 0.52, 0.18, 0.59, 0.05},
    {"cpp", 900, 1.92, 0.33, 1.90, 0.16},
    {"cs", 1000, 5.41, 0.93, 5.30, 0.20},
    {"gli", 3000, 4.34, 1.38, 2.56, 0.21},       /* "glimpse" */
    {"multi1", 2000, 3.56, 3.00, 3.43, 0.82},
    {"multi2", 3000, 2.11, 1.14, 2.16, 0.42},
    {"multi3", 4000, 1.14, 0.45, 1.23, 0.37},
    {"ps", 3000, 3.47, 0.61, 3.77, 0.23},        /* "postgres" */
    {"sprite", 1000, 2.09, 1.53, 1.47, 0.08},
};

int main(int argc, char **argv)
{
    hc_profile_config base;
    hc_profile_config_default(&base);
    base.emulate_lru = 1;
    int quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--buckets") && i + 1 < argc) base.buckets = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sample-keys") && i + 1 < argc) { base.sampling = HC_SAMPLE_FIXED_SIZE; base.sample_max_keys = strtoull(argv[++i], 0, 10); }
        else { fprintf(stderr, "estimators: bad argument %s\n", argv[i]); return 2; }
    }
    hc_profile_config cr = base, cs = base;
    cr.estimator = HC_EST_ROUNDER;
    cs.estimator = HC_EST_STACKER;
    printf("# ROUNDER vs STACKER vs exact LRU (Mattson): B=%u (STACKER: max(B, 8 sqrt N)), k=%.0f, sampling %s",
           base.buckets, base.ghost_factor, base.sampling == HC_SAMPLE_OFF ? "off" : "fixed-size");
    if (base.sampling == HC_SAMPLE_FIXED_SIZE) printf(" %llu keys", (unsigned long long)base.sample_max_keys);
    printf("\n# MAE in pp over 100 points; GETs/s through the core (M, thread CPU); bytes per tracked key\n");
    printf("%-10s %7s | %8s %8s | %8s %8s | %6s %6s | %5s %5s\n", "workload", "N", "R[0,N]", "S[0,N]",
           "R(N,2N]", "S(N,2N]", "R M/s", "S M/s", "R B/k", "S B/k");
    double sr[5] = {0}, ss[5] = {0};
    double tr_r = 0, tr_s = 0;
    int rows = 0, rows_tr = 0, s_wins = 0, ties = 0;
    for (int t = 0; t < BENCH_NTRACES + BENCH_NSYN; t++) {
        workload w;
        if (bench_workload(t, quick, only, &w)) continue;
        mattson *m = mattson_new(w.n + 1);
        for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
        for (int f = 0; f < 2; f++) {
            uint64_t N = (uint64_t)llround(w.distinct * (f ? 0.30 : 0.10));
            if (N < 1) N = 1;
            result a = run(&w, m, &cr, N), b = run(&w, m, &cs, N);
            printf("%-10s %7llu | %8.3f %8.3f | %8.3f %8.3f | %6.2f %6.2f | %5.1f %5.1f\n", w.name,
                   (unsigned long long)N, a.lo, b.lo, a.hi, b.hi, a.gets_s / 1e6, b.gets_s / 1e6, a.bytes_key, b.bytes_key);
            fflush(stdout);
            sr[0] += a.lo; sr[1] += a.hi; sr[2] += a.gets_s; sr[3] += a.bytes_key * a.keys; sr[4] += a.keys;
            ss[0] += b.lo; ss[1] += b.hi; ss[2] += b.gets_s; ss[3] += b.bytes_key * b.keys; ss[4] += b.keys;
            rows++;
            if (t < BENCH_NTRACES) { tr_r += a.lo; tr_s += b.lo; rows_tr++; }
            if (b.lo < a.lo - 5e-4) s_wins++; else if (b.lo <= a.lo + 5e-4) ties++;
        }
        mattson_free(m);
        refwl_free(&w);
    }
    if (!rows) return 0;
    printf("%-10s %7s | %8.3f %8.3f |\n", "mean(real)", "", rows_tr ? tr_r / rows_tr : 0, rows_tr ? tr_s / rows_tr : 0);
    printf("%-10s %7s | %8.3f %8.3f | %8.3f %8.3f | %6.2f %6.2f | %5.1f %5.1f\n", "mean(all)", "", sr[0] / rows, ss[0] / rows,
           sr[1] / rows, ss[1] / rows, sr[2] / rows / 1e6, ss[2] / rows / 1e6, sr[3] / sr[4], ss[3] / ss[4]);
    printf("(bytes per key of mean(all): weighted by tracked keys, so the large rows count: small ones pay for a\n"
           " 1024-slot minimum key table and node pool)\n");
    printf("STACKER [0,N] better on %d of %d rows, equal (within 0.0005 pp) on %d, worse on %d; "
           "acceptance: mean over the shared traces STACKER %.3f <= ROUNDER %.3f: %s\n",
           s_wins, rows, ties, rows - s_wins - ties, rows_tr ? tr_s / rows_tr : 0, rows_tr ? tr_r / rows_tr : 0,
           rows_tr && tr_s <= tr_r ? "yes" : "NO");

    if (only) {
        int any = 0;
        for (size_t i = 0; i < sizeof(MIMIR) / sizeof(MIMIR[0]); i++) any |= !strcmp(only, MIMIR[i].name);
        if (!any) return 0;
    }
    printf("\n# at MIMIR's cache sizes M (Sæmundsson 2014 §5.2, LIRS set-up), MAE %% over every size 1..M (eq. 3.1)\n");
    printf("%-9s %5s %6s | %-34s | %-34s\n", "", "", "", "          B = 8", "          B = 128");
    printf("%-9s %5s %6s | %6s %6s %6s %6s %6s | %6s %6s %6s %6s %6s\n", "workload", "M", "LRU@M", "Rmimir", "R", "S",
           "MIMIR:R", "S", "Rmimir", "R", "S", "MIMIR:R", "S");
    double mm[10] = {0};
    int mrows = 0;
    for (size_t i = 0; i < sizeof(MIMIR) / sizeof(MIMIR[0]); i++) {
        if (only && strcmp(only, MIMIR[i].name)) continue;
        workload w;
        int t;
        for (t = 0; t < BENCH_NTRACES; t++) if (!strcmp(BENCH_TRACES[t].name, MIMIR[i].name)) break;
        if (t == BENCH_NTRACES || bench_workload(t, 0, NULL, &w)) continue;
        mattson *m = mattson_new(w.n + 1);
        for (uint64_t k = 0; k < w.n; k++) mattson_access(m, w.keys[k]);
        double v[6];
        for (int b = 0; b < 2; b++) {
            hc_profile_config rm = cr, r = cr, s = cs;
            rm.buckets = r.buckets = s.buckets = b ? 128 : 8;
            rm.rounder_balanced = 0;          /* MIMIR's aging: merge the two oldest buckets */
            v[3 * b] = mae_mimir(&w, m, &rm, MIMIR[i].M);
            v[3 * b + 1] = mae_mimir(&w, m, &r, MIMIR[i].M);
            v[3 * b + 2] = mae_mimir(&w, m, &s, MIMIR[i].M);
        }
        double row[10] = {v[0], v[1], v[2], MIMIR[i].r8, MIMIR[i].s8, v[3], v[4], v[5], MIMIR[i].r128, MIMIR[i].s128};
        printf("%-9s %5llu %6.3f |", MIMIR[i].name, (unsigned long long)MIMIR[i].M, mattson_ratio_at(m, (double)MIMIR[i].M));
        for (int k = 0; k < 10; k++) printf(" %6.2f%s", row[k], k == 4 ? " |" : "");
        printf("\n");
        for (int k = 0; k < 10; k++) mm[k] += row[k];
        mrows++;
        mattson_free(m);
        refwl_free(&w);
    }
    if (mrows) {
        printf("%-9s %5s %6s |", "mean", "", "");
        for (int k = 0; k < 10; k++) printf(" %6.2f%s", mm[k] / mrows, k == 4 ? " |" : "");
        printf("\n");
    }
    printf("MIMIR (all 24 of its workloads, LRU): ROUNDER 1.93 %% at B=8, 0.96 %% at B=128; STACKER 1.73 %% / 0.20 %% "
           "(Sæmundsson 2014, Tables 5.1, 5.3).\n"
           "Rmimir = our ROUNDER with MIMIR's aging (merge the two oldest buckets), R = with balanced aging (default);\n"
           "LRU@M = exact LRU hit ratio at M. Rmimir lands near MIMIR's ROUNDER column except on cs and gli, where\n"
           "MIMIR's errors are far larger (cs hits 1.8 %% at M: a curve normalised other than by requests would\n"
           "inflate it; the thesis does not say, we did not find the cause).\n");
    return 0;
}
