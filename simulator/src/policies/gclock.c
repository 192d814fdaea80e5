/*
 * Generalized CLOCK (Smith 1978): a counter per object, saturating at K. A hit increments;
 * the hand evicts an object whose counter is 0 and otherwise decrements and passes it.
 * K = 0 is FIFO, K = 1 is CLOCK. The thesis' Listing 4.6 evicts at 0 *or* 1, an
 * off-by-one (digest_thesis 2.2); this evicts at 0. Parameter: gclock.k (default 2, the
 * value Haura uses).
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    sim_list q;
    uint8_t k;
} gclock_state;

static int gclock_init(sim_cache *c, char *err, size_t errlen)
{
    double k = sim_param(c, "k", 2);
    if (k < 0 || k > 255) {
        snprintf(err, errlen, "gclock.k must be in 0..255");
        return -1;
    }
    gclock_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    s->k = (uint8_t)k;
    c->priv = s;
    return 0;
}

static void gclock_free(sim_cache *c) { free(c->priv); }

static void gclock_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    gclock_state *s = c->priv;
    if (c->objs[idx].freq < s->k)
        c->objs[idx].freq++;
}

static uint32_t gclock_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    sim_list_push_head(c, &((gclock_state *)c->priv)->q, i);
    sim_charge(c, i);
    return i;
}

static void gclock_remove(sim_cache *c, uint32_t idx)
{
    sim_list_unlink(c, &((gclock_state *)c->priv)->q, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void gclock_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    sim_list *q = &((gclock_state *)c->priv)->q;
    for (;;) {
        uint32_t i = q->tail;
        if (c->objs[i].freq) {
            c->objs[i].freq--;
            sim_list_move_head(c, q, i);
            continue;
        }
        gclock_remove(c, i);
        c->evictions++;
        return;
    }
}

static int gclock_verify(sim_cache *c, char *why, size_t n)
{
    const gclock_state *s = c->priv;
    if (sim_list_check(c, &s->q, "gclock", why, n) < 0)
        return -1;
    for (uint32_t i = s->q.head; i != SIM_NIL; i = c->objs[i].next)
        if (c->objs[i].freq > s->k)
            return snprintf(why, n, "counter above K"), -1;
    return s->q.count == c->nresident ? 0 : (snprintf(why, n, "list count != residents"), -1);
}

const sim_policy_ops sim_policy_gclock = {
    .name = "gclock", .describe = "generalized CLOCK, counter saturating at K (gclock.k, default 2)",
    .init = gclock_init, .free = gclock_free, .hit = gclock_hit,
    .insert = gclock_insert, .evict = gclock_evict, .verify = gclock_verify, .remove = gclock_remove,
};
