/* Unit tests of the SHARDS++ estimator (src/core/sdcurve): exact at rate 1 against Mattson
 * (TTL-oblivious) and against a brute-force LRU whose items vanish at their expiry
 * (TTL-aware), byte weights, sampling error, the fixed-size bound, windows and bad configs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/sdcurve.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"

static hc_sdc *mk(double rate, uint32_t max_keys, int ttl, double range, uint32_t cells)
{
    hc_sdc_config c;
    hc_sdc_config_default(&c);
    c.rate = rate;
    c.max_keys = max_keys;
    c.ttl_aware = ttl;
    c.max_size = range;
    c.cells = cells;
    const char *err = NULL;
    hc_sdc *s = hc_sdc_new(&c, &err);
    if (!s)
        fprintf(stderr, "hc_sdc_new: %s\n", err);
    return s;
}

/* Every request is a read; a cold read is followed by its refill write (as memcached's
 * get-miss-set). At rate 1 the curve must equal Mattson's exactly at every integer size. */
static void test_oblivious_exact(void)
{
    workload w;
    refwl_zipf(&w, "z", 60000, 3000, 0.9, 7);
    mattson *m = mattson_new(w.n);
    hc_sdc *s = mk(1.0, 8192, 0, 1000, 1000);
    for (uint64_t i = 0; i < w.n; i++) {
        int64_t t = (int64_t)i;
        mattson_access(m, w.keys[i]);
        hc_sdc_read(s, w.keys[i], 1, t);
        hc_sdc_write(s, w.keys[i], 1, t, 0);
    }
    double worst = 0;
    for (int c = 1; c <= 1000; c += 37) {
        double d = fabs(hc_sdc_hit_ratio_at(s, c) - mattson_ratio_at(m, c));
        if (d > worst) worst = d;
    }
    CHECK(worst < 1e-9, "oblivious at rate 1 equals Mattson, worst %.3g", worst);
    double sz[100], hr[100];
    hc_sdc_curve(s, 100, sz, hr);
    CHECK(fabs(sz[99] - 1000) < 1e-9 && fabs(hr[49] - mattson_ratio_at(m, 500)) < 1e-9,
          "curve grid: %.1f %.4f", sz[99], hr[49]);
    double need = hc_sdc_size_for(s, hr[49]);
    CHECK(need > 490 && need <= 500.0001, "size for the hit ratio at 500: %.2f", need);
    CHECK(hc_sdc_size_for(s, 0.999) < 0, "unreachable target gives -1");
    hc_sdc_free(s);
    mattson_free(m);
    refwl_free(&w);
}

/* Brute-force LRU of C items whose items vanish at their expiry. */
typedef struct bf { uint64_t key[512]; int64_t exp[512]; int n; long hits, reads; } bf;

static void bf_expire(bf *b, int64_t now)
{
    int j = 0;
    for (int i = 0; i < b->n; i++)
        if (!(b->exp[i] > 0 && b->exp[i] <= now)) {
            b->key[j] = b->key[i]; b->exp[j] = b->exp[i]; j++;
        }
    b->n = j;
}
static int bf_find(bf *b, uint64_t k)
{
    for (int i = 0; i < b->n; i++) if (b->key[i] == k) return i;
    return -1;
}
/* move to front (index 0 = most recent) with expiry exp (keep = keep the old one) */
static void bf_front(bf *b, int C, int i, uint64_t k, int64_t exp, int keep)
{
    int64_t e = exp;
    if (i >= 0) {
        if (keep) e = b->exp[i];
        memmove(b->key + 1, b->key, i * sizeof *b->key);
        memmove(b->exp + 1, b->exp, i * sizeof *b->exp);
    } else {
        if (b->n == C) b->n--;
        memmove(b->key + 1, b->key, b->n * sizeof *b->key);
        memmove(b->exp + 1, b->exp, b->n * sizeof *b->exp);
        b->n++;
    }
    b->key[0] = k; b->exp[0] = e;
}

static void test_ttl_exact(void)
{
    /* Keys 0..499 Zipf-ish; a third carry short TTLs, a third long, a third none. */
    const int sizes[] = {10, 40, 100, 250, 400};
    bf *b = calloc(5, sizeof *b);
    hc_sdc *s = mk(1.0, 4096, 1, 500, 500);
    hc_sdc *o = mk(1.0, 4096, 0, 500, 500);
    uint64_t rs = 11;
    /* the model of an infinite cache: a read never inserts, the trace's writes do (the
     * client refills after a miss in that model), so every cache sees the same writes */
    uint8_t *gin = calloc(500, 1);
    int64_t *gexp = calloc(500, sizeof *gexp);
    for (int64_t t = 1; t <= 40000; t++) {
        uint64_t k = (uint64_t)(500 * pow(refwl_unif(&rs), 2.0));
        uint64_t key = refwl_keyhash(k);
        if (gin[k] && gexp[k] && gexp[k] <= t)
            gin[k] = 0;
        for (int j = 0; j < 5; j++) {
            bf_expire(&b[j], t);
            int i = bf_find(&b[j], key);
            b[j].reads++;
            if (i >= 0) { b[j].hits++; bf_front(&b[j], sizes[j], i, key, 0, 1); }
            else if (gin[k]) bf_front(&b[j], sizes[j], -1, key, gexp[k], 0); /* demand fill */
        }
        hc_sdc_read(s, key, 0, t);
        hc_sdc_read(o, key, 0, t);
        if (!gin[k]) {
            int64_t ttl = k % 3 == 0 ? 300 : k % 3 == 1 ? 5000 : 0;
            gin[k] = 1;
            gexp[k] = ttl ? t + ttl : 0;
            for (int j = 0; j < 5; j++)
                bf_front(&b[j], sizes[j], bf_find(&b[j], key), key, gexp[k], 0);
            hc_sdc_write(s, key, 1, t, gexp[k]);
            hc_sdc_write(o, key, 1, t, gexp[k]);
        }
    }
    free(gin);
    free(gexp);
    double worst = 0;
    for (int j = 0; j < 5; j++) {
        double want = (double)b[j].hits / b[j].reads;
        double got = hc_sdc_hit_ratio_at(s, sizes[j]);
        if (fabs(got - want) > worst) worst = fabs(got - want);
    }
    hc_sdc_stats st;
    hc_sdc_stats_get(s, &st);
    CHECK(worst < 0.002, "TTL-aware at rate 1 vs brute-force LRU with expiry, worst %.4f", worst);
    CHECK(st.expired > 100, "keys expired: %llu", (unsigned long long)st.expired);
    /* the oblivious curve keeps expired keys: it over-predicts */
    double ob = hc_sdc_hit_ratio_at(o, 400), aw = hc_sdc_hit_ratio_at(s, 400);
    CHECK(ob > aw + 0.02, "oblivious %.4f > aware %.4f at 400", ob, aw);
    /* TTL-aware working set is smaller */
    hc_sdc_stats so;
    hc_sdc_stats_get(o, &so);
    CHECK(st.working_set < so.working_set, "working set aware %.0f < oblivious %.0f",
          st.working_set, so.working_set);
    hc_sdc_free(s);
    hc_sdc_free(o);
    free(b);
}

static void test_bytes(void)
{
    hc_sdc *s = mk(1.0, 64, 1, 1000, 100);
    hc_sdc_write(s, 1, 100, 0, 0);
    hc_sdc_write(s, 2, 300, 1, 0);
    hc_sdc_write(s, 3, 50, 2, 1000);
    hc_sdc_read(s, 1, 100, 3);     /* 300 + 50 + its own 100 = 450 */
    CHECK(fabs(hc_sdc_hit_ratio_at(s, 450) - 1.0) < 1e-9 && hc_sdc_hit_ratio_at(s, 440) < 1e-9,
          "byte distance 450: %.3f %.3f", hc_sdc_hit_ratio_at(s, 450), hc_sdc_hit_ratio_at(s, 440));
    hc_sdc_read(s, 2, 0, 1001);    /* 3 expired at 1000: 100 + own 300 = 400 (size 0: kept) */
    CHECK(fabs(hc_sdc_hit_ratio_at(s, 400) - 0.5) < 1e-9 && hc_sdc_hit_ratio_at(s, 390) < 1e-9,
          "expired key left the stack: %.3f", hc_sdc_hit_ratio_at(s, 400));
    hc_sdc_stats st;
    hc_sdc_stats_get(s, &st);
    CHECK(st.expired == 1 && st.tracked_keys == 2 && fabs(st.working_set - 400) < 1e-9,
          "stats: expired %llu keys %llu ws %.0f", (unsigned long long)st.expired,
          (unsigned long long)st.tracked_keys, st.working_set);
    hc_sdc_evicted(s, 2);
    hc_sdc_stats_get(s, &st);
    CHECK(fabs(st.resident_weight - 100) < 1e-9 && fabs(st.working_set - 400) < 1e-9,
          "eviction: resident %.0f, stays in the model", st.resident_weight);
    hc_sdc_remove(s, 2);
    hc_sdc_stats_get(s, &st);
    CHECK(st.tracked_keys == 1, "delete leaves the model");
    hc_sdc_reset(s);
    CHECK(hc_sdc_hit_ratio_at(s, 1000) == 0, "reset clears the histogram");
    hc_sdc_read(s, 1, 100, 1002);
    CHECK(fabs(hc_sdc_hit_ratio_at(s, 100) - 1.0) < 1e-9, "keys survive a reset");
    hc_sdc_free(s);
}

static void test_sampling(void)
{
    workload w;
    refwl_zipf(&w, "z", 400000, 100000, 0.9, 3);
    mattson *m = mattson_new(w.n);
    hc_sdc *s = mk(0.05, 1u << 20, 0, 50000, 1000);
    hc_sdc *f = mk(1.0, 2000, 0, 50000, 1000);  /* fixed size: must halve to ~0.02 */
    for (uint64_t i = 0; i < w.n; i++) {
        mattson_access(m, w.keys[i]);
        hc_sdc_read(s, w.keys[i], 1, (int64_t)i);
        hc_sdc_write(s, w.keys[i], 1, (int64_t)i, 0);
        hc_sdc_read(f, w.keys[i], 1, (int64_t)i);
        hc_sdc_write(f, w.keys[i], 1, (int64_t)i, 0);
    }
    double e1 = 0, e2 = 0;
    int n = 0;
    for (int c = 500; c <= 50000; c += 500, n++) {
        e1 += fabs(hc_sdc_hit_ratio_at(s, c) - mattson_ratio_at(m, c));
        e2 += fabs(hc_sdc_hit_ratio_at(f, c) - mattson_ratio_at(m, c));
    }
    e1 /= n;
    e2 /= n;
    hc_sdc_stats st;
    hc_sdc_stats_get(f, &st);
    CHECK(e1 < 0.01, "rate 0.05 MAE %.4f", e1);
    CHECK(e2 < 0.02, "fixed 2000 keys MAE %.4f (rate %.4f)", e2, st.rate);
    CHECK(st.tracked_keys <= 2000 && st.rate_halvings >= 4 && st.rate < 0.04,
          "bounded: %llu keys, rate %.4f", (unsigned long long)st.tracked_keys, st.rate);
    printf("sdcurve sampling MAE: rate 0.05 %.4f, fixed 2000 keys %.4f (rate %.4f, %zu B)\n", e1,
           e2, st.rate, st.bytes);
    hc_sdc_free(s);
    hc_sdc_free(f);
    mattson_free(m);
    refwl_free(&w);
}

static void test_bad_config(void)
{
    hc_sdc_config c;
    const char *err = NULL;
    hc_sdc_config_default(&c);
    c.rate = 0;
    CHECK(!hc_sdc_new(&c, &err) && strstr(err, "rate"), "rate 0 rejected");
    hc_sdc_config_default(&c);
    c.max_keys = 3;
    CHECK(!hc_sdc_new(&c, &err) && strstr(err, "max keys"), "tiny max keys rejected");
    hc_sdc_config_default(&c);
    c.max_size = NAN;
    CHECK(!hc_sdc_new(&c, &err) && strstr(err, "range"), "NaN range rejected");
    hc_sdc *s = hc_sdc_new(NULL, &err);
    CHECK(s && hc_sdc_set_range(s, -1) < 0, "negative range rejected");
    hc_sdc_free(s);
}

int main(void)
{
    test_oblivious_exact();
    test_ttl_exact();
    test_bytes();
    test_sampling();
    test_bad_config();
    return TEST_DONE();
}
