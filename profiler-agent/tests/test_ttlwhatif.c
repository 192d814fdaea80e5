/* Unit tests of src/core/ttlwhatif (the TTL what-if): the replay of a cache-aside run at
 * one TTL against independent cache-aside runs at each TTL of the grid over the same read times
 * (exact, per prefix), live byte-seconds against the runs' own accounting, writes, deletes,
 * sampling and its bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/ttlwhatif.h"

#define NKEYS 300
#define SECONDS 400.0

static uint64_t rng = 88172645463325252ULL;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* memcached's rule: stored at s with TTL X, expired from second floor(s) + X on */
static int alive(int64_t stored_us, double ttl, int64_t t_us)
{
    return stored_us >= 0 && (ttl <= 0 || (double)t_us / 1e6 < floor((double)stored_us / 1e6) + ttl);
}

typedef struct { int64_t t; uint32_t key; } read_ev;

static int cmp(const void *a, const void *b)
{
    int64_t x = ((const read_ev *)a)->t, y = ((const read_ev *)b)->t;
    return (x > y) - (x < y);
}

/* Poisson reads, key k at rate 20 / (k + 1) per second; keys < NKEYS/2 are prefix 1, the
 * rest prefix 2 with 3x the size. */
static read_ev *make_reads(size_t *n)
{
    size_t cap = 1 << 20, m = 0;
    read_ev *r = malloc(cap * sizeof *r);
    for (uint32_t k = 0; k < NKEYS; k++) {
        double rate = 20.0 / (k + 1), t = 0;
        for (;;) {
            t += -log(1.0 - urand()) / rate;
            if (t >= SECONDS || m == cap)
                break;
            r[m++] = (read_ev){(int64_t)(t * 1e6) + 1000000, k};
        }
    }
    qsort(r, m, sizeof *r, cmp);
    *n = m;
    return r;
}

static uint16_t pfx_of(uint32_t k) { return k < NKEYS / 2 ? 1 : 2; }
static uint32_t size_of(uint32_t k) { return k < NKEYS / 2 ? 100 : 300; }

/* One cache-aside run at TTL ttl (unbounded memory): hits per prefix, live byte-seconds. */
static void run(const read_ev *r, size_t n, double ttl, double hits[3], double reads[3],
                double live[3], int64_t end)
{
    int64_t stored[NKEYS];
    for (int i = 0; i < NKEYS; i++)
        stored[i] = -1;
    memset(hits, 0, 3 * sizeof *hits);
    memset(reads, 0, 3 * sizeof *reads);
    memset(live, 0, 3 * sizeof *live);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = r[i].key;
        int p = pfx_of(k);
        reads[p]++;
        if (alive(stored[k], ttl, r[i].t)) {
            hits[p]++;
            continue;
        }
        if (stored[k] >= 0) {  /* the previous item lived from its store to its expiry */
            double a = (double)stored[k] / 1e6, s = floor(a);
            live[p] += fmax(0.0, fmin(s + ttl, (double)r[i].t / 1e6) - a) * size_of(k);
        }
        stored[k] = r[i].t;
    }
    for (uint32_t k = 0; k < NKEYS; k++)
        if (stored[k] >= 0) {
            double s = floor((double)stored[k] / 1e6), a = (double)stored[k] / 1e6;
            double e = fmin(s + ttl, (double)end / 1e6);
            if (e > a)
                live[pfx_of(k)] += (e - a) * size_of(k);
        }
}

static void test_replay_exact(void)
{
    size_t n;
    read_ev *r = make_reads(&n);
    hc_ttlw_config c = {.max_keys = 4096, .seed = 7};
    hc_ttlw *w = hc_ttlw_new(&c);
    const int today = 3;
    int64_t st[NKEYS];
    for (int i = 0; i < NKEYS; i++)
        st[i] = -1;
    double real_hits[3] = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t k = r[i].key;
        int hit = alive(st[k], today, r[i].t);
        hc_ttlw_read(w, k, pfx_of(k), hit, r[i].t);
        real_hits[pfx_of(k)] += hit;
        if (!hit) {
            hc_ttlw_store(w, k, pfx_of(k), size_of(k), today, r[i].t);
            st[k] = r[i].t;
        }
    }
    int64_t end = (int64_t)(SECONDS * 1e6) + 1000000;
    for (uint32_t k = 0; k < NKEYS; k++)
        hc_ttlw_remove(w, k, end); /* accounts every key's live time to the end */
    CHECK(hc_ttlw_rate(w) == 1.0, "all keys sampled: rate %g", hc_ttlw_rate(w));
    for (int p = 1; p <= 2; p++) {
        const hc_ttlw_prefix *q = hc_ttlw_get(w, (uint16_t)p);
        CHECK(q != NULL, "prefix %d counted", p);
        if (!q)
            continue;
        CHECK(q->hits[0] == real_hits[p], "prefix %d: column 'today' %g hits = memcached's %g", p,
              q->hits[0], real_hits[p]);
        CHECK(q->real_hits == real_hits[p], "prefix %d: real hits %g = %g", p, q->real_hits, real_hits[p]);
        for (int j = 0; j < HC_TTLW_NTTL && HC_TTLW_TTLS[j] <= 256; j++) {
            double h[3], rd[3], lv[3];
            run(r, n, HC_TTLW_TTLS[j], h, rd, lv, end);
            CHECK(q->reads == rd[p], "prefix %d: reads %g = %g", p, q->reads, rd[p]);
            CHECK(q->hits[j + 1] == h[p], "prefix %d TTL %u s: replayed %g hits, a run at that TTL %g",
                  p, HC_TTLW_TTLS[j], q->hits[j + 1], h[p]);
            CHECK(fabs(q->live[j + 1] - lv[p]) <= 1e-6 * lv[p] + 1e-3,
                  "prefix %d TTL %u s: live %g byte-s, the run's %g", p, HC_TTLW_TTLS[j],
                  q->live[j + 1], lv[p]);
        }
    }
    /* the naive cut of ages at hits would predict far less at 1 s for the hot keys; the replay
     * keeps most of their hits (each miss refills) */
    const hc_ttlw_prefix *q = hc_ttlw_get(w, 1);
    CHECK(q && q->hits[1] / q->reads > 0.6 * q->hits[0] / q->reads, "TTL 1 s keeps most hits");
    hc_ttlw_window(w);
    q = hc_ttlw_get(w, 1);
    CHECK(q && q->reads == 0 && q->hits[0] == 0 && q->live[3] == 0, "window zeroes the counts");
    hc_ttlw_free(w);
    free(r);
}

static void test_writes_and_deletes(void)
{
    hc_ttlw_config c = {.max_keys = 64, .seed = 1};
    hc_ttlw *w = hc_ttlw_new(&c);
    const int64_t S = 1000000;
    /* hit of a key never seen stored: age unknown, not counted */
    hc_ttlw_read(w, 5, 3, 1, 10 * S);
    CHECK(hc_ttlw_get(w, 3) == NULL || hc_ttlw_get(w, 3)->reads == 0, "unknown key's hit not counted");
    /* a write (no miss before it) stores in every column; reads 2.5 s later hit at TTL >= 3 */
    hc_ttlw_store(w, 5, 3, 1000, 0, 20 * S);
    hc_ttlw_read(w, 5, 3, 1, 22 * S + S / 2);
    const hc_ttlw_prefix *q = hc_ttlw_get(w, 3);
    CHECK(q && q->reads == 1 && q->hits[0] == 1, "no TTL: today's column hits");
    CHECK(q && q->hits[1] == 0 && q->hits[2] == 0 && q->hits[3] == 1, "1 s, 2 s miss; 3 s hits");
    hc_ttlw_read(w, 5, 3, 1, 23 * S + S / 5);
    /* the 1 s column's refill at 22.5 s expired at 23 s (memcached's second); the 2 s one lives */
    CHECK(q && q->hits[1] == 0 && q->hits[2] == 1, "refilled columns: %g %g", q->hits[1], q->hits[2]);
    /* a delete empties every column: the next read misses everywhere */
    hc_ttlw_remove(w, 5, 24 * S);
    hc_ttlw_read(w, 5, 3, 0, 24 * S + 1);
    CHECK(q && q->reads == 3 && q->hits[0] == 2 && q->hits[HC_TTLW_NTTL] == 2, "delete: a miss everywhere");
    /* live bytes: 1000 B from 20 s: at TTL 1 s live 20-21 and 22.5-23 s (the refill at 22.5 s
     * expires at 23 s), then 23.2-24 s */
    CHECK(q && fabs(q->live[1] - 1000 * (1.0 + 0.5 + 0.8)) < 1e-6, "live at 1 s: %g", q ? q->live[1] : -1);
    CHECK(q && fabs(q->live[0] - 1000 * 4.0) < 1e-6, "live without TTL: %g", q ? q->live[0] : -1);
    /* the sample's bound: 64 keys; past it the rate halves and memory stays put */
    size_t b0 = hc_ttlw_bytes(w);
    for (uint64_t k = 100; k < 100000; k++)
        hc_ttlw_store(w, k, 4, 100, 3, 30 * S);
    CHECK(hc_ttlw_rate(w) < 0.01 && hc_ttlw_bytes(w) <= b0 + hc_ttlw_prefix_bytes(),
          "bounded: rate %g, %zu -> %zu bytes", hc_ttlw_rate(w), b0, hc_ttlw_bytes(w));
    CHECK(hc_ttlw_get(w, 4000) == NULL && hc_ttlw_get(w, 5000) == NULL, "ids past the bound: none");
    hc_ttlw_clear(w);
    CHECK(hc_ttlw_rate(w) == 1.0 && hc_ttlw_get(w, 3)->reads == 0, "clear");
    c.max_keys = 10;
    CHECK(hc_ttlw_new(&c) == NULL, "max_keys < 64 refused");
    hc_ttlw_free(w);
}

int main(void)
{
    test_replay_exact();
    test_writes_and_deletes();
    printf("ttlwhatif: %zu B per sampled key, %zu B per prefix\n", hc_ttlw_key_bytes(),
           hc_ttlw_prefix_bytes());
    return TEST_DONE();
}
