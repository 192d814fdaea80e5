/*
 * ML-CLOCK (Cho & Kang, Electronics 2021; the seed thesis' Haura port) adapted to memcached
 * as research/digest_thesis.md (2.4, 5.3) prescribes. memcached has no dirty items, so the
 * clean/dirty clock pair collapses to one CLOCK (1 reference bit, insert behind the hand
 * with the bit clear); the single-layer perceptron over (scaled age, reference count, bias)
 * then only matters if it gates something, so it gates the eviction: an unreferenced
 * object at the hand that the model predicts will be re-referenced (output 1) is spared
 * once (moved behind the hand, as a second chance) until it is referenced again. At most
 * `spares` objects are spared per eviction, so the hand cannot circle forever.
 *
 * Learning (perceptron rule w += lr x (label - prediction) x x):
 *  - a hit: label 1, with the features as they were before this access (the thesis'
 *    listing updated the metadata first, so its age was always ~0);
 *  - a miss on a key in the ghost queue (the eviction was a mistake): label 1, with the
 *    features it had when evicted (the listing checked the victim instead of the key);
 *  - a ghost leaving the queue unreferenced: label 0, with its eviction-time features.
 * The ghost queue has a fixed size (the cache's, in its units), not the thesis' dynamic one
 * that fires bursts of label-0 updates after a flush. Features: age = requests since the
 * last access / resident objects (Eq. 4.2), count = accesses since insertion (saturating
 * at 255). Parameters: mlclock.lr (0.01), .spares (8), initial weights w_age (0),
 * w_count (0), w_bias (-0.5): the untrained model spares nobody, which is CLOCK.
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F_REF 0x01
#define F_SPARED 0x02
enum { Q_RES = 1, Q_GHOST };

typedef struct {
    sim_list q;       /* the clock: tail = hand, head = just behind it */
    sim_list ghost;   /* evicted keys, head = newest */
    uint64_t ghost_cap;
    double w[3], lr;
    int spares;
    uint64_t learned, spared;
} mlc_state;

static int mlc_init(sim_cache *c, char *err, size_t errlen)
{
    mlc_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->lr = sim_param(c, "lr", 0.01);
    s->spares = (int)sim_param(c, "spares", 8);
    s->w[0] = sim_param(c, "w_age", 0.0);
    s->w[1] = sim_param(c, "w_count", 0.0);
    s->w[2] = sim_param(c, "w_bias", -0.5);
    if (!(s->lr >= 0) || s->spares < 0) {
        free(s);
        snprintf(err, errlen, "mlclock: need lr>=0 and spares>=0");
        return -1;
    }
    sim_list_init(&s->q);
    sim_list_init(&s->ghost);
    s->ghost_cap = c->capacity;
    c->priv = s;
    return 0;
}

static void mlc_free(sim_cache *c) { free(c->priv); }

static int predict(const mlc_state *s, double age, double count)
{
    return s->w[0] * age + s->w[1] * count + s->w[2] >= 0;
}

static void learn(mlc_state *s, double age, double count, int label)
{
    int err = label - predict(s, age, count);
    if (err) {
        s->w[0] += s->lr * err * age;
        s->w[1] += s->lr * err * count;
        s->w[2] += s->lr * err;
    }
    s->learned++;
}

static double age_of(const sim_cache *c, const sim_obj *o)
{
    return (double)(c->now - o->prio) / (double)(c->nresident ? c->nresident : 1);
}

/* a ghost keeps its eviction-time age in prio (as the bits of a double) and count in freq */
static double ghost_age(const sim_obj *o)
{
    double a;
    memcpy(&a, &o->prio, sizeof a);
    return a;
}

static void mlc_hit(sim_cache *c, uint32_t i, const sim_req *r)
{
    (void)r;
    mlc_state *s = c->priv;
    sim_obj *o = &c->objs[i];
    learn(s, age_of(c, o), (double)o->freq, 1);   /* features before this access */
    o->flags = (uint8_t)((o->flags | F_REF) & ~F_SPARED);
    if (o->freq < 255)
        o->freq++;
    o->prio = c->now;
}

static uint32_t mlc_insert(sim_cache *c, const sim_req *r)
{
    mlc_state *s = c->priv;
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].qid = Q_RES;
    c->objs[i].prio = c->now;
    sim_list_push_head(c, &s->q, i);
    sim_charge(c, i);
    return i;
}

static void drop_ghost(sim_cache *c, mlc_state *s, uint32_t g, int expired)
{
    if (expired)   /* never asked for again within the ghost window: keeping it was useless */
        learn(s, ghost_age(&c->objs[g]), (double)c->objs[g].freq, 0);
    sim_list_unlink(c, &s->ghost, g);
    sim_obj_release(c, g);
}

static void mlc_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    mlc_state *s = c->priv;
    int spared = 0;
    for (;;) {
        uint32_t i = s->q.tail;
        sim_obj *o = &c->objs[i];
        if (o->flags & F_REF) {   /* CLOCK's second chance */
            o->flags &= (uint8_t)~F_REF;
            sim_list_move_head(c, &s->q, i);
            continue;
        }
        double age = age_of(c, o);
        if (!(o->flags & F_SPARED) && spared < s->spares && predict(s, age, (double)o->freq)) {
            o->flags |= F_SPARED;   /* the model expects a re-reference: one more round */
            sim_list_move_head(c, &s->q, i);
            spared++;
            s->spared++;
            continue;
        }
        sim_list_unlink(c, &s->q, i);
        sim_uncharge(c, i);
        c->evictions++;
        if (s->ghost_cap == 0) {
            sim_obj_release(c, i);
            return;
        }
        o->flags = SIM_F_GHOST;
        o->qid = Q_GHOST;
        memcpy(&o->prio, &age, sizeof age);
        sim_list_push_head(c, &s->ghost, i);
        while (s->ghost.bytes > s->ghost_cap)
            drop_ghost(c, s, s->ghost.tail, 1);
        return;
    }
}

static bool mlc_get(sim_cache *c, const sim_req *r)
{
    mlc_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL && !(c->objs[i].flags & SIM_F_GHOST)) {
        mlc_hit(c, i, r);
        return true;
    }
    if (i != SIM_NIL) {   /* evicted too early: it should have been kept */
        learn(s, ghost_age(&c->objs[i]), (double)c->objs[i].freq, 1);
        drop_ghost(c, s, i, 0);
    }
    if (r->charge > c->capacity)
        return false;
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        mlc_evict(c, r);
    mlc_insert(c, r);
    return false;
}

static void mlc_remove(sim_cache *c, uint32_t i)
{
    sim_list_unlink(c, &((mlc_state *)c->priv)->q, i);
    sim_uncharge(c, i);
    sim_obj_release(c, i);
}

static int mlc_verify(sim_cache *c, char *why, size_t n)
{
    mlc_state *s = c->priv;
    if (sim_list_check(c, &s->q, "clock", why, n) < 0 || sim_list_check(c, &s->ghost, "ghost", why, n) < 0)
        return -1;
    if (s->q.count != c->nresident)
        return snprintf(why, n, "clock count != residents"), -1;
    if (s->ghost.bytes > s->ghost_cap)
        return snprintf(why, n, "ghost queue over its size"), -1;
    for (uint32_t i = s->ghost.head; i != SIM_NIL; i = c->objs[i].next)
        if (!(c->objs[i].flags & SIM_F_GHOST) || c->objs[i].qid != Q_GHOST || !(ghost_age(&c->objs[i]) >= 0))
            return snprintf(why, n, "bad ghost entry"), -1;
    for (uint32_t i = s->q.head; i != SIM_NIL; i = c->objs[i].next)
        if (c->objs[i].qid != Q_RES || c->objs[i].prio > c->now)
            return snprintf(why, n, "bad resident entry"), -1;
    for (int k = 0; k < 3; k++)
        if (!(s->w[k] == s->w[k]))
            return snprintf(why, n, "weight %d is NaN", k), -1;
    return 0;
}

/* test hook: the weights and how often the model spared an object */
void sim_mlclock_debug(const sim_cache *c, double w[3], uint64_t *learned, uint64_t *spared)
{
    const mlc_state *s = c->priv;
    memcpy(w, s->w, sizeof s->w);
    *learned = s->learned;
    *spared = s->spared;
}

const sim_policy_ops sim_policy_mlclock = {
    .name = "mlclock", .describe = "ML-CLOCK (Cho & Kang 2021) for memcached: CLOCK + perceptron-gated eviction",
    .init = mlc_init, .free = mlc_free, .get = mlc_get, .hit = mlc_hit,
    .insert = mlc_insert, .evict = mlc_evict, .verify = mlc_verify, .remove = mlc_remove,
};
