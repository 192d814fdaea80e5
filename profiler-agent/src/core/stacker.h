/*
 * STACKER (MIMIR: Sæmundsson, "Performance Profiling of Cache Systems at Scale", MSc thesis 2014,
 * §3.3.1 and §5.2.3): the accurate estimator beside ROUNDER. The LRU stack is cut into B buckets,
 * as in ROUNDER, but the bookkeeping inside a bucket is exact: the tracked items form one
 * recency-ordered doubly linked list (newest first) and each bucket is a contiguous segment of it
 * with known ends. A hit's stack distance is the items of the newer buckets (bucket counters)
 * plus the item's exact rank inside its own bucket (a walk from the nearer end of the segment),
 * so the curve gets the hit at its true distance instead of spread uniformly over the bucket: the
 * error term of Theorem 3 (largest bucket / (M/2)) vanishes and, against an exact LRU event
 * stream, the curve below N *is* the Mattson curve. What is traded: 12 more bytes per tracked
 * item (prev, next, epoch) and a walk of up to half a bucket per hit, O(log B + B/32 + N/(2B))
 * instead of ROUNDER's O(log B + B/32), with B grown to ~8 sqrt(N) for large classes (below).
 *
 * Why not MIMIR's printed recipe: the thesis omits STACKER's routines ("not shown") and only
 * says its aging loops over the whole cache (O(N) every N/B arrivals) and moves down only the
 * items hotter than a running average of recent hits, still spreading each hit over its
 * bucket. Our ROUNDER's default (balanced) aging already keeps every bucket near N/B without that
 * sweep; what remains between it and the exact curve is the within-bucket spread, which is what
 * this file removes. Buckets are aged exactly as balanced ROUNDER ages them (epoch ranges, merge
 * the adjacent pair with the fewest items every N/B arrivals), here to bound the walk.
 *
 * Epochs are 32-bit and compared relative to the oldest bucket's; a small class ages on every
 * insert, so 2^31 agings (hours to days) would make the comparison wrap: before that, every
 * node's epoch is rewritten to its bucket's index (one pass over the list, once per 2^30 agings).
 *
 * Handles: an item is named by a node index (the uint32 the key table keeps as "activity");
 * the index does not change while the item lives (a hit or re-store moves the node, not the
 * index). Counters are in (sampled) items, like ROUNDER's.
 */
#ifndef HC_STACKER_H
#define HC_STACKER_H
#include <stdint.h>
#include <stddef.h>

#define STK_NIL UINT32_MAX

typedef struct stk_node {
    uint32_t prev, next;   /* neighbours in recency order: prev = newer, next = older */
    uint32_t epoch;        /* head epoch when last moved to the top (bucket = epoch range) */
} stk_node;

/* Buckets: at least the configured B, and STK_SQRT_K * sqrt(N) for large classes (at most
 * STK_MAX_B), so a bucket holds ~sqrt(N)/STK_SQRT_K items: a hit walks at most half of that
 * (pointer chasing, the dominant cost: 86 % of stacker_hit under perf at N = 100K, K = 4) and
 * sums ~STK_SQRT_K*sqrt(N)/32 group counters; aging costs O(B) every N/B arrivals
 * (STK_SQRT_K^2 sequential steps per arrival, amortised). K = 8 measured faster than 4 and 16
 * at N = 100K (`bench/speed`); with a fixed B = 128 the walk grew linearly with N (0.8 M
 * events/s at N = 100K against 2 M with B grown). */
#define STK_SQRT_K 8.0
#define STK_MAX_B (1u << 16)

typedef struct stacker {
    uint32_t B;            /* most buckets now: max(Bmin, STK_SQRT_K * sqrt(N)) */
    uint32_t Bmin;         /* configured B */
    uint32_t Balloc;       /* bucket arrays allocated for this many */
    uint32_t nb;           /* buckets in use, kept oldest (0) .. newest (nb-1) */
    uint32_t *lo;          /* first epoch of each bucket */
    int64_t *cnt;          /* items in each bucket */
    uint32_t *front, *back;/* newest and oldest node of each bucket (STK_NIL when empty) */
    int64_t *gsum;         /* gsum[g] = sum of cnt[16g .. 16g+15] (distance sums in B/32 + 15) */
    uint32_t head_epoch;   /* epoch of the newest bucket's items */
    uint32_t top;          /* newest node of the whole stack (STK_NIL when empty) */
    double limit;          /* bucket capacity N/B (sampled items) */
    int64_t ilimit;        /* ceil(limit): a head bucket holding >= ilimit items ages */
    int64_t total;         /* items in all buckets */
    stk_node *node;        /* node pool; free nodes are chained through next */
    uint32_t nnodes, cap;  /* nodes handed out so far (live + free), pool size */
    uint32_t free_head;
    uint32_t renumber_at;  /* epochs spanned before they are renumbered (2^30; tests lower it) */
    uint64_t agings;
    uint64_t renumbers;
    uint64_t walked;       /* nodes visited by rank walks (cost figure for benchmarks) */
} stacker;

int stacker_init(stacker *s, uint32_t B, double n_items);
void stacker_free(stacker *s);
/* New capacity N (sampled items): the bucket limit N/B, and B itself (grown, or shrunk by
 * merging adjacent buckets). Returns 0, or -1 if growing the bucket arrays failed (the
 * stacker then keeps its old B, which is still correct, only slower). */
int stacker_set_capacity(stacker *s, double n_items);

/* HIT: the exact stack-distance d of the item *h as the range (d-1, d] in *start, *end (the
 * unit of hit mass lands on [d-1, d], as Mattson's curve interpolates between integers), then
 * the item moves to the top. known = 0 for an item the caller has no node for: the range is
 * (tracked items, max(N, tracked + 1)] as in ROUNDER, and *h receives a new node at the top;
 * returns -1 only if a node cannot be allocated (then *h = STK_NIL and nothing is tracked). */
int stacker_hit(stacker *s, uint32_t *h, int known, double *start, double *end);
/* SET: a new item at the top; returns its handle or STK_NIL when out of memory. */
uint32_t stacker_set(stacker *s);
/* Move an existing item to the top without counting a hit (re-store); same handle back. */
uint32_t stacker_touch(stacker *s, uint32_t h);
/* EVICT / DELETE: the item leaves and its node is freed. */
void stacker_remove(stacker *s, uint32_t h);

/* Age ranks, as rounder.h: 0 = oldest bucket .. stacker_nbuckets() - 1 = the newest. */
uint32_t stacker_nbuckets(const stacker *s);
int64_t stacker_rank_count(const stacker *s, uint32_t j);
uint32_t stacker_rank_of(const stacker *s, uint32_t h);

/* Exact rank (1 = newest) of a tracked item in the whole stack; O(N), tests only. */
int64_t stacker_depth_slow(const stacker *s, uint32_t h);
/* Check every invariant (list order and links, bucket ends and counts, group sums, free list);
 * returns NULL or a description of the first violation. O(N + B), tests only. */
const char *stacker_verify(const stacker *s);
size_t stacker_bytes(const stacker *s);
#endif
