#include "stacker.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define GSH 4                   /* 16 buckets per group sum, as ROUNDER */
#define GSZ (1u << GSH)
#define STK_FREE (UINT32_MAX - 1)   /* prev of a node on the free list */

static int alloc_buckets(stacker *s, uint32_t n)
{
    uint32_t *lo = realloc(s->lo, n * sizeof(uint32_t));
    if (lo) s->lo = lo;
    int64_t *cnt = realloc(s->cnt, n * sizeof(int64_t));
    if (cnt) s->cnt = cnt;
    uint32_t *fr = realloc(s->front, n * sizeof(uint32_t));
    if (fr) s->front = fr;
    uint32_t *bk = realloc(s->back, n * sizeof(uint32_t));
    if (bk) s->back = bk;
    int64_t *gs = realloc(s->gsum, ((n >> GSH) + 1) * sizeof(int64_t));
    if (gs) s->gsum = gs;
    if (!lo || !cnt || !fr || !bk || !gs) return -1;
    s->Balloc = n;
    return 0;
}

int stacker_init(stacker *s, uint32_t B, double n_items)
{
    memset(s, 0, sizeof(*s));
    if (B < 1) return -1;
    s->Bmin = s->B = B;
    if (alloc_buckets(s, B) != 0) { stacker_free(s); return -1; }
    s->nb = 1;                  /* one bucket starting at epoch 0 */
    s->cnt[0] = 0;
    s->lo[0] = 0;
    s->front[0] = s->back[0] = STK_NIL;
    s->gsum[0] = 0;
    s->top = STK_NIL;
    s->free_head = STK_NIL;
    s->renumber_at = 1u << 30;
    stacker_set_capacity(s, n_items);
    return 0;
}

void stacker_free(stacker *s)
{
    free(s->lo); free(s->cnt); free(s->front); free(s->back); free(s->gsum); free(s->node);
    memset(s, 0, sizeof(*s));
}

static void merge_smallest_pair(stacker *s);
static void regroup(stacker *s);

int stacker_set_capacity(stacker *s, double n_items)
{
    if (n_items < 1) n_items = 1;
    double want = STK_SQRT_K * sqrt(n_items);
    uint32_t B = want > STK_MAX_B ? STK_MAX_B : (uint32_t)want;
    if (B < s->Bmin) B = s->Bmin;
    int rc = 0;
    if (B > s->Balloc && alloc_buckets(s, B) != 0) { B = s->B; rc = -1; }
    while (s->nb > B) merge_smallest_pair(s);
    s->B = B;
    regroup(s);
    s->limit = n_items / s->B;
    s->ilimit = (int64_t)ceil(s->limit);
    return rc;
}

/* ---- buckets: epoch ranges lo[0] < lo[1] < ... < lo[nb-1] = head_epoch (mod 2^32) ---- */

static inline uint32_t bucket_of(const stacker *s, uint32_t epoch)
{
    uint32_t base = s->lo[0];
    uint32_t off = epoch - base;
    if (s->lo[s->nb - 1] - base <= off) return s->nb - 1;   /* hot items: still in the head */
    uint32_t a = 0, n = s->nb - 1;                          /* largest j with lo[j] <= epoch */
    while (n > 1) {
        uint32_t half = n >> 1;
        a = (s->lo[a + half] - base <= off) ? a + half : a;
        n -= half;
    }
    return a;
}

static inline void cnt_add(stacker *s, uint32_t j, int64_t d)
{
    s->cnt[j] += d;
    s->gsum[j >> GSH] += d;
    s->total += d;
}

static void regroup(stacker *s)
{
    uint32_t ng = (s->Balloc >> GSH) + 1;
    for (uint32_t g = 0; g < ng; g++) s->gsum[g] = 0;
    for (uint32_t j = 0; j < s->nb; j++) s->gsum[j >> GSH] += s->cnt[j];
}

/* Open a new head bucket; when all B are in use, first merge the adjacent pair with the fewest
 * items (the pair's segments are adjacent in the list, so the merged ends are the newer
 * bucket's front and the older bucket's back). O(B) once per N/B arrivals. */
static void merge_smallest_pair(stacker *s)
{
    uint32_t best = 0;
    int64_t bc = INT64_MAX;
    for (uint32_t j = 0; j + 1 < s->nb; j++) {
        int64_t c = s->cnt[j] + s->cnt[j + 1];
        if (c < bc) { bc = c; best = j; }
    }
    uint32_t o = best, n = best + 1;
    if (s->cnt[n] > 0) {
        if (s->cnt[o] == 0) s->back[o] = s->back[n];
        s->front[o] = s->front[n];
    }
    s->cnt[o] += s->cnt[n];
    for (uint32_t j = n; j + 1 < s->nb; j++) {
        s->cnt[j] = s->cnt[j + 1];
        s->lo[j] = s->lo[j + 1];
        s->front[j] = s->front[j + 1];
        s->back[j] = s->back[j + 1];
    }
    s->nb--;
}

/* Epoch of every node := its bucket's index, lo[j] := j: the same buckets, epochs back near 0. */
static void renumber(stacker *s)
{
    for (uint32_t n = s->top; n != STK_NIL; n = s->node[n].next)
        s->node[n].epoch = bucket_of(s, s->node[n].epoch);
    for (uint32_t j = 0; j < s->nb; j++) s->lo[j] = j;
    s->head_epoch = s->nb - 1;
    s->renumbers++;
}

static void age(stacker *s)
{
    if (s->B == 1) return;
    if (__builtin_expect(s->head_epoch - s->lo[0] >= s->renumber_at, 0)) renumber(s);
    s->head_epoch++;
    s->agings++;
    if (s->nb >= s->B) merge_smallest_pair(s);
    uint32_t h = s->nb++;
    s->cnt[h] = 0;
    s->lo[h] = s->head_epoch;
    s->front[h] = s->back[h] = STK_NIL;
    regroup(s);
}

static inline void maybe_age(stacker *s)
{
    if (__builtin_expect(s->cnt[s->nb - 1] >= s->ilimit, 0)) age(s);
}

/* ---- the list ---- */

static uint32_t node_alloc(stacker *s)
{
    if (s->free_head != STK_NIL) {
        uint32_t n = s->free_head;
        s->free_head = s->node[n].next;
        return n;
    }
    if (s->nnodes == s->cap) {
        uint64_t nc = s->cap ? (uint64_t)s->cap * 2 : 1024;
        if (nc > STK_FREE) nc = STK_FREE;
        if (nc <= s->cap) return STK_NIL;
        stk_node *p = realloc(s->node, nc * sizeof(stk_node));
        if (!p) return STK_NIL;
        s->node = p;
        s->cap = (uint32_t)nc;
    }
    return s->nnodes++;
}

/* Take node n (in bucket j) out of the list and of its bucket. */
static inline void unlink_node(stacker *s, uint32_t n, uint32_t j)
{
    stk_node *x = &s->node[n];
    if (s->front[j] == n && s->back[j] == n) s->front[j] = s->back[j] = STK_NIL;
    else if (s->front[j] == n) s->front[j] = x->next;
    else if (s->back[j] == n) s->back[j] = x->prev;
    if (x->prev != STK_NIL) s->node[x->prev].next = x->next; else s->top = x->next;
    if (x->next != STK_NIL) s->node[x->next].prev = x->prev;
    cnt_add(s, j, -1);
}

/* Put node n on top of the stack, in the head bucket. */
static inline void push_top(stacker *s, uint32_t n)
{
    uint32_t h = s->nb - 1;
    stk_node *x = &s->node[n];
    x->prev = STK_NIL;
    x->next = s->top;
    x->epoch = s->head_epoch;
    if (s->top != STK_NIL) s->node[s->top].prev = n;
    s->top = n;
    s->front[h] = n;
    if (s->back[h] == STK_NIL) s->back[h] = n;
    cnt_add(s, h, 1);
}

/* Items in buckets newer than j, from whichever end is nearer (group sums where possible). */
static inline int64_t newer_than(const stacker *s, uint32_t j)
{
    int64_t c = 0;
    uint32_t gj = j >> GSH;
    if (s->nb - 1 - j <= j) {
        uint32_t top = (gj << GSH) + GSZ;
        if (top > s->nb) top = s->nb;
        for (uint32_t i = j + 1; i < top; i++) c += s->cnt[i];
        for (uint32_t g = gj + 1; g <= ((s->nb - 1) >> GSH); g++) c += s->gsum[g];
        return c;
    }
    for (uint32_t g = 0; g < gj; g++) c += s->gsum[g];
    for (uint32_t i = gj << GSH; i < j; i++) c += s->cnt[i];
    return s->total - c - s->cnt[j];
}

/* Rank (1 = newest) of node n inside bucket j: walk in from both ends at once, so the walk is
 * at most half the bucket. The bound on steps only guards against a corrupted list. */
static inline int64_t rank_in_bucket(stacker *s, uint32_t n, uint32_t j)
{
    uint32_t a = s->front[j], b = s->back[j];
    int64_t ra = 1, rb = s->cnt[j], steps = 0;
    while (ra <= rb) {
        if (a == n) break;
        if (b == n) { ra = rb; break; }
        a = s->node[a].next;
        b = s->node[b].prev;
        ra++; rb--; steps++;
    }
    s->walked += (uint64_t)steps;
    return ra;
}

int stacker_hit(stacker *s, uint32_t *h, int known, double *start, double *end)
{
    maybe_age(s);
    if (known) {
        uint32_t n = *h;
        uint32_t j = bucket_of(s, s->node[n].epoch);
        double d = (double)(newer_than(s, j) + rank_in_bucket(s, n, j));
        *start = d - 1;
        *end = d;
        unlink_node(s, n, j);
        push_top(s, n);
        return 0;
    }
    /* Not tracked (cached before the profile started, or its SET was lost), yet it hit: it
     * lies between the bottom of the tracked stack and the capacity N. */
    double nn = s->limit * s->B;
    *start = (double)s->total;
    *end = nn > *start + 1 ? nn : *start + 1;
    uint32_t n = node_alloc(s);
    *h = n;
    if (n == STK_NIL) return -1;
    push_top(s, n);
    return 0;
}

uint32_t stacker_set(stacker *s)
{
    maybe_age(s);
    uint32_t n = node_alloc(s);
    if (n != STK_NIL) push_top(s, n);
    return n;
}

uint32_t stacker_touch(stacker *s, uint32_t h)
{
    maybe_age(s);
    unlink_node(s, h, bucket_of(s, s->node[h].epoch));
    push_top(s, h);
    return h;
}

void stacker_remove(stacker *s, uint32_t h)
{
    if (h >= s->nnodes || s->node[h].prev == STK_FREE) return;
    unlink_node(s, h, bucket_of(s, s->node[h].epoch));
    s->node[h].prev = STK_FREE;
    s->node[h].next = s->free_head;
    s->free_head = h;
}

uint32_t stacker_nbuckets(const stacker *s) { return s->nb; }
int64_t stacker_rank_count(const stacker *s, uint32_t j) { return s->cnt[j]; }
uint32_t stacker_rank_of(const stacker *s, uint32_t h) { return bucket_of(s, s->node[h].epoch); }

int64_t stacker_depth_slow(const stacker *s, uint32_t h)
{
    int64_t d = 1;
    for (uint32_t n = s->top; n != STK_NIL; n = s->node[n].next, d++)
        if (n == h) return d;
    return -1;
}

const char *stacker_verify(const stacker *s)
{
    if (s->nb < 1 || s->nb > s->B) return "bucket count out of range";
    if ((int32_t)(s->head_epoch - s->lo[s->nb - 1]) < 0) return "head bucket starts after the head epoch";
    for (uint32_t j = 1; j < s->nb; j++)
        if ((int32_t)(s->lo[j] - s->lo[j - 1]) <= 0) return "bucket epochs not increasing";
    int64_t sum = 0;
    for (uint32_t j = 0; j < s->nb; j++) {
        if (s->cnt[j] < 0) return "negative bucket count";
        if ((s->cnt[j] == 0) != (s->front[j] == STK_NIL) || (s->cnt[j] == 0) != (s->back[j] == STK_NIL))
            return "bucket ends disagree with its count";
        sum += s->cnt[j];
    }
    if (sum != s->total) return "bucket counts do not add up to the total";
    for (uint32_t g = 0; g <= (s->Balloc >> GSH); g++) {
        int64_t gs = 0;
        for (uint32_t j = g << GSH; j < ((g + 1) << GSH) && j < s->nb; j++) gs += s->cnt[j];
        if (gs != s->gsum[g]) return "group sum out of date";
    }
    /* walk the list newest -> oldest: links, epochs never increasing, buckets in order and
     * contiguous, each bucket entered at its front and left at its back */
    int64_t seen = 0, in_bucket = 0;
    uint32_t prev = STK_NIL, cur_b = s->nb;   /* cur_b = nb: no bucket yet */
    for (uint32_t n = s->top; n != STK_NIL; prev = n, n = s->node[n].next) {
        if (n >= s->nnodes) return "list link out of the pool";
        if (++seen > s->total) return "list longer than the total (cycle or stray node)";
        if (s->node[n].prev != prev) return "prev link does not match";
        uint32_t j = bucket_of(s, s->node[n].epoch);
        if ((uint32_t)(s->node[n].epoch - s->lo[0]) > (uint32_t)(s->head_epoch - s->lo[0]))
            return "node epoch outside the bucket range";
        if (j != cur_b) {
            if (cur_b < s->nb && (j > cur_b || s->back[cur_b] != prev || in_bucket != s->cnt[cur_b]))
                return "bucket segment broken (order, back end or count)";
            if (s->front[j] != n) return "bucket front is not its newest node";
            cur_b = j;
            in_bucket = 0;
        }
        in_bucket++;
    }
    if (seen != s->total) return "list shorter than the total";
    if (cur_b < s->nb && (s->back[cur_b] != prev || in_bucket != s->cnt[cur_b])) return "last bucket's back end or count wrong";
    int64_t nfree = 0;
    for (uint32_t n = s->free_head; n != STK_NIL; n = s->node[n].next) {
        if (n >= s->nnodes || s->node[n].prev != STK_FREE) return "free list holds a live node";
        if (++nfree > (int64_t)s->nnodes) return "free list cycles";
    }
    if (nfree + s->total != (int64_t)s->nnodes) return "nodes leaked (live + free != allocated)";
    return NULL;
}

size_t stacker_bytes(const stacker *s)
{
    return (size_t)s->cap * sizeof(stk_node)
         + (size_t)s->Balloc * (sizeof(uint32_t) * 3 + sizeof(int64_t))
         + ((size_t)(s->Balloc >> GSH) + 1) * sizeof(int64_t);
}
