/* Unit tests of the public profile API (profile.h): edge cases, live-event semantics, sampling
 * bounds, and accuracy against the Mattson reference on a synthetic stream. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "testutil.h"
#include "core/profile.h"
#include "tracereader.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"

static hc_profile *mk(uint32_t B, double k, int emulate)
{
    hc_profile_config c;
    hc_profile_config_default(&c);
    c.buckets = B;
    c.ghost_factor = k;
    c.emulate_lru = emulate;
    const char *err = NULL;
    hc_profile *p = hc_profile_new(&c, &err);
    if (!p) fprintf(stderr, "new: %s\n", err);
    return p;
}

static double mae(hc_profile *p, mattson *m, double from, double to)
{
    double s = 0;
    for (int i = 1; i <= 100; i++) {
        double x = from + i * (to - from) / 100;
        s += fabs(hc_profile_hit_ratio_at(p, 0, x) - mattson_ratio_at(m, x));
    }
    return s;   /* mean abs error in pp: sum/100*100 */
}

static void test_config(void)
{
    hc_profile_config c;
    const char *err = NULL;
    hc_profile_config_default(&c);
    c.buckets = 0;
    CHECK(!hc_profile_new(&c, &err) && err, "B=0 rejected");
    hc_profile_config_default(&c);
    c.ghost_factor = 0.5;
    CHECK(!hc_profile_new(&c, &err), "k<1 rejected");
    hc_profile_config_default(&c);
    c.sampling = HC_SAMPLE_RATE; c.sample_rate = 0;
    CHECK(!hc_profile_new(&c, &err), "rate 0 rejected");
    hc_profile *p = hc_profile_new(NULL, &err);
    CHECK(p != NULL, "NULL config = defaults");
    hc_curve cv;
    CHECK(hc_profile_curve(p, 5, &cv) == -1, "class without capacity has no curve");
    CHECK(hc_profile_set_capacity(p, 5, 0, 100) == -1, "capacity 0 rejected");
    hc_profile_hit(p, 5, 1, 10);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    CHECK(st.events_no_capacity == 1, "event without capacity counted");
    hc_profile_free(p);
}

static void test_empty_one_unique_same(void)
{
    hc_profile *p = mk(128, 2, 1);
    hc_profile_set_capacity(p, 0, 100, 64);
    hc_curve cv;
    CHECK(hc_profile_curve(p, 0, &cv) == 0, "empty stream has a curve");
    int zeros = 1;
    for (int i = 0; i < HC_CURVE_POINTS; i++) zeros &= cv.hit_ratio[i] == 0;
    CHECK(zeros && cv.reads == 0, "empty stream: all zero");
    CHECK(cv.size_items[0] == 2 && cv.size_items[99] == 200, "points span (0, kN]");
    /* one key, 1000 reads: 999 hits at every size >= 1 */
    for (int i = 0; i < 1000; i++) hc_profile_get(p, 0, 12345, 64);
    double r = hc_profile_hit_ratio_at(p, 0, 1);
    CHECK(fabs(r - 0.999) < 1e-9, "one key: %.6f", r);
    CHECK(fabs(hc_profile_hit_ratio_at(p, 0, 200) - 0.999) < 1e-9, "one key at kN");
    CHECK(hc_profile_hit_ratio_at(p, 0, 0) == 0, "size 0 never hits");
    hc_profile_free(p);
    /* all unique: no hits anywhere, ghost full and rotating */
    p = mk(128, 4, 1);
    hc_profile_set_capacity(p, 0, 1000, 64);
    for (uint64_t i = 0; i < 200000; i++) hc_profile_get(p, 0, refwl_keyhash(i), 64);
    hc_profile_curve(p, 0, &cv);
    double mx = 0;
    for (int i = 0; i < HC_CURVE_POINTS; i++) if (cv.hit_ratio[i] > mx) mx = cv.hit_ratio[i];
    CHECK(mx < 0.002, "all unique: max %.5f (false positives corrected)", mx);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    CHECK(st.tracked_keys == 1000, "tracked = capacity (%llu)", (unsigned long long)st.tracked_keys);
    /* (k-1)N = 3000 covered; at most one merged filter (2 x 3000/8) beyond it */
    CHECK(st.ghost_entries >= 3000 && st.ghost_entries <= 3000 + 2 * 3000 / 8 + 1, "ghost full at (k-1)N: %llu", (unsigned long long)st.ghost_entries);
    hc_profile_free(p);
}

/* Any (B, N) including B=1 and N=1 must agree with exact LRU at the current size N, because
 * every hit of the emulated cache is counted at a distance <= N. */
static void test_exact_at_N(void)
{
    workload w;
    refwl_mix(&w, "m", 100000, 3000, 0.9, 500, 0.2, 0.1, 3);
    mattson *m = mattson_new(w.n + 1);
    for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
    static const uint32_t Bs[] = {1, 2, 8, 128};
    static const uint64_t Ns[] = {1, 2, 50, 700};
    for (int b = 0; b < 4; b++)
        for (int n = 0; n < 4; n++)
            for (int bal = 0; bal <= 1; bal++) {
                hc_profile_config c;
                hc_profile_config_default(&c);
                c.buckets = Bs[b]; c.emulate_lru = 1; c.rounder_balanced = bal;
                hc_profile *p = hc_profile_new(&c, NULL);
                hc_profile_set_capacity(p, 0, Ns[n], 1);
                for (uint64_t i = 0; i < w.n; i++) hc_profile_get(p, 0, w.keys[i], 1);
                double got = hc_profile_hit_ratio_at(p, 0, (double)Ns[n]);
                double want = mattson_ratio_at(m, (double)Ns[n]);
                CHECK(fabs(got - want) < 1e-9, "B=%u N=%llu bal=%d: %.6f vs exact %.6f", Bs[b], (unsigned long long)Ns[n], bal, got, want);
                hc_profile_free(p);
            }
    mattson_free(m);
    refwl_free(&w);
}

static void test_accuracy_zipf(void)
{
    workload w;
    refwl_zipf(&w, "z", 400000, 50000, 0.9, 8);
    mattson *m = mattson_new(w.n + 1);
    for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
    uint64_t N = w.distinct / 10;
    hc_profile *p = mk(HC_DEFAULT_BUCKETS, 2, 1);
    hc_profile_set_capacity(p, 0, N, 1);
    for (uint64_t i = 0; i < w.n; i++) hc_profile_get(p, 0, w.keys[i], 1);
    double lo = mae(p, m, 0, N), hi = mae(p, m, N, 2 * N);
    CHECK(lo < 1.0 && hi < 2.0, "Zipf 0.9 defaults: MAE %.3f pp [0,N], %.3f pp [N,2N]", lo, hi);
    hc_profile_free(p);
    /* fixed-size sampling at 4096 keys keeps the error small and the key count bounded */
    hc_profile_config c;
    hc_profile_config_default(&c);
    c.emulate_lru = 1; c.sampling = HC_SAMPLE_FIXED_SIZE; c.sample_max_keys = 4096;
    p = hc_profile_new(&c, NULL);
    hc_profile_set_capacity(p, 0, N, 1);
    for (uint64_t i = 0; i < w.n; i++) hc_profile_get(p, 0, w.keys[i], 1);
    lo = mae(p, m, 0, N); hi = mae(p, m, N, 2 * N);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    CHECK(st.sample_rate < 0.5 && st.tracked_keys + st.ghost_entries <= 4096 * 1.2, "sampled: rate %.3f keys %llu + ghost %llu", st.sample_rate, (unsigned long long)st.tracked_keys, (unsigned long long)st.ghost_entries);
    CHECK(lo < 3.0 && hi < 3.0, "sampled 4096 keys: MAE %.3f pp [0,N], %.3f pp [N,2N]", lo, hi);
    hc_profile_free(p);
    mattson_free(m);
    refwl_free(&w);
}

/* Live semantics: the agent reports HIT/MISS/SET/EVICT/DELETE itself. */
static void test_live_events(void)
{
    hc_profile *p = mk(8, 2, 0);
    hc_profile_set_capacity(p, 3, 4, 96);
    /* fill 4 keys, hit the oldest: distance 4 */
    for (uint64_t k = 1; k <= 4; k++) { hc_profile_miss(p, 3, k, 10); hc_profile_set(p, 3, k, 10); }
    hc_profile_hit(p, 3, 1, 10);
    CHECK(fabs(hc_profile_hit_ratio_at(p, 3, 4) - 1.0 / 5) < 1e-9, "hit counted within N");
    CHECK(hc_profile_hit_ratio_at(p, 3, 0.5) < 1.0 / 5, "not at tiny sizes");
    /* evict key 2; memcached logs the miss with clsid 0, the refill SET carries the class */
    hc_profile_evict(p, 3, 2, 10);
    hc_profile_miss(p, 0, 2, 0);
    hc_profile_set(p, 3, 2, 10);
    hc_curve cv;
    hc_profile_curve(p, 3, &cv);
    CHECK(cv.reads == 6, "deferred miss counted in the SET's class (%llu)", (unsigned long long)cv.reads);
    double at8 = hc_profile_hit_ratio_at(p, 3, 8), at4 = hc_profile_hit_ratio_at(p, 3, 4);
    CHECK(at8 > at4 + 0.1, "ghost hit beyond N: %.3f > %.3f", at8, at4);
    /* delete: the key leaves without entering the ghost */
    hc_profile_delete(p, 3, 3, 10);
    hc_profile_miss(p, 3, 3, 10);
    hc_profile_curve(p, 3, &cv);
    CHECK(fabs(hc_profile_hit_ratio_at(p, 3, 8) - at8 * 6 / 7) < 1e-9, "deleted key is no ghost hit");
    /* unknown HIT (item cached before the profile started) */
    hc_profile_hit(p, 3, 999, 10);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    CHECK(st.unknown_hits == 1, "unknown hit counted");
    /* a key that changes class on a SET moves */
    hc_profile_set_capacity(p, 4, 10, 120);
    hc_profile_set(p, 4, 1, 100);
    hc_profile_hit(p, 4, 1, 100);
    CHECK(hc_profile_hit_ratio_at(p, 4, 1) == 1.0, "moved key hits at distance 1 in its new class");
    /* reset keeps keys */
    hc_profile_reset(p, -1);
    hc_profile_curve(p, 3, &cv);
    CHECK(cv.reads == 0, "reset clears counters");
    hc_profile_hit(p, 4, 1, 100);
    CHECK(hc_profile_hit_ratio_at(p, 4, 1) == 1.0, "reset keeps tracked keys");
    hc_profile_free(p);
}

/* The curve reports how far its ghost sees: N before any eviction, N + evicted keys while the
 * ghost fills, k*N once (k-1)*N evictions have entered it (the backend answers "unreachable" only
 * where the curve is measured). */
static void test_ghost_reach(void)
{
    hc_profile *p = mk(8, 3, 0);
    hc_profile_set_capacity(p, 5, 1000, 96);
    for (uint64_t k = 1; k <= 1000; k++) { hc_profile_miss(p, 5, k, 10); hc_profile_set(p, 5, k, 10); }
    hc_curve cv;
    hc_profile_curve(p, 5, &cv);
    CHECK(fabs(cv.ghost_reach_items - 1000) < 1e-9, "no eviction yet: reach N (%.1f)", cv.ghost_reach_items);
    for (uint64_t k = 1; k <= 500; k++) hc_profile_evict(p, 5, k, 10);
    hc_profile_curve(p, 5, &cv);
    CHECK(fabs(cv.ghost_reach_items - 1500) < 1e-9, "500 evictions: reach N + 500 (%.1f)", cv.ghost_reach_items);
    /* a key found again leaves the ghost (it is back in the cache) */
    hc_profile_miss(p, 5, 7, 10);
    hc_profile_set(p, 5, 7, 10);
    hc_profile_curve(p, 5, &cv);
    CHECK(cv.ghost_reach_items < 1500 && cv.ghost_reach_items >= 1498, "re-read key leaves: %.1f",
          cv.ghost_reach_items);
    /* memcached full: each new key evicts the oldest resident one (501.., then the new keys) */
    uint64_t oldest = 501;
    for (uint64_t k = 2000; k < 8000; k++) {
        hc_profile_miss(p, 5, k, 10);
        hc_profile_set(p, 5, k, 10);
        hc_profile_evict(p, 5, oldest, 10);
        oldest = oldest == 1000 ? 2000 : oldest + 1;
    }
    hc_profile_curve(p, 5, &cv);
    CHECK(fabs(cv.ghost_reach_items - 3000) < 1e-9, "filled ghost: reach k*N (%.1f)", cv.ghost_reach_items);
    CHECK(cv.size_items[cv.npoints - 1] == 3000, "the curve's points span k*N regardless");
    hc_profile_free(p);
}

/* A complete ghost: when the events start before memcached's first eviction and the
 * ghost dropped no key inside its span, a read that misses it is a first read (a miss at any
 * size), so the curve past N + its entries is flat and measured: the reach is k*N. A key lost to
 * it inside the span (a capacity change too large to keep its filters, an eviction with no class)
 * or an attach after evictions leaves the reach at N + its entries (a bound past it) until the
 * ghost has held (k-1)*N entries again (tests/test_late_attach.c). */
#define H(k) refwl_keyhash(k)
static void fill_and_evict(hc_profile *p, int c, uint64_t n, uint64_t evict)
{
    for (uint64_t k = 1; k <= n; k++) { hc_profile_miss(p, c, H(k), 10); hc_profile_set(p, c, H(k), 10); }
    for (uint64_t k = 1; k <= evict; k++) hc_profile_evict(p, c, H(k), 10);
}

static void test_ghost_complete(void)
{
    hc_curve cv;
    /* attached after memcached had evicted: not complete (until the ghost holds (k-1)*N) */
    hc_profile *p = mk(8, 3, 0);
    hc_profile_set_capacity(p, 5, 1000, 96);
    fill_and_evict(p, 5, 1000, 500);
    hc_profile_curve(p, 5, &cv);
    CHECK(!cv.ghost_complete && fabs(cv.ghost_reach_items - 1500) < 1e-9,
          "seen mid-life: not complete, reach N + entries (%d, %.1f)", cv.ghost_complete, cv.ghost_reach_items);
    hc_profile_free(p);

    p = mk(8, 3, 0);
    hc_profile_set_seen_from_start(p, 1);
    hc_profile_set_capacity(p, 5, 1000, 96);
    fill_and_evict(p, 5, 1000, 500);
    hc_profile_curve(p, 5, &cv);
    CHECK(cv.ghost_complete && cv.ghost_dropped_items == 0 && fabs(cv.ghost_reach_items - 3000) < 1e-9,
          "seen from the start, nothing dropped: complete, reach k*N (%d, %.1f, %.1f)", cv.ghost_complete,
          cv.ghost_dropped_items, cv.ghost_reach_items);
    /* the flat rest is the measurement: 100 evicted keys read back are ghost hits within N + 500,
     * 100 new keys are first reads, so the curve is 0.5 at N + 500 and stays 0.5 to k*N */
    hc_profile_reset(p, 5);
    for (uint64_t k = 1; k <= 100; k++) { hc_profile_miss(p, 5, H(k), 10); hc_profile_set(p, 5, H(k), 10); }
    for (uint64_t k = 5001; k <= 5100; k++) { hc_profile_miss(p, 5, H(k), 10); hc_profile_set(p, 5, H(k), 10); }
    double at_reach = hc_profile_hit_ratio_at(p, 5, 1500), at_end = hc_profile_hit_ratio_at(p, 5, 3000);
    CHECK(fabs(at_reach - 0.5) < 0.02 && fabs(at_end - at_reach) < 1e-9,
          "past the entries only first reads: flat (%.4f at N + 500, %.4f at k*N)", at_reach, at_end);
    /* the capacity re-read when memory fills moves it a little: the ghost keeps its keys */
    hc_profile_set_capacity(p, 5, 1100, 96);
    hc_profile_curve(p, 5, &cv);
    CHECK(cv.ghost_complete && cv.ghost_dropped_items == 0 && fabs(cv.ghost_reach_items - 3300) < 1e-9,
          "capacity +10 %%: keys kept, still complete (%d, %.1f)", cv.ghost_complete, cv.ghost_dropped_items);
    /* ...a large move re-creates the ghost: its keys are lost, and it says so */
    hc_profile_set_capacity(p, 5, 3000, 96);
    hc_profile_curve(p, 5, &cv);
    CHECK(!cv.ghost_complete && fabs(cv.ghost_dropped_items - 400) < 1e-9 && fabs(cv.ghost_reach_items - 3000) < 1e-9,
          "capacity x2.7: 400 keys dropped, not complete, reach N (%d, %.1f, %.1f)", cv.ghost_complete,
          cv.ghost_dropped_items, cv.ghost_reach_items);
    hc_profile_free(p);

    /* Alg. 12 flushes the oldest keys once (k-1)*N are held: dropped, but beyond k*N (the
     * newer entries cover (k-1)*N), so still complete (tests/test_late_attach.c: when not) */
    p = mk(8, 3, 0);
    hc_profile_set_seen_from_start(p, 1);
    hc_profile_set_capacity(p, 5, 1000, 96);
    fill_and_evict(p, 5, 1000, 1000);
    uint64_t oldest = 1001;
    for (uint64_t k = 1001; k < 4500; k++) {
        hc_profile_miss(p, 5, H(k), 10);
        hc_profile_set(p, 5, H(k), 10);
        if (k >= 2001) hc_profile_evict(p, 5, H(oldest++), 10);
    }
    hc_profile_curve(p, 5, &cv);
    CHECK(cv.ghost_complete && cv.ghost_dropped_items > 0 && fabs(cv.ghost_reach_items - 3000) < 1e-9,
          "flushed past k*N: complete (%.1f dropped), reach k*N", cv.ghost_dropped_items);
    hc_profile_free(p);

    /* an eviction for a class without capacity reached no ghost */
    p = mk(8, 3, 0);
    hc_profile_set_seen_from_start(p, 1);
    hc_profile_set_capacity(p, 5, 1000, 96);
    fill_and_evict(p, 5, 1000, 10);
    hc_profile_evict(p, 7, H(99999), 10);
    hc_profile_set_capacity(p, 7, 1000, 120);
    hc_profile_curve(p, 7, &cv);
    CHECK(!cv.ghost_complete && fabs(cv.ghost_reach_items - 1000) < 1e-9,
          "an eviction before the class had a capacity: not complete (%d, %.1f)", cv.ghost_complete,
          cv.ghost_reach_items);
    hc_profile_curve(p, 5, &cv);
    CHECK(cv.ghost_complete, "...the other classes still are");
    hc_profile_free(p);
}

#undef H

/* The ghost's resolution: a loop over L = 3.6 N keys has exact LRU hit ratio 0 below L
 * and 1 - L/reads from L on. The ghost places a distance beyond N only within one filter's span,
 * (k-1) N / (F-1): with the old default F = 9 at k = 5 (N/2 per filter) the step is smeared well
 * below L; with the default F = 1 + 8(k-1) = 33 (N/8) it stays within N/8 of L. */
static double loop_ratio_at(uint32_t F, double at_n, uint32_t *reported)
{
    hc_profile_config c;
    hc_profile_config_default(&c);
    c.ghost_factor = 5;
    c.ghost_filters = F;
    c.emulate_lru = 1;
    const char *err = NULL;
    hc_profile *p = hc_profile_new(&c, &err);
    if (!p) { fprintf(stderr, "new: %s\n", err); return -1; }
    const uint64_t N = 1000, L = 3600;
    hc_profile_set_capacity(p, 0, N, 1);
    for (uint64_t i = 0; i < 25 * L; i++) hc_profile_get(p, 0, 0x9E3779B97F4A7C15ull * (i % L + 1), 1);
    hc_curve cv;
    hc_profile_curve(p, 0, &cv);
    if (reported) *reported = cv.ghost_filters;
    double r = hc_profile_hit_ratio_at(p, 0, at_n * N);
    hc_profile_free(p);
    return r;
}

static void test_ghost_resolution(void)
{
    CHECK(hc_ghost_filters_for(2) == HC_DEFAULT_FILTERS, "k = 2: %u", hc_ghost_filters_for(2));
    CHECK(hc_ghost_filters_for(5) == 33, "k = 5: %u", hc_ghost_filters_for(5));
    CHECK(hc_ghost_filters_for(1) == 2 && hc_ghost_filters_for(16) == HC_MAX_FILTERS, "clamped to 2..64");
    uint32_t F = hc_ghost_filters_for(5), rep = 0;
    double exact_after = 1.0 - 1.0 / 25;
    double below = loop_ratio_at(F, 3.6 - 0.25, &rep), above = loop_ratio_at(F, 3.6 + 0.25, NULL);
    double old_below = loop_ratio_at(9, 3.6 - 0.25, NULL);
    CHECK(rep == F, "the curve reports its filter count (%u)", rep);
    CHECK(below < 0.03, "default F: 0.25 N below the cliff reads %.3f (exact 0)", below);
    CHECK(fabs(above - exact_after) < 0.03, "default F: 0.25 N above reads %.3f (exact %.3f)", above, exact_after);
    CHECK(old_below > below + 0.1, "F = 9 smears the cliff: %.3f there (default F %.3f)", old_below, below);
}

/* Keys with any bytes: hashes of binary keys (NUL, 0xFF, 250 bytes) are distinct keys. */
static void test_binary_keys(void)
{
    hc_profile *p = mk(16, 2, 1);
    hc_profile_set_capacity(p, 0, 10, 1);
    unsigned char k1[3] = {0, 0, 0}, k2[3] = {0, 0, 1}, k3[250];
    memset(k3, 0xFF, sizeof(k3));
    uint64_t h1 = tr_hash_key(k1, 3), h2 = tr_hash_key(k2, 3), h3 = tr_hash_key(k3, 250), h0 = tr_hash_key(k1, 0);
    CHECK(h1 != h2 && h1 != h3 && h1 != h0, "distinct hashes");
    CHECK(hc_profile_get(p, 0, h1, 1) == 0 && hc_profile_get(p, 0, h2, 1) == 0, "two misses");
    CHECK(hc_profile_get(p, 0, h3, 1) == 0 && hc_profile_get(p, 0, h0, 1) == 0, "binary keys miss once");
    CHECK(hc_profile_get(p, 0, h1, 1) == 1 && hc_profile_get(p, 0, h3, 1) == 1, "and hit again");
    hc_profile_free(p);
}

/* Memory stays bounded whatever the key count: fixed-size sampling, live mode with lost EVICTs
 * (SETs only) and offline mode, 3 M distinct keys here (the bench runs 50 M). */
static void test_memory_bound(void)
{
    for (int emulate = 0; emulate <= 1; emulate++) {
        hc_profile_config c;
        hc_profile_config_default(&c);
        c.emulate_lru = emulate; c.sampling = HC_SAMPLE_FIXED_SIZE; c.sample_max_keys = 4096;
        hc_profile *p = hc_profile_new(&c, NULL);
        hc_profile_set_capacity(p, 1, 1000000, 100);
        size_t peak = 0;
        for (uint64_t i = 0; i < 3000000; i++) {
            if (emulate) hc_profile_get(p, 1, refwl_keyhash(i), 100);
            else hc_profile_set(p, 1, refwl_keyhash(i), 100);
            if ((i & 0xFFFF) == 0) {
                hc_profile_stats st;
                hc_profile_stats_get(p, &st);
                if (st.total_bytes > peak) peak = st.total_bytes;
            }
        }
        hc_profile_stats st;
        hc_profile_stats_get(p, &st);
        CHECK(peak < 1024 * 1024, "emulate=%d: peak %zu bytes, tracked %llu, rate %.5f", emulate, peak, (unsigned long long)st.tracked_keys, st.sample_rate);
        CHECK(st.tracked_keys <= 4096, "tracked keys bounded (%llu)", (unsigned long long)st.tracked_keys);
        hc_profile_free(p);
    }
}

int main(void)
{
    test_config();
    test_empty_one_unique_same();
    test_exact_at_N();
    test_accuracy_zipf();
    test_live_events();
    test_ghost_reach();
    test_ghost_complete();
    test_ghost_resolution();
    test_binary_keys();
    test_memory_bound();
    return TEST_DONE();
}
