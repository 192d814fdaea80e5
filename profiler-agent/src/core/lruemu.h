/*
 * Exact LRU cache of a fixed number of items, used only when replaying key-only traces
 * offline: it stands in for memcached and decides HIT / MISS / EVICT, which then drive ROUNDER
 * and the ghost exactly as the live stream would. Hash table (keytable, value = node index)
 * plus an intrusive doubly linked list over a node array.
 */
#ifndef HC_LRUEMU_H
#define HC_LRUEMU_H
#include "keytable.h"

#define EMU_NIL UINT32_MAX

typedef struct lruemu {
    keytable map;
    uint64_t *key;
    uint32_t *prev, *next;
    uint32_t head, tail, free_list;
    uint64_t cap, size, nodes;
} lruemu;

int lruemu_init(lruemu *e, uint64_t cap);
void lruemu_free(lruemu *e);
/* 1 and moves to MRU if present, else 0. */
int lruemu_access(lruemu *e, uint64_t h);
/* Insert an absent key at MRU. If full first evicts the LRU key into *victim and returns 1. */
int lruemu_insert(lruemu *e, uint64_t h, uint64_t *victim);
/* Remove a key if present (1) */
int lruemu_remove(lruemu *e, uint64_t h);
/* Pop the LRU key (0 if empty). */
int lruemu_pop(lruemu *e, uint64_t *victim);
int lruemu_set_capacity(lruemu *e, uint64_t cap);
size_t lruemu_bytes(const lruemu *e);
#endif
