#include "topk.h"
#include "trmix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hc_topk {
    uint32_t k;
    hc_topk_slot *slot;
    uint32_t *heap;      /* slot indices, min-heap by count */
    uint32_t *hpos;      /* slot -> heap position */
    double *hcnt;        /* hcnt[i] == slot[heap[i]].count: the heap's walk compares counts
                            without going through the slots (half the cost of an update);
                            hcnt[k] = +inf, so a last node's missing right child never wins */
    uint32_t *idx;       /* key index: slot + 1, 0 empty (linear probing) */
    uint32_t imask;
    double total;
    int admission;       /* randomized admission (RAP) */
    uint64_t seed, flips;
};

hc_topk *hc_topk_new(uint32_t k)
{
    if (k < 1 || k > (1u << 20))
        return NULL;
    hc_topk *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    uint32_t ic = 16;
    while (ic < 4 * k)
        ic *= 2;
    t->k = k;
    t->slot = calloc(k, sizeof *t->slot);
    t->heap = calloc(k, sizeof *t->heap);
    t->hpos = calloc(k, sizeof *t->hpos);
    t->hcnt = calloc((size_t)k + 1, sizeof *t->hcnt);
    t->idx = calloc(ic, sizeof *t->idx);
    t->imask = ic - 1;
    if (!t->slot || !t->heap || !t->hpos || !t->hcnt || !t->idx) {
        hc_topk_free(t);
        return NULL;
    }
    for (uint32_t i = 0; i < k; i++)
        t->heap[i] = t->hpos[i] = i;
    t->hcnt[k] = HUGE_VAL;
    return t;
}

void hc_topk_free(hc_topk *t)
{
    if (!t)
        return;
    free(t->slot); free(t->heap); free(t->hpos); free(t->hcnt); free(t->idx);
    free(t);
}

static uint32_t home(const hc_topk *t, uint64_t key) { return (uint32_t)tr_mix64(key) & t->imask; }

long hc_topk_find(const hc_topk *t, uint64_t key)
{
    for (uint32_t i = home(t, key);; i = (i + 1) & t->imask) {
        uint32_t s = t->idx[i];
        if (!s)
            return -1;
        if (t->slot[s - 1].key == key && t->slot[s - 1].used)
            return s - 1;
    }
}

static void idx_put(hc_topk *t, uint64_t key, uint32_t s)
{
    uint32_t i = home(t, key);
    while (t->idx[i])
        i = (i + 1) & t->imask;
    t->idx[i] = s + 1;
}

static void idx_del(hc_topk *t, uint64_t key)
{
    uint32_t i = home(t, key);
    while (t->idx[i] && t->slot[t->idx[i] - 1].key != key)
        i = (i + 1) & t->imask;
    if (!t->idx[i])
        return;
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & t->imask;
        if (!t->idx[j])
            break;
        uint32_t h = home(t, t->slot[t->idx[j] - 1].key);
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            t->idx[i] = t->idx[j];
            i = j;
        }
    }
    t->idx[i] = 0;
}

/* The slot at heap position i moves down past every child with a smaller count (counts only
 * grow). It is carried in hand and written once where it stops: the same places as swapping
 * it level by level, half the stores. */
static void sift_down(hc_topk *t, uint32_t i)
{
    uint32_t s = t->heap[i];
    double x = t->hcnt[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= t->k)
            break;
        if (t->hcnt[c + 1] < t->hcnt[c]) /* c + 1 == k: the +inf sentinel */
            c++;
        if (t->hcnt[c] >= x)
            break;
        t->heap[i] = t->heap[c];
        t->hcnt[i] = t->hcnt[c];
        t->hpos[t->heap[i]] = i;
        i = c;
    }
    t->heap[i] = s;
    t->hcnt[i] = x;
    t->hpos[s] = i;
}

void hc_topk_set_admission(hc_topk *t, uint64_t seed)
{
    t->admission = 1;
    t->seed = seed;
    t->flips = 0;
}

/* RAP's coin: admit with probability w / (c + w), c the smallest count. */
static int admit(hc_topk *t, uint64_t key, double c, double w)
{
    uint64_t u = tr_mix64(key ^ t->seed ^ (++t->flips * 0x9E3779B97F4A7C15ULL));
    return (double)(u >> 11) * 0x1p-53 * (c + w) < w;
}

uint32_t hc_topk_add(hc_topk *t, uint64_t key, double w, int *replaced)
{
    t->total += w;
    long s = hc_topk_find(t, key);
    *replaced = 0;
    if (s < 0) {
        s = t->heap[0];                 /* the smallest counter */
        hc_topk_slot *o = &t->slot[s];
        if (t->admission && o->used && !admit(t, key, o->count, w))
            return HC_TOPK_NONE;
        if (o->used)
            idx_del(t, o->key);
        double base = o->used ? o->count : 0;
        *o = (hc_topk_slot){key, base, base, 0, 1};
        idx_put(t, key, (uint32_t)s);
        *replaced = 1;
    }
    t->slot[s].count += w;
    t->hcnt[t->hpos[s]] = t->slot[s].count;
    sift_down(t, t->hpos[s]);           /* counts only grow: the slot can only move down */
    return (uint32_t)s;
}

hc_topk_slot *hc_topk_slot_at(hc_topk *t, uint32_t i) { return i < t->k ? &t->slot[i] : NULL; }
uint32_t hc_topk_capacity(const hc_topk *t) { return t->k; }
double hc_topk_total(const hc_topk *t) { return t->total; }

static int by_count_desc(const void *a, const void *b, void *ctx)
{
    const hc_topk *t = ctx;
    double x = t->slot[*(const uint32_t *)a].count;
    double y = t->slot[*(const uint32_t *)b].count;
    return x < y ? 1 : x > y ? -1 : 0;
}

uint32_t hc_topk_sorted(const hc_topk *t, uint32_t *out, uint32_t max)
{
    uint32_t *all = malloc((size_t)t->k * sizeof *all);
    if (!all)
        return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->k; i++)
        if (t->slot[i].used && t->slot[i].count > 0)
            all[n++] = i;
    qsort_r(all, n, sizeof *all, by_count_desc, (void *)t);
    if (n > max)
        n = max;
    memcpy(out, all, (size_t)n * sizeof *out);
    free(all);
    return n;
}

void hc_topk_scale(hc_topk *t, double f)
{
    if (f <= 0) {
        memset(t->slot, 0, (size_t)t->k * sizeof *t->slot);
        memset(t->idx, 0, ((size_t)t->imask + 1) * sizeof *t->idx);
        memset(t->hcnt, 0, (size_t)t->k * sizeof *t->hcnt);
        for (uint32_t i = 0; i < t->k; i++)
            t->heap[i] = t->hpos[i] = i;
        t->total = 0;
        t->flips = 0;
        return;
    }
    for (uint32_t i = 0; i < t->k; i++) {
        t->slot[i].count *= f;
        t->slot[i].err *= f;
        t->hcnt[i] *= f; /* the same product as its slot's count */
    }
    t->total *= f; /* uniform scaling keeps the heap order */
}

size_t hc_topk_bytes(const hc_topk *t)
{
    return sizeof *t + (size_t)t->k * (sizeof *t->slot + 16) + ((size_t)t->imask + 1) * 4;
}
