/*
 * Belady's OPT (MIN, 1966): evict the resident object whose next request is furthest in
 * the future (never requested again = infinitely far). Offline: it reads r->next, the
 * trace position of the key's next request, which the driver computes in one backward
 * pass when a policy sets needs_future. Every miss is admitted (demand fill), as in
 * libCacheSim's Belady, so this is the upper bound for the policies here, which also admit
 * every miss; in byte mode it evicts by next use only (not size-aware, like Belady there).
 */
#include "../cache.h"
#include "../heap.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { sim_heap h; } opt_state;

static int opt_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    opt_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    c->priv = s;
    return 0;
}

static void opt_free(sim_cache *c)
{
    opt_state *s = c->priv;
    sim_heap_free(&s->h);
    free(s);
}

/* min-heap: the furthest next use must come out first */
static double key_of(uint64_t next) { return -(double)next; }

static void opt_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    c->objs[idx].prio = r->next;
    sim_heap_update(c, &((opt_state *)c->priv)->h, c->objs[idx].aux, key_of(r->next), 0);
}

static uint32_t opt_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].prio = r->next;
    if (sim_heap_push(c, &((opt_state *)c->priv)->h, i, key_of(r->next), 0) < 0) {
        fprintf(stderr, "hcsim: out of memory growing the OPT heap\n");
        abort();
    }
    sim_charge(c, i);
    return i;
}

static void opt_remove(sim_cache *c, uint32_t idx)
{
    sim_heap_remove(c, &((opt_state *)c->priv)->h, c->objs[idx].aux);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void opt_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    opt_remove(c, ((opt_state *)c->priv)->h.a[0].idx);
    c->evictions++;
}

static int opt_verify(sim_cache *c, char *why, size_t n)
{
    opt_state *s = c->priv;
    if (s->h.n != c->nresident)
        return snprintf(why, n, "heap size %u != residents", s->h.n), -1;
    if (sim_heap_check(c, &s->h) < 0)
        return snprintf(why, n, "heap order or positions broken"), -1;
    /* a resident's next use is in the future of the requests seen so far */
    for (uint32_t k = 0; k < s->h.n; k++) {
        const sim_obj *o = &c->objs[s->h.a[k].idx];
        if (s->h.a[k].pri != key_of(o->prio))
            return snprintf(why, n, "heap key != next use"), -1;
    }
    return 0;
}

const sim_policy_ops sim_policy_opt = {
    .name = "opt", .describe = "Belady OPT: evict the furthest next use (offline upper bound)",
    .needs_future = 1,
    .init = opt_init, .free = opt_free, .hit = opt_hit,
    .insert = opt_insert, .evict = opt_evict, .verify = opt_verify, .remove = opt_remove,
};
