/* When is a ghost complete? The agent usually attaches beside a memcached that is
 * already full and evicting; the keys evicted before it attached never reach the ghost. An
 * evicted key's LRU position is 1 + the distinct keys referenced since its last reference: the N
 * residents plus every key evicted after it that has not come back, so a key the ghost lacks lies
 * beyond N + the entries newer than it, for good once that count has reached (k-1)*N (ghost.h,
 * `covered`). These tests drive the profile with the events of an exact LRU cache of N items
 * (lruemu) and check its curve against exact Mattson stack distances of the same reads. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "testutil.h"
#include "core/profile.h"
#include "core/lruemu.h"
#include "../ref/mattson.h"
#include "../ref/workload.h"

static hc_profile *mk(double k, uint32_t F, int keep_coverage, int from_start)
{
    hc_profile_config c;
    hc_profile_config_default(&c);
    c.ghost_factor = k;
    c.ghost_filters = F;
    c.ghost_keep_coverage = keep_coverage;
    const char *err = NULL;
    hc_profile *p = hc_profile_new(&c, &err);
    if (!p) { fprintf(stderr, "new: %s\n", err); exit(1); }
    hc_profile_set_seen_from_start(p, from_start);
    return p;
}

static int complete(hc_profile *p)
{
    hc_curve cv;
    return hc_profile_curve(p, 1, &cv) == 0 && cv.ghost_complete;
}

/* One request through an exact LRU cache of e->cap items, reported as memcached's stream would
 * (p may be NULL: before the agent attached). Returns 1 if it evicted. */
static int serve(lruemu *e, hc_profile *p, uint64_t k)
{
    uint64_t v;
    if (lruemu_access(e, k)) { if (p) hc_profile_hit(p, 1, k, 64); return 0; }
    if (p) hc_profile_miss(p, 1, k, 64);
    int ev = lruemu_insert(e, k, &v);
    if (ev && p) hc_profile_evict(p, 1, v, 64);
    if (p) hc_profile_set(p, 1, k, 64);
    return ev;
}

/* Zipf 0.9 over 100k keys, N = 5000, k = 5: the agent attaches after 300k requests (memcached
 * evicting for ~290k of them). Its ghost is not complete until it has held (k-1)*N entries; from
 * then on its curve at 2N, 4N and 5N matches exact LRU over the window's reads as closely as a
 * from-start agent's does. */
static void test_late_attach_becomes_complete(void)
{
    const uint64_t N = 5000, WIN = 20000, WARM = 300000;
    const double K = 5;
    workload w;
    refwl_zipf(&w, "zipf", WARM + 150 * WIN, 100000, 0.9, 11);
    mattson *m = mattson_new(w.n);
    lruemu e;
    lruemu_init(&e, N);
    hc_profile *early = mk(K, 33, 1, 1), *late = mk(K, 33, 1, 0);
    hc_profile_set_capacity(early, 1, N, 64);
    uint64_t i = 0;
    for (; i < WARM; i++) {
        uint64_t k = w.keys[i];
        mattson_access(m, k);
        serve(&e, early, k);
    }
    hc_profile_set_capacity(late, 1, N, 64);
    double sizes[3] = {2.0 * N, 4.0 * N, 5.0 * N};
    uint64_t evicted = 0, flipped_at = 0;
    int windows_complete = 0, was_complete = 0;
    double worst_late = 0, worst_early = 0, incomplete_gap = 0;
    for (int win = 0; win < 150; win++) {
        uint64_t hits[3] = {0, 0, 0}, reads = 0;
        hc_profile_reset(early, -1);
        hc_profile_reset(late, -1);
        for (uint64_t j = 0; j < WIN; j++, i++) {
            uint64_t k = w.keys[i], v;
            uint64_t d = mattson_access(m, k);
            reads++;
            for (int s = 0; s < 3; s++) hits[s] += d && d <= sizes[s];
            if (lruemu_access(&e, k)) {
                hc_profile_hit(early, 1, k, 64);
                hc_profile_hit(late, 1, k, 64);
                continue;
            }
            hc_profile_miss(early, 1, k, 64);
            hc_profile_miss(late, 1, k, 64);
            if (lruemu_insert(&e, k, &v)) {
                hc_profile_evict(early, 1, v, 64);
                hc_profile_evict(late, 1, v, 64);
                evicted++;
            }
            hc_profile_set(early, 1, k, 64);
            hc_profile_set(late, 1, k, 64);
        }
        hc_curve cl, ce;
        hc_profile_curve(late, 1, &cl);
        hc_profile_curve(early, 1, &ce);
        CHECK(ce.ghost_complete, "from the start: complete in window %d", win);
        if (cl.ghost_complete && !was_complete) {
            flipped_at = evicted;
            hc_profile_stats st;
            hc_profile_stats_get(late, &st);
            printf("  late attach: complete from window %d, %llu evictions after attaching "
                   "((k-1)N = %.0f; ghost entries %llu)\n", win, (unsigned long long)evicted,
                   (K - 1) * N, (unsigned long long)st.ghost_entries);
        }
        CHECK(!was_complete || cl.ghost_complete, "complete stays complete (window %d)", win);
        was_complete = cl.ghost_complete;
        for (int s = 0; s < 3; s++) {
            double exact = (double)hits[s] / (double)reads;
            double el = hc_profile_hit_ratio_at(late, 1, sizes[s]) - exact;
            double ee = hc_profile_hit_ratio_at(early, 1, sizes[s]) - exact;
            if (cl.ghost_complete) {
                worst_late = fmax(worst_late, fabs(el));
                worst_early = fmax(worst_early, fabs(ee));
            } else if (s == 2) {
                incomplete_gap = fmin(incomplete_gap, el);
            }
        }
        windows_complete += cl.ghost_complete;
    }
    printf("  late attach: worst |err| at 2N/4N/5N once complete %.3f pp (from start %.3f pp, "
           "same windows); before, 5N read up to %.3f pp low\n", 100 * worst_late, 100 * worst_early,
           -100 * incomplete_gap);
    CHECK(windows_complete >= 120, "late attach complete in %d of 150 windows", windows_complete);
    CHECK(flipped_at >= (uint64_t)((K - 1) * N), "not before (k-1)N evictions (%llu)",
          (unsigned long long)flipped_at);
    CHECK(worst_late < 0.01 && worst_late < worst_early + 0.002,
          "once complete within 1 pp of exact LRU (%.4f; from start %.4f)", worst_late, worst_early);
    CHECK(incomplete_gap < -0.005, "before that the curve at 5N is a bound, reading low (%.4f)",
          incomplete_gap);
    lruemu_free(&e);
    hc_profile_free(early);
    hc_profile_free(late);
    mattson_free(m);
    refwl_free(&w);
}

/* Why not "(k-1)*N evictions since attaching": evicted keys that come back leave the ghost, and
 * a key evicted before the attach then sits just past N + the ghost's entries. A loop over 1.5 N
 * keys evicts without end, the ghost holds 0.5 N, and a key evicted just before the attach is an
 * LRU hit at 1.5 N + 1 < k*N, which the ghost cannot see: not complete, however many evictions. */
static void test_evictions_alone_are_not_enough(void)
{
    const uint64_t N = 1000, W = 1500;
    lruemu e;
    lruemu_init(&e, N);
    mattson *m = mattson_new(100000);
    hc_profile *p = mk(3, 17, 1, 0);
    uint64_t x = refwl_keyhash(1);
    mattson_access(m, x);
    serve(&e, NULL, x);
    for (uint64_t r = 0; r < 2; r++)
        for (uint64_t j = 0; j < W; j++) { mattson_access(m, refwl_keyhash(10 + j)); serve(&e, NULL, refwl_keyhash(10 + j)); }
    hc_profile_set_capacity(p, 1, N, 64);
    uint64_t ev = 0;
    for (uint64_t r = 0; r < 20; r++)
        for (uint64_t j = 0; j < W; j++) { mattson_access(m, refwl_keyhash(10 + j)); ev += serve(&e, p, refwl_keyhash(10 + j)); }
    hc_profile_reset(p, -1);
    CHECK(ev > 10 * 2 * N, "evictions since attaching %llu >> (k-1)N", (unsigned long long)ev);
    uint64_t d = mattson_access(m, x);
    serve(&e, p, x);
    CHECK(d > N && d < 3 * N, "the key evicted before the attach is an LRU hit at %llu < k*N",
          (unsigned long long)d);
    CHECK(hc_profile_hit_ratio_at(p, 1, 3.0 * N) < 0.01, "...which the ghost cannot see");
    CHECK(!complete(p), "so the curve is not complete");
    hc_curve cv;
    hc_profile_curve(p, 1, &cv);
    CHECK(cv.ghost_reach_items < 1.6 * N, "its reach stays N + the entries (%.0f)", cv.ghost_reach_items);
    lruemu_free(&e);
    mattson_free(m);
    hc_profile_free(p);
}

/* Alg. 12's flush drops the oldest filter. Its keys are older than every entry left, so they lie
 * beyond N + the entries left: past k*N when those cover (k-1)*N, which the keep-coverage rotation
 * ensures (it merges instead while they do not), so a from-start ghost that flushed stays complete.
 * MIMIR's flush (keep_coverage = 0) can flush while the newer filters hold less, after keys came
 * back: those keys may lie inside the span, and completeness is lost until (k-1)*N are held again. */
static void test_flushes(void)
{
    const uint64_t N = 1000;
    /* a scan: nothing comes back, the ghost fills and flushes */
    hc_profile *p = mk(3, 9, 1, 1);
    hc_profile_set_capacity(p, 1, N, 64);
    lruemu e;
    lruemu_init(&e, N);
    for (uint64_t k = 1; k <= 6 * N; k++) serve(&e, p, refwl_keyhash(k));
    hc_profile_reset(p, -1);
    hc_curve cv;
    hc_profile_curve(p, 1, &cv);
    CHECK(cv.ghost_complete && cv.ghost_dropped_items > 0 && fabs(cv.ghost_reach_items - 3 * N) < 1e-9,
          "flushed past (k-1)N: still complete (dropped %.0f)", cv.ghost_dropped_items);
    lruemu_free(&e);
    hc_profile_free(p);

    /* MIMIR's flush, F = 3 (each filter (k-1)N/2): 2N evicted keys fill two filters, half of the
     * older come back, and the next rotation flushes the oldest while the newer hold 1.5 N */
    p = mk(3, 3, 0, 1);
    hc_profile_set_capacity(p, 1, N, 64);
    for (uint64_t k = 1; k <= 3 * N; k++) { hc_profile_miss(p, 1, refwl_keyhash(k), 64); hc_profile_set(p, 1, refwl_keyhash(k), 64); }
    for (uint64_t k = 1; k <= 3 * N; k++) hc_profile_evict(p, 1, refwl_keyhash(k), 64);
    /* filters (newest first): 2001..3000, 1001..2000, 1..1000; 1001..1500 come back */
    for (uint64_t k = 1001; k <= 1500; k++) { hc_profile_miss(p, 1, refwl_keyhash(k), 64); hc_profile_set(p, 1, refwl_keyhash(k), 64); }
    hc_profile_reset(p, -1);
    CHECK(complete(p), "before the flush: complete");
    /* the newest filter is full (give or take a false positive): the next evictions rotate,
     * flushing 1..1000, which lie at N + 1.5 N */
    for (uint64_t k = 9001; k <= 9005; k++) hc_profile_evict(p, 1, refwl_keyhash(k), 64);
    CHECK(!complete(p), "flushed while the newer entries covered 1.5 N < (k-1)N: not complete");
    for (uint64_t k = 10001; k <= 10000 + 2 * N; k++) hc_profile_evict(p, 1, refwl_keyhash(k), 64);
    hc_profile_reset(p, -1);
    CHECK(complete(p), "complete again once (k-1)N newer entries were held");
    hc_profile_free(p);
}

/* Lost EVICT lines (the window lost lines and memcached counted more evictions of the class than
 * arrived). A lost EVICT of a tracked key is repaired (the surplus sweep puts it into the ghost);
 * one of a key the profile does not track is a key no ghost will hold: past the tolerance the
 * class is not complete until (k-1)*N keys evicted after the loss are held. */
static void test_lost_evictions(void)
{
    const uint64_t N = 1000;
    hc_curve cv;
    hc_profile *p = mk(3, 17, 1, 1);
    hc_profile_set_capacity(p, 1, N, 64);
    lruemu e;
    lruemu_init(&e, N);
    uint64_t next = 1;
    for (; next <= 4 * N; next++) serve(&e, p, refwl_keyhash(next));
    hc_profile_reset(p, -1);
    for (uint64_t j = 0; j < 100; j++, next++) serve(&e, p, refwl_keyhash(next));
    /* every EVICT of the window was of a tracked key: 300 more lost ones are repaired */
    hc_profile_check_evictions(p, 1, 100 + 300);
    CHECK(complete(p), "lost EVICTs of tracked keys: still complete");
    /* keys stored while their SET lines were lost, now evicted: untracked */
    hc_profile_reset(p, -1);
    for (uint64_t j = 0; j < 100; j++) hc_profile_evict(p, 1, refwl_keyhash(900000 + j), 64);
    hc_profile_check_evictions(p, 1, 100 + 60);
    CHECK(complete(p), "60 of 160 lost: a thinned ghost, no gap: still complete");
    /* a steady loss, window after window (a third of each window's evicted keys): thinned,
     * never a gap, so completeness does not flap */
    for (int w = 0; w < 8; w++) {
        hc_profile_reset(p, -1);
        for (uint64_t j = 0; j < 100; j++) hc_profile_evict(p, 1, refwl_keyhash(940000 + 100 * w + j), 64);
        hc_profile_check_evictions(p, 1, 100 + 50);
        CHECK(complete(p), "steady loss, window %d: still complete", w);
    }
    hc_profile_curve(p, 1, &cv);
    CHECK(fabs(cv.ghost_thinned_items - (60 + 8 * 50)) < 1e-6, "thinned %g", cv.ghost_thinned_items);
    /* a stretch that lost most of its evicted keys is a gap */
    hc_profile_reset(p, -1);
    for (uint64_t j = 0; j < 40; j++) hc_profile_evict(p, 1, refwl_keyhash(910000 + j), 64);
    hc_profile_check_evictions(p, 1, 40 + 60);
    CHECK(complete(p), "a gap of 60, below the tolerance of 5 %% of (k-1)N: still complete");
    hc_profile_check_evictions(p, 1, 40 + 60);
    CHECK(complete(p), "the same window reported twice counts once");
    hc_profile_reset(p, -1);
    for (uint64_t j = 0; j < 40; j++) hc_profile_evict(p, 1, refwl_keyhash(911000 + j), 64);
    hc_profile_check_evictions(p, 1, 40 + 50);
    CHECK(!complete(p), "a gap of 50 more (110 > 100): not complete");
    /* earned again by (k-1)N evictions after the loss (plus the newest filter of the loss) */
    hc_profile_reset(p, -1);
    uint64_t ev = 0;
    while (ev < N) ev += serve(&e, p, refwl_keyhash(next++));
    hc_profile_reset(p, -1);
    CHECK(!complete(p), "N evictions after the loss: not yet (the ghost held (k-1)N before it)");
    while (ev < 2 * N + 2 * N / 16 + 2) ev += serve(&e, p, refwl_keyhash(next++));
    hc_profile_reset(p, -1);
    CHECK(complete(p), "complete again after (k-1)N + one filter of evictions past the loss");
    /* losses leave the span with their filter: 80 lost now, (k-1)N + a filter of evictions
     * later 80 more (160 in all, but only 80 inside the span): still complete */
    hc_profile_reset(p, -1);
    for (uint64_t j = 0; j < 60; j++) hc_profile_evict(p, 1, refwl_keyhash(920000 + j), 64);
    hc_profile_check_evictions(p, 1, 60 + 80);
    CHECK(complete(p), "a gap of 80: within the tolerance");
    ev = 0;
    while (ev < 2 * N + 2 * (2 * N / 16)) ev += serve(&e, p, refwl_keyhash(next++));
    hc_profile_reset(p, -1);
    for (uint64_t j = 0; j < 60; j++) hc_profile_evict(p, 1, refwl_keyhash(930000 + j), 64);
    hc_profile_check_evictions(p, 1, 60 + 80);
    CHECK(complete(p), "80 more after the first left the span: still complete");
    lruemu_free(&e);
    hc_profile_free(p);
}

/* Once covered, the entries may shrink below (k-1)*N (expired or deleted items free room, so keys
 * come back without evicting others; or sampling noise): the keys the ghost lacks stay beyond k*N
 * (the distinct keys since their last reference only grow), so the reach stays k*N. Reading the
 * reach as N + the entries, it fell back and the answers past it flipped to bounds. */
static void test_covered_survives_shrinking_entries(void)
{
    const uint64_t N = 1000;
    hc_profile *p = mk(3, 17, 1, 0);
    hc_profile_set_capacity(p, 1, N, 64);
    lruemu e;
    lruemu_init(&e, N);
    uint64_t next = 1;
    while (next <= 4 * N) serve(&e, p, refwl_keyhash(next++));
    hc_profile_reset(p, -1);
    CHECK(complete(p), "late attach, (k-1)N held: complete");
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    uint64_t before = st.ghost_entries;
    /* 600 evicted keys come back into room freed by deletes (no eviction): the ghost shrinks */
    for (uint64_t j = 0; j < 600; j++) {
        uint64_t gone = refwl_keyhash(next - 1 - j), back = refwl_keyhash(next - 2 * N + j);
        lruemu_remove(&e, gone);
        hc_profile_delete(p, 1, gone, 64);
        hc_profile_miss(p, 1, back, 64);
        uint64_t v;
        lruemu_insert(&e, back, &v);
        hc_profile_set(p, 1, back, 64);
    }
    hc_profile_reset(p, -1);
    hc_profile_stats_get(p, &st);
    hc_curve cv;
    hc_profile_curve(p, 1, &cv);
    printf("  shrinking entries: %llu -> %llu\n", (unsigned long long)before, (unsigned long long)st.ghost_entries);
    CHECK(st.ghost_entries < 2 * N - 300, "the entries shrank below (k-1)N (%llu, were %llu)",
          (unsigned long long)st.ghost_entries, (unsigned long long)before);
    CHECK(cv.ghost_complete && fabs(cv.ghost_reach_items - 3.0 * N) < 1e-9,
          "still complete, reach k*N (%d, %.0f)", cv.ghost_complete, cv.ghost_reach_items);
    lruemu_free(&e);
    hc_profile_free(p);
}

int main(void)
{
    test_covered_survives_shrinking_entries();
    test_evictions_alone_are_not_enough();
    test_flushes();
    test_lost_evictions();
    test_late_attach_becomes_complete();
    return TEST_DONE();
}
