#include "ttlwhatif.h"
#include "trmix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint32_t HC_TTLW_TTLS[HC_TTLW_NTTL] = {
    1,     2,     3,     4,     6,     8,     12,    16,    24,    32,    48,
    64,    96,    128,   192,   256,   384,   512,   768,   1024,  1536,  2048,
    3072,  4096,  6144,  8192,  12288, 16384, 24576, 32768, 49152, 65536,
};

#define THRESH_BITS 24 /* the sampling hash's top bits compared with the threshold */

typedef struct entry {
    uint64_t key;
    int64_t acc_us;              /* live time is accounted up to here */
    uint64_t vpend;              /* columns whose item waits for the client's refill */
    uint32_t size;
    int32_t ttl;                 /* the last store's TTL (<= 0: none) */
    uint32_t vset[HC_TTLW_COLS]; /* second (floor, stream time) the column's item was stored,
                                    + 1; 0: not in that column */
    uint16_t pfx;
    uint8_t used, known, pend;   /* pend: the last read missed and no store since */
} entry;

struct hc_ttlw {
    hc_ttlw_config cfg;
    entry *tab;
    uint32_t mask, n;
    uint64_t thresh; /* a key is sampled when its hash's top bits are below this */
    hc_ttlw_prefix *pfx[HC_TTLW_MAX_PREFIX];
};

static uint64_t shash(const hc_ttlw *w, uint64_t key)
{
    return tr_mix64(key ^ w->cfg.seed ^ 0x7717c0ffee77aa11ULL) >> (64 - THRESH_BITS);
}

static double rate(const hc_ttlw *w) { return (double)w->thresh / (double)(1u << THRESH_BITS); }

hc_ttlw *hc_ttlw_new(const hc_ttlw_config *c)
{
    if (c->max_keys < 64)
        return NULL;
    hc_ttlw *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = *c;
    uint32_t cap = 1;
    while (cap < 2 * c->max_keys)
        cap <<= 1;
    w->mask = cap - 1;
    w->tab = calloc(cap, sizeof *w->tab);
    w->thresh = (uint64_t)1 << THRESH_BITS;
    if (!w->tab) {
        free(w);
        return NULL;
    }
    return w;
}

void hc_ttlw_free(hc_ttlw *w)
{
    if (!w)
        return;
    for (int i = 0; i < HC_TTLW_MAX_PREFIX; i++)
        free(w->pfx[i]);
    free(w->tab);
    free(w);
}

static entry *find(hc_ttlw *w, uint64_t key, int insert)
{
    uint32_t i = (uint32_t)tr_mix64(key) & w->mask;
    while (w->tab[i].used) {
        if (w->tab[i].key == key)
            return &w->tab[i];
        i = (i + 1) & w->mask;
    }
    if (!insert)
        return NULL;
    memset(&w->tab[i], 0, sizeof w->tab[i]);
    w->tab[i].key = key;
    w->tab[i].used = 1;
    w->n++;
    return &w->tab[i];
}

/* Past max_keys: halve the rate, keep the keys still below the threshold (SHARDS). */
static void shrink(hc_ttlw *w)
{
    uint32_t cap = w->mask + 1;
    entry *old = w->tab;
    entry *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return; /* keep the larger sample; it only grows the table's load */
    w->thresh /= 2;
    w->tab = tab;
    w->n = 0;
    for (uint32_t i = 0; i < cap; i++)
        if (old[i].used && shash(w, old[i].key) < w->thresh) {
            entry *e = find(w, old[i].key, 1);
            *e = old[i];
        }
    free(old);
}

static entry *sample(hc_ttlw *w, uint64_t key)
{
    if (shash(w, key) >= w->thresh)
        return NULL;
    entry *e = find(w, key, 0);
    if (e)
        return e;
    while (w->n >= w->cfg.max_keys && w->thresh > 1) {
        shrink(w);
        if (shash(w, key) >= w->thresh)
            return NULL;
    }
    return find(w, key, 1);
}

static hc_ttlw_prefix *counts(hc_ttlw *w, uint16_t pfx)
{
    if (pfx >= HC_TTLW_MAX_PREFIX)
        return NULL;
    if (!w->pfx[pfx])
        w->pfx[pfx] = calloc(1, sizeof *w->pfx[pfx]);
    return w->pfx[pfx];
}

/* Seconds a column's item lives; 0: forever (column 0 with a store without TTL). */
static double life(const entry *e, int c)
{
    return c ? (double)HC_TTLW_TTLS[c - 1] : e->ttl > 0 ? (double)e->ttl : 0.0;
}

/* Item of column c present at second t (stream time)? Expired from floor(store) + TTL on. */
static int alive(const entry *e, int c, double t)
{
    if (!e->vset[c])
        return 0;
    double l = life(e, c);
    return l == 0.0 || t < (double)(e->vset[c] - 1) + l;
}

/* Byte-seconds each column's item was live between the key's last event and t. */
static void account(hc_ttlw *w, entry *e, int64_t t_us)
{
    if (e->known && e->size && t_us > e->acc_us) {
        hc_ttlw_prefix *p = counts(w, e->pfx);
        double a = (double)e->acc_us / 1e6, b = (double)t_us / 1e6, wt = (double)e->size / rate(w);
        for (int c = 0; p && c < HC_TTLW_COLS; c++) {
            if (!e->vset[c])
                continue;
            double l = life(e, c), s = (double)(e->vset[c] - 1);
            double end = l == 0.0 ? b : fmin(b, s + l), start = fmax(a, s);
            if (end > start)
                p->live[c] += (end - start) * wt;
        }
    }
    if (t_us > e->acc_us)
        e->acc_us = t_us;
}

static uint32_t second(int64_t t_us) { return (uint32_t)(t_us / 1000000) + 1; }

void hc_ttlw_read(hc_ttlw *w, uint64_t key, uint16_t pfx, int hit, int64_t t_us)
{
    entry *e = sample(w, key);
    if (!e)
        return;
    account(w, e, t_us);
    e->pfx = pfx;
    if (!e->known) {
        if (hit)
            return; /* stored before we looked: its age is not known */
        /* a miss of a key never seen: a miss at every TTL; each column waits for the refill */
        e->known = 1;
        e->acc_us = t_us;
        e->vpend = ((uint64_t)1 << HC_TTLW_COLS) - 1;
        e->pend = 1;
        hc_ttlw_prefix *p = counts(w, pfx);
        if (p) {
            p->reads += 1.0 / rate(w);
            p->sampled_reads++;
        }
        return;
    }
    hc_ttlw_prefix *p = counts(w, pfx);
    double t = (double)t_us / 1e6, wt = 1.0 / rate(w);
    for (int c = 0; c < HC_TTLW_COLS; c++) {
        if (alive(e, c, t)) {
            if (p)
                p->hits[c] += wt;
        } else if (hit) {
            e->vset[c] = second(t_us); /* that client refills now (cache-aside) */
        } else {
            e->vset[c] = 0;
            e->vpend |= (uint64_t)1 << c; /* stored when the real client refills */
        }
    }
    if (p) {
        p->reads += wt;
        p->real_hits += hit ? wt : 0.0;
        p->sampled_reads++;
    }
    e->pend = !hit;
}

void hc_ttlw_store(hc_ttlw *w, uint64_t key, uint16_t pfx, uint32_t size, int32_t ttl_s,
                   int64_t t_us)
{
    entry *e = sample(w, key);
    if (!e)
        return;
    account(w, e, t_us);
    e->pfx = pfx;
    if (size)
        e->size = size;
    e->ttl = ttl_s;
    uint64_t cols = e->known && e->pend ? e->vpend : ((uint64_t)1 << HC_TTLW_COLS) - 1;
    for (int c = 0; c < HC_TTLW_COLS; c++)
        if (cols & ((uint64_t)1 << c))
            e->vset[c] = second(t_us);
    e->known = 1;
    e->pend = 0;
    e->vpend = 0;
    e->acc_us = t_us;
}

void hc_ttlw_remove(hc_ttlw *w, uint64_t key, int64_t t_us)
{
    if (shash(w, key) >= w->thresh)
        return;
    entry *e = find(w, key, 0);
    if (!e)
        return;
    account(w, e, t_us);
    memset(e->vset, 0, sizeof e->vset);
    e->vpend = 0;
    e->pend = 0;
}

const hc_ttlw_prefix *hc_ttlw_get(const hc_ttlw *w, uint16_t pfx)
{
    return pfx < HC_TTLW_MAX_PREFIX ? w->pfx[pfx] : NULL;
}

void hc_ttlw_window(hc_ttlw *w)
{
    for (int i = 0; i < HC_TTLW_MAX_PREFIX; i++)
        if (w->pfx[i])
            memset(w->pfx[i], 0, sizeof *w->pfx[i]);
}

void hc_ttlw_clear(hc_ttlw *w)
{
    hc_ttlw_window(w);
    memset(w->tab, 0, (size_t)(w->mask + 1) * sizeof *w->tab);
    w->n = 0;
    w->thresh = (uint64_t)1 << THRESH_BITS;
}

double hc_ttlw_rate(const hc_ttlw *w) { return rate(w); }

size_t hc_ttlw_key_bytes(void) { return sizeof(entry); }
size_t hc_ttlw_prefix_bytes(void) { return sizeof(hc_ttlw_prefix); }

size_t hc_ttlw_bytes(const hc_ttlw *w)
{
    size_t n = sizeof *w + (size_t)(w->mask + 1) * sizeof(entry);
    for (int i = 0; i < HC_TTLW_MAX_PREFIX; i++)
        if (w->pfx[i])
            n += sizeof *w->pfx[i];
    return n;
}
