/* The benchmark workload set (accuracy, estimators): every shared trace, then the synthetic
 * Zipf and scan/loop streams. One definition, so the tables compare the same rows. */
#ifndef HC_BENCH_WORKLOADS_H
#define HC_BENCH_WORKLOADS_H
#include <stdio.h>
#include <string.h>
#include "../ref/workload.h"

static const struct { const char *file, *fmt, *name; } BENCH_TRACES[] = {
    {"arc-OLTP.lis.zst", "arc", "arc-OLTP"},
    {"arc-P3.lis.zst", "arc", "arc-P3"},
    {"cache2k-web07.trace.xz", "cache2k", "web07"},
    {"cache2k-web12.trace.xz", "cache2k", "web12"},
    {"lirs-2_pools.trace.gz", "lirs", "2_pools"},
    {"lirs-cpp.trace.gz", "lirs", "cpp"},
    {"lirs-cs.trace.gz", "lirs", "cs"},
    {"lirs-gli.trace.gz", "lirs", "gli"},
    {"lirs-loop.trace.gz", "lirs", "loop"},
    {"lirs-multi1.trace.gz", "lirs", "multi1"},
    {"lirs-multi2.trace.gz", "lirs", "multi2"},
    {"lirs-multi3.trace.gz", "lirs", "multi3"},
    {"lirs-ps.trace.gz", "lirs", "ps"},
    {"lirs-scan.trace.gz", "lirs", "scan"},
    {"lirs-sprite.trace.gz", "lirs", "sprite"},
    {"lirs-zigzag.trace.gz", "lirs", "zigzag"},
};
#define BENCH_NTRACES ((int)(sizeof(BENCH_TRACES) / sizeof(BENCH_TRACES[0])))
#define BENCH_NSYN 7
#define BENCH_QUICK_SKIP 1          /* arc-P3, the slow one, is left out of --quick */

/* Workload t (0 .. BENCH_NTRACES + BENCH_NSYN - 1) into *w. Returns 0, 1 if skipped (quick,
 * `only` names another, trace missing), never fails otherwise. */
static inline int bench_workload(int t, int quick, const char *only, workload *w)
{
    if (t < BENCH_NTRACES) {
        if (quick && t == BENCH_QUICK_SKIP) return 1;
        if (only && strcmp(only, BENCH_TRACES[t].name)) return 1;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", refwl_traces_dir(), BENCH_TRACES[t].file);
        return refwl_load_trace(w, BENCH_TRACES[t].name, path, BENCH_TRACES[t].fmt) != 0;
    }
    int s = t - BENCH_NTRACES;
    static const char *names[BENCH_NSYN] = {"zipf-0.6", "zipf-0.8", "zipf-1.0", "zipf-1.2", "zipf+loop", "zipf+scan", "loop+scan"};
    if (only && strcmp(only, names[s])) return 1;
    uint64_t n = quick ? 300000 : 1000000;
    switch (s) {
    case 0: refwl_zipf(w, names[s], n, 100000, 0.6, 1); break;
    case 1: refwl_zipf(w, names[s], n, 100000, 0.8, 2); break;
    case 2: refwl_zipf(w, names[s], n, 100000, 1.0, 3); break;
    case 3: refwl_zipf(w, names[s], n, 100000, 1.2, 4); break;
    case 4: refwl_mix(w, names[s], n, 100000, 0.9, 8000, 0.3, 0, 5); break;
    case 5: refwl_mix(w, names[s], n, 100000, 0.9, 0, 0, 0.2, 6); break;
    default: refwl_mix(w, names[s], n, 50000, 0.7, 20000, 0.4, 0.2, 7); break;
    }
    return 0;
}
#endif
