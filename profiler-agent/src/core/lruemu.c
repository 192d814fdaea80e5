#include "lruemu.h"
#include <stdlib.h>

static int alloc_nodes(lruemu *e, uint64_t n)
{
    uint64_t *k = realloc(e->key, n * sizeof(uint64_t));
    if (!k) return -1;
    e->key = k;
    uint32_t *p = realloc(e->prev, n * sizeof(uint32_t));
    if (!p) return -1;
    e->prev = p;
    uint32_t *x = realloc(e->next, n * sizeof(uint32_t));
    if (!x) return -1;
    e->next = x;
    for (uint64_t i = e->nodes; i < n; i++) { e->next[i] = e->free_list; e->free_list = (uint32_t)i; }
    e->nodes = n;
    return 0;
}

int lruemu_init(lruemu *e, uint64_t cap)
{
    e->key = NULL; e->prev = e->next = NULL;
    e->head = e->tail = e->free_list = EMU_NIL;
    e->size = 0; e->nodes = 0;
    if (cap < 1) cap = 1;
    if (cap >= EMU_NIL) return -1;
    e->cap = cap;
    if (kt_init(&e->map, cap < 1024 ? cap : 1024, 0) != 0) return -1;
    return 0;
}

void lruemu_free(lruemu *e)
{
    kt_free(&e->map);
    free(e->key); free(e->prev); free(e->next);
    e->key = NULL; e->prev = e->next = NULL;
}

static void unlink_node(lruemu *e, uint32_t n)
{
    if (e->prev[n] != EMU_NIL) e->next[e->prev[n]] = e->next[n]; else e->head = e->next[n];
    if (e->next[n] != EMU_NIL) e->prev[e->next[n]] = e->prev[n]; else e->tail = e->prev[n];
}

static void push_front(lruemu *e, uint32_t n)
{
    e->prev[n] = EMU_NIL;
    e->next[n] = e->head;
    if (e->head != EMU_NIL) e->prev[e->head] = n; else e->tail = n;
    e->head = n;
}

int lruemu_access(lruemu *e, uint64_t h)
{
    uint64_t s = kt_find(&e->map, h);
    if (s == KT_NONE) return 0;
    uint32_t n = e->map.act[s];
    if (e->head != n) { unlink_node(e, n); push_front(e, n); }
    return 1;
}

int lruemu_pop(lruemu *e, uint64_t *victim)
{
    if (e->tail == EMU_NIL) return 0;
    uint32_t n = e->tail;
    unlink_node(e, n);
    *victim = e->key[n];
    uint64_t s = kt_find(&e->map, e->key[n]);
    if (s != KT_NONE) kt_remove_slot(&e->map, s);
    e->next[n] = e->free_list;
    e->free_list = n;
    e->size--;
    return 1;
}

int lruemu_insert(lruemu *e, uint64_t h, uint64_t *victim)
{
    int evicted = 0;
    if (e->size >= e->cap) evicted = lruemu_pop(e, victim);
    if (e->free_list == EMU_NIL) {
        uint64_t n = e->nodes ? e->nodes * 2 : 64;
        if (n > e->cap + 1) n = e->cap + 1;
        if (n <= e->nodes || alloc_nodes(e, n) != 0) return evicted; /* out of memory: drop */
    }
    uint32_t n = e->free_list;
    e->free_list = e->next[n];
    e->key[n] = h;
    push_front(e, n);
    if (kt_insert(&e->map, h, 0, n) == KT_NONE) { unlink_node(e, n); e->next[n] = e->free_list; e->free_list = n; return evicted; }
    e->size++;
    return evicted;
}

int lruemu_remove(lruemu *e, uint64_t h)
{
    uint64_t s = kt_find(&e->map, h);
    if (s == KT_NONE) return 0;
    uint32_t n = e->map.act[s];
    kt_remove_slot(&e->map, s);
    unlink_node(e, n);
    e->next[n] = e->free_list;
    e->free_list = n;
    e->size--;
    return 1;
}

int lruemu_set_capacity(lruemu *e, uint64_t cap)
{
    if (cap < 1) cap = 1;
    if (cap >= EMU_NIL) return -1;
    e->cap = cap;
    return 0;
}

size_t lruemu_bytes(const lruemu *e)
{
    return kt_bytes(&e->map) + e->nodes * (sizeof(uint64_t) + 2 * sizeof(uint32_t));
}
