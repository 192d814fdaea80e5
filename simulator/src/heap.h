/*
 * Indexed binary min-heap over cache objects, ordered by (pri, seq): the priority queue of
 * the policies that evict by a score (LFU, GDSF, OPT). Each object's heap position lives in
 * its `aux` field, so a hit re-keys it in O(log n) without a search.
 */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H
#include "cache.h"

typedef struct sim_heap_ent {
    double pri;      /* smaller = evicted first */
    uint64_t seq;    /* tie-break: smaller (older) first */
    uint32_t idx;    /* object index */
} sim_heap_ent;

typedef struct sim_heap {
    sim_heap_ent *a;
    uint32_t n, cap;
} sim_heap;

void sim_heap_free(sim_heap *h);
/* 0, or -1 when out of memory */
int sim_heap_push(sim_cache *c, sim_heap *h, uint32_t idx, double pri, uint64_t seq);
/* re-key the object at heap position pos */
void sim_heap_update(sim_cache *c, sim_heap *h, uint32_t pos, double pri, uint64_t seq);
/* remove the object at heap position pos */
void sim_heap_remove(sim_cache *c, sim_heap *h, uint32_t pos);
/* heap order and back-pointers hold; 0 or -1 */
int sim_heap_check(const sim_cache *c, const sim_heap *h);
#endif
