/*
 * S3-FIFO (Yang et al., SOSP'23): small FIFO S (10 % of the cache), main FIFO M with 2-bit
 * counters, ghost FIFO G of keys evicted from S (sized like M, 90 % of the cache, in the
 * same units). A miss that hits G goes to M, otherwise to S. Evicting from S moves objects
 * read at least `move` times (Algorithm 1's freq > 1; libCacheSim's move-to-main-threshold
 * 2) to M, else sends them to G. Evicting from M re-inserts objects with freq > 0 after
 * decrementing. Parameters: s3fifo.small (0.1), s3fifo.move (2), s3fifo.ghost (0.9).
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

enum { Q_S = 1, Q_M, Q_G };

typedef struct {
    sim_list s, m, g;
    uint64_t s_target, g_cap;
    int move;
} s3_state;

static int s3_init(sim_cache *c, char *err, size_t errlen)
{
    double small = sim_param(c, "small", 0.1), ghost = sim_param(c, "ghost", 0.9);
    double move = sim_param(c, "move", 2);
    if (small <= 0 || small >= 1 || ghost < 0 || move < 1 || move > 3) {
        snprintf(err, errlen, "s3fifo: need 0<small<1, ghost>=0, 1<=move<=3");
        return -1;
    }
    s3_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->s);
    sim_list_init(&s->m);
    sim_list_init(&s->g);
    s->s_target = (uint64_t)(small * (double)c->capacity);
    if (s->s_target < 1)
        s->s_target = 1;
    s->g_cap = (uint64_t)(ghost * (double)c->capacity);
    s->move = (int)move;
    c->priv = s;
    return 0;
}

static void s3_free(sim_cache *c) { free(c->priv); }

static void evict_main(sim_cache *c, s3_state *s)
{
    while (s->m.count) {
        uint32_t i = s->m.tail;
        if (c->objs[i].freq > 0) {
            c->objs[i].freq--;
            sim_list_move_head(c, &s->m, i);
            continue;
        }
        sim_list_unlink(c, &s->m, i);
        sim_uncharge(c, i);
        sim_obj_release(c, i);
        c->evictions++;
        return;
    }
}

static void evict_small(sim_cache *c, s3_state *s)
{
    while (s->s.count) {
        uint32_t i = s->s.tail;
        sim_obj *o = &c->objs[i];
        sim_list_unlink(c, &s->s, i);
        if (o->freq >= s->move) {
            o->freq = 0;
            o->qid = Q_M;
            sim_list_push_head(c, &s->m, i);
            continue;
        }
        sim_uncharge(c, i);
        c->evictions++;
        if (s->g_cap == 0) {
            sim_obj_release(c, i);
            return;
        }
        o->flags |= SIM_F_GHOST;
        o->qid = Q_G;
        sim_list_push_head(c, &s->g, i);
        while (s->g.bytes > s->g_cap) {
            uint32_t g = s->g.tail;
            sim_list_unlink(c, &s->g, g);
            sim_obj_release(c, g);
        }
        return;
    }
}

static void s3_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    s3_state *s = c->priv;
    if (s->s.bytes >= s->s_target || s->m.count == 0)
        evict_small(c, s);
    else
        evict_main(c, s);
}

static void s3_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    if (c->objs[idx].freq < 3)
        c->objs[idx].freq++;
}

static bool s3_get(sim_cache *c, const sim_req *r)
{
    s3_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL && !(c->objs[i].flags & SIM_F_GHOST)) {
        s3_hit(c, i, r);
        return true;
    }
    int ghost_hit = i != SIM_NIL;
    if (ghost_hit) {
        sim_list_unlink(c, &s->g, i);
        sim_obj_release(c, i);
    }
    if (r->charge > c->capacity)
        return false;
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        s3_evict(c, r);
    uint32_t n = sim_obj_alloc(c, r);
    c->objs[n].qid = ghost_hit ? Q_M : Q_S;
    sim_list_push_head(c, ghost_hit ? &s->m : &s->s, n);
    sim_charge(c, n);
    return false;
}

static uint32_t s3_insert(sim_cache *c, const sim_req *r)
{
    s3_state *s = c->priv;
    uint32_t n = sim_obj_alloc(c, r);
    c->objs[n].qid = Q_S;
    sim_list_push_head(c, &s->s, n);
    sim_charge(c, n);
    return n;
}

static void s3_remove(sim_cache *c, uint32_t idx)
{
    s3_state *s = c->priv;
    sim_list_unlink(c, c->objs[idx].qid == Q_S ? &s->s : &s->m, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static int s3_verify(sim_cache *c, char *why, size_t n)
{
    s3_state *s = c->priv;
    if (sim_list_check(c, &s->s, "S", why, n) < 0 || sim_list_check(c, &s->m, "M", why, n) < 0 ||
        sim_list_check(c, &s->g, "G", why, n) < 0)
        return -1;
    if (s->s.count + s->m.count != c->nresident)
        return snprintf(why, n, "S+M != residents"), -1;
    if (s->g.bytes > s->g_cap)
        return snprintf(why, n, "ghost over capacity"), -1;
    for (uint32_t i = s->m.head; i != SIM_NIL; i = c->objs[i].next)
        if (c->objs[i].freq > 3 || c->objs[i].qid != Q_M)
            return snprintf(why, n, "bad M object"), -1;
    return 0;
}

const sim_policy_ops sim_policy_s3fifo = {
    .name = "s3fifo", .describe = "S3-FIFO (Yang et al. 2023): small + main FIFO + ghost",
    .init = s3_init, .free = s3_free, .get = s3_get, .hit = s3_hit,
    .insert = s3_insert, .evict = s3_evict, .verify = s3_verify, .remove = s3_remove,
};
