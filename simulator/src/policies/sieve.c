/*
 * SIEVE (Zhang et al., NSDI'24): one FIFO queue and a hand that moves from the oldest
 * object toward the newest. A hit only sets the object's visited bit; the hand clears set
 * bits as it passes and evicts the first object without one, staying where it stopped
 * (unlike CLOCK, survivors are not moved to the head, so new objects are examined
 * quickly). The hand wraps to the tail after passing the head. As libCacheSim's Sieve.c.
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    sim_list q;      /* head = newest */
    uint32_t hand;  /* next object to examine, SIM_NIL = start at the tail */
} sieve_state;

static int sieve_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    sieve_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    s->hand = SIM_NIL;
    c->priv = s;
    return 0;
}

static void sieve_free(sim_cache *c) { free(c->priv); }

static void sieve_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    c->objs[idx].freq = 1;
}

static uint32_t sieve_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    sim_list_push_head(c, &((sieve_state *)c->priv)->q, i);
    sim_charge(c, i);
    return i;
}

static void sieve_remove(sim_cache *c, uint32_t idx)
{
    sieve_state *s = c->priv;
    if (s->hand == idx)
        s->hand = c->objs[idx].prev;
    sim_list_unlink(c, &s->q, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void sieve_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    sieve_state *s = c->priv;
    uint32_t i = s->hand == SIM_NIL ? s->q.tail : s->hand;
    while (c->objs[i].freq) {
        c->objs[i].freq = 0;
        i = c->objs[i].prev == SIM_NIL ? s->q.tail : c->objs[i].prev;
    }
    s->hand = c->objs[i].prev;   /* the hand stays where it stopped: i's newer neighbour */
    sim_list_unlink(c, &s->q, i);
    sim_uncharge(c, i);
    sim_obj_release(c, i);
    c->evictions++;
}

static int sieve_verify(sim_cache *c, char *why, size_t n)
{
    sieve_state *s = c->priv;
    if (sim_list_check(c, &s->q, "sieve", why, n) < 0)
        return -1;
    if (s->q.count != c->nresident)
        return snprintf(why, n, "queue count != residents"), -1;
    if (s->hand != SIM_NIL) {
        int found = 0;
        for (uint32_t i = s->q.head; i != SIM_NIL && !found; i = c->objs[i].next)
            found = i == s->hand;
        if (!found)
            return snprintf(why, n, "hand %u is not on the queue", s->hand), -1;
    }
    for (uint32_t i = s->q.head; i != SIM_NIL; i = c->objs[i].next)
        if (c->objs[i].freq > 1)
            return snprintf(why, n, "visited bit > 1"), -1;
    return 0;
}

const sim_policy_ops sim_policy_sieve = {
    .name = "sieve", .describe = "SIEVE (Zhang et al. 2024): FIFO with a visited bit and a lazy hand",
    .init = sieve_init, .free = sieve_free, .hit = sieve_hit,
    .insert = sieve_insert, .evict = sieve_evict, .verify = sieve_verify, .remove = sieve_remove,
};
