/*
 * Exact LRU stack distances (Mattson et al. 1970) with a Fenwick tree over request times:
 * the distance of a re-reference is the number of distinct keys touched since the key's last
 * reference, itself included (1 = immediate re-reference), which is the count of "last
 * reference" marks in (previous time, now]. O(log T) per request. Tests and benchmarks only.
 */
#ifndef HC_MATTSON_H
#define HC_MATTSON_H
#include <stdint.h>
#include <stddef.h>

typedef struct mattson mattson;

mattson *mattson_new(uint64_t max_requests);
/* Returns the stack distance (>= 1) or 0 for a first reference. */
uint64_t mattson_access(mattson *m, uint64_t key);
uint64_t mattson_requests(const mattson *m);
uint64_t mattson_distinct(const mattson *m);
/* Hits of an LRU cache of `size` items = requests with distance <= size. */
uint64_t mattson_hits_at(const mattson *m, uint64_t size);
/* hits_at as a fraction of all requests; size may be fractional (linear between integers). */
double mattson_ratio_at(const mattson *m, double size);
void mattson_free(mattson *m);
#endif
