/*
 * Internal cache base shared by every policy: object pool, key index, intrusive lists and
 * the policy vtable. A policy file only fills an hc_policy_ops and keeps its state in priv.
 */
#ifndef HC_CACHE_H
#define HC_CACHE_H

#include "hcsim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HC_NIL UINT32_MAX
/* flags bit reserved by the base: object is a ghost (indexed, not resident) */
#define HC_F_GHOST 0x80

/* One cached (or ghost) object; 48 bytes, fields shared out by the policies. */
typedef struct hc_obj {
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
} hc_obj;

/* Open-addressing key -> object index (linear probing, backward-shift deletion). */
typedef struct hc_slot {
    uint64_t key;
    uint32_t idx;
    uint32_t pad;
} hc_slot;

typedef struct hc_table {
    hc_slot *slots;
    uint32_t bits;
    uint64_t mask;
    uint64_t count;
    /* dense mode: keys are ids 0..direct_n-1 (remapped once per grid), the index is an
     * array; far better locality than hashing when many runs share one trace */
    uint32_t *direct;
    uint64_t direct_n;
} hc_table;

/* A request as the policies see it. */
typedef struct hc_req {
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
} hc_req;

/* A doubly linked list of objects; head = newest (MRU), tail = oldest. */
typedef struct hc_list {
    uint32_t head, tail;
    uint64_t bytes;   /* sum of charges */
    uint64_t count;
} hc_list;

typedef struct hc_cache hc_cache;

typedef struct hc_policy_ops {
    const char *name;
    const char *describe;
    /* per-item metadata bytes relative to memcached's 48-byte header (slab mode with
     * policy_metadata: NbQ -6, GD-Wheel +8 as their papers state) */
    int meta_delta;
    /* offline policy: needs hc_req.next (the driver then computes next uses once) */
    int needs_future;
    int (*init)(hc_cache *c, char *err, size_t errlen);
    void (*free)(hc_cache *c);
    /* Full request handling; NULL means hc_get_default (find -> hit or evict+insert). */
    bool (*get)(hc_cache *c, const hc_req *r);
    /* Resident hit on object idx: update metadata. */
    void (*hit)(hc_cache *c, uint32_t idx, const hc_req *r);
    /* Insert r (room has been made). Returns the object index. */
    uint32_t (*insert)(hc_cache *c, const hc_req *r);
    /* Evict (at least) one object to make room for r. */
    void (*evict)(hc_cache *c, const hc_req *r);
    /* Remove resident object idx (DELETE / replacement by SET). */
    void (*remove)(hc_cache *c, uint32_t idx);
    /* Check internal invariants (tests); 0 = consistent, else writes a reason. */
    int (*verify)(hc_cache *c, char *why, size_t n);
} hc_policy_ops;

struct hc_cache {
    const hc_policy_ops *ops;
    const hc_config *cfg;
    uint64_t capacity;   /* capacity units (objects or bytes) */
    uint64_t used;       /* resident units */
    uint64_t nresident;
    uint64_t max_resident;
    uint64_t evictions;
    uint64_t now;        /* logical time: requests seen by this cache */
    double scale;        /* sample rate R (mini-simulation), 1 otherwise */
    hc_table table;
    hc_obj *objs;
    uint32_t nalloc, nused, free_head;
    void *priv;
};

/* ---- object pool and index ---- */
uint32_t hc_obj_alloc(hc_cache *c, const hc_req *r);   /* indexed, not resident yet */
void hc_obj_release(hc_cache *c, uint32_t idx);        /* unindexed and freed */
uint32_t hc_find(const hc_cache *c, uint64_t key);
void hc_table_del(hc_cache *c, uint64_t key);
/* Accounting helpers: make an object resident / drop it from residency. */
static inline void hc_charge(hc_cache *c, uint32_t idx)
{
    c->used += c->objs[idx].charge;
    if (++c->nresident > c->max_resident)
        c->max_resident = c->nresident;
}
static inline void hc_uncharge(hc_cache *c, uint32_t idx)
{
    c->used -= c->objs[idx].charge;
    c->nresident--;
}

bool hc_get_default(hc_cache *c, const hc_req *r);

/* ---- intrusive lists over c->objs ---- */
static inline void hc_list_init(hc_list *l)
{
    l->head = l->tail = HC_NIL;
    l->bytes = l->count = 0;
}
static inline void hc_list_push_head(hc_cache *c, hc_list *l, uint32_t i)
{
    hc_obj *o = &c->objs[i];
    o->prev = HC_NIL;
    o->next = l->head;
    if (l->head != HC_NIL)
        c->objs[l->head].prev = i;
    else
        l->tail = i;
    l->head = i;
    l->bytes += o->charge;
    l->count++;
}
static inline void hc_list_push_tail(hc_cache *c, hc_list *l, uint32_t i)
{
    hc_obj *o = &c->objs[i];
    o->next = HC_NIL;
    o->prev = l->tail;
    if (l->tail != HC_NIL)
        c->objs[l->tail].next = i;
    else
        l->head = i;
    l->tail = i;
    l->bytes += o->charge;
    l->count++;
}
static inline void hc_list_unlink(hc_cache *c, hc_list *l, uint32_t i)
{
    hc_obj *o = &c->objs[i];
    if (o->prev != HC_NIL)
        c->objs[o->prev].next = o->next;
    else
        l->head = o->next;
    if (o->next != HC_NIL)
        c->objs[o->next].prev = o->prev;
    else
        l->tail = o->prev;
    o->prev = o->next = HC_NIL;
    l->bytes -= o->charge;
    l->count--;
}
static inline void hc_list_move_head(hc_cache *c, hc_list *l, uint32_t i)
{
    if (l->head == i)
        return;
    hc_list_unlink(c, l, i);
    hc_list_push_head(c, l, i);
}

/* Walk a list: links, count and bytes must agree. Returns 0 or -1 (reason in why). */
int hc_list_check(const hc_cache *c, const hc_list *l, const char *name, char *why, size_t n);
/* Runs the policy's verify plus base checks (resident units/objects). */
int hc_cache_verify(hc_cache *c, char *why, size_t n);

/* ---- parameters: "policy.key=value,key=value" (unqualified keys apply to all) ---- */
double hc_param(const hc_cache *c, const char *key, double dflt);

/* ---- registry ---- */
const hc_policy_ops *hc_policy_find(const char *name);

/* Estimated capacity in objects (for policies whose parameters count objects). */
uint64_t hc_capacity_objects(const hc_cache *c);

/* ---- step-by-step use (unit tests): one cache, one request at a time ---- */
hc_cache *hc_cache_new(const char *policy, uint64_t capacity, const hc_config *cfg);
void hc_cache_free(hc_cache *c);
/* 1 GET hit, 0 GET miss, -1 not a GET (op: enum hc_op; size 0 = cfg default) */
int hc_cache_access(hc_cache *c, uint64_t key, uint32_t size, double cost, int op);
/* the same with the key's next-use position (for OPT) */
int hc_cache_access_next(hc_cache *c, uint64_t key, uint32_t size, double cost, int op, uint64_t next);
int hc_cache_resident(const hc_cache *c, uint64_t key);
hc_obj *hc_cache_obj(hc_cache *c, uint64_t key);   /* resident or ghost, NULL if unknown */

#endif
