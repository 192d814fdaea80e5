/*
 * Memory: bytes per tracked key and per ghost entry at default settings, and the bound held by
 * fixed-size sampling whatever the key count (50 M distinct keys, synthetic, both the live path
 * with lost EVICTs (SETs only) and the offline path through the LRU emulator).
 * usage: memory [--keys K] [--max-keys M]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/profile.h"
#include "../ref/workload.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    uint64_t keys = 50000000, max_keys = 16384;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--keys")) keys = strtoull(argv[i + 1], 0, 10);
        else if (!strcmp(argv[i], "--max-keys")) max_keys = strtoull(argv[i + 1], 0, 10);
    }
    /* per-key costs, no sampling: a cache of 1M items, filled */
    hc_profile_config c;
    hc_profile_config_default(&c);
    c.emulate_lru = 0;
    hc_profile *p = hc_profile_new(&c, NULL);
    uint64_t N = 1000000;
    hc_profile_set_capacity(p, 1, N, 100);
    for (uint64_t i = 0; i < N; i++) hc_profile_set(p, 1, refwl_keyhash(i), 100);
    for (uint64_t i = 0; i < N; i++) hc_profile_evict(p, 1, refwl_keyhash(i), 100);   /* ghost full */
    for (uint64_t i = N; i < 2 * N; i++) hc_profile_set(p, 1, refwl_keyhash(i), 100);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    printf("# memory per key (defaults: B=%u, k=%.0f, F=%u, ghost fpp %.2f), N = %llu items\n", c.buckets,
           c.ghost_factor, c.ghost_filters, c.ghost_fpp, (unsigned long long)N);
    printf("key table: %zu bytes per slot, %llu slots for %llu keys = %.1f bytes per tracked key (load %.2f)\n",
           st.bytes_per_slot, (unsigned long long)st.table_slots, (unsigned long long)st.tracked_keys,
           (double)st.table_slots * st.bytes_per_slot / st.tracked_keys, (double)st.tracked_keys / st.table_slots);
    double ghost_cap = (c.ghost_factor - 1) * N;
    printf("ghost: %zu bytes for (k-1)N = %.0f entries = %.2f bytes per ghost entry (%llu live now)\n",
           st.ghost_bytes, ghost_cap, st.ghost_bytes / ghost_cap, (unsigned long long)st.ghost_entries);
    printf("reference: MIMIR's counting filter ~5 bytes per entry at 1%% fpp (Sæmundsson 2014 §4.3.1); a key list ~39 B\n");
    printf("total %.1f MiB for N = %llu\n", st.total_bytes / 1048576.0, (unsigned long long)N);
    double kt_bytes = (double)st.table_slots * st.bytes_per_slot;
    printf("ROUNDER: key table + buckets = %.1f bytes per tracked key\n", (kt_bytes + st.estimator_bytes) / st.tracked_keys);
    hc_profile_free(p);
    /* STACKER: the same cache; its node pool (prev, next, epoch) comes on top of the table */
    c.estimator = HC_EST_STACKER;
    p = hc_profile_new(&c, NULL);
    hc_profile_set_capacity(p, 1, N, 100);
    for (uint64_t i = 0; i < N; i++) hc_profile_set(p, 1, refwl_keyhash(i), 100);
    hc_profile_stats_get(p, &st);
    printf("STACKER: key table + node pool + buckets = %.1f bytes per tracked key (pool %.1f; total %.1f MiB)\n\n",
           ((double)st.table_slots * st.bytes_per_slot + st.estimator_bytes) / st.tracked_keys,
           (double)st.estimator_bytes / st.tracked_keys, st.total_bytes / 1048576.0);
    hc_profile_free(p);
    c.estimator = HC_EST_ROUNDER;

    printf("# fixed-size sampling, max %llu tracked keys, %llu distinct keys streamed\n",
           (unsigned long long)max_keys, (unsigned long long)keys);
    printf("%-38s %12s %12s %10s %12s %8s\n", "mode", "peak KiB", "tracked", "ghost", "final rate", "secs");
    for (int mode = 0; mode < 2; mode++) {
        hc_profile_config_default(&c);
        c.sampling = HC_SAMPLE_FIXED_SIZE;
        c.sample_max_keys = max_keys;
        c.emulate_lru = mode == 1;
        p = hc_profile_new(&c, NULL);
        /* capacity: 10% of the key count, as a large memcached would report */
        hc_profile_set_capacity(p, 1, keys / 10, 100);
        size_t peak = 0;
        double t0 = now_s();
        for (uint64_t i = 0; i < keys; i++) {
            uint64_t h = refwl_keyhash(i);
            if (mode == 1) hc_profile_get(p, 1, h, 100);
            else hc_profile_set(p, 1, h, 100);
            if ((i & 0xFFFFF) == 0) {
                hc_profile_stats_get(p, &st);
                if (st.total_bytes > peak) peak = st.total_bytes;
            }
        }
        double t = now_s() - t0;
        hc_profile_stats_get(p, &st);
        if (st.total_bytes > peak) peak = st.total_bytes;
        printf("%-38s %12.0f %12llu %10llu %12.6f %8.1f\n",
               mode ? "offline GETs (emulated LRU of N)" : "live SETs, no EVICTs (lost stream)",
               peak / 1024.0, (unsigned long long)st.tracked_keys, (unsigned long long)st.ghost_entries,
               st.sample_rate, t);
        hc_profile_free(p);
    }
    printf("bound: key table <= 1.5*max/k+64 keys (%.0f KiB of slots) + ghost sized for (k-1)/k*max + curve cells\n",
           (double)(1.5 * max_keys / 2 + 64) * 4 / 3 * 12 / 1024);
    return 0;
}
