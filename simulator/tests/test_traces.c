/*
 * Shared-trace checks (../shared/traces or $HITCURVE_TRACES_DIR):
 *  - LRU equals the exact Mattson stack-distance curve on every trace, at sizes from 0.1 %
 *    to 100 % of the distinct keys (hit counts must be identical);
 *  - the exact curve reproduces the traces README's arc-OLTP LRU hit ratios;
 *  - on arc-OLTP, LRU / CLOCK / FIFO / ARC miss ratios at 1K..15K objects are within 0.5 pp
 *    of libCacheSim's (research_anchors.md 1.8).
 */
#include "cache.h"
#include "table.h"
#include "trace_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int passed, failed;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
        }                                                                  \
    } while (0)

static const struct { const char *file, *fmt; } traces[] = {
    {"arc-OLTP.lis.zst", "arc"}, {"arc-P3.lis.zst", "arc"},
    {"cache2k-web07.trace.xz", "cache2k"}, {"cache2k-web12.trace.xz", "cache2k"},
    {"lirs-2_pools.trace.gz", "lirs"}, {"lirs-cpp.trace.gz", "lirs"}, {"lirs-cs.trace.gz", "lirs"},
    {"lirs-gli.trace.gz", "lirs"}, {"lirs-loop.trace.gz", "lirs"}, {"lirs-multi1.trace.gz", "lirs"},
    {"lirs-multi2.trace.gz", "lirs"}, {"lirs-multi3.trace.gz", "lirs"}, {"lirs-ps.trace.gz", "lirs"},
    {"lirs-scan.trace.gz", "lirs"}, {"lirs-sprite.trace.gz", "lirs"}, {"lirs-zigzag.trace.gz", "lirs"},
};

static uint64_t distinct(const sim_trace *t)
{
    sim_table tab;
    sim_table_init(&tab, 1024);
    for (size_t i = 0; i < t->n; i++)
        sim_table_put(&tab, t->keys[i], 0);
    uint64_t d = tab.count;
    sim_table_free(&tab);
    return d;
}

int main(void)
{
    const char *dir = getenv("HITCURVE_TRACES_DIR");
    if (!dir)
        dir = "../../shared/traces";
    struct stat st;
    if (stat(dir, &st) != 0) {
        printf("traces directory %s not found (set HITCURVE_TRACES_DIR)\n", dir);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    sim_config cfg;
    sim_config_default(&cfg);
    char path[1024], err[512];
    for (size_t k = 0; k < sizeof traces / sizeof traces[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, traces[k].file);
        sim_loaded tr;
        if (sim_load_trace(path, traces[k].fmt, 0, &tr, err, sizeof err) < 0) {
            CHECK(0, "load %s: %s", traces[k].file, err);
            continue;
        }
        uint64_t d = distinct(&tr.t);
        const double frac[] = {0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0};
        uint64_t sizes[7], hits[7];
        int ns = 0;
        for (int i = 0; i < 7; i++) {
            uint64_t s = (uint64_t)(frac[i] * (double)d);
            if (s >= 1 && (ns == 0 || s != sizes[ns - 1]))
                sizes[ns++] = s;
        }
        int64_t gets = sim_exact_lru_hits(&tr.t, sizes, ns, hits);
        int ok = gets == (int64_t)tr.t.n;
        sim_result res[7];
        const char *pol[] = {"lru"};
        sim_simulate_many(&tr.t, pol, 1, sizes, ns, &cfg, 0, res, err, sizeof err);
        for (int i = 0; i < ns; i++)
            if (res[i].hits != hits[i])
                ok = 0;
        CHECK(ok, "%s: LRU != exact stack-distance curve", traces[k].file);
        printf("%-24s %8zu req %7llu keys  LRU==exact at %d sizes: %s  (hr@10%%=%.4f)\n", traces[k].file,
               tr.t.n, (unsigned long long)d, ns, ok ? "yes" : "NO",
               ns > 3 ? (double)hits[3] / (double)gets : 0.0);

        if (!strcmp(traces[k].file, "arc-OLTP.lis.zst")) {
            uint64_t sz[5] = {1000, 2000, 5000, 10000, 15000};
            uint64_t h[5];
            const double readme[3] = {0.3283, 0.4247, 0.5365};   /* traces/README.md */
            sim_exact_lru_hits(&tr.t, sz, 5, h);
            for (int i = 0; i < 3; i++)
                CHECK(fabs((double)h[i] / (double)tr.t.n - readme[i]) < 0.00005,
                      "exact LRU OLTP@%llu = %.4f, README %.4f", (unsigned long long)sz[i],
                      (double)h[i] / (double)tr.t.n, readme[i]);
            /* research_anchors.md 1.8: libCacheSim miss ratios */
            const char *pols[4] = {"lru", "arc", "clock", "fifo"};
            const double ref[4][5] = {{0.6717, 0.5753, 0.4635, 0.3930, 0.3537},
                                      {0.6105, 0.5392, 0.4475, 0.3813, 0.3460},
                                      {0.6673, 0.5697, 0.4617, 0.3902, 0.3523},
                                      {0.7147, 0.6256, 0.5032, 0.4271, 0.3858}};
            sim_result r[20];
            sim_simulate_many(&tr.t, pols, 4, sz, 5, &cfg, 0, r, err, sizeof err);
            printf("arc-OLTP miss ratio vs libCacheSim (research_anchors 1.8):\n");
            for (int p = 0; p < 4; p++) {
                printf("  %-6s", pols[p]);
                for (int s = 0; s < 5; s++) {
                    double mr = 1.0 - r[p * 5 + s].hit_ratio;
                    printf("  %.4f (ref %.4f)", mr, ref[p][s]);
                    CHECK(fabs(mr - ref[p][s]) <= 0.005, "%s@%llu miss %.4f vs ref %.4f", pols[p],
                          (unsigned long long)sz[s], mr, ref[p][s]);
                }
                printf("\n");
            }
        }
        sim_loaded_free(&tr);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
