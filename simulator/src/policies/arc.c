/*
 * ARC (Megiddo & Modha, FAST'03). T1/T2 resident (seen once / at least twice), B1/B2 their
 * ghosts, target p for T1. With unit sizes this is the paper's Fig. 4 case for case; with
 * bytes, |X| is the bytes of X and p moves by delta * size (delta = max(1, |B2|/|B1|) as in
 * the paper). The byte cases reduce to the unit cases:
 *   IV.A |T1|+|B1| would exceed c: drop B1's LRU ghosts; if T1 alone is full, drop T1's
 *        LRU without a ghost; then REPLACE while the resident set is full.
 *   IV.B otherwise: drop B2's LRU ghosts while the directory would exceed 2c; REPLACE.
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

enum { Q_T1 = 1, Q_T2, Q_B1, Q_B2 };

typedef struct {
    sim_list t1, t2, b1, b2;
    double p;
} arc_state;

static sim_list *qof(arc_state *s, uint8_t q)
{
    switch (q) {
    case Q_T1: return &s->t1;
    case Q_T2: return &s->t2;
    case Q_B1: return &s->b1;
    default: return &s->b2;
    }
}

static int arc_init(sim_cache *c, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    arc_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->t1);
    sim_list_init(&s->t2);
    sim_list_init(&s->b1);
    sim_list_init(&s->b2);
    c->priv = s;
    return 0;
}

static void arc_free(sim_cache *c) { free(c->priv); }

/* resident LRU of T1 or T2 becomes a ghost at the MRU end of B1 or B2 */
static void to_ghost(sim_cache *c, arc_state *s, uint8_t from)
{
    sim_list *src = qof(s, from);
    uint32_t i = src->tail;
    sim_list_unlink(c, src, i);
    sim_uncharge(c, i);
    c->objs[i].flags |= SIM_F_GHOST;
    c->objs[i].qid = from == Q_T1 ? Q_B1 : Q_B2;
    sim_list_push_head(c, qof(s, c->objs[i].qid), i);
    c->evictions++;
}

static void drop_ghost(sim_cache *c, sim_list *l)
{
    uint32_t i = l->tail;
    sim_list_unlink(c, l, i);
    sim_obj_release(c, i);
}

static void replace(sim_cache *c, arc_state *s, int in_b2)
{
    double t1 = (double)s->t1.bytes;
    if (s->t1.count > 0 && (t1 > s->p || (in_b2 && t1 == s->p) || s->t2.count == 0))
        to_ghost(c, s, Q_T1);
    else
        to_ghost(c, s, Q_T2);
}

static bool arc_get(sim_cache *c, const sim_req *r)
{
    arc_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL && !(c->objs[i].flags & SIM_F_GHOST)) {
        /* Case I: hit in T1 or T2 -> MRU of T2 */
        sim_list_unlink(c, qof(s, c->objs[i].qid), i);
        c->objs[i].qid = Q_T2;
        sim_list_push_head(c, &s->t2, i);
        return true;
    }
    double cap = (double)c->capacity, sz = r->charge;
    if (r->charge > c->capacity)
        return false;
    if (i != SIM_NIL) {
        /* Case II / III: ghost hit, adapt p, then make room and fetch into T2 */
        int in_b2 = c->objs[i].qid == Q_B2;
        double b1 = (double)s->b1.bytes, b2 = (double)s->b2.bytes;
        if (!in_b2) {
            double d = b1 >= b2 ? 1.0 : b2 / b1;
            s->p = s->p + d * sz < cap ? s->p + d * sz : cap;
        } else {
            double d = b2 >= b1 ? 1.0 : b1 / b2;
            s->p = s->p - d * sz > 0 ? s->p - d * sz : 0;
        }
        sim_list_unlink(c, qof(s, c->objs[i].qid), i);
        while (c->used + r->charge > c->capacity && c->nresident > 0)
            replace(c, s, in_b2);
        sim_obj *o = &c->objs[i];
        o->flags &= (uint8_t)~SIM_F_GHOST;
        o->size = r->size;
        o->charge = r->charge;
        o->cost = r->cost;
        o->qid = Q_T2;
        sim_list_push_head(c, &s->t2, i);
        sim_charge(c, i);
        /* bytes only: the object may come back larger than its ghost was; keep the
         * directory within 2c (never triggers with unit sizes) */
        while (s->t1.bytes + s->t2.bytes + s->b1.bytes + s->b2.bytes > 2 * c->capacity &&
               s->b1.count + s->b2.count > 0)
            drop_ghost(c, s->b2.count ? &s->b2 : &s->b1);
        return false;
    }
    /* Case IV: not in the directory */
    if (s->t1.bytes + s->b1.bytes + r->charge > c->capacity) {
        while (s->b1.count > 0 && s->t1.bytes + s->b1.bytes + r->charge > c->capacity)
            drop_ghost(c, &s->b1);
        while (s->t1.count > 0 && s->t1.bytes + s->b1.bytes + r->charge > c->capacity) {
            uint32_t v = s->t1.tail;
            sim_list_unlink(c, &s->t1, v);
            sim_uncharge(c, v);
            sim_obj_release(c, v);
            c->evictions++;
        }
    } else {
        while (s->b2.count > 0 &&
               s->t1.bytes + s->t2.bytes + s->b1.bytes + s->b2.bytes + r->charge > 2 * c->capacity)
            drop_ghost(c, &s->b2);
    }
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        replace(c, s, 0);
    uint32_t n = sim_obj_alloc(c, r);
    c->objs[n].qid = Q_T1;
    sim_list_push_head(c, &s->t1, n);
    sim_charge(c, n);
    /* bytes only: IV.A may free fewer bytes from B1 than the new object adds */
    while (s->t1.bytes + s->t2.bytes + s->b1.bytes + s->b2.bytes > 2 * c->capacity &&
           s->b1.count + s->b2.count > 0)
        drop_ghost(c, s->b2.count ? &s->b2 : &s->b1);
    return false;
}

static void arc_remove(sim_cache *c, uint32_t idx)
{
    arc_state *s = c->priv;
    sim_list_unlink(c, qof(s, c->objs[idx].qid), idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

/* vtable completeness: ARC's logic lives in get, these serve generic callers */
static void arc_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)idx;
    arc_get(c, r);
}
static uint32_t arc_insert(sim_cache *c, const sim_req *r)
{
    arc_get(c, r);
    return sim_find(c, r->key);
}
static void arc_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    replace(c, c->priv, 0);
}

static int arc_verify(sim_cache *c, char *why, size_t n)
{
    arc_state *s = c->priv;
    const char *nm[4] = {"T1", "T2", "B1", "B2"};
    for (uint8_t q = Q_T1; q <= Q_B2; q++) {
        if (sim_list_check(c, qof(s, q), nm[q - 1], why, n) < 0)
            return -1;
        for (uint32_t i = qof(s, q)->head; i != SIM_NIL; i = c->objs[i].next)
            if (c->objs[i].qid != q || !(c->objs[i].flags & SIM_F_GHOST) != (q <= Q_T2))
                return snprintf(why, n, "object on %s has wrong qid/ghost flag", nm[q - 1]), -1;
    }
    if (s->t1.count + s->t2.count != c->nresident)
        return snprintf(why, n, "T1+T2 != residents"), -1;
    if (s->t1.bytes + s->b1.bytes > c->capacity + 0 || s->t1.bytes + s->t2.bytes + s->b1.bytes + s->b2.bytes > 2 * c->capacity)
        return snprintf(why, n, "directory over its bounds: T1 %llu T2 %llu B1 %llu B2 %llu c %llu",
                        (unsigned long long)s->t1.bytes, (unsigned long long)s->t2.bytes,
                        (unsigned long long)s->b1.bytes, (unsigned long long)s->b2.bytes,
                        (unsigned long long)c->capacity), -1;
    if (s->p < 0 || s->p > (double)c->capacity)
        return snprintf(why, n, "p out of range"), -1;
    return 0;
}

const sim_policy_ops sim_policy_arc = {
    .name = "arc", .describe = "ARC (Megiddo & Modha 2003), byte-generalised",
    .init = arc_init, .free = arc_free, .get = arc_get, .hit = arc_hit,
    .insert = arc_insert, .evict = arc_evict, .verify = arc_verify, .remove = arc_remove,
};
