/*
 * GDSF, GreedyDual-Size-Frequency (Cherkasova 1998): H = L + freq x cost / size, evict the
 * smallest H and set L to it (aging: old objects' H fall behind the rising L). Size is the
 * object's charge (bytes in byte mode, so large values go first; 1 in item mode, where GDSF
 * is LFU with dynamic aging), cost the request's recomputation cost (1 by default; libCacheSim
 * uses the constant 1e6, which orders the same). Ties: the least recently updated first.
 */
#include "../cache.h"
#include "../heap.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    sim_heap h;
    double L;   /* H of the last evicted object */
} gdsf_state;

static int gdsf_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    gdsf_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    c->priv = s;
    return 0;
}

static void gdsf_free(sim_cache *c)
{
    gdsf_state *s = c->priv;
    sim_heap_free(&s->h);
    free(s);
}

static double h_of(const gdsf_state *s, const sim_obj *o)
{
    double size = o->charge ? (double)o->charge : 1.0;
    return s->L + (double)o->prio * (double)o->cost / size;
}

static void gdsf_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    gdsf_state *s = c->priv;
    sim_obj *o = &c->objs[idx];
    o->prio++;
    sim_heap_update(c, &s->h, o->aux, h_of(s, o), c->now);
}

static uint32_t gdsf_insert(sim_cache *c, const sim_req *r)
{
    gdsf_state *s = c->priv;
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].prio = 1;
    if (sim_heap_push(c, &s->h, i, h_of(s, &c->objs[i]), c->now) < 0) {
        fprintf(stderr, "hcsim: out of memory growing the GDSF heap\n");
        abort();
    }
    sim_charge(c, i);
    return i;
}

static void gdsf_remove(sim_cache *c, uint32_t idx)
{
    sim_heap_remove(c, &((gdsf_state *)c->priv)->h, c->objs[idx].aux);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void gdsf_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    gdsf_state *s = c->priv;
    s->L = s->h.a[0].pri;
    gdsf_remove(c, s->h.a[0].idx);
    c->evictions++;
}

static int gdsf_verify(sim_cache *c, char *why, size_t n)
{
    gdsf_state *s = c->priv;
    if (s->h.n != c->nresident)
        return snprintf(why, n, "heap size %u != residents", s->h.n), -1;
    if (sim_heap_check(c, &s->h) < 0)
        return snprintf(why, n, "heap order or positions broken"), -1;
    /* L never passes a resident's H: every H was set from an L no larger than today's,
     * and L only takes the minimum H */
    if (s->h.n && s->h.a[0].pri < s->L)
        return snprintf(why, n, "an H (%g) below L (%g)", s->h.a[0].pri, s->L), -1;
    return 0;
}

const sim_policy_ops sim_policy_gdsf = {
    .name = "gdsf", .describe = "GDSF (Cherkasova 1998): H = L + freq x cost / size",
    .init = gdsf_init, .free = gdsf_free, .hit = gdsf_hit,
    .insert = gdsf_insert, .evict = gdsf_evict, .verify = gdsf_verify, .remove = gdsf_remove,
};
