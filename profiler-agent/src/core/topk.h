/*
 * topk: the space-saving sketch (Metwally, Agrawal, El Abbadi, ICDT'05) over 64-bit key
 * hashes, with weighted increments: k counters, a key not monitored replaces the smallest
 * counter and inherits its count as its error bound. Every key whose true weight exceeds
 * total/k is monitored, and a monitored count over-estimates by at most its `err`. O(log k)
 * per update (min-heap of slots plus a key index). Slots keep their index while monitored, so
 * callers may hang per-slot state on the index (prefix curves); `replaced` tells them when a
 * slot changed hands.
 *
 * Optional randomized admission (RAP: Ben Basat, Einziger, Friedman, Kassner, "Randomized
 * Admission Policy for Efficient Top-k and Frequency Estimation", INFOCOM 2017, §3): once every
 * counter is taken, an unmonitored key replaces the smallest counter c only with probability
 * w / (c + w) (1 / (c + 1) for unit weights), else its arrival is not counted. On a long tail of
 * keys read once (memcached's usual traffic) almost every arrival is such a key, and space-saving
 * would replace the minimum and re-sort the heap for each; RAP skips that work and keeps the tail
 * from pushing heavy keys out (the paper's accuracy gain). Then count - err <= true weight still
 * holds, count >= true weight no longer does (arrivals before admission are not counted).
 */
#ifndef HC_TOPK_H
#define HC_TOPK_H

#include <stddef.h>
#include <stdint.h>

typedef struct hc_topk_slot {
    uint64_t key;
    double count;      /* estimated weight (>= true weight without randomized admission) */
    double err;        /* over-estimation bound */
    uint64_t aux;      /* caller's value (last size seen, ...), cleared on replacement */
    int used;
} hc_topk_slot;

typedef struct hc_topk hc_topk;

#define HC_TOPK_NONE UINT32_MAX /* hc_topk_add: not admitted (randomized admission only) */

hc_topk *hc_topk_new(uint32_t k);
void hc_topk_free(hc_topk *t);
/* Randomized admission (above) from now on; seed makes the coin flips reproducible (they are
 * a hash of the seed, the key and the number of flips so far). */
void hc_topk_set_admission(hc_topk *t, uint64_t seed);
/* Add weight w (> 0) to key. Returns the key's slot index, or HC_TOPK_NONE if randomized
 * admission turned the key away; *replaced = 1 if the slot was just taken from another key
 * (or was empty). */
uint32_t hc_topk_add(hc_topk *t, uint64_t key, double w, int *replaced);
/* Slot of key, or -1 if not monitored. */
long hc_topk_find(const hc_topk *t, uint64_t key);
hc_topk_slot *hc_topk_slot_at(hc_topk *t, uint32_t i);
uint32_t hc_topk_capacity(const hc_topk *t);
/* Up to max monitored slot indices by count, largest first; returns how many. */
uint32_t hc_topk_sorted(const hc_topk *t, uint32_t *idx, uint32_t max);
/* Multiply every count and error by f (0: forget everything). Windows decay the sketch
 * instead of clearing it so heavy keys keep their slots across windows. */
void hc_topk_scale(hc_topk *t, double f);
double hc_topk_total(const hc_topk *t);  /* weight added since the last scale(0) */
size_t hc_topk_bytes(const hc_topk *t);

#endif
