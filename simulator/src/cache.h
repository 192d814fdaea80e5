/*
 * Internal cache base shared by every policy: object pool, key index, intrusive lists and
 * the policy vtable. A policy file only fills an sim_policy_ops and keeps its state in priv.
 */
#ifndef SIM_CACHE_H
#define SIM_CACHE_H

#include "hcsim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_NIL UINT32_MAX
/* flags bit reserved by the base: object is a ghost (indexed, not resident) */
#define SIM_F_GHOST 0x80

/* One cached (or ghost) object; 48 bytes, fields shared out by the policies. */
typedef struct sim_obj {
    uint64_t key;
    uint64_t prio;     /* GD-Wheel H, mc-SLRU last-bump time, Bag-LRU location bag */
    uint32_t charge;   /* capacity units it takes (1 in items mode) */
    uint32_t size;     /* object bytes, for the byte hit ratio */
    float cost;        /* recomputation cost of a miss on it */
    uint32_t prev, next;
    uint32_t aux;      /* GD-Wheel slot, Bag-LRU access bag sequence */
    uint8_t freq;      /* CLOCK/GCLOCK/NbQ/S3-FIFO counter */
    uint8_t flags;     /* policy flags */
    uint8_t qid;       /* which queue the object is on */
    uint8_t cls;       /* slab class */
} sim_obj;

/* Open-addressing key -> object index (linear probing, backward-shift deletion). */
typedef struct sim_slot {
    uint64_t key;
    uint32_t idx;
    uint32_t pad;
} sim_slot;

typedef struct sim_table {
    sim_slot *slots;
    uint32_t bits;
    uint64_t mask;
    uint64_t count;
    /* dense mode: keys are ids 0..direct_n-1 (remapped once per grid), the index is an
     * array; far better locality than hashing when many runs share one trace */
    uint32_t *direct;
    uint64_t direct_n;
} sim_table;

/* A request as the policies see it. */
typedef struct sim_req {
    uint64_t key;
    uint32_t size;
    uint32_t charge;
    float cost;
    uint8_t op;
    uint8_t cls;
    /* trace position of this key's next request, UINT64_MAX if none or unknown; filled
     * only for policies with needs_future (OPT) */
    uint64_t next;
    /* the trace's key even when `key` is a dense id (a grid run): for policies that hash
     * keys themselves (W-TinyLFU's sketch), so grid and single runs agree */
    uint64_t hkey;
} sim_req;

/* A doubly linked list of objects; head = newest (MRU), tail = oldest. */
typedef struct sim_list {
    uint32_t head, tail;
    uint64_t bytes;   /* sum of charges */
    uint64_t count;
} sim_list;

typedef struct sim_cache sim_cache;

typedef struct sim_policy_ops {
    const char *name;
    const char *describe;
    /* per-item metadata bytes relative to memcached's 48-byte header (slab mode with
     * policy_metadata: NbQ -6, GD-Wheel +8 as their papers state) */
    int meta_delta;
    /* offline policy: needs sim_req.next (the driver then computes next uses once) */
    int needs_future;
    int (*init)(sim_cache *c, char *err, size_t errlen);
    void (*free)(sim_cache *c);
    /* Full request handling; NULL means sim_get_default (find -> hit or evict+insert). */
    bool (*get)(sim_cache *c, const sim_req *r);
    /* Resident hit on object idx: update metadata. */
    void (*hit)(sim_cache *c, uint32_t idx, const sim_req *r);
    /* Insert r (room has been made). Returns the object index. */
    uint32_t (*insert)(sim_cache *c, const sim_req *r);
    /* Evict (at least) one object to make room for r. */
    void (*evict)(sim_cache *c, const sim_req *r);
    /* Remove resident object idx (DELETE / replacement by SET). */
    void (*remove)(sim_cache *c, uint32_t idx);
    /* Check internal invariants (tests); 0 = consistent, else writes a reason. */
    int (*verify)(sim_cache *c, char *why, size_t n);
} sim_policy_ops;

struct sim_cache {
    const sim_policy_ops *ops;
    const sim_config *cfg;
    uint64_t capacity;   /* capacity units (objects or bytes) */
    uint64_t used;       /* resident units */
    uint64_t nresident;
    uint64_t max_resident;
    uint64_t evictions;
    uint64_t now;        /* logical time: requests seen by this cache */
    double scale;        /* sample rate R (mini-simulation), 1 otherwise */
    sim_table table;
    sim_obj *objs;
    uint32_t nalloc, nused, free_head;
    void *priv;
};

/* ---- object pool and index ---- */
uint32_t sim_obj_alloc(sim_cache *c, const sim_req *r);   /* indexed, not resident yet */
void sim_obj_release(sim_cache *c, uint32_t idx);        /* unindexed and freed */
uint32_t sim_find(const sim_cache *c, uint64_t key);
void sim_table_del(sim_cache *c, uint64_t key);
/* Accounting helpers: make an object resident / drop it from residency. */
static inline void sim_charge(sim_cache *c, uint32_t idx)
{
    c->used += c->objs[idx].charge;
    if (++c->nresident > c->max_resident)
        c->max_resident = c->nresident;
}
static inline void sim_uncharge(sim_cache *c, uint32_t idx)
{
    c->used -= c->objs[idx].charge;
    c->nresident--;
}

bool sim_get_default(sim_cache *c, const sim_req *r);
/* Turn evicted object idx (already unlinked and uncharged) into the newest ghost on list l, with
 * queue id qid; the oldest ghosts go while the list holds more than cap_bytes of charges. */
void sim_ghost_push(sim_cache *c, sim_list *l, uint32_t idx, uint8_t qid, uint64_t cap_bytes);

/* ---- intrusive lists over c->objs ---- */
static inline void sim_list_init(sim_list *l)
{
    l->head = l->tail = SIM_NIL;
    l->bytes = l->count = 0;
}
static inline void sim_list_push_head(sim_cache *c, sim_list *l, uint32_t i)
{
    sim_obj *o = &c->objs[i];
    o->prev = SIM_NIL;
    o->next = l->head;
    if (l->head != SIM_NIL)
        c->objs[l->head].prev = i;
    else
        l->tail = i;
    l->head = i;
    l->bytes += o->charge;
    l->count++;
}
static inline void sim_list_push_tail(sim_cache *c, sim_list *l, uint32_t i)
{
    sim_obj *o = &c->objs[i];
    o->next = SIM_NIL;
    o->prev = l->tail;
    if (l->tail != SIM_NIL)
        c->objs[l->tail].next = i;
    else
        l->head = i;
    l->tail = i;
    l->bytes += o->charge;
    l->count++;
}
static inline void sim_list_unlink(sim_cache *c, sim_list *l, uint32_t i)
{
    sim_obj *o = &c->objs[i];
    if (o->prev != SIM_NIL)
        c->objs[o->prev].next = o->next;
    else
        l->head = o->next;
    if (o->next != SIM_NIL)
        c->objs[o->next].prev = o->prev;
    else
        l->tail = o->prev;
    o->prev = o->next = SIM_NIL;
    l->bytes -= o->charge;
    l->count--;
}
static inline void sim_list_move_head(sim_cache *c, sim_list *l, uint32_t i)
{
    if (l->head == i)
        return;
    sim_list_unlink(c, l, i);
    sim_list_push_head(c, l, i);
}

/* Walk a list: links, count and bytes must agree. Returns 0 or -1 (reason in why). */
int sim_list_check(const sim_cache *c, const sim_list *l, const char *name, char *why, size_t n);
/* Runs the policy's verify plus base checks (resident units/objects). */
int sim_cache_verify(sim_cache *c, char *why, size_t n);

/* ---- parameters: "policy.key=value,key=value" (unqualified keys apply to all) ---- */
double sim_param(const sim_cache *c, const char *key, double dflt);

/* ---- registry ---- */
const sim_policy_ops *sim_policy_find(const char *name);

/* Estimated capacity in objects (for policies whose parameters count objects). */
uint64_t sim_capacity_objects(const sim_cache *c);

/* ---- step-by-step use (unit tests): one cache, one request at a time ---- */
sim_cache *sim_cache_new(const char *policy, uint64_t capacity, const sim_config *cfg);
void sim_cache_free(sim_cache *c);
/* 1 GET hit, 0 GET miss, -1 not a GET (op: enum sim_op; size 0 = cfg default) */
int sim_cache_access(sim_cache *c, uint64_t key, uint32_t size, double cost, int op);
/* the same with the key's next-use position (for OPT) */
int sim_cache_access_next(sim_cache *c, uint64_t key, uint32_t size, double cost, int op, uint64_t next);
int sim_cache_resident(const sim_cache *c, uint64_t key);
sim_obj *sim_cache_obj(sim_cache *c, uint64_t key);   /* resident or ghost, NULL if unknown */

#endif
