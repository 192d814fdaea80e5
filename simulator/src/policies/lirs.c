/*
 * LIRS (Jiang & Zhang, SIGMETRICS'02). Residents are LIR (low inter-reference recency,
 * ~99 % of the cache) or HIR (the rest, hirs ratio 1 % as in the paper and libCacheSim).
 * Stack S holds LIR objects, HIR objects seen recently and non-resident HIR ghosts, in
 * recency order, its bottom always LIR ("pruned"); queue Q holds the resident HIR objects
 * and supplies the victims. A HIR hit inside S (its IRR beats the bottom LIR's recency)
 * becomes LIR and the bottom LIR is demoted to Q; a miss on a ghost in S comes back as LIR.
 * Sizes count capacity units, so byte mode works as libCacheSim's does. S is bounded at
 * twice the cache (oldest ghosts dropped first), libCacheSim's limit.
 *
 * Q's links live in the object's aux (next) and prio (prev) fields, since an object can be
 * on S and Q at once; the same links chain the ghosts in NH (oldest first) while they wait.
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

enum { Q_LIR = 1, Q_HIR, Q_GHOST };
#define F_INS 0x01   /* on stack S */

typedef struct { uint32_t front, back; uint64_t count, bytes; } qlist;

typedef struct {
    sim_list s;          /* head = top (most recent) */
    qlist q;            /* resident HIR: front = next victim */
    qlist nh;           /* ghosts, front = oldest */
    uint64_t lir_bytes, lir_cap, hir_cap;
} lirs_state;

static inline uint32_t qprev(const sim_cache *c, uint32_t i) { return (uint32_t)c->objs[i].prio; }

static void q_push(sim_cache *c, qlist *q, uint32_t i)
{
    sim_obj *o = &c->objs[i];
    o->aux = SIM_NIL;
    o->prio = q->back;
    if (q->back != SIM_NIL)
        c->objs[q->back].aux = i;
    else
        q->front = i;
    q->back = i;
    q->count++;
    q->bytes += o->charge;
}

static void q_unlink(sim_cache *c, qlist *q, uint32_t i)
{
    sim_obj *o = &c->objs[i];
    uint32_t p = qprev(c, i), n = o->aux;
    if (p != SIM_NIL)
        c->objs[p].aux = n;
    else
        q->front = n;
    if (n != SIM_NIL)
        c->objs[n].prio = p;
    else
        q->back = p;
    q->count--;
    q->bytes -= o->charge;
}

static int lirs_init(sim_cache *c, char *err, size_t errlen)
{
    double hir = sim_param(c, "hir", 0.01);
    if (!(hir > 0 && hir < 1)) {
        snprintf(err, errlen, "lirs: need 0<hir<1");
        return -1;
    }
    lirs_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->s);
    s->q.front = s->q.back = s->nh.front = s->nh.back = SIM_NIL;
    s->hir_cap = (uint64_t)(hir * (double)c->capacity);
    if (s->hir_cap < 1)
        s->hir_cap = 1;
    s->lir_cap = c->capacity > s->hir_cap ? c->capacity - s->hir_cap : 0;
    c->priv = s;
    return 0;
}

static void lirs_free(sim_cache *c) { free(c->priv); }

/* drop from S's bottom everything that is not LIR (the stack pruning of the paper) */
static void prune(sim_cache *c, lirs_state *s)
{
    while (s->s.tail != SIM_NIL && c->objs[s->s.tail].qid != Q_LIR) {
        uint32_t i = s->s.tail;
        sim_list_unlink(c, &s->s, i);
        c->objs[i].flags &= (uint8_t)~F_INS;
        if (c->objs[i].qid == Q_GHOST) {
            q_unlink(c, &s->nh, i);
            sim_obj_release(c, i);
        }
    }
}

/* the bottom LIR object becomes resident HIR at Q's back (pruning first: HIRs admitted
 * while no LIR existed can sit below the first LIR) */
static void demote_bottom(sim_cache *c, lirs_state *s)
{
    prune(c, s);
    uint32_t i = s->s.tail;
    if (i == SIM_NIL)
        return;
    sim_list_unlink(c, &s->s, i);
    c->objs[i].flags &= (uint8_t)~F_INS;
    c->objs[i].qid = Q_HIR;
    s->lir_bytes -= c->objs[i].charge;
    q_push(c, &s->q, i);
    prune(c, s);
}

/* evict Q's front; if it is still on S it stays there as a ghost */
static void evict_hir(sim_cache *c, lirs_state *s)
{
    if (s->q.count == 0)
        demote_bottom(c, s);
    uint32_t i = s->q.front;
    q_unlink(c, &s->q, i);
    sim_uncharge(c, i);
    c->evictions++;
    if (c->objs[i].flags & F_INS) {
        c->objs[i].flags |= SIM_F_GHOST;
        c->objs[i].qid = Q_GHOST;
        q_push(c, &s->nh, i);
    } else {
        sim_obj_release(c, i);
    }
}

/* S holds at most twice the cache: the oldest ghosts go first */
static void limit_stack(sim_cache *c, lirs_state *s)
{
    while (s->s.bytes > 2 * c->capacity && s->nh.count) {
        uint32_t g = s->nh.front;
        q_unlink(c, &s->nh, g);
        sim_list_unlink(c, &s->s, g);
        sim_obj_release(c, g);
    }
}

static void lirs_hit(sim_cache *c, uint32_t i, const sim_req *r)
{
    (void)r;
    lirs_state *s = c->priv;
    sim_obj *o = &c->objs[i];
    if (o->qid == Q_LIR) {
        sim_list_move_head(c, &s->s, i);
        prune(c, s);
        return;
    }
    if (o->flags & F_INS) {   /* HIR in S: its new IRR beats the bottom LIR's recency */
        q_unlink(c, &s->q, i);
        sim_list_move_head(c, &s->s, i);
        o->qid = Q_LIR;
        s->lir_bytes += o->charge;
        while (s->lir_bytes > s->lir_cap && s->s.tail != SIM_NIL)
            demote_bottom(c, s);
        prune(c, s);
    } else {                  /* HIR not in S: stays HIR, back of Q, top of S */
        sim_list_push_head(c, &s->s, i);
        o->flags |= F_INS;
        q_unlink(c, &s->q, i);
        q_push(c, &s->q, i);
    }
    limit_stack(c, s);
}

static uint32_t admit(sim_cache *c, lirs_state *s, const sim_req *r, int as_lir)
{
    uint32_t n = sim_obj_alloc(c, r);
    sim_obj *o = &c->objs[n];
    sim_list_push_head(c, &s->s, n);
    o->flags |= F_INS;
    sim_charge(c, n);
    if (as_lir) {
        o->qid = Q_LIR;
        s->lir_bytes += o->charge;
        while (s->lir_bytes > s->lir_cap && s->s.tail != SIM_NIL)
            demote_bottom(c, s);
        prune(c, s);   /* HIRs admitted while no LIR existed may sit below it */
    } else {
        o->qid = Q_HIR;
        q_push(c, &s->q, n);
    }
    limit_stack(c, s);
    return n;
}

static bool lirs_get(sim_cache *c, const sim_req *r)
{
    lirs_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL && !(c->objs[i].flags & SIM_F_GHOST)) {
        lirs_hit(c, i, r);
        return true;
    }
    if (r->charge > c->capacity)
        return false;
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        evict_hir(c, s);
    /* pruning may have dropped the ghost meanwhile: look again */
    i = sim_find(c, r->key);
    int ghost = i != SIM_NIL;
    if (ghost) {   /* re-referenced within S's span: comes back as LIR */
        q_unlink(c, &s->nh, i);
        sim_list_unlink(c, &s->s, i);
        sim_obj_release(c, i);
    }
    admit(c, s, r, ghost || s->lir_bytes + r->charge <= s->lir_cap);
    return false;
}

static uint32_t lirs_insert(sim_cache *c, const sim_req *r)
{
    lirs_state *s = c->priv;
    return admit(c, s, r, s->lir_bytes + r->charge <= s->lir_cap);
}

static void lirs_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    evict_hir(c, c->priv);
}

static void lirs_remove(sim_cache *c, uint32_t i)
{
    lirs_state *s = c->priv;
    sim_obj *o = &c->objs[i];
    int lir = o->qid == Q_LIR;
    if (o->flags & F_INS)
        sim_list_unlink(c, &s->s, i);
    if (lir)
        s->lir_bytes -= o->charge;
    else
        q_unlink(c, &s->q, i);
    sim_uncharge(c, i);
    sim_obj_release(c, i);
    if (lir)
        prune(c, s);
}

static int q_check(const sim_cache *c, const qlist *q, int want_qid, char *why, size_t n)
{
    uint64_t cnt = 0, bytes = 0;
    uint32_t prev = SIM_NIL;
    for (uint32_t i = q->front; i != SIM_NIL; i = c->objs[i].aux) {
        if (qprev(c, i) != prev || c->objs[i].qid != want_qid || ++cnt > c->nused)
            return snprintf(why, n, "queue %d broken at %u", want_qid, i), -1;
        bytes += c->objs[i].charge;
        prev = i;
    }
    if (prev != q->back || cnt != q->count || bytes != q->bytes)
        return snprintf(why, n, "queue %d count/bytes/back mismatch", want_qid), -1;
    return 0;
}

static int lirs_verify(sim_cache *c, char *why, size_t n)
{
    lirs_state *s = c->priv;
    if (sim_list_check(c, &s->s, "S", why, n) < 0 || q_check(c, &s->q, Q_HIR, why, n) < 0 ||
        q_check(c, &s->nh, Q_GHOST, why, n) < 0)
        return -1;
    uint64_t lir = 0, lirb = 0, ghosts = 0;
    for (uint32_t i = s->s.head; i != SIM_NIL; i = c->objs[i].next) {
        const sim_obj *o = &c->objs[i];
        if (!(o->flags & F_INS))
            return snprintf(why, n, "object on S without the S flag"), -1;
        if (o->qid == Q_LIR) {
            lir++;
            lirb += o->charge;
        }
        ghosts += o->qid == Q_GHOST;
    }
    if (lir + s->q.count != c->nresident)
        return snprintf(why, n, "LIR %llu + HIR %llu != residents", (unsigned long long)lir,
                        (unsigned long long)s->q.count), -1;
    if (lirb != s->lir_bytes)
        return snprintf(why, n, "LIR bytes %llu != counter", (unsigned long long)lirb), -1;
    if (ghosts != s->nh.count)
        return snprintf(why, n, "a ghost off S"), -1;
    if (lir && c->objs[s->s.tail].qid != Q_LIR)
        return snprintf(why, n, "S's bottom is not LIR (unpruned)"), -1;
    if (s->lir_bytes > s->lir_cap && lir > 1)
        return snprintf(why, n, "LIR over its share"), -1;
    if (s->s.bytes > 2 * c->capacity && s->nh.count)
        return snprintf(why, n, "S over twice the cache with ghosts left"), -1;
    return 0;
}

const sim_policy_ops sim_policy_lirs = {
    .name = "lirs", .describe = "LIRS (Jiang & Zhang 2002): LIR/HIR by inter-reference recency, HIR 1 %",
    .init = lirs_init, .free = lirs_free, .get = lirs_get, .hit = lirs_hit,
    .insert = lirs_insert, .evict = lirs_evict, .verify = lirs_verify, .remove = lirs_remove,
};
