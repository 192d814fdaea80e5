/* Unit tests of the breakdown pieces: prefix rules (src/core/keyprefix), the space-saving
 * sketch (src/core/topk, recall against an exact count) and the per-prefix tracker
 * (src/core/prefixes: counts, leave reasons, per-prefix curves, limits). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/keyprefix.h"
#include "core/prefixes.h"
#include "core/topk.h"
#include "../ref/workload.h"

static const char *pfx(const hc_prefix_rule *r, const char *key, char *out)
{
    hc_prefix_of(r, (const unsigned char *)key, strlen(key), out);
    return out;
}

static void test_keyprefix(void)
{
    hc_prefix_rule r;
    char err[200], o[HC_PREFIX_MAX + 1];
    CHECK(hc_prefix_rule_init(&r, ':', 1, NULL, err, sizeof err) == 0, "default rule");
    CHECK(!strcmp(pfx(&r, "user:profile:42", o), "user"), "depth 1: %s", o);
    CHECK(!strcmp(pfx(&r, "nocolon", o), ""), "no delimiter, no prefix: %s", o);
    CHECK(!strcmp(pfx(&r, ":x", o), ""), "empty first field, no prefix: %s", o);
    hc_prefix_rule_free(&r);
    CHECK(hc_prefix_rule_init(&r, ':', 2, NULL, err, sizeof err) == 0, "depth 2");
    CHECK(!strcmp(pfx(&r, "user:profile:42", o), "user:profile"), "depth 2: %s", o);
    CHECK(!strcmp(pfx(&r, "user:42", o), "user"), "depth 2, one delimiter: never the id: %s", o);
    hc_prefix_rule_free(&r);
    CHECK(hc_prefix_rule_init(&r, '_', 1, "^([a-z]+)[0-9]", err, sizeof err) == 0, "regex");
    CHECK(!strcmp(pfx(&r, "sess123abc", o), "sess"), "regex group: %s", o);
    CHECK(!strcmp(pfx(&r, "123", o), ""), "regex no match: %s", o);
    hc_prefix_rule_free(&r);
    CHECK(hc_prefix_rule_init(&r, ':', 1, "([a-z", err, sizeof err) < 0 &&
          strstr(err, "bad prefix regex"), "bad regex: %s", err);
    CHECK(hc_prefix_rule_init(&r, ':', 9, NULL, err, sizeof err) < 0 && strstr(err, "depth"),
          "depth limit: %s", err);
    CHECK(hc_prefix_rule_init(&r, ':', 1, NULL, err, sizeof err) == 0, "again");
    unsigned char bin[] = {'a', 0, 0xff, '%', ':', 'x'};
    int n = hc_prefix_of(&r, bin, sizeof bin, o);
    CHECK(n == 10 && !strcmp(o, "a%00%FF%25"), "binary bytes escaped: %s", o);
    char longk[300];
    memset(longk, 'p', 200);
    strcpy(longk + 200, ":1");
    n = hc_prefix_of(&r, (unsigned char *)longk, strlen(longk), o);
    CHECK(n == -HC_PREFIX_MAX && strlen(o) == HC_PREFIX_MAX, "cut at the limit: %d", n);
    hc_prefix_rule_free(&r);
}

static void test_topk(void)
{
    /* Zipf 1.0 over 100k keys: the top 10 by an exact count must be in a 256-slot sketch (the agent default)'s
     * top 10 (recall >= 0.9), by count and by count x size. */
    const uint64_t K = 100000, N = 500000;
    uint32_t *cnt = calloc(K, sizeof *cnt);
    uint32_t *size = malloc(K * sizeof *size);
    uint64_t rs = 5;
    for (uint64_t i = 0; i < K; i++)
        size[i] = 50 + (uint32_t)(refwl_rand(&rs) % 5000);
    hc_topk *t = hc_topk_new(256), *tb = hc_topk_new(256);
    workload w;
    refwl_zipf(&w, "z", N, K, 1.0, 9);
    /* workload keys are hashes; recover the rank through a map of hash -> index */
    for (uint64_t i = 0; i < w.n; i++) {
        int rep;
        uint64_t k = w.keys[i];
        uint64_t id = k % K; /* any stable bucket: sizes/counts by bucket */
        cnt[id]++;
        hc_topk_add(t, id, 1.0, &rep);
        hc_topk_add(tb, id, size[id], &rep);
    }
    uint64_t top[10] = {0}, topb[10] = {0};
    double bc[10] = {0}, bb[10] = {0};
    for (uint64_t i = 0; i < K; i++) {
        double c = cnt[i], b = (double)cnt[i] * size[i];
        for (int j = 0; j < 10; j++)
            if (c > bc[j]) { memmove(bc + j + 1, bc + j, (9 - j) * 8); memmove(top + j + 1, top + j, (9 - j) * 8); bc[j] = c; top[j] = i; break; }
        for (int j = 0; j < 10; j++)
            if (b > bb[j]) { memmove(bb + j + 1, bb + j, (9 - j) * 8); memmove(topb + j + 1, topb + j, (9 - j) * 8); bb[j] = b; topb[j] = i; break; }
    }
    uint32_t idx[10];
    uint32_t n = hc_topk_sorted(t, idx, 10), hit = 0, hitb = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int j = 0; j < 10; j++)
            hit += hc_topk_slot_at(t, idx[i])->key == top[j];
    n = hc_topk_sorted(tb, idx, 10);
    for (uint32_t i = 0; i < n; i++)
        for (int j = 0; j < 10; j++)
            hitb += hc_topk_slot_at(tb, idx[i])->key == topb[j];
    CHECK(hit >= 9, "top-10 recall by requests %u/10", hit);
    CHECK(hitb >= 9, "top-10 recall by requests x size %u/10", hitb);
    /* space-saving guarantees: count >= true, count - err <= true */
    int ok = 1;
    for (uint32_t i = 0; i < 256; i++) {
        hc_topk_slot *s = hc_topk_slot_at(t, i);
        if (s->used && (s->count < cnt[s->key] - 1e-9 || s->count - s->err > cnt[s->key] + 1e-9))
            ok = 0;
    }
    CHECK(ok, "counts bound the true count");
    hc_topk_scale(t, 0.5);
    n = hc_topk_sorted(t, idx, 1);
    CHECK(n == 1 && fabs(hc_topk_slot_at(t, idx[0])->count - bc[0] / 2) <= hc_topk_slot_at(t, idx[0])->err,
          "scale halves counts");
    hc_topk_scale(t, 0);
    CHECK(hc_topk_sorted(t, idx, 10) == 0 && hc_topk_find(t, top[0]) < 0, "scale 0 forgets");
    CHECK(hc_topk_new(0) == NULL, "k = 0 rejected");
    hc_topk_free(t);
    hc_topk_free(tb);
    refwl_free(&w);
    free(cnt);
    free(size);
}

/* Randomized admission (RAP, topk.h): 50 heavy keys read 400 times each, interleaved with
 * 400,000 keys read once. Plain space-saving with 256 counters churns the tail through every
 * counter (total / k ~ 1,600 > 400) and reports tail keys among its top 50; RAP keeps the heavy
 * keys, counts them within their error bound, and flips the same coins for the same seed. */
static void test_topk_admission(void)
{
    enum { HEAVY = 50, READS = 400, TAIL = 400000 };
    hc_topk *ss = hc_topk_new(256), *r1 = hc_topk_new(256), *r2 = hc_topk_new(256);
    hc_topk_set_admission(r1, 7);
    hc_topk_set_admission(r2, 7);
    uint64_t rs = 11, tail = 1000;
    int rep;
    for (uint64_t i = 0; i < (uint64_t)HEAVY * READS + TAIL; i++) {
        uint64_t key = refwl_rand(&rs) % (HEAVY * READS + TAIL) < (uint64_t)HEAVY * READS
                           ? refwl_rand(&rs) % HEAVY : tail++;
        hc_topk_add(ss, key, 1.0, &rep);
        uint32_t a = hc_topk_add(r1, key, 1.0, &rep), b = hc_topk_add(r2, key, 1.0, &rep);
        if (a != b) { CHECK(0, "same seed, same admissions (flip %llu)", (unsigned long long)i); break; }
    }
    uint32_t idx[HEAVY];
    uint32_t n = hc_topk_sorted(r1, idx, HEAVY), heavy = 0, bounded = 0;
    for (uint32_t i = 0; i < n; i++) {
        hc_topk_slot *s = hc_topk_slot_at(r1, idx[i]);
        heavy += s->key < HEAVY;
        /* what it counted since admission is at most the key's reads (~READS +- 3 sd) */
        bounded += s->count - s->err <= READS + 3 * 20;
    }
    CHECK(heavy == HEAVY, "RAP: the %d heavy keys are its top %d (%u)", HEAVY, HEAVY, heavy);
    CHECK(bounded == n, "RAP: count - err bounded by the reads (%u/%u)", bounded, n);
    n = hc_topk_sorted(ss, idx, HEAVY);
    uint32_t ss_heavy = 0;
    for (uint32_t i = 0; i < n; i++)
        ss_heavy += hc_topk_slot_at(ss, idx[i])->key < HEAVY;
    CHECK(ss_heavy < HEAVY, "plain space-saving loses heavy keys to the tail here (%u)", ss_heavy);
    hc_topk_free(ss);
    hc_topk_free(r1);
    hc_topk_free(r2);
}

static void test_prefixes(void)
{
    hc_prefixes_config c;
    hc_prefixes_config_default(&c);
    c.top_n = 3;
    c.max_bytes = 100000;
    c.cells = 1000;
    const char *err = NULL;
    hc_prefixes *p = hc_prefixes_new(&c, &err);
    CHECK(p != NULL, "new: %s", err ? err : "");
    /* prefix 1: 60 % of reads over 50 keys of 100 B (fits in 5000 B); prefix 2: 30 % over
     * 500 keys of 100 B; prefix 3..9: the rest */
    uint64_t rs = 1;
    uint64_t reads[10] = {0}, hits[10] = {0};
    uint8_t *present = calloc(10 * 1000, 1);
    for (int64_t t = 1; t <= 60000; t++) {
        double u = refwl_unif(&rs);
        int px = u < 0.6 ? 1 : u < 0.9 ? 2 : 3 + (int)(refwl_rand(&rs) % 7);
        uint64_t k = px == 1 ? refwl_rand(&rs) % 50 : px == 2 ? refwl_rand(&rs) % 500 : refwl_rand(&rs) % 1000;
        uint64_t key = refwl_keyhash(px * 1000 + k);
        int hit = present[px * 1000 + k];
        reads[px]++;
        hits[px] += hit;
        hc_prefixes_read(p, (uint64_t)px, key, hit, hit ? 100 : 0, t);
        if (!hit) {
            present[px * 1000 + k] = 1;
            hc_prefixes_write(p, (uint64_t)px, key, 100, t, px == 2 ? t + 2000 : 0);
        }
        if (px == 2 && t % 10 == 0) { /* expiries of prefix 2, as the feed reports them */
            hc_prefixes_left(p, 2, key, 0);
        }
    }
    hc_prefix_stat top[5], tot;
    uint32_t n = hc_prefixes_top(p, top, 5);
    CHECK(n == 3, "top-N limit: %u", n);
    CHECK(top[0].prefix == 1 && top[1].prefix == 2, "ranked by reads: %llu %llu",
          (unsigned long long)top[0].prefix, (unsigned long long)top[1].prefix);
    CHECK(top[0].reads == reads[1] && top[0].hits == hits[1], "exact counts for a heavy prefix: %llu/%llu",
          (unsigned long long)top[0].reads, (unsigned long long)reads[1]);
    CHECK(top[1].left.expired > 0 && top[0].left.expired == 0, "leave reasons per prefix");
    const hc_sdc *c1 = hc_prefixes_curve(p, top[0].slot), *c2 = hc_prefixes_curve(p, top[1].slot);
    double n1 = hc_sdc_size_for(c1, 0.95 * hits[1] / reads[1]);
    CHECK(n1 > 0 && n1 <= 5000 + 1, "prefix 1 needs at most its 50 x 100 B: %.0f", n1);
    double h2 = hc_sdc_hit_ratio_at(c2, 100000);
    CHECK(h2 > 0.5 && h2 < 1.0, "prefix 2 curve: %.3f", h2);
    CHECK(fabs(top[0].resident_bytes - 5000) < 1e-6, "resident bytes of prefix 1: %.0f", top[0].resident_bytes);
    hc_prefixes_totals(p, &tot);
    CHECK(tot.reads == 60000, "totals: %llu", (unsigned long long)tot.reads);
    printf("prefixes: %zu B for %u slots\n", hc_prefixes_bytes(p), 2 * c.top_n);
    hc_prefixes_window(p);
    CHECK(hc_prefixes_top(p, top, 5) == 0, "a window clears counts");
    hc_prefixes_free(p);
    free(present);
    c.top_n = 101;
    CHECK(hc_prefixes_new(&c, &err) == NULL && strstr(err, "1..100"), "top-N limit: %s", err);
}

int main(void)
{
    test_keyprefix();
    test_topk();
    test_topk_admission();
    test_prefixes();
    return TEST_DONE();
}
