/*
 * W-TinyLFU (Einziger, Friedman & Manes, ACM TOS 2017) as libCacheSim builds it: an LRU
 * window (1 % of the cache) in front of a segmented-LRU main cache (probation 20 % /
 * protected 80 % of the rest), and a frequency sketch that decides admission. When room is
 * needed, the window's LRU object moves to main if main has room; otherwise it is admitted
 * only if the sketch counts it more often than main's victim (which is then evicted), else
 * it is evicted itself. Each eviction round ends with one window object evicted (or main's
 * victim when the window is empty), so admitted candidates keep flowing into main.
 *
 * The sketch is libCacheSim's counting Bloom filter: 14.4 counters per main-cache object
 * (false-positive target 0.001), 10 hash positions, estimate = minimum, and every counter
 * halved after 32 x (main size) main-cache hits. It counts insertions, main hits and each
 * window candidate examined, as libCacheSim does. Window hits do not count. Parameters:
 * wtinylfu.window (0.01), wtinylfu.probation (0.2). The window holds at least one object
 * (libCacheSim's is 0 below 100 objects and then caches nothing).
 */
#include "../cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { Q_W = 1, Q_PROB, Q_PROT };

typedef struct {
    sim_list w, prob, prot;
    uint64_t w_cap, main_cap, prob_cap, prot_cap;
    uint16_t *cbf;   /* saturating; halving keeps them far below 65535 in practice */
    uint32_t ncounters, nhashes;
    uint64_t hits_since_decay, decay_every;
} wt_state;

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* minimum over the key's counters; add = 1 also increments them all */
static uint32_t cbf(wt_state *s, uint64_t key, int add)
{
    uint32_t a = (uint32_t)mix(key ^ 0x5bd1e995u), b = (uint32_t)mix(key ^ 0x1b873593u), m = UINT32_MAX;
    for (uint32_t i = 0; i < s->nhashes; i++) {
        /* multiply-shift range reduction: as uniform as %, without a division */
        uint32_t x = (uint32_t)(((uint64_t)(a + i * b) * s->ncounters) >> 32);
        if (s->cbf[x] < m)
            m = s->cbf[x];
        if (add && s->cbf[x] < UINT16_MAX)
            s->cbf[x]++;
    }
    return m;
}

static int wt_init(sim_cache *c, char *err, size_t errlen)
{
    double win = sim_param(c, "window", 0.01), prob = sim_param(c, "probation", 0.2);
    if (!(win > 0 && win < 1) || !(prob > 0 && prob < 1)) {
        snprintf(err, errlen, "wtinylfu: need 0<window<1 and 0<probation<1");
        return -1;
    }
    wt_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->w);
    sim_list_init(&s->prob);
    sim_list_init(&s->prot);
    s->w_cap = (uint64_t)((double)c->capacity * win);
    if (s->w_cap < 1)
        s->w_cap = 1;
    s->main_cap = c->capacity > s->w_cap ? c->capacity - s->w_cap : 0;
    s->prob_cap = (uint64_t)(prob * (double)s->main_cap);
    s->prot_cap = (uint64_t)((1 - prob) * (double)s->main_cap);
    /* the sketch is sized in objects: main's capacity over the typical object */
    uint64_t objs = sim_capacity_objects(c);
    uint64_t main_objs = c->capacity ? (uint64_t)((double)objs * (double)s->main_cap / (double)c->capacity) : 0;
    if (main_objs < 1)
        main_objs = 1;
    double bpe = -log(0.001) / (log(2) * log(2));
    s->nhashes = (uint32_t)ceil(log(2) * bpe);
    double nc = ceil(bpe * (double)main_objs);
    s->ncounters = nc > (double)(UINT32_MAX / 2) ? UINT32_MAX / 2 : (uint32_t)nc;
    if (s->ncounters < 2 * s->nhashes)
        s->ncounters = 2 * s->nhashes;
    s->decay_every = 32 * main_objs;
    s->cbf = calloc(s->ncounters, sizeof *s->cbf);
    if (!s->cbf) {
        free(s);
        snprintf(err, errlen, "wtinylfu: out of memory for the sketch");
        return -1;
    }
    c->priv = s;
    return 0;
}

static void wt_free(sim_cache *c)
{
    wt_state *s = c->priv;
    free(s->cbf);
    free(s);
}

static sim_list *list_of(wt_state *s, uint8_t q) { return q == Q_W ? &s->w : q == Q_PROB ? &s->prob : &s->prot; }

static void drop(sim_cache *c, wt_state *s, uint32_t i)
{
    sim_list_unlink(c, list_of(s, c->objs[i].qid), i);
    sim_uncharge(c, i);
    sim_obj_release(c, i);
    c->evictions++;
}

static uint32_t main_victim(wt_state *s) { return s->prob.count ? s->prob.tail : s->prot.tail; }

static void to_seg(sim_cache *c, wt_state *s, uint32_t i, uint8_t q)
{
    c->objs[i].qid = q;
    sim_list_push_head(c, list_of(s, q), i);
}

/* window object i enters main: the first segment with room (libCacheSim's SLRU insert) */
static void enter_main(sim_cache *c, wt_state *s, uint32_t i)
{
    uint32_t ch = c->objs[i].charge;
    sim_list_unlink(c, &s->w, i);
    if (s->prob.bytes + ch <= s->prob_cap) {
        to_seg(c, s, i, Q_PROB);
    } else if (s->prot.bytes + ch <= s->prot_cap) {
        to_seg(c, s, i, Q_PROT);
    } else {
        while (s->prob.count + s->prot.count && s->prob.bytes + s->prot.bytes + ch > s->main_cap)
            drop(c, s, main_victim(s));
        to_seg(c, s, i, Q_PROB);
    }
}

static void wt_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    wt_state *s = c->priv;
    for (;;) {
        if (s->w.count == 0) {
            drop(c, s, main_victim(s));
            return;
        }
        uint32_t wv = s->w.tail;
        uint64_t wkey = c->objs[wv].prio;   /* the trace key, for the sketch */
        if (s->prob.bytes + s->prot.bytes + c->objs[wv].charge <= s->main_cap) {
            enter_main(c, s, wv);
        } else {
            uint32_t mv = main_victim(s);
            if (mv != SIM_NIL && cbf(s, wkey, 0) > cbf(s, c->objs[mv].prio, 0)) {
                drop(c, s, mv);
                enter_main(c, s, wv);
            } else {
                drop(c, s, wv);
                cbf(s, wkey, 1);
                return;
            }
        }
        cbf(s, wkey, 1);
    }
}

static void wt_hit(sim_cache *c, uint32_t i, const sim_req *r)
{
    (void)r;
    wt_state *s = c->priv;
    sim_obj *o = &c->objs[i];
    if (o->qid == Q_W) {
        sim_list_move_head(c, &s->w, i);
        return;
    }
    if (o->qid == Q_PROT) {
        sim_list_move_head(c, &s->prot, i);
    } else {
        sim_list_unlink(c, &s->prob, i);
        to_seg(c, s, i, Q_PROT);
        while (s->prot.bytes > s->prot_cap && s->prot.count) {   /* cool: back to probation */
            uint32_t t = s->prot.tail;
            sim_list_unlink(c, &s->prot, t);
            to_seg(c, s, t, Q_PROB);
        }
        while (s->prob.bytes > s->prob_cap && s->prob.count)
            drop(c, s, s->prob.tail);
    }
    cbf(s, o->prio, 1);
    if (++s->hits_since_decay >= s->decay_every) {
        s->hits_since_decay = 0;
        for (uint32_t k = 0; k < s->ncounters; k++)
            s->cbf[k] >>= 1;
    }
}

static uint32_t wt_insert(sim_cache *c, const sim_req *r)
{
    wt_state *s = c->priv;
    uint32_t n = sim_obj_alloc(c, r);
    c->objs[n].prio = r->hkey;
    to_seg(c, s, n, Q_W);
    sim_charge(c, n);
    cbf(s, r->hkey, 1);
    return n;
}

static bool wt_get(sim_cache *c, const sim_req *r)
{
    wt_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL) {
        wt_hit(c, i, r);
        return true;
    }
    if (r->charge > s->w_cap || r->charge > c->capacity)
        return false;   /* larger than the window: not cached (libCacheSim's can_insert) */
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        wt_evict(c, r);
    wt_insert(c, r);
    return false;
}

static void wt_remove(sim_cache *c, uint32_t i)
{
    wt_state *s = c->priv;
    sim_list_unlink(c, list_of(s, c->objs[i].qid), i);
    sim_uncharge(c, i);
    sim_obj_release(c, i);
}

static int wt_verify(sim_cache *c, char *why, size_t n)
{
    wt_state *s = c->priv;
    if (sim_list_check(c, &s->w, "window", why, n) < 0 || sim_list_check(c, &s->prob, "probation", why, n) < 0 ||
        sim_list_check(c, &s->prot, "protected", why, n) < 0)
        return -1;
    if (s->w.count + s->prob.count + s->prot.count != c->nresident)
        return snprintf(why, n, "segments != residents"), -1;
    if (s->prob.bytes + s->prot.bytes > s->main_cap)
        return snprintf(why, n, "main over its size"), -1;
    if (s->prot.bytes > s->prot_cap && s->prot.count > 1)
        return snprintf(why, n, "protected over its size"), -1;
    const sim_list *ls[3] = {&s->w, &s->prob, &s->prot};
    for (int q = 0; q < 3; q++)
        for (uint32_t i = ls[q]->head; i != SIM_NIL; i = c->objs[i].next)
            if (c->objs[i].qid != q + 1)
                return snprintf(why, n, "object with the wrong segment id"), -1;
    /* every resident was counted at least once when it was inserted, halvings aside */
    if (s->hits_since_decay >= s->decay_every)
        return snprintf(why, n, "sketch decay overdue"), -1;
    return 0;
}

const sim_policy_ops sim_policy_wtinylfu = {
    .name = "wtinylfu", .describe = "W-TinyLFU (Einziger et al. 2017): LRU window 1 %, SLRU main, sketch admission",
    .init = wt_init, .free = wt_free, .get = wt_get, .hit = wt_hit,
    .insert = wt_insert, .evict = wt_evict, .verify = wt_verify, .remove = wt_remove,
};
