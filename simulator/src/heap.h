/*
 * Indexed binary min-heap over cache objects, ordered by (pri, seq): the priority queue of
 * the policies that evict by a score (LFU, GDSF, OPT). Each object's heap position lives in
 * its `aux` field, so a hit re-keys it in O(log n) without a search.
 */
#ifndef HC_HEAP_H
#define HC_HEAP_H
#include "cache.h"

typedef struct hc_heap_ent {
    double pri;      /* smaller = evicted first */
    uint64_t seq;    /* tie-break: smaller (older) first */
    uint32_t idx;    /* object index */
} hc_heap_ent;

typedef struct hc_heap {
    hc_heap_ent *a;
    uint32_t n, cap;
} hc_heap;

void hc_heap_free(hc_heap *h);
/* 0, or -1 when out of memory */
int hc_heap_push(hc_cache *c, hc_heap *h, uint32_t idx, double pri, uint64_t seq);
/* re-key the object at heap position pos */
void hc_heap_update(hc_cache *c, hc_heap *h, uint32_t pos, double pri, uint64_t seq);
/* remove the object at heap position pos */
void hc_heap_remove(hc_cache *c, hc_heap *h, uint32_t pos);
/* heap order and back-pointers hold; 0 or -1 */
int hc_heap_check(const hc_cache *c, const hc_heap *h);
#endif
