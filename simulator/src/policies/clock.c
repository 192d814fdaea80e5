/*
 * CLOCK (Corbato 1968): one reference bit per object, hand at the oldest object. A new
 * object enters just behind the hand with the bit clear (digest_thesis 5.3: this choice
 * matters). Kept as a queue: the hand is the tail, "behind the hand" is the head.
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { sim_list q; } clock_state;

static int clock_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    clock_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    c->priv = s;
    return 0;
}

static void clock_free(sim_cache *c) { free(c->priv); }

static void clock_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    c->objs[idx].freq = 1;
}

static uint32_t clock_insert(sim_cache *c, const sim_req *r)
{
    uint32_t i = sim_obj_alloc(c, r);
    sim_list_push_head(c, &((clock_state *)c->priv)->q, i);
    sim_charge(c, i);
    return i;
}

static void clock_remove(sim_cache *c, uint32_t idx)
{
    sim_list_unlink(c, &((clock_state *)c->priv)->q, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void clock_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    sim_list *q = &((clock_state *)c->priv)->q;
    for (;;) {
        uint32_t i = q->tail;
        if (c->objs[i].freq) {
            c->objs[i].freq = 0;   /* second chance: clear and pass the hand over it */
            sim_list_move_head(c, q, i);
            continue;
        }
        clock_remove(c, i);
        c->evictions++;
        return;
    }
}

static int clock_verify(sim_cache *c, char *why, size_t n)
{
    const sim_list *q = &((clock_state *)c->priv)->q;
    if (sim_list_check(c, q, "clock", why, n) < 0)
        return -1;
    return q->count == c->nresident ? 0 : (snprintf(why, n, "list count != residents"), -1);
}

const sim_policy_ops sim_policy_clock = {
    .name = "clock", .describe = "CLOCK, 1 reference bit, insert behind the hand with bit clear",
    .init = clock_init, .free = clock_free, .hit = clock_hit,
    .insert = clock_insert, .evict = clock_evict, .verify = clock_verify, .remove = clock_remove,
};
