/* FIFO: insertion order only; hits change nothing. */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { sim_list q; } fifo_state;

static int fifo_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    fifo_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    c->priv = s;
    return 0;
}

static void fifo_free(sim_cache *c) { free(c->priv); }

static void fifo_hit(sim_cache *c, uint32_t idx, const sim_req *r) { (void)c; (void)idx; (void)r; }

static uint32_t fifo_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    sim_list_push_head(c, &((fifo_state *)c->priv)->q, i);
    sim_charge(c, i);
    return i;
}

static void fifo_remove(sim_cache *c, uint32_t idx)
{
    sim_list_unlink(c, &((fifo_state *)c->priv)->q, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void fifo_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    fifo_remove(c, ((fifo_state *)c->priv)->q.tail);
    c->evictions++;
}

static int fifo_verify(sim_cache *c, char *why, size_t n)
{
    const sim_list *q = &((fifo_state *)c->priv)->q;
    if (sim_list_check(c, q, "fifo", why, n) < 0)
        return -1;
    return q->count == c->nresident ? 0 : (snprintf(why, n, "list count != residents"), -1);
}

const sim_policy_ops sim_policy_fifo = {
    .name = "fifo", .describe = "first in, first out",
    .init = fifo_init, .free = fifo_free, .hit = fifo_hit,
    .insert = fifo_insert, .evict = fifo_evict, .verify = fifo_verify, .remove = fifo_remove,
};
