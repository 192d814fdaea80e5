/*
 * NbQ-CLOCK (Eads, UCB/EECS-2013-174), single-threaded: GCLOCK kept in a FIFO queue whose
 * head is the hand. insert pushes at the tail with counter 0; a hit increments an 8-bit
 * counter (saturating at 255: the report leaves saturate-vs-wrap open, digest A.2, and a
 * wrapping counter would turn the hottest item into the coldest); evict pops the head and
 * frees it if its counter is 0 or it is marked deleted, else decrements and re-enqueues it
 * at the tail. delete only sets the marker: the bytes come back when the sweep reaches the
 * node, as the report says. Per-item metadata: 10 bytes vs LRU's 16 (meta_delta -6).
 * Parameter: nbq.max (counter ceiling, default 255).
 * Queue orientation here: list tail = queue head (hand), list head = queue tail.
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

#define NBQ_DELETED 0x01

typedef struct {
    sim_list q;
    uint8_t max;
} nbq_state;

static int nbq_init(sim_cache *c, char *err, size_t errlen)
{
    double m = sim_param(c, "max", 255);
    if (m < 1 || m > 255) {
        snprintf(err, errlen, "nbq.max must be in 1..255");
        return -1;
    }
    nbq_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    s->max = (uint8_t)m;
    c->priv = s;
    return 0;
}

static void nbq_free(sim_cache *c) { free(c->priv); }

static void nbq_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    nbq_state *s = c->priv;
    if (c->objs[idx].freq < s->max)
        c->objs[idx].freq++;
}

static uint32_t nbq_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    sim_list_push_head(c, &((nbq_state *)c->priv)->q, i);
    sim_charge(c, i);
    return i;
}

/* delete: mark and unindex; the node and its bytes stay until the sweep pops it */
static void nbq_remove(sim_cache *c, uint32_t idx)
{
    c->objs[idx].flags |= NBQ_DELETED;
    sim_table_del(c, c->objs[idx].key);
}

static void nbq_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    sim_list *q = &((nbq_state *)c->priv)->q;
    for (;;) {
        uint32_t i = q->tail;     /* pop the queue head */
        sim_obj *o = &c->objs[i];
        if ((o->flags & NBQ_DELETED) || o->freq == 0) {
            int was_deleted = o->flags & NBQ_DELETED;
            sim_list_unlink(c, q, i);
            sim_uncharge(c, i);
            sim_obj_release(c, i);
            if (!was_deleted)
                c->evictions++;
            return;
        }
        o->freq--;
        sim_list_move_head(c, q, i);   /* push back at the queue tail */
    }
}

static int nbq_verify(sim_cache *c, char *why, size_t n)
{
    const nbq_state *s = c->priv;
    if (sim_list_check(c, &s->q, "nbq", why, n) < 0)
        return -1;
    return s->q.count == c->nresident ? 0 : (snprintf(why, n, "queue count != nodes held"), -1);
}

const sim_policy_ops sim_policy_nbq_clock = {
    .name = "nbq-clock",
    .describe = "NbQ-CLOCK (Eads 2013): GCLOCK as a FIFO queue, 8-bit counters, lazy delete",
    .meta_delta = -6,
    .init = nbq_init, .free = nbq_free, .hit = nbq_hit,
    .insert = nbq_insert, .evict = nbq_evict, .verify = nbq_verify, .remove = nbq_remove,
};
