/*
 * LFU: evict the object with the fewest hits since it was inserted; among equal counts the
 * one that reached its count first (libCacheSim's LFU: frequency buckets, FIFO within a
 * bucket). Counts are not aged (see gdsf for the aged, size-aware variant). A min-heap on
 * (count, time the count was reached).
 */
#include "../cache.h"
#include "../heap.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { sim_heap h; } lfu_state;

static int lfu_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    lfu_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    c->priv = s;
    return 0;
}

static void lfu_free(sim_cache *c)
{
    lfu_state *s = c->priv;
    sim_heap_free(&s->h);
    free(s);
}

static void lfu_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    sim_obj *o = &c->objs[idx];
    o->prio++;
    sim_heap_update(c, &((lfu_state *)c->priv)->h, o->aux, (double)o->prio, c->now);
}

static uint32_t lfu_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].prio = 1;
    if (sim_heap_push(c, &((lfu_state *)c->priv)->h, i, 1.0, c->now) < 0) {
        fprintf(stderr, "hcsim: out of memory growing the LFU heap\n");
        abort();
    }
    sim_charge(c, i);
    return i;
}

static void lfu_remove(sim_cache *c, uint32_t idx)
{
    sim_heap_remove(c, &((lfu_state *)c->priv)->h, c->objs[idx].aux);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void lfu_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    lfu_remove(c, ((lfu_state *)c->priv)->h.a[0].idx);
    c->evictions++;
}

static int lfu_verify(sim_cache *c, char *why, size_t n)
{
    lfu_state *s = c->priv;
    if (s->h.n != c->nresident)
        return snprintf(why, n, "heap size %u != residents", s->h.n), -1;
    if (sim_heap_check(c, &s->h) < 0)
        return snprintf(why, n, "heap order or positions broken"), -1;
    for (uint32_t k = 0; k < s->h.n; k++)
        if (s->h.a[k].pri != (double)c->objs[s->h.a[k].idx].prio || c->objs[s->h.a[k].idx].prio < 1)
            return snprintf(why, n, "heap key != hit count"), -1;
    return 0;
}

const sim_policy_ops sim_policy_lfu = {
    .name = "lfu", .describe = "LFU: fewest hits since insertion, FIFO among equal counts",
    .init = lfu_init, .free = lfu_free, .hit = lfu_hit,
    .insert = lfu_insert, .evict = lfu_evict, .verify = lfu_verify, .remove = lfu_remove,
};
