/* Unit tests of the core's building blocks: curve accumulator, key table, counting filter,
 * ghost, ROUNDER (both agings) and the Mattson reference. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "testutil.h"
#include "core/curveacc.h"
#include "core/keytable.h"
#include "core/cbf.h"
#include "core/ghost.h"
#include "core/rounder.h"
#include "core/lruemu.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"

static void test_curveacc(void)
{
    curveacc a;
    CHECK(curveacc_init(&a, 100, 50.0) == 0, "init");
    /* brute force: hits(x) = sum of weight * clamp((x-s)/(e-s), 0, 1) */
    double S[200], E[200], W[200];
    uint64_t rs = 1;
    for (int i = 0; i < 200; i++) {
        S[i] = refwl_unif(&rs) * 60; E[i] = S[i] + refwl_unif(&rs) * 20; W[i] = refwl_unif(&rs) * 3 - 0.5;
        if (i % 17 == 0) E[i] = S[i];       /* point masses */
        curveacc_add_uniform(&a, S[i], E[i], W[i]);
    }
    double H[101];
    curveacc_eval(&a, H);
    double worst = 0;
    for (int j = 0; j <= 100; j++) {
        double x = j * 0.5, b = 0;
        for (int i = 0; i < 200; i++) {
            if (E[i] - S[i] < 1e-9) { if (x >= S[i] - 1e-9) b += W[i]; continue; }
            double f = (x - S[i]) / (E[i] - S[i]);
            b += W[i] * (f < 0 ? 0 : f > 1 ? 1 : f);
        }
        if (fabs(b - H[j]) > worst) worst = fabs(b - H[j]);
    }
    CHECK(worst < 1e-9, "grid values exact, worst %.3g", worst);
    curveacc_clear(&a);
    curveacc_eval(&a, H);
    CHECK(H[100] == 0, "clear");
    curveacc_free(&a);
}

static void test_keytable(void)
{
    keytable t;
    CHECK(kt_init(&t, 10, 0) == 0, "init");
    enum { K = 20000 };
    /* random keys, key 0, keys that share a home slot (same identity bits except low byte are
     * the same key by design; these differ in high bits but collide modulo the table) */
    for (uint64_t i = 0; i < K; i++) kt_insert(&t, refwl_keyhash(i), (int)(i % 64), (uint32_t)i);
    CHECK(t.count == K, "count %llu", (unsigned long long)t.count);
    int ok = 1;
    for (uint64_t i = 0; i < K; i++) {
        uint64_t s = kt_find(&t, refwl_keyhash(i));
        if (s == KT_NONE || t.act[s] != i || kt_class(&t, s) != (int)(i % 64)) ok = 0;
    }
    CHECK(ok, "all found with their values");
    for (uint64_t i = 0; i < K; i += 2) kt_remove_slot(&t, kt_find(&t, refwl_keyhash(i)));
    ok = 1;
    for (uint64_t i = 0; i < K; i++) {
        uint64_t s = kt_find(&t, refwl_keyhash(i));
        if ((i % 2 == 0) != (s == KT_NONE)) ok = 0;
        if (s != KT_NONE && t.act[s] != i) ok = 0;
    }
    CHECK(ok, "backward-shift deletion keeps the others reachable");
    /* kt_scan_class: the next slot of a class (0: empty slots too), from every start */
    int scan_bad = 0;
    for (int c = 0; c < 64; c += 7) {
        for (uint64_t i = 0; i <= t.nslots; i++) {
            uint64_t want = i;
            while (want < t.nslots && (int)(t.tag[want] & 0xFF) != c) want++;
            if (kt_scan_class(&t, i, c) != want) scan_bad++;
        }
    }
    CHECK(scan_bad == 0, "kt_scan_class finds the next slot of a class (%d starts differ)", scan_bad);
    /* key hash 0 and keys differing only in the low byte (the class bits): one identity */
    uint64_t s0 = kt_insert(&t, 0, 3, 77);
    CHECK(s0 != KT_NONE && kt_find(&t, 0) == s0 && t.tag[s0] != 0, "hash 0 is storable");
    CHECK(kt_find(&t, 0x12345600ULL) == KT_NONE, "absent");
    kt_insert(&t, 0x12345600ULL, 1, 5);
    CHECK(kt_find(&t, 0x123456FFULL) == kt_find(&t, 0x12345600ULL), "56-bit identity: low byte ignored (documented collision)");
    kt_free(&t);
    /* bounded table refuses to grow */
    CHECK(kt_init(&t, 10, 64) == 0, "init bounded");
    int refused = 0;
    for (uint64_t i = 0; i < 100; i++) if (kt_insert(&t, refwl_keyhash(i), 0, 0) == KT_NONE) refused++;
    CHECK(refused == 100 - 48 && t.nslots == 64, "bounded at 3/4 of 64 slots: refused %d", refused);
    kt_free(&t);
}

static void test_cbf(void)
{
    cbf f;
    CHECK(cbf_init(&f, 1000, 10, 7) == 0, "init");
    for (uint64_t i = 0; i < 1000; i++) cbf_insert(&f, refwl_keyhash(i));
    int fn = 0, fp = 0;
    for (uint64_t i = 0; i < 1000; i++) fn += !cbf_contains(&f, refwl_keyhash(i));
    for (uint64_t i = 1000; i < 101000; i++) fp += cbf_contains(&f, refwl_keyhash(i));
    CHECK(fn == 0, "no false negatives (%d)", fn);
    double rate = fp / 100000.0, expect = cbf_fpp(&f, 1000);
    CHECK(rate < 3 * expect + 0.002, "fp rate %.4f vs model %.4f", rate, expect);
    for (uint64_t i = 0; i < 500; i++) cbf_remove(&f, refwl_keyhash(i));
    fn = 0;
    for (uint64_t i = 500; i < 1000; i++) fn += !cbf_contains(&f, refwl_keyhash(i));
    CHECK(fn == 0, "removal keeps the others (%d lost)", fn);
    int left = 0;
    for (uint64_t i = 0; i < 500; i++) left += cbf_contains(&f, refwl_keyhash(i));
    CHECK(left < 50, "removed keys mostly gone (%d)", left);
    /* saturation: the same key 40 times, then 40 removals: sticky counters keep it */
    cbf_flush(&f);
    for (int i = 0; i < 40; i++) cbf_insert(&f, 42);
    for (int i = 0; i < 40; i++) cbf_remove(&f, 42);
    CHECK(cbf_contains(&f, 42), "saturated counters stick");
    cbf g;
    cbf_init(&g, 1000, 10, 7);
    cbf_flush(&f);
    cbf_insert(&f, 1); cbf_insert(&g, 2);
    cbf_merge(&f, &g);
    CHECK(cbf_contains(&f, 1) && cbf_contains(&f, 2), "merge is a union");
    cbf_free(&f); cbf_free(&g);
}

static void test_ghost(void)
{
    for (int keep = 0; keep <= 1; keep++) {
        ghost g;
        CHECK(ghost_init(&g, 3, 100, 0.01, keep, 0) == 0, "init");
        /* ghost full: 1000 evictions into a ghost of 100 keep ~100..150 entries */
        for (uint64_t i = 0; i < 1000; i++) ghost_evict(&g, refwl_keyhash(i));
        double n = ghost_entries(&g);
        CHECK(n >= 100 && n <= 150, "bounded entries %.0f", n);
        CHECK(ghost_lookup(&g, refwl_keyhash(999)) == 0, "newest key in rank 0");
        CHECK(ghost_lookup(&g, refwl_keyhash(999)) == -1, "found key left the ghost");
        CHECK(ghost_entries(&g) == n - 1, "count decremented");
        CHECK(ghost_lookup(&g, refwl_keyhash(910)) >= 1, "older key in an older rank");
        int old = 0;
        for (uint64_t i = 0; i < 800; i++) old += ghost_lookup(&g, refwl_keyhash(i)) >= 0;
        CHECK(old < 40, "keys far beyond capacity forgotten (%d false hits)", old);
        ghost_free(&g);
    }
    /* coverage: evictions whose keys come back quickly must not push the others out */
    ghost g;
    ghost_init(&g, 9, 800, 0.01, 1, 0);
    for (uint64_t i = 0; i < 400; i++) ghost_evict(&g, refwl_keyhash(i));           /* survivors */
    for (uint64_t i = 1000; i < 5000; i++) {
        ghost_evict(&g, refwl_keyhash(i));
        ghost_lookup(&g, refwl_keyhash(i));                                        /* comes back */
    }
    int found = 0;
    for (uint64_t i = 0; i < 400; i++) found += ghost_lookup(&g, refwl_keyhash(i)) >= 0;
    CHECK(found >= 390, "keep_coverage: %d of 400 live keys still found", found);
    ghost_free(&g);
}

/* Property of bucket algorithms: the exact stack distance lies in (start, end]. */
/* rounder_rank_side against comparing rounder_rank_of with j: every tracked item, activities
 * outside [tail, head], at every rank j from 0 to past the newest bucket. */
static int rank_side_bad(const rounder *r, const keytable *act)
{
    int bad = 0;
    uint32_t nb = rounder_nbuckets(r);
    uint32_t odd[] = {r->head + 1, r->head + 1000, r->tail - 1, r->tail - 100000, r->head, r->tail};
    for (uint32_t j = 0; j <= nb + 1; j++) {
        rounder_cut c;
        rounder_cut_init(&c, r, j);
        for (uint64_t s = 0; s < act->nslots + 6; s++) {
            uint32_t a;
            if (s < act->nslots) {
                if (!act->tag[s]) continue;
                a = act->act[s];
            } else {
                a = odd[s - act->nslots];
            }
            uint32_t k = rounder_rank_of(r, a);
            if (rounder_rank_side(&c, a) != (k < j ? -1 : k > j)) bad++;
        }
    }
    return bad;
}

static void test_rounder_bounds_span(int B, int balanced, uint64_t N, uint32_t max_span)
{
    rounder r;
    rounder_init(&r, B, (double)N, balanced);
    if (max_span) r.max_span = max_span;
    int span_bad = 0, cut_bad = 0;
    lruemu e;
    lruemu_init(&e, N);
    keytable act;
    kt_init(&act, N, 0);
    mattson *m = mattson_new(300000);
    workload w;
    refwl_mix(&w, "t", 200000, 5000, 0.8, 700, 0.2, 0.1, 9);
    int bad = 0;
    for (uint64_t i = 0; i < w.n; i++) {
        uint64_t k = w.keys[i], v;
        uint64_t d = mattson_access(m, k);
        if (lruemu_access(&e, k)) {
            uint64_t s = kt_find(&act, k);
            double st, en;
            rounder_hit(&r, &act.act[s], 1, &st, &en);
            if (!((double)d > st && (double)d <= en)) bad++;
        } else {
            if (lruemu_insert(&e, k, &v)) {
                uint64_t s = kt_find(&act, v);
                rounder_remove(&r, act.act[s]);
                kt_remove_slot(&act, s);
            }
            kt_insert(&act, k, 0, rounder_set(&r));
        }
        if (r.balanced && r.head - r.lo[0] > r.max_span) span_bad++;
        if (i % 997 == 0) cut_bad += rank_side_bad(&r, &act);
    }
    CHECK(cut_bad == 0, "B=%d balanced=%d N=%llu span=%u: %d rank sides differ from rank_of", B, balanced, (unsigned long long)N, r.max_span, cut_bad);
    CHECK(bad == 0, "B=%d balanced=%d N=%llu span=%u: %d hits outside (start,end]", B, balanced, (unsigned long long)N, r.max_span, bad);
    CHECK(span_bad == 0, "B=%d balanced=%d N=%llu span=%u: oldest bucket start kept within the span (%d times not)", B, balanced, (unsigned long long)N, r.max_span, span_bad);
    if (max_span) CHECK(r.folds > 0, "span=%u: far-back buckets were folded (%llu folds)", max_span, (unsigned long long)r.folds);
    int64_t sum = 0;
    for (uint32_t i = 0; i < r.B; i++) sum += r.buckets[i];
    CHECK(sum == r.total && (uint64_t)r.total == e.size, "bucket counts = cached items (%lld, %llu)", (long long)sum, (unsigned long long)e.size);
    refwl_free(&w);
    mattson_free(m);
    kt_free(&act);
    lruemu_free(&e);
    rounder_free(&r);
}

static void test_rounder_bounds(int B, int balanced, uint64_t N)
{
    test_rounder_bounds_span(B, balanced, N, 0);
}

static void test_mattson(void)
{
    /* against a naive LRU list */
    mattson *m = mattson_new(20000);
    uint64_t list[600];
    size_t n = 0;
    uint64_t rs = 5;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t k = refwl_keyhash(refwl_rand(&rs) % 500);
        uint64_t d = mattson_access(m, k), want = 0;
        size_t j;
        for (j = 0; j < n; j++) if (list[j] == k) break;
        if (j < n) { want = j + 1; memmove(list + 1, list, j * sizeof(uint64_t)); }
        else { memmove(list + 1, list, n * sizeof(uint64_t)); n++; }
        list[0] = k;
        if (d != want) bad++;
    }
    CHECK(bad == 0, "distances equal the naive stack (%d differ)", bad);
    CHECK(mattson_distinct(m) == n, "distinct");
    mattson_free(m);
    /* published exact LRU on arc-OLTP (traces/README.md, ARC paper) */
    char path[1024];
    snprintf(path, sizeof(path), "%s/arc-OLTP.lis.zst", refwl_traces_dir());
    workload w;
    if (refwl_load_trace(&w, "oltp", path, "arc") != 0) { printf("SKIP arc-OLTP reference (no traces dir)\n"); return; }
    m = mattson_new(w.n + 1);
    for (uint64_t i = 0; i < w.n; i++) mattson_access(m, w.keys[i]);
    static const double ref[][2] = {{1000, .3283}, {2000, .4247}, {5000, .5365}, {10000, .6070}, {15000, .6463}};
    for (int i = 0; i < 5; i++) {
        double got = mattson_ratio_at(m, ref[i][0]);
        CHECK(fabs(got - ref[i][1]) < 0.00005 + 1e-9, "OLTP at %.0f: %.4f vs %.4f", ref[i][0], got, ref[i][1]);
    }
    CHECK(w.n == 914145 && mattson_distinct(m) == 186880, "OLTP size %llu/%llu", (unsigned long long)w.n, (unsigned long long)mattson_distinct(m));
    mattson_free(m);
    refwl_free(&w);
}

int main(void)
{
    test_curveacc();
    test_keytable();
    test_cbf();
    test_ghost();
    for (int bal = 0; bal <= 1; bal++) {
        test_rounder_bounds(1, bal, 500);
        test_rounder_bounds(2, bal, 500);
        test_rounder_bounds(128, bal, 500);
        test_rounder_bounds(128, bal, 1);      /* cache size 1 */
        test_rounder_bounds(64, bal, 3000);
    }
    /* Epochs compared modulo 2^32: with the span shrunk from 2^30 the fold of far-back buckets
     * runs thousands of times here and every distance must still be exact within its bucket. */
    test_rounder_bounds_span(64, 1, 3000, 256);
    test_rounder_bounds_span(128, 1, 1, 64);       /* ages on every insert, like a small class */
    test_rounder_bounds_span(8, 1, 500, 16);
    test_mattson();
    return TEST_DONE();
}
