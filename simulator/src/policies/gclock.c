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
    hc_list q;
    uint8_t k;
} gclock_state;

static int gclock_init(hc_cache *c, char *err, size_t errlen)
{
    double k = hc_param(c, "k", 2);
    if (k < 0 || k > 255) {
        snprintf(err, errlen, "gclock.k must be in 0..255");
        return -1;
    }
    gclock_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    hc_list_init(&s->q);
    s->k = (uint8_t)k;
    c->priv = s;
    return 0;
}

static void gclock_free(hc_cache *c) { free(c->priv); }

static void gclock_hit(hc_cache *c, uint32_t idx, const hc_req *r)
{
    (void)r;
    gclock_state *s = c->priv;
    if (c->objs[idx].freq < s->k)
        c->objs[idx].freq++;
}

static uint32_t gclock_insert(hc_cache *c, const hc_req *r)
{
    uint32_t i = hc_obj_alloc(c, r);
    hc_list_push_head(c, &((gclock_state *)c->priv)->q, i);
    hc_charge(c, i);
    return i;
}

static void gclock_remove(hc_cache *c, uint32_t idx)
{
    hc_list_unlink(c, &((gclock_state *)c->priv)->q, idx);
    hc_uncharge(c, idx);
    hc_obj_release(c, idx);
}

static void gclock_evict(hc_cache *c, const hc_req *r)
{
    (void)r;
    hc_list *q = &((gclock_state *)c->priv)->q;
    for (;;) {
        uint32_t i = q->tail;
        if (c->objs[i].freq) {
            c->objs[i].freq--;
            hc_list_move_head(c, q, i);
            continue;
        }
        gclock_remove(c, i);
        c->evictions++;
        return;
    }
}

static int gclock_verify(hc_cache *c, char *why, size_t n)
{
    const gclock_state *s = c->priv;
    if (hc_list_check(c, &s->q, "gclock", why, n) < 0)
        return -1;
    for (uint32_t i = s->q.head; i != HC_NIL; i = c->objs[i].next)
        if (c->objs[i].freq > s->k)
            return snprintf(why, n, "counter above K"), -1;
    return s->q.count == c->nresident ? 0 : (snprintf(why, n, "list count != residents"), -1);
}

const hc_policy_ops hc_policy_gclock = {
    .name = "gclock", .describe = "generalized CLOCK, counter saturating at K (gclock.k, default 2)",
    .init = gclock_init, .free = gclock_free, .hit = gclock_hit,
    .insert = gclock_insert, .evict = gclock_evict, .verify = gclock_verify, .remove = gclock_remove,
};
