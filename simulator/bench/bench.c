/*
 * Benchmarks, printed as Markdown tables beside their references:
 *  1. speed of LRU/FIFO/CLOCK (and the rest) on arc-OLTP, trace pre-loaded (libCacheSim
 *     measured 6.25 / 6.69 / 5.96 M req/s on a 2-core VM, research_anchors 1.5);
 *  2. an 11-policy x 20-size grid on a 1 M-request sample (target <= 30 s on 2 cores);
 *  3. miniature-simulation error against full simulation at R = 0.1 and 0.01;
 *  4. GD-Wheel vs LRU on workloads built like Li & Cox (EuroSys'15) Table I (paper: Table II);
 *  5. NbQ-CLOCK vs LRU / Bag-LRU / CLOCK on an Eads-like workload (paper: Table 1).
 * Usage: bench [section...] (default all). Traces from $HITCURVE_TRACES_DIR or ../../shared/traces.
 */
#include "cache.h"
#include "trace_load.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *tdir;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void loadavg(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char buf[128] = "?";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
    printf("(load average now: %s; 2 CPUs shared with other engineers)\n\n", buf);
}

static int load(const char *file, const char *fmt, uint64_t max, sim_loaded *l)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s", tdir, file);
    if (sim_load_trace(path, fmt, max, l, err, sizeof err) < 0) {
        printf("cannot load %s: %s\n", path, err);
        return -1;
    }
    return 0;
}

static uint64_t distinct(const sim_trace *t)
{
    sim_table tab;
    extern int sim_table_init(sim_table *, uint64_t);
    extern int sim_table_put(sim_table *, uint64_t, uint32_t);
    extern void sim_table_free(sim_table *);
    sim_table_init(&tab, 1024);
    for (size_t i = 0; i < t->n; i++)
        sim_table_put(&tab, t->keys[i], 0);
    uint64_t d = tab.count;
    sim_table_free(&tab);
    return d;
}

static const char *ALL[] = {"lru", "fifo", "clock", "gclock", "nbq-clock", "baglru",
                            "gdwheel", "mcslru", "clockpro", "arc", "s3fifo"};
#define NALL 11

/* ------------------------------------------------------------------ 1. speed */
static void bench_speed(void)
{
    printf("## 1. Simulation speed on arc-OLTP (trace pre-loaded, one thread, 4 passes)\n\n");
    sim_loaded l;
    if (load("arc-OLTP.lis.zst", "arc", 0, &l) < 0)
        return;
    printf("decompress+parse: %zu requests in %.2f s (%.1f M req/s, not part of the figures below)\n",
           l.t.n, l.seconds, l.t.n / l.seconds / 1e6);
    loadavg();
    /* 4 passes back to back so a run lasts long enough to time */
    size_t n = l.t.n * 4;
    uint64_t *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = l.t.keys[i % l.t.n];
    sim_trace t = {.n = n, .keys = k};
    sim_config cfg;
    sim_config_default(&cfg);
    uint64_t sizes[] = {1000, 5000, 15000};
    const double ref[] = {6.25, 6.69, 5.96};
    printf("M requests per CPU-second of the simulating thread (wall-clock rate in brackets; the gap is "
           "other engineers' load). Best of 2 runs.\n\n");
    printf("| policy | 1K | 5K | 15K | libCacheSim @5K, 2-core VM (wall) |\n");
    printf("|---|---|---|---|---|\n");
    for (int p = 0; p < NALL; p++) {
        printf("| %s |", ALL[p]);
        for (int s = 0; s < 3; s++) {
            sim_result r;
            char err[256];
            double best = 0, bestw = 0;
            for (int rep = 0; rep < 2; rep++) {
                sim_simulate(&t, ALL[p], sizes[s], &cfg, &r, err, sizeof err);
                double mps = n / r.cpu_seconds / 1e6, w = n / r.seconds / 1e6;
                if (mps > best)
                    best = mps;
                if (w > bestw)
                    bestw = w;
            }
            printf(" %.2f (%.2f) |", best, bestw);
        }
        if (p < 3)
            printf(" %.2f |\n", ref[p]);
        else if (p == NALL - 1)
            printf(" 2.47 |\n");
        else
            printf(" – |\n");
    }
    printf("\n");
    free(k);
    sim_loaded_free(&l);
}

/* ------------------------------------------------------------------ 2. grid */
static void bench_grid(void)
{
    printf("## 2. %d policies x 20 sizes on a 1 M-request sample (arc-P3, first 1,000,000 requests)\n\n", NALL);
    sim_loaded l;
    if (load("arc-P3.lis.zst", "arc", 1000000, &l) < 0)
        return;
    uint64_t d = distinct(&l.t);
    uint64_t sizes[20];
    for (int i = 0; i < 20; i++)   /* log-spaced, 0.1 % .. 100 % of the distinct keys */
        sizes[i] = (uint64_t)llround((double)d * pow(10, -3 + 3.0 * i / 19));
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result *r = calloc(NALL * 20, sizeof *r);
    char err[256];
    loadavg();
    double t0 = now_s();
    sim_simulate_many(&l.t, ALL, NALL, sizes, 20, &cfg, 0, r, err, sizeof err);
    double wall = now_s() - t0;
    double cpu = 0, busy = 0;
    for (int i = 0; i < NALL * 20; i++) {
        cpu += r[i].cpu_seconds;
        busy += r[i].seconds;
    }
    printf("%zu requests, %llu distinct keys, sizes %llu..%llu objects\n", l.t.n, (unsigned long long)d,
           (unsigned long long)sizes[0], (unsigned long long)sizes[19]);
    printf("**wall time %.1f s** on 2 threads (target <= 30 s); CPU time of all runs %.1f s, i.e. %.1f s on 2 "
           "idle cores (sum of per-run wall times %.1f s)\n\n", wall, cpu, cpu / 2, busy);
    printf("| policy | CPU s (20 runs) | hit ratio @1%% | @10%% | @50%% of keys |\n|---|---|---|---|---|\n");
    for (int p = 0; p < NALL; p++) {
        double s = 0;
        for (int i = 0; i < 20; i++)
            s += r[p * 20 + i].cpu_seconds;
        printf("| %s | %.2f | %.4f | %.4f | %.4f |\n", ALL[p], s, r[p * 20 + 6].hit_ratio,
               r[p * 20 + 12].hit_ratio, r[p * 20 + 17].hit_ratio);
    }
    printf("\n");
    free(r);
    sim_loaded_free(&l);
}

/* ------------------------------------------------------------------ 3. mini-simulation */
static void minisim_trace(const char *file, const char *fmt)
{
    sim_loaded l;
    if (load(file, fmt, 0, &l) < 0)
        return;
    uint64_t d = distinct(&l.t);
    enum { NS = 8, NSALT = 4 };
    const double frac[NS] = {0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5};
    uint64_t sizes[NS];
    for (int i = 0; i < NS; i++)
        sizes[i] = (uint64_t)llround(frac[i] * (double)d);
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result *full = calloc(NALL * NS, sizeof *full), *mini = calloc(NALL * NS, sizeof *mini);
    char err[256];
    double t0 = now_s();
    sim_simulate_many(&l.t, ALL, NALL, sizes, NS, &cfg, 0, full, err, sizeof err);
    double tf = now_s() - t0;
    printf("### %s (%zu requests, %llu keys; sizes 0.5 %%..50 %% of keys; full simulation %.1f s)\n\n",
           file, l.t.n, (unsigned long long)d, tf);
    printf("MAE / max over the 8 sizes, pp. 'adj' = SHARDS_adj-corrected (the default output), "
           "'raw' = plain sampled hit ratio; first salt, then the mean of %d salts' estimates.\n\n", NSALT);
    printf("| policy | R=0.1 adj MAE | adj max | raw MAE | R=0.01 adj MAE | adj max | raw MAE | R=0.01 %d-salt mean: adj MAE | raw MAE |\n", NSALT);
    printf("|---|---|---|---|---|---|---|---|---|\n");
    /* [policy][rate][0 adj mae, 1 adj max, 2 raw mae] */
    double st[NALL][2][3];
    double avg[NALL * NS], avgr[NALL * NS];
    memset(st, 0, sizeof st);
    memset(avg, 0, sizeof avg);
    memset(avgr, 0, sizeof avgr);
    double tm[2] = {0, 0};
    for (int v = 0; v < 2; v++) {
        int salts = v == 1 ? NSALT : 1;
        for (int s = 0; s < salts; s++) {
            cfg.sample_rate = v == 0 ? 0.1 : 0.01;
            cfg.sample_salt = 0x5a17ed5a17ull + (uint64_t)s * 7919;
            t0 = now_s();
            sim_simulate_many(&l.t, ALL, NALL, sizes, NS, &cfg, 0, mini, err, sizeof err);
            if (s == 0)
                tm[v] = now_s() - t0;
            for (int i = 0; i < NALL * NS; i++) {
                int p = i / NS;
                if (v == 1) {
                    avg[i] += mini[i].hit_ratio / salts;
                    avgr[i] += mini[i].hit_ratio_raw / salts;
                }
                if (s)
                    continue;
                double e = fabs(mini[i].hit_ratio - full[i].hit_ratio) * 100;
                double er = fabs(mini[i].hit_ratio_raw - full[i].hit_ratio) * 100;
                st[p][v][0] += e / NS;
                if (e > st[p][v][1])
                    st[p][v][1] = e;
                st[p][v][2] += er / NS;
            }
        }
    }
    double mean[7] = {0};
    for (int p = 0; p < NALL; p++) {
        double m4 = 0, m4r = 0;
        for (int k = 0; k < NS; k++) {
            m4 += fabs(avg[p * NS + k] - full[p * NS + k].hit_ratio) * 100 / NS;
            m4r += fabs(avgr[p * NS + k] - full[p * NS + k].hit_ratio) * 100 / NS;
        }
        mean[5] += m4r / NALL;
        printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", ALL[p], st[p][0][0], st[p][0][1],
               st[p][0][2], st[p][1][0], st[p][1][1], st[p][1][2], m4, m4r);
        mean[0] += st[p][0][0] / NALL;
        mean[1] += st[p][0][2] / NALL;
        mean[2] += st[p][1][0] / NALL;
        mean[3] += st[p][1][2] / NALL;
        mean[4] += m4 / NALL;
    }
    printf("| **mean** | **%.2f** | | %.2f | **%.2f** | | %.2f | **%.2f** | %.2f |\n\n", mean[0], mean[1], mean[2],
           mean[3], mean[4], mean[5]);
    printf("time: full %.1f s, R=0.1 %.1f s, R=0.01 %.1f s (one salt, all %d policies x %d sizes)\n\n", tf, tm[0],
           tm[1], NALL, NS);
    free(full);
    free(mini);
    sim_loaded_free(&l);
}

static void bench_minisim(void)
{
    printf("## 3. Miniature simulation (Waldspurger et al. ATC'17) vs full simulation\n\n");
    printf("Error = |hit ratio(mini) - hit ratio(full)| in percentage points. References: libCacheSim "
           "MINISIM R=0.01 on a 1.3 B-request Twitter trace: FIFO 0.24, ARC 0.48, S3FIFO 0.15 (MAE %%); "
           "SHARDS on OLTP: MAE 0.13-0.32 pp at R=0.1, 0.2-1.0 pp at R=0.01 with SHARDS_adj "
           "(research_anchors 2).\n\n");
    loadavg();
    minisim_trace("arc-OLTP.lis.zst", "arc");
    minisim_trace("arc-P3.lis.zst", "arc");
}

/* ------------------------------------------------------------------ 4. GD-Wheel */
static void bench_gdwheel(void)
{
    printf("## 4. GD-Wheel vs LRU on workloads built like Li & Cox (EuroSys'15) Table I\n\n");
    printf("YCSB-like: 1 M keys of 16+256 B loaded by SETs, then 4 M zipf(0.99) GETs, a miss refills; "
           "bytes mode with memcached slab rounding and per-policy metadata (GD-Wheel +8 B, same 384 B "
           "chunk); cache sized so LRU hits ~95 %% as in the paper. Paper (Table II, hit rates 95.064 / "
           "95.055 %% for workload 1): reductions 79.85, 86.75, 91.05, 0.01, 76.10 %%.\n\n");
    loadavg();
    const double paper[5] = {79.85, 86.75, 91.05, 0.01, 76.10};
    printf("| workload | cache MiB | LRU hit %% | GD-Wheel hit %% | LRU cost | GD-Wheel cost | reduction %% | paper %% | p99 miss cost LRU / GD |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    cfg.slab = 1;
    cfg.policy_metadata = 1;
    cfg.default_size = 16 + 256;
    for (int w = 1; w <= 5; w++) {
        uint64_t *k;
        double *c;
        uint8_t *o;
        size_t N;
        if (sim_wl_gdwheel_ycsb(w, 4000000, 1000000, 0.99, 42, &k, &c, &o, &N) < 0)
            return;
        sim_trace t = {.n = N, .keys = k, .costs = c, .ops = o};
        /* find the size where LRU is closest to 95.06 % (coarse scan of 384 B objects) */
        uint64_t sizes[6] = {650000, 700000, 750000, 800000, 850000, 900000};
        for (int i = 0; i < 6; i++)
            sizes[i] *= 384;
        sim_result lr[6], gd[2];
        char err[256];
        const char *lru = "lru";
        sim_simulate_many(&t, &lru, 1, sizes, 6, &cfg, 0, lr, err, sizeof err);
        int best = 0;
        for (int i = 1; i < 6; i++)
            if (fabs(lr[i].hit_ratio - 0.9506) < fabs(lr[best].hit_ratio - 0.9506))
                best = i;
        const char *pol[2] = {"lru", "gdwheel"};
        sim_simulate_many(&t, pol, 2, &sizes[best], 1, &cfg, 0, gd, err, sizeof err);
        printf("| %d | %.0f | %.3f | %.3f | %.0f | %.0f | %.2f | %.2f | %.0f / %.0f |\n", w,
               sizes[best] / 1048576.0, gd[0].hit_ratio * 100, gd[1].hit_ratio * 100, gd[0].miss_cost_total,
               gd[1].miss_cost_total, 100 * (1 - gd[1].miss_cost_total / gd[0].miss_cost_total), paper[w - 1],
               gd[0].miss_cost_p99_misses, gd[1].miss_cost_p99_misses);
        fflush(stdout);
        free(k);
        free(c);
        free(o);
    }
    printf("\n");
}

/* ------------------------------------------------------------------ 5. Eads */
static void bench_eads(void)
{
    printf("## 5. NbQ-CLOCK on an Eads-like workload (Eads, UCB/EECS-2013-174, Table 1)\n\n");
    printf("Eads: 30 M keys, 70 %% GET / 30 %% ADD, no demand fill, 15 M warm-up SETs then 15 M measured; "
           "key distribution 'standard normal'/'power law' without parameters (digest A.5). Here, scaled "
           "10x down: 3 M keys, zipf(1.0), 1.5 M warm-up ADDs, 1.5 M measured; cache sizes = the fraction "
           "of keys Eads' caches held at each object size (items mode: the policy effect only).\n\n");
    loadavg();
    size_t nk = 3000000, warm = 1500000, meas = 1500000, n = warm + meas;
    sim_zipf z;
    sim_rng r;
    sim_zipf_init(&z, nk, 1.0);
    sim_rng_seed(&r, 2013);
    uint64_t *k = malloc(n * sizeof *k);
    uint8_t *o = malloc(n);
    for (size_t i = 0; i < n; i++) {
        k[i] = sim_key_of(sim_zipf_draw(&z, &r));
        o[i] = i < warm ? SIM_ADD : (sim_rng_unit(&r) < 0.7 ? SIM_GET : SIM_ADD);
    }
    sim_zipf_free(&z);
    sim_trace t = {.n = n, .keys = k, .ops = o};
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.fill_on_miss = 0;
    /* Eads' NbQ item counts / 30 M: 64 B 17.5 %, 256 B 9.0 %, 1 KB 3.07 %, 4 KB 0.84 % */
    const struct { int bytes; double frac; double nbq, bag, lru; } rows[] = {
        {64, 0.1754, 82.81, 82.34, 82.29}, {256, 0.0904, 78.23, 78.13, 78.13},
        {1024, 0.0307, 72.20, 72.05, 72.07}, {4096, 0.00843, 65.60, 64.20, 64.19}};
    printf("| Eads row (object size) | cache objects | LRU %% | Bag-LRU %% | CLOCK %% | NbQ-CLOCK %% | NbQ - LRU pp | paper NbQ - LRU pp | paper NbQ/Bag/LRU %% |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 4; i++) {
        uint64_t size = (uint64_t)llround(rows[i].frac * (double)nk);
        const char *pol[4] = {"lru", "baglru", "clock", "nbq-clock"};
        sim_result res[4];
        char err[256];
        sim_simulate_many(&t, pol, 4, &size, 1, &cfg, 0, res, err, sizeof err);
        printf("| %d B | %llu | %.2f | %.2f | %.2f | %.2f | %+.2f | %+.2f | %.2f / %.2f / %.2f |\n", rows[i].bytes,
               (unsigned long long)size, res[0].hit_ratio * 100, res[1].hit_ratio * 100, res[2].hit_ratio * 100,
               res[3].hit_ratio * 100, (res[3].hit_ratio - res[0].hit_ratio) * 100, rows[i].nbq - rows[i].lru,
               rows[i].nbq, rows[i].bag, rows[i].lru);
        fflush(stdout);
    }
    printf("\n(hit ratio = GET hits / GETs in the measured half; the warm-up half is ADDs only)\n\n");
    free(k);
    free(o);
}

int main(int argc, char **argv)
{
    tdir = getenv("HITCURVE_TRACES_DIR");
    if (!tdir)
        tdir = "../../shared/traces";
    const char *secs[] = {"speed", "grid", "minisim", "gdwheel", "eads"};
    void (*fn[])(void) = {bench_speed, bench_grid, bench_minisim, bench_gdwheel, bench_eads};
    printf("# hitcurve simulator benchmarks\n\n");
    for (int s = 0; s < 5; s++) {
        int run = argc == 1;
        for (int a = 1; a < argc; a++)
            run |= !strcmp(argv[a], secs[s]);
        if (run) {
            fn[s]();
            fflush(stdout);
        }
    }
    return 0;
}
