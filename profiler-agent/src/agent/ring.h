/*
 * Single-producer single-consumer ring of parsed watch lines between the socket reader and
 * the profiler thread. The producer never waits: when the ring is full it counts the line
 * as dropped (the agent's own loss, reported with memcached's) and goes on reading, so
 * memcached never sees a slow watcher because of us.
 */
#ifndef AG_RING_H
#define AG_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "watchline.h"

#define AG_MARK_STREAM_START 250   /* wl_line.type of a marker: a new watch stream began */
#define AG_MARK_STREAM_END 251     /* the watch stream ended (disconnect) */

typedef struct ag_item {
    wl_line line;
    int64_t arrival_us;   /* monotonic clock when read */
    uint16_t pfx;         /* the key's prefix id (keys.h), 0 none */
} ag_item;

typedef struct ag_ring {
    ag_item *items;
    uint32_t mask;
    _Alignas(64) _Atomic uint64_t head; /* next to write (producer) */
    _Alignas(64) _Atomic uint64_t tail; /* next to read (consumer) */
    _Alignas(64) _Atomic uint64_t dropped;
} ag_ring;

int ag_ring_init(ag_ring *r, uint32_t size_pow2_at_least);
void ag_ring_free(ag_ring *r);

static inline int ag_ring_push(ag_ring *r, const ag_item *it)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - t > r->mask) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return -1;
    }
    r->items[h & r->mask] = *it;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return 0;
}

/* The producer a chunk of lines at a time: each line is parsed straight into the slot
 * ag_ring_claim returns (no copy), ag_ring_commit keeps it, and the chunk's lines become
 * visible to the consumer together at ag_ring_publish: one release store a chunk instead of a
 * store (and a read of the consumer's tail, a cache line the other core writes) a line. The
 * tail is re-read only when the ring looks full. Not mixed with ag_ring_push inside a chunk:
 * publish first. */
typedef struct ag_ring_writer {
    uint64_t head;       /* next slot to fill (published up to r->head) */
    uint64_t tail_seen;  /* the consumer's tail as last read */
} ag_ring_writer;

static inline void ag_ring_writer_start(ag_ring *r, ag_ring_writer *w)
{
    w->head = atomic_load_explicit(&r->head, memory_order_relaxed);
    w->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
}

/* The next free slot, or NULL when the ring is full. Nothing is counted here: only the caller
 * knows, once the line is parsed, whether it was an event to drop (ag_ring_drop) or something
 * that never enters the ring (a malformed line, a skipped=N count); a drop counted early and
 * taken back would show the overload check a count that goes down. */
static inline ag_item *ag_ring_claim(ag_ring *r, ag_ring_writer *w)
{
    if (w->head - w->tail_seen > r->mask) {
        w->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (w->head - w->tail_seen > r->mask)
            return NULL;
    }
    return &r->items[w->head & r->mask];
}

static inline void ag_ring_drop(ag_ring *r)
{
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
}

static inline void ag_ring_commit(ag_ring_writer *w) { w->head++; }

static inline void ag_ring_publish(ag_ring *r, const ag_ring_writer *w)
{
    atomic_store_explicit(&r->head, w->head, memory_order_release);
}

/* Up to max items; returns how many were copied. */
static inline uint32_t ag_ring_pop(ag_ring *r, ag_item *out, uint32_t max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint32_t n = 0;
    while (t != h && n < max) {
        out[n++] = r->items[t & r->mask];
        t++;
    }
    atomic_store_explicit(&r->tail, t, memory_order_release);
    return n;
}

#endif
