#include "rounder.h"
#include <stdlib.h>
#include <stdint.h>
#include <math.h>

#define GSH ROUNDER_GROUP_SHIFT
#define GSZ (1u << GSH)

int rounder_init(rounder *r, uint32_t B, double n_items, int balanced)
{
    if (B < 1) return -1;
    r->B = B;
    r->bmask = (B & (B - 1)) == 0 ? B - 1 : 0;
    r->balanced = balanced && B > 1;
    r->buckets = calloc(B, sizeof(int64_t));
    r->lo = r->balanced ? calloc(B, sizeof(uint32_t)) : NULL;
    r->gsum = r->balanced ? calloc((B >> GSH) + 1, sizeof(int64_t)) : NULL;
    if (!r->buckets || (r->balanced && (!r->lo || !r->gsum))) {
        free(r->buckets); free(r->lo); free(r->gsum);
        return -1;
    }
    r->nb = 1;                  /* balanced: one bucket starting at epoch head */
    if (r->balanced) r->lo[0] = B - 1;
    r->head = B - 1;            /* Alg. 3 */
    r->tail = 0;
    r->total = 0;
    r->agings = 0;
    r->max_span = 1u << 30;
    r->folds = 0;
    rounder_set_capacity(r, n_items);
    return 0;
}

void rounder_free(rounder *r)
{
    free(r->buckets);
    free(r->lo);
    free(r->gsum);
    r->buckets = NULL;
    r->lo = NULL;
    r->gsum = NULL;
}

/* ---- balanced variant: buckets[0..nb-1] oldest..newest, lo[] their first epochs ---- */

static inline uint32_t bal_bucket(const rounder *r, uint32_t act)
{
    uint32_t base = r->lo[0];
    uint32_t off = act - base;
    if ((int32_t)off < 0 || (int32_t)(r->head - act) < 0) return 0;
    /* Hot keys are hit again while still in the newest bucket: answer that without a search. */
    if (r->lo[r->nb - 1] - base <= off) return r->nb - 1;
    /* Largest j with lo[j] - base <= off (lo[0] - base = 0 <= off). Branch-free halving: the
     * comparison outcome is data-dependent, so a branchy search mispredicts about half of its
     * ~7 steps; this form compiles to conditional moves. */
    uint32_t a = 0, n = r->nb - 1;
    while (n > 1) {
        uint32_t half = n >> 1;
        a = (r->lo[a + half] - base <= off) ? a + half : a;
        n -= half;
    }
    return a;
}

static void bal_regroup(rounder *r)
{
    uint32_t ng = (r->B >> GSH) + 1;
    for (uint32_t g = 0; g < ng; g++) r->gsum[g] = 0;
    for (uint32_t j = 0; j < r->nb; j++) r->gsum[j >> GSH] += r->buckets[j];
}

/* Buckets 0..k all start at least max_span epochs behind the head: make them one oldest bucket
 * starting exactly max_span behind. An item's bucket is unchanged by this (whatever is older
 * than lo[k+1] is in bucket 0 either way), so counts and distances stay exact; only resolution
 * among epochs older than 2^30 agings is given up. */
static void bal_fold_old(rounder *r)
{
    uint32_t k = 0;
    while (k + 1 < r->nb && r->head - r->lo[k + 1] >= r->max_span) k++;
    if (k == 0 && r->head - r->lo[0] < r->max_span) return;
    for (uint32_t j = 1; j <= k; j++) r->buckets[0] += r->buckets[j];
    for (uint32_t j = k + 1; j < r->nb; j++) {
        r->buckets[j - k] = r->buckets[j];
        r->lo[j - k] = r->lo[j];
    }
    for (uint32_t j = r->nb - k; j < r->nb; j++) r->buckets[j] = 0;   /* slots past nb stay 0 */
    r->nb -= k;
    r->lo[0] = r->head - r->max_span;
    r->folds++;
}

static void bal_age(rounder *r)
{
    r->head++;
    r->agings++;
    if (r->nb == r->B) {
        uint32_t best = 0;
        int64_t bc = INT64_MAX;
        for (uint32_t j = 0; j + 1 < r->nb; j++) {
            int64_t c = r->buckets[j] + r->buckets[j + 1];
            if (c < bc) { bc = c; best = j; }
        }
        r->buckets[best] += r->buckets[best + 1];
        for (uint32_t j = best + 1; j + 1 < r->nb; j++) {
            r->buckets[j] = r->buckets[j + 1];
            r->lo[j] = r->lo[j + 1];
        }
        r->nb--;
    }
    r->buckets[r->nb] = 0;
    r->lo[r->nb] = r->head;
    r->nb++;
    bal_fold_old(r);
    r->tail = r->lo[0];
    bal_regroup(r);     /* O(B) once per N/B arrivals, like the shift above */
}

/* Items in buckets newer than j (start) and up to and including j (end), from whichever end is
 * nearer, using whole-group sums where a group lies entirely on one side. */
static void bal_distance(const rounder *r, uint32_t j, double *start, double *end)
{
    int64_t s = 0;
    uint32_t gj = j >> GSH;
    if (r->nb - 1 - j <= j) {
        uint32_t top = (gj << GSH) + GSZ;          /* first bucket of the next group */
        if (top > r->nb) top = r->nb;
        for (uint32_t i = j + 1; i < top; i++) s += r->buckets[i];
        for (uint32_t g = gj + 1; g <= ((r->nb - 1) >> GSH); g++) s += r->gsum[g];
        *start = (double)s;
        *end = (double)(s + r->buckets[j]);
    } else {
        for (uint32_t g = 0; g < gj; g++) s += r->gsum[g];
        for (uint32_t i = gj << GSH; i < j; i++) s += r->buckets[i];
        *end = (double)(r->total - s);
        *start = *end - (double)r->buckets[j];
    }
}

static inline void bal_add(rounder *r, uint32_t j, int64_t d)
{
    r->buckets[j] += d;
    r->gsum[j >> GSH] += d;
    r->total += d;
}

void rounder_set_capacity(rounder *r, double n_items)
{
    if (n_items < 1) n_items = 1;
    r->limit = n_items / r->B;
    /* (double)count >= limit  <=>  count >= ceil(limit) for integer counts */
    r->ilimit = (int64_t)ceil(r->limit);
}

static inline uint32_t slot(const rounder *r, uint32_t a)
{
    return r->bmask ? a & r->bmask : a % r->B;
}

/* Alg. 7: merge the two oldest buckets, recycle the freed slot as the new head. */
static inline void age(rounder *r)
{
    if (r->B == 1) return;
    r->buckets[slot(r, r->tail + 1)] += r->buckets[slot(r, r->tail)];
    r->head++;
    r->buckets[slot(r, r->head)] = 0;
    r->tail++;
    r->agings++;
}

static inline int64_t *head_bucket(rounder *r)
{
    return r->balanced ? &r->buckets[r->nb - 1] : &r->buckets[slot(r, r->head)];
}

static inline void maybe_age(rounder *r)
{
    if (__builtin_expect(*head_bucket(r) >= r->ilimit, 0)) {
        if (r->balanced) bal_age(r); else age(r);
    }
}

/* Alg. 8: items in buckets newer than activity a (start) and up to and including it (end). */
static inline void distance(const rounder *r, uint32_t a, double *start, double *end)
{
    uint32_t B = r->B;
    uint32_t from_head = r->head - a;      /* buckets newer than a */
    int64_t s = 0;
    if (from_head <= (B - 1) / 2) {
        for (uint32_t i = r->head; i != a; i--) s += r->buckets[slot(r, i)];
        *start = (double)s;
        *end = (double)(s + r->buckets[slot(r, a)]);
    } else {
        int64_t older = 0;                 /* buckets older than a */
        for (uint32_t i = r->tail; i != a; i++) older += r->buckets[slot(r, i)];
        *end = (double)(r->total - older);
        *start = *end - (double)r->buckets[slot(r, a)];
    }
}

void rounder_hit(rounder *r, uint32_t *act, int known, double *start, double *end)
{
    maybe_age(r);
    if (r->balanced) {
        uint32_t j = known ? bal_bucket(r, *act) : 0;
        bal_distance(r, j, start, end);
        if (known) {
            bal_add(r, j, -1);
        } else {
            double n = r->limit * r->B;
            *start = (double)r->total;
            *end = n > *start + 1 ? n : *start + 1;
        }
        *act = r->head;
        bal_add(r, r->nb - 1, 1);
        return;
    }
    uint32_t a = known ? rounder_clamp(r, *act) : r->tail;
    distance(r, a, start, end);
    if (known) {
        r->buckets[slot(r, a)]--;
        r->total--;
    } else {
        /* Not in any bucket: the item is older than everything we track (cached before the
         * profile started, or its SET was lost), yet it hit, so it lies between the bottom of
         * the tracked stack and the capacity N. */
        double n = r->limit * r->B;
        *start = (double)r->total;
        *end = n > *start + 1 ? n : *start + 1;
    }
    *act = r->head;
    r->buckets[slot(r, r->head)]++;
    r->total++;
}

uint32_t rounder_set(rounder *r)
{
    maybe_age(r);
    if (r->balanced) bal_add(r, r->nb - 1, 1);
    else { r->buckets[slot(r, r->head)]++; r->total++; }
    return r->head;
}

uint32_t rounder_touch(rounder *r, uint32_t act)
{
    rounder_remove(r, act);
    return rounder_set(r);
}

void rounder_remove(rounder *r, uint32_t act)
{
    if (r->balanced) {
        uint32_t j = bal_bucket(r, act);
        if (r->buckets[j] > 0) bal_add(r, j, -1);
        return;
    }
    uint32_t a = rounder_clamp(r, act);
    if (r->buckets[slot(r, a)] > 0) {
        r->buckets[slot(r, a)]--;
        r->total--;
    }
}

uint32_t rounder_nbuckets(const rounder *r)
{
    return r->balanced ? r->nb : r->head - r->tail + 1;
}

int64_t rounder_rank_count(const rounder *r, uint32_t j)
{
    return r->balanced ? r->buckets[j] : r->buckets[slot(r, r->tail + j)];
}

uint32_t rounder_rank_of(const rounder *r, uint32_t act)
{
    return r->balanced ? bal_bucket(r, act) : rounder_clamp(r, act) - r->tail;
}

/* Bucket j holds the offsets from lo[j] - base up to lo[j+1] - base (bal_bucket: the largest
 * bucket whose start is <= the offset); past the newest bucket's start everything is in it,
 * and a j past the newest bucket is above every item. */
void rounder_cut_init(rounder_cut *c, const rounder *r, uint32_t j)
{
    c->r = r;
    c->j = j;
    c->base = r->balanced ? r->lo[0] : 0;
    c->from = c->to = UINT32_MAX;
    if (r->balanced && j < r->nb) {
        c->from = r->lo[j] - c->base;
        if (j + 1 < r->nb) c->to = r->lo[j + 1] - c->base;
    }
}
