/*
 * COUNTINGGHOST (MIMIR: Sæmundsson, "Performance Profiling of Cache Systems at Scale", MSc thesis
 * 2014, §3.4, Alg. 9-12): a ghost list of (k-1)*N evicted keys kept as F rotating counting Bloom
 * filters (MIMIR: F = 3, each holding (k-1)*N/2; generalised here to F filters of (k-1)*N/(F-1),
 * the oldest one being the flush buffer).
 *
 * Filters are ordered newest (rank 0) to oldest (rank F-1). A key found in rank r lies between
 * the keys counted in ranks < r and those plus the count of rank r, past the end of the cache.
 * Corrections to Alg. 10: a key found in any filter is removed from it and NOT re-inserted into
 * the newest filter (the miss puts it back into the cache, so it leaves the ghost; re-inserting
 * would count it twice when it is evicted again), and the counter of the filter it left is the
 * one decremented (Alg. 10 line 10 assigns counters[third] = counters[second] - 1, a typo).
 */
#ifndef HC_GHOST_H
#define HC_GHOST_H
#include "cbf.h"

typedef struct ghost {
    uint32_t F;
    uint32_t *order;      /* order[rank] = physical filter, rank 0 newest */
    double cap_f;         /* entries per filter before rotating */
    double *count;        /* entries per filter (physical index); double: rescaled on rate change */
    cbf *filters;         /* views into `cells`: filter f's block b at cells + (b*F + f)*64 */
    uint8_t *cells;       /* one allocation, the F filters interleaved block by block, so a
                             lookup's F lines are adjacent (one page; prefetched together) */
    double capacity;      /* (k-1)*N: ghost positions the filters must cover */
    int keep_coverage;    /* rotate by merging the two oldest while the newer filters cover
                             fewer than `capacity` live entries (see ghost_evict) */
    double slack;         /* filters are sized for cap_f * slack entries */
    uint64_t rotations, merges;
    double flushed;       /* entries Alg. 12 flushed (the oldest filter emptied), cumulative: 0
                             while the ghost still holds every key it was given that has not
                             come back (the curve past its entries is then flat) */
    double sized_cap_f;   /* cap_f the filters' cells were sized for (ghost_resize) */
    /* Coverage. An evicted key the ghost does not hold (evicted before the events
     * began, flushed, or its EVICT line lost) is read back as a miss at every size; that is right
     * only if it lies beyond k*N. Its LRU position is 1 + the distinct keys referenced since its
     * last reference, which include the N residents and every key evicted after it and not back:
     * the ghost's entries newer than it. That count never shrinks while the key stays away, so
     * once the entries newer than every missing key have reached (k-1)*N, all of them stay beyond
     * k*N for good: `covered` latches. Entries newer than a missing key: all of them for keys
     * evicted before the ghost began or flushed (older than anything the ghost holds); for a lost
     * EVICT only those in filters born after it (`lost_mark`: the newest filter then may hold keys
     * evicted before the lost one, so counting starts with the next). */
    uint64_t *born;       /* born[phys] = rotations when the filter last became the newest */
    int64_t lost_mark;    /* only filters born after this count toward coverage (-1: all) */
    int covered;          /* every evicted key missing from the ghost lies beyond k*N */
    int exact;            /* no evicted key is missing at all (nothing before, lost or flushed):
                             then the ghost need not be full to be covered, and stays so when
                             the capacity grows (ghost_resize) */
    double covering;      /* entries counted toward coverage at the last check (diagnostics) */
    uint64_t uncovered;   /* times `covered` went from 1 to 0 (a window that saw one is not
                             covered throughout) */
    double *lost;         /* lost[phys]: keys estimated missing (lost EVICTs) that were evicted
                             while this filter was the newest. They lie just past its keys, so
                             they leave the span when it is flushed with (k-1)*N newer entries
                             left; until then they count against the tolerance (ghost_note_lost) */
} ghost;

/* capacity = (k-1)*N entries to remember (in sampled items); fpp = target per filter. exact: no
 * evicted key exists that the ghost will not be given (events from before the first eviction). */
int ghost_init(ghost *g, uint32_t F, double capacity, double fpp, int keep_coverage, int exact);
void ghost_free(ghost *g);
/* Change the capacity without reallocating (sampling rate lowered): counts scale by ratio. */
void ghost_rescale(ghost *g, double capacity, double ratio);
/* Change the capacity keeping the entries (the class's capacity moved, e.g. re-read when
 * memcached's memory filled, with evictions already in the ghost): only while the filters' cells
 * still hold the new load (cap_f at most GHOST_RESIZE_MAX x what they were sized for; a little
 * higher false-positive rate, which the per-filter subtraction reads from the counts). Returns 0,
 * or -1 when the ghost must be re-created (its entries then lost). */
#define GHOST_RESIZE_MAX 1.25
int ghost_resize(ghost *g, double capacity);
/* Alg. 11: remember an evicted key. When the newest filter is full, Alg. 12 flushes the oldest.
 * Keys found again leave the ghost, so after heavy re-reference the F-1 newer filters hold far
 * fewer than (k-1)*N live keys and flushing the oldest would cut the curve short before k*N
 * (measured: lirs-zigzag loses 40% of its ghost hits). With keep_coverage, while the newer
 * filters cover fewer than (k-1)*N live keys, the adjacent pair of older filters with the fewest
 * live keys is merged (counters added: a counting filter's load is its live count, and filters
 * are sized for 2x) and the freed filter becomes the newest; the oldest is flushed otherwise. */
void ghost_evict(ghost *g, uint64_t h);
/* Alg. 10 lookup: returns the rank holding h (and removes it), or -1. */
int ghost_lookup(ghost *g, uint64_t h);
/* Start loading the F blocks ghost_lookup / ghost_insert of h will touch (no effect on state). */
void ghost_prefetch(const ghost *g, uint64_t h);
static inline uint32_t ghost_phys(const ghost *g, uint32_t rank) { return g->order[rank]; }
/* Range (start, end] of ghost positions covered by rank r (counts of newer ranks, + own). */
void ghost_rank_range(const ghost *g, uint32_t rank, double *start, double *end);
double ghost_rank_fpp(const ghost *g, uint32_t rank);
/* EVICTs may have been lost (keys evicted now that the ghost will never hold): not covered until
 * (k-1)*N entries evicted after them, in filters born from now on, have been held. */
void ghost_lost(ghost *g);
/* About `keys` evicted keys (sampled) were lost just now. While the keys missing inside the span
 * (this and earlier losses whose filters are still held) stay within tolerance * capacity the
 * ghost stays covered (a ghost missing that share reads its hits past N that much low at most);
 * beyond it, ghost_lost. */
void ghost_note_lost(ghost *g, double keys, double tolerance);
double ghost_lost_in_span(const ghost *g);
/* Whether every evicted key missing from the ghost lies beyond k*N (latches; see `covered`). */
int ghost_check_covered(ghost *g);
double ghost_entries(const ghost *g);
size_t ghost_bytes(const ghost *g);
#endif
