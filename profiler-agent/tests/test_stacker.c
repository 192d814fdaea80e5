/* STACKER (src/core/stacker.c): every hit's distance equals the exact LRU stack distance of a
 * reference list, every invariant holds after random SET / HIT / touch / remove sequences for
 * several B and capacities, bucket sizes stay bounded, and through the profile API the curve on
 * [0, N] is the exact Mattson curve (emulated LRU and live HIT/MISS/SET/EVICT events), while the
 * key table and the estimator agree under sampling and lost EVICTs. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "testutil.h"
#include "core/stacker.h"
#include "core/profile.h"
#include "core/lruemu.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"

/* Reference: the live items as an array, newest first. */
typedef struct { uint32_t *h; int n; } reflist;
static void ref_del(reflist *r, int i) { memmove(r->h + i, r->h + i + 1, (size_t)(r->n - i - 1) * sizeof(uint32_t)); r->n--; }
static void ref_push(reflist *r, uint32_t h) { memmove(r->h + 1, r->h, (size_t)r->n * sizeof(uint32_t)); r->h[0] = h; r->n++; }

/* epoch0: start the epochs there (near 2^32 to cross the wrap); renumber: renumber_at (0: default) */
static void test_random_ops_at(uint32_t B, double cap, int maxlive, int ops, uint64_t seed, uint32_t epoch0, uint32_t renumber)
{
    stacker s;
    CHECK(stacker_init(&s, B, cap) == 0, "init");
    s.head_epoch = s.lo[0] = epoch0;
    if (renumber) s.renumber_at = renumber;
    reflist r = {calloc((size_t)maxlive + 1, sizeof(uint32_t)), 0};
    uint64_t rs = seed;
    int bad_dist = 0, bad_inv = 0, bad_bound = 0, bad_rank = 0;
    const char *why = NULL;
    int64_t maxtotal = 0;
    for (int t = 0; t < ops; t++) {
        double u = refwl_unif(&rs);
        if (r.n < 2 || (u < 0.30 && r.n < maxlive)) {
            uint32_t h = stacker_set(&s);
            ref_push(&r, h);
        } else if (u < 0.80) {
            /* hits skewed to the top, as real traffic is, but reaching every depth */
            double v = refwl_unif(&rs);
            int i = (int)(v * v * r.n);
            uint32_t h = r.h[i];
            double a, b;
            uint32_t hh = h;
            stacker_hit(&s, &hh, 1, &a, &b);
            if (hh != h || b != (double)(i + 1) || a != b - 1) bad_dist++;
            ref_del(&r, i); ref_push(&r, h);
        } else if (u < 0.90) {
            int i = (int)(refwl_unif(&rs) * r.n);
            uint32_t h = r.h[i];
            if (stacker_touch(&s, h) != h) bad_dist++;
            ref_del(&r, i); ref_push(&r, h);
        } else {
            int i = (int)(refwl_unif(&rs) * r.n);
            stacker_remove(&s, r.h[i]);
            stacker_remove(&s, r.h[i]);      /* a second remove of a freed node is a no-op */
            ref_del(&r, i);
        }
        if (s.total > maxtotal) maxtotal = s.total;
        /* balanced merging: a merged bucket is at most the smallest adjacent pair, and the
         * B/2 disjoint pairs hold at most every item; the head bucket at most ceil(N/B) */
        int64_t half = s.B / 2 ? s.B / 2 : 1;
        int64_t bound = s.ilimit > maxtotal / half ? s.ilimit : maxtotal / half;
        for (uint32_t j = 0; j < s.nb && s.B > 1; j++) if (s.cnt[j] > bound) { bad_bound++; break; }
        if (t % 97 == 0 || t == ops - 1) {
            const char *e = stacker_verify(&s);
            if (e) { bad_inv++; why = e; }
            if (s.total != r.n) bad_inv++;
            /* age ranks never increase with depth (0 = oldest bucket) */
            uint32_t last = UINT32_MAX;
            for (int i = 0; i < r.n; i++) {
                uint32_t j = stacker_rank_of(&s, r.h[i]);
                if (j > last || stacker_depth_slow(&s, r.h[i]) != i + 1) { bad_rank++; break; }
                last = j;
            }
        }
    }
    CHECK(bad_dist == 0, "B=%u cap=%.0f: %d hits at a wrong distance", B, cap, bad_dist);
    CHECK(bad_inv == 0, "B=%u cap=%.0f: %d invariant failures (%s)", B, cap, bad_inv, why ? why : "total");
    CHECK(bad_bound == 0, "B=%u cap=%.0f: bucket over the balanced bound %d times", B, cap, bad_bound);
    CHECK(bad_rank == 0, "B=%u cap=%.0f: age ranks out of order %d times", B, cap, bad_rank);
    uint32_t want = (uint32_t)(STK_SQRT_K * sqrt(cap < 1 ? 1 : cap));
    CHECK(s.B == (B > want ? B : want), "B=%u cap=%.0f: %u buckets", B, cap, s.B);
    if (maxlive > 4 * (int)s.B) CHECK(s.agings > 0, "B=%u ages", B);
    /* the capacity shrinks: buckets merge down to the new B, exactness and order kept */
    stacker_set_capacity(&s, cap / 16);
    uint32_t want2 = (uint32_t)(STK_SQRT_K * sqrt(cap / 16 < 1 ? 1 : cap / 16));
    CHECK(s.nb <= s.B && s.B == (B > want2 ? B : want2), "shrunk to %u buckets (%u in use)", s.B, s.nb);
    CHECK(stacker_verify(&s) == NULL, "after shrinking: %s", stacker_verify(&s));
    int bad = 0;
    for (int i = 0; i < r.n && i < 200; i++) {
        uint32_t h = r.h[i];
        double a, b;
        stacker_hit(&s, &h, 1, &a, &b);     /* re-hitting from the top down keeps depth i+1 */
        if (b != (double)(i + 1)) bad++;
        ref_del(&r, i); ref_push(&r, h);
    }
    CHECK(bad == 0, "exact after shrinking (%d wrong)", bad);
    /* and grows again */
    stacker_set_capacity(&s, cap * 64);
    CHECK(stacker_verify(&s) == NULL && s.B >= want, "after growing: %s, B %u", stacker_verify(&s), s.B);
    if (renumber) CHECK(s.renumbers > 0, "renumbered %llu times", (unsigned long long)s.renumbers);
    free(r.h);
    stacker_free(&s);
}

static void test_random_ops(uint32_t B, double cap, int maxlive, int ops, uint64_t seed)
{
    test_random_ops_at(B, cap, maxlive, ops, seed, 0, 0);
}

static void test_unknown_hit(void)
{
    stacker s;
    stacker_init(&s, 8, 100);
    for (int i = 0; i < 30; i++) stacker_set(&s);
    uint32_t h = 12345;
    double a, b;
    CHECK(stacker_hit(&s, &h, 0, &a, &b) == 0 && h != STK_NIL, "unknown hit gets a node");
    CHECK(a == 30 && b == 100, "unknown hit spread over (tracked, N]: (%.0f, %.0f]", a, b);
    CHECK(stacker_depth_slow(&s, h) == 1 && s.total == 31, "and sits on top");
    stacker_remove(&s, h);
    CHECK(stacker_verify(&s) == NULL && s.total == 30, "removed again");
    /* over capacity: the range still has width 1 past the stack */
    for (int i = 0; i < 100; i++) stacker_set(&s);
    h = 0;
    stacker_hit(&s, &h, 0, &a, &b);
    CHECK(a == 130 && b == 131, "past N: (%.0f, %.0f]", a, b);
    CHECK(stacker_verify(&s) == NULL, "verify: %s", stacker_verify(&s));
    stacker_free(&s);
}

/* Through the profile: the curve below N is exact (emulated LRU, live events), and the key
 * table and the estimator agree after sampling sweeps and lost-EVICT sweeps. */
static hc_profile *mk(int estimator, int sampling, uint64_t max_keys, int emulate)
{
    hc_profile_config c;
    hc_profile_config_default(&c);
    c.estimator = estimator;
    c.emulate_lru = emulate;
    if (sampling) { c.sampling = HC_SAMPLE_FIXED_SIZE; c.sample_max_keys = max_keys; }
    const char *err = NULL;
    hc_profile *p = hc_profile_new(&c, &err);
    if (!p) fprintf(stderr, "new: %s\n", err);
    return p;
}

static double mae_below(hc_profile *p, int cls, const mattson *m, uint64_t N)
{
    double s = 0;
    for (int i = 1; i <= 100; i++) {
        double x = i * (double)N / 100;
        s += fabs(hc_profile_hit_ratio_at(p, cls, x) - mattson_ratio_at(m, x)) * 100 / 100;
    }
    return s;
}

static void test_profile_exact(void)
{
    workload w;
    refwl_mix(&w, "mix", 200000, 20000, 0.9, 3000, 0.3, 0.1, 42);
    mattson *m = mattson_new(w.n + 1);
    for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
    uint64_t N = 2000;
    double mae[2];
    for (int e = 0; e < 2; e++) {
        hc_profile *p = mk(e, 0, 0, 1);
        hc_profile_set_capacity(p, 0, N, 1);
        for (uint64_t i = 0; i < w.n; i++) hc_profile_get(p, 0, w.keys[i], 1);
        mae[e] = mae_below(p, 0, m, N);
        CHECK(hc_profile_verify(p) == NULL, "%s verify: %s", hc_estimator_name(e), hc_profile_verify(p));
        hc_profile_free(p);
    }
    CHECK(mae[1] < 1e-6, "stacker is exact on [0,N]: MAE %.3g pp", mae[1]);
    CHECK(mae[0] > mae[1], "rounder spreads within buckets: MAE %.3g pp > stacker's", mae[0]);

    /* live events from an exact LRU of N: HIT, or MISS + EVICT + SET */
    hc_profile *p = mk(HC_EST_STACKER, 0, 0, 0);
    hc_profile_set_capacity(p, 3, N, 64);
    lruemu lru;
    lruemu_init(&lru, N);
    for (uint64_t i = 0; i < w.n; i++) {
        uint64_t k = w.keys[i], v;
        if (lruemu_access(&lru, k)) { hc_profile_hit(p, 3, k, 64); continue; }
        hc_profile_miss(p, 3, k, 64);
        if (lruemu_insert(&lru, k, &v)) hc_profile_evict(p, 3, v, 64);
        hc_profile_set(p, 3, k, 64);
    }
    double live = mae_below(p, 3, m, N);
    CHECK(live < 1e-6, "live events: stacker exact on [0,N], MAE %.3g pp", live);
    CHECK(hc_profile_verify(p) == NULL, "live verify: %s", hc_profile_verify(p));
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    CHECK(st.estimator_bytes >= st.tracked_keys * 12, "node pool counted: %zu bytes for %llu keys",
          st.estimator_bytes, (unsigned long long)st.tracked_keys);
    lruemu_free(&lru);
    hc_profile_free(p);

    /* fixed-size sampling (rate lowered by sweeps) and lost EVICTs (surplus sweeps), two
     * classes: the estimator and the key table stay in step */
    p = mk(HC_EST_STACKER, 1, 2048, 0);
    hc_profile_set_capacity(p, 1, 5000, 64);
    hc_profile_set_capacity(p, 2, 3000, 128);
    lruemu l1, l2;
    lruemu_init(&l1, 5000);
    lruemu_init(&l2, 3000);
    uint64_t rs = 7, dropped = 0;
    for (uint64_t i = 0; i < w.n; i++) {
        uint64_t k = w.keys[i], v;
        int c = (k & 1) ? 1 : 2;
        lruemu *l = c == 1 ? &l1 : &l2;
        if (lruemu_access(l, k)) { hc_profile_hit(p, c, k, 64); continue; }
        hc_profile_miss(p, c, k, 64);
        if (lruemu_insert(l, k, &v)) {
            if (refwl_unif(&rs) < 0.2) dropped++;          /* 20 % of EVICTs lost */
            else hc_profile_evict(p, c, v, 64);
        }
        hc_profile_set(p, c, k, 64);
        if (k % 11 == 0) hc_profile_delete(p, c, k, 64), lruemu_remove(l, k);
    }
    hc_profile_stats_get(p, &st);
    CHECK(st.rate_lowerings > 0 && st.surplus_evictions > 0 && dropped > 0,
          "sweeps exercised: lowerings %llu surplus %llu", (unsigned long long)st.rate_lowerings,
          (unsigned long long)st.surplus_evictions);
    CHECK(hc_profile_verify(p) == NULL, "sampled + lossy verify: %s", hc_profile_verify(p));
    lruemu_free(&l1);
    lruemu_free(&l2);
    hc_profile_free(p);

    mattson_free(m);
    refwl_free(&w);
}

static void test_names(void)
{
    CHECK(hc_estimator_parse("rounder") == HC_EST_ROUNDER && hc_estimator_parse("stacker") == HC_EST_STACKER, "parse");
    CHECK(hc_estimator_parse("Stacker") == -1 && hc_estimator_parse("") == -1 && hc_estimator_parse(NULL) == -1, "reject");
    CHECK(!strcmp(hc_estimator_name(HC_EST_STACKER), "stacker") && !strcmp(hc_estimator_name(HC_EST_ROUNDER), "rounder"), "names");
    hc_profile_config c;
    hc_profile_config_default(&c);
    CHECK(c.estimator == HC_EST_ROUNDER, "default stays rounder");
    c.estimator = 7;
    const char *err = NULL;
    CHECK(hc_profile_new(&c, &err) == NULL && err && strstr(err, "estimator"), "bad estimator refused: %s", err ? err : "");
}

int main(void)
{
    test_names();
    test_unknown_hit();
    test_random_ops(1, 50, 80, 4000, 1);
    test_random_ops(2, 50, 120, 6000, 2);
    test_random_ops(3, 10, 40, 6000, 3);
    test_random_ops(7, 100, 300, 20000, 4);
    test_random_ops(128, 1000, 1500, 30000, 5);
    test_random_ops(128, 20, 400, 20000, 6);     /* N < B: ages on every insert */
    test_random_ops_at(16, 20, 200, 20000, 7, UINT32_MAX - 3000, 0);   /* epochs cross 2^32 */
    test_random_ops_at(16, 20, 200, 20000, 8, 0, 500);                  /* renumbered often */
    test_profile_exact();
    return TEST_DONE();
}
