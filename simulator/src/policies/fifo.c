/* FIFO: insertion order only; hits change nothing. */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { hc_list q; } fifo_state;

static int fifo_init(hc_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    fifo_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    hc_list_init(&s->q);
    c->priv = s;
    return 0;
}

static void fifo_free(hc_cache *c) { free(c->priv); }

static void fifo_hit(hc_cache *c, uint32_t idx, const hc_req *r) { (void)c; (void)idx; (void)r; }

static uint32_t fifo_insert(hc_cache *c, const hc_req *r)
{
    uint32_t i = hc_obj_alloc(c, r);
    hc_list_push_head(c, &((fifo_state *)c->priv)->q, i);
    hc_charge(c, i);
    return i;
}

static void fifo_remove(hc_cache *c, uint32_t idx)
{
    hc_list_unlink(c, &((fifo_state *)c->priv)->q, idx);
    hc_uncharge(c, idx);
    hc_obj_release(c, idx);
}

static void fifo_evict(hc_cache *c, const hc_req *r)
{
    (void)r;
    fifo_remove(c, ((fifo_state *)c->priv)->q.tail);
    c->evictions++;
}

static int fifo_verify(hc_cache *c, char *why, size_t n)
{
    const hc_list *q = &((fifo_state *)c->priv)->q;
    if (hc_list_check(c, q, "fifo", why, n) < 0)
        return -1;
    return q->count == c->nresident ? 0 : (snprintf(why, n, "list count != residents"), -1);
}

const hc_policy_ops hc_policy_fifo = {
    .name = "fifo", .describe = "first in, first out",
    .init = fifo_init, .free = fifo_free, .hit = fifo_hit,
    .insert = fifo_insert, .evict = fifo_evict, .verify = fifo_verify, .remove = fifo_remove,
};
