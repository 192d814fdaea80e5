/* LRU: one list, hits move to the head, evict from the tail. */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { sim_list q; } lru_state;

static int lru_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    lru_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    c->priv = s;
    return 0;
}

static void lru_free(sim_cache *c) { free(c->priv); }

static void lru_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    sim_list_move_head(c, &((lru_state *)c->priv)->q, idx);
}

static uint32_t lru_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    sim_list_push_head(c, &((lru_state *)c->priv)->q, i);
    sim_charge(c, i);
    return i;
}

static void lru_remove(sim_cache *c, uint32_t idx)
{
    sim_list_unlink(c, &((lru_state *)c->priv)->q, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void lru_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    lru_remove(c, ((lru_state *)c->priv)->q.tail);
    c->evictions++;
}

static int lru_verify(sim_cache *c, char *why, size_t n)
{
    const sim_list *q = &((lru_state *)c->priv)->q;
    if (sim_list_check(c, q, "lru", why, n) < 0)
        return -1;
    return q->count == c->nresident ? 0 : (snprintf(why, n, "list count != residents"), -1);
}

const sim_policy_ops sim_policy_lru = {
    .name = "lru", .describe = "least recently used (exact)",
    .init = lru_init, .free = lru_free, .hit = lru_hit,
    .insert = lru_insert, .evict = lru_evict, .verify = lru_verify, .remove = lru_remove,
};
