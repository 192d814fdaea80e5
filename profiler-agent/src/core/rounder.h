/*
 * ROUNDER (MIMIR: Sæmundsson, "Performance Profiling of Cache Systems at Scale", MSc thesis 2014,
 * §3.3, Alg. 3-8): the LRU stack cut into B buckets kept as counters in a circular array. Items
 * carry an activity (the bucket number they were last put in); aging shifts the frame of
 * reference (head/tail move, the two oldest buckets merge) in O(1).
 *
 * Deviations from the printed pseudo-code, all needed for correctness:
 *  - HIT ages *before* clamping the activity to the tail (Alg. 4 clamps first: an item in the
 *    old tail bucket would then be decremented from the slot that aging just recycled as the
 *    new head);
 *  - B = 1 never ages (Alg. 7 would merge the single bucket into itself and then zero it);
 *  - the bucket limit N/B is real-valued (N < B ages on every insert instead of never);
 *  - getStackDistance walks from whichever end of the stack is nearer (same result, half the
 *    worst-case work); activities are compared modulo 2^32.
 * Balanced variant (optional, measured in `make bench`): ROUNDER's windows hold N/B *arrivals*,
 * so when hits keep pulling items out of the middle buckets, everything older than ~N arrivals
 * piles up in the tail bucket and is spread uniformly over a wide range (the weakness MIMIR
 * notes in §3.5.2). Keeping buckets as epoch ranges and merging the adjacent pair with the
 * fewest items keeps every bucket near N/B; an item's bucket is found by binary search on the
 * range starts (O(log B)), aging costs O(B) every N/B arrivals. Epochs are 32-bit and compared
 * modulo 2^32, so the balanced variant folds buckets that start more than max_span (2^30)
 * epochs behind the head into the oldest one: a long-lived oldest bucket would otherwise pin
 * lo[0] while the head runs on (a small class ages on every insert) and after 2^31 agings
 * every item would read as older than the whole stack.
 * Counters are in (sampled) items; the caller scales distances to the full key space.
 */
#ifndef HC_ROUNDER_H
#define HC_ROUNDER_H
#include <stdint.h>

typedef struct rounder {
    uint32_t B;
    int balanced;          /* 0: MIMIR (circular, merge the two oldest buckets on aging);
                              1: buckets are epoch ranges kept oldest..newest in lo[]/cnt[] and
                              aging merges the adjacent pair with the fewest items */
    uint32_t nb;           /* balanced: buckets in use */
    uint32_t *lo;          /* balanced: first epoch (activity) of each bucket */
    uint32_t head, tail;   /* activities (monotonic, mod 2^32); slot = activity % B */
    double limit;          /* bucket capacity N/B (in sampled items) */
    int64_t total;         /* items in all buckets */
    int64_t *buckets;
    int64_t *gsum;         /* balanced: gsum[g] = sum of buckets[16g .. 16g+15], so a distance
                              sums at most B/32 + 15 counters instead of up to B/2 */
    int64_t ilimit;        /* ceil(limit): a head bucket holding >= ilimit items ages */
    uint32_t bmask;        /* B - 1 when B is a power of two (MIMIR slots without division) */
    uint64_t agings;
    uint32_t max_span;     /* balanced: bucket starts are kept within this many epochs of the
                              head (2^30; smaller only in tests), see bal_fold_old() */
    uint64_t folds;        /* balanced: times bal_fold_old() folded far-back buckets */
} rounder;

#define ROUNDER_GROUP_SHIFT 4

int rounder_init(rounder *r, uint32_t B, double n_items, int balanced);
void rounder_free(rounder *r);
void rounder_set_capacity(rounder *r, double n_items);

/* Activity of an item as ROUNDER sees it now (clamped into [tail, head]). */
static inline uint32_t rounder_clamp(const rounder *r, uint32_t act)
{
    if ((int32_t)(act - r->tail) < 0 || (int32_t)(r->head - act) < 0) return r->tail;
    return act;
}

/* HIT (Alg. 4): returns the stack-distance range (*start, *end] of the item whose activity is
 * *act, then moves it to the head. known = 0 for an item the caller has no activity for (it
 * is spread between the bottom of the tracked stack and N, and not removed from a bucket). */
void rounder_hit(rounder *r, uint32_t *act, int known, double *start, double *end);
/* SET (Alg. 5): a new item enters at the head. */
uint32_t rounder_set(rounder *r);
/* Move an existing item to the head without counting a hit (re-store of a cached key). */
uint32_t rounder_touch(rounder *r, uint32_t act);
/* EVICT (Alg. 6) / DELETE: the item leaves. */
void rounder_remove(rounder *r, uint32_t act);

/* Age ranks, for the profile's own eviction of surplus items (lost EVICTs): buckets are
 * numbered 0 (oldest) .. rounder_nbuckets() - 1 (newest, the head). */
uint32_t rounder_nbuckets(const rounder *r);
/* Items in the bucket of age rank j. */
int64_t rounder_rank_count(const rounder *r, uint32_t j);
/* Age rank of the bucket an item with activity act is counted in. */
uint32_t rounder_rank_of(const rounder *r, uint32_t act);

/* The same question asked of many items against one rank j (a surplus sweep visits every
 * tracked key of a class): rounder_rank_side() answers -1, 0 or 1 as rounder_rank_of(r, act)
 * is below, at or above j. The balanced variant's answer is two compares with the epoch
 * bounds of bucket j instead of a binary search per item (the search was ~100 instructions,
 * the largest part of a sweep). Valid while no item is added: removals keep the buckets'
 * bounds, aging moves them. */
typedef struct rounder_cut {
    const rounder *r;
    uint32_t j;
    uint32_t base;         /* balanced: lo[0] */
    uint32_t from, to;     /* balanced: bucket j holds offsets (act - base) in [from, to) */
} rounder_cut;

void rounder_cut_init(rounder_cut *c, const rounder *r, uint32_t j);

static inline int rounder_rank_side(const rounder_cut *c, uint32_t act)
{
    const rounder *r = c->r;
    if (!r->balanced) {
        uint32_t k = rounder_rank_of(r, act);
        return k < c->j ? -1 : k > c->j;
    }
    uint32_t off = act - c->base;
    if ((int32_t)off < 0 || (int32_t)(r->head - act) < 0) return c->j > 0 ? -1 : 0; /* rank 0 */
    return off < c->from ? -1 : off >= c->to;
}
#endif
