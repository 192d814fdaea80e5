/*
 * 2Q (Johnson & Shasha, VLDB'94), full version, with libCacheSim's parameters: A1in FIFO
 * (Kin = 25 % of the cache), A1out ghost FIFO (Kout = 50 %, in the same units), Am LRU
 * (the rest, 75 %). A new object enters A1in; a hit in A1in does nothing; a miss that finds
 * the key in A1out enters Am. To make room, A1in's oldest goes to A1out while A1in is over
 * Kin, otherwise Am's LRU object is evicted. Parameters: twoq.kin (0.25), twoq.kout (0.5).
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

enum { Q_IN = 1, Q_M, Q_OUT };

typedef struct {
    sim_list in, m, out;
    uint64_t in_cap, m_cap, out_cap;
} twoq_state;

static int twoq_init(sim_cache *c, char *err, size_t errlen)
{
    double kin = sim_param(c, "kin", 0.25), kout = sim_param(c, "kout", 0.5);
    if (!(kin > 0 && kin < 1) || !(kout >= 0)) {
        snprintf(err, errlen, "twoq: need 0<kin<1 and kout>=0");
        return -1;
    }
    twoq_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->in);
    sim_list_init(&s->m);
    sim_list_init(&s->out);
    s->in_cap = (uint64_t)(kin * (double)c->capacity);
    s->out_cap = (uint64_t)(kout * (double)c->capacity);
    s->m_cap = c->capacity - s->in_cap;
    c->priv = s;
    return 0;
}

static void twoq_free(sim_cache *c) { free(c->priv); }

static void drop(sim_cache *c, sim_list *l, uint32_t i)
{
    sim_list_unlink(c, l, i);
    sim_uncharge(c, i);
    sim_obj_release(c, i);
    c->evictions++;
}

/* A1in's oldest becomes a ghost on A1out (bounded by out_cap) */
static void in_to_out(sim_cache *c, twoq_state *s)
{
    uint32_t i = s->in.tail;
    sim_list_unlink(c, &s->in, i);
    sim_uncharge(c, i);
    c->evictions++;
    if (s->out_cap == 0) {
        sim_obj_release(c, i);
        return;
    }
    sim_ghost_push(c, &s->out, i, Q_OUT, s->out_cap);
}

static void twoq_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    twoq_state *s = c->priv;
    if (s->in.bytes > s->in_cap || s->m.count == 0)
        in_to_out(c, s);
    else
        drop(c, &s->m, s->m.tail);
}

static void twoq_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    twoq_state *s = c->priv;
    if (c->objs[idx].qid == Q_M)
        sim_list_move_head(c, &s->m, idx);
}

static uint32_t put(sim_cache *c, twoq_state *s, const sim_req *r, int to_m)
{
    if (to_m) /* Am is an LRU of its own size (libCacheSim: a nested LRU cache) */
        while (s->m.count && s->m.bytes + r->charge > s->m_cap)
            drop(c, &s->m, s->m.tail);
    uint32_t n = sim_obj_alloc(c, r);
    c->objs[n].qid = to_m ? Q_M : Q_IN;
    sim_list_push_head(c, to_m ? &s->m : &s->in, n);
    sim_charge(c, n);
    return n;
}

static bool twoq_get(sim_cache *c, const sim_req *r)
{
    twoq_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL && !(c->objs[i].flags & SIM_F_GHOST)) {
        twoq_hit(c, i, r);
        return true;
    }
    int ghost_hit = i != SIM_NIL;
    if (ghost_hit) {
        sim_list_unlink(c, &s->out, i);
        sim_obj_release(c, i);
    }
    if (r->charge > c->capacity)
        return false;
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        twoq_evict(c, r);
    put(c, s, r, ghost_hit);
    return false;
}

static uint32_t twoq_insert(sim_cache *c, const sim_req *r) { return put(c, c->priv, r, 0); }

static void twoq_remove(sim_cache *c, uint32_t idx)
{
    twoq_state *s = c->priv;
    sim_list_unlink(c, c->objs[idx].qid == Q_M ? &s->m : &s->in, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static int twoq_verify(sim_cache *c, char *why, size_t n)
{
    twoq_state *s = c->priv;
    if (sim_list_check(c, &s->in, "A1in", why, n) < 0 || sim_list_check(c, &s->m, "Am", why, n) < 0 ||
        sim_list_check(c, &s->out, "A1out", why, n) < 0)
        return -1;
    if (s->in.count + s->m.count != c->nresident)
        return snprintf(why, n, "A1in+Am != residents"), -1;
    if (s->out.bytes > s->out_cap)
        return snprintf(why, n, "A1out over its size"), -1;
    if (s->m.count > 1 && s->m.bytes > s->m_cap)
        return snprintf(why, n, "Am over its size"), -1;
    for (uint32_t i = s->out.head; i != SIM_NIL; i = c->objs[i].next)
        if (!(c->objs[i].flags & SIM_F_GHOST) || c->objs[i].qid != Q_OUT)
            return snprintf(why, n, "resident object on A1out"), -1;
    for (uint32_t i = s->m.head; i != SIM_NIL; i = c->objs[i].next)
        if (c->objs[i].qid != Q_M)
            return snprintf(why, n, "Am object with the wrong queue id"), -1;
    return 0;
}

const sim_policy_ops sim_policy_twoq = {
    .name = "twoq", .describe = "2Q (Johnson & Shasha 1994): A1in FIFO 25 %, A1out ghosts 50 %, Am LRU",
    .init = twoq_init, .free = twoq_free, .get = twoq_get, .hit = twoq_hit,
    .insert = twoq_insert, .evict = twoq_evict, .verify = twoq_verify, .remove = twoq_remove,
};
