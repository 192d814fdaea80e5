/*
 * Profile: glues the key table, one ROUNDER (or STACKER) + ghost + curve per slab class, spatial sampling and
 * (offline) the LRU emulator behind the event API of profile.h.
 *
 * Units: ROUNDER buckets, ghost counts and the emulator work in *sampled* items (the class
 * capacity scaled by the sampling rate R, as SHARDS runs a scaled-down cache); distances are
 * divided by R when they enter the curve, and each sampled read weighs 1/R, so curves are in
 * full-stream items and hits. The SHARDS_adj correction (reads - sum of weights of sampled
 * reads) is added at distance 0 when the curve is read.
 */
#include "profile.h"
#include "trmix.h"
#include "keytable.h"
#include "rounder.h"
#include "stacker.h"
#include "ghost.h"
#include "curveacc.h"
#include "lruemu.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define PENDING_SLOTS 16384u
#define GHOST_FP_SUBTRACT 1    /* subtract the expected false positives per filter region */

typedef struct hc_class {
    int active;
    uint64_t cap_items;       /* N */
    uint32_t chunk;
    double ns;                /* sampled capacity R*N (>= 1) */
    int64_t keep_max;         /* evict_surplus: tracked keys kept after a sweep (R*N + noise) */
    int64_t sweep_at;         /* evict_surplus: more tracked keys than this start a sweep */
    int stk;                  /* 1: STACKER below N (s), 0: ROUNDER (r); see est_* below */
    rounder r;
    stacker s;
    int has_ghost;
    ghost g;
    double ghost_dropped;     /* evicted keys (unsampled items) lost with ghosts re-created at
                                 capacity changes, their flushes included (hc_curve) */
    int win_covered;          /* the ghost was covered when the window began... */
    uint64_t win_uncovered;   /* ...and had lost coverage this many times (ghost.uncovered) */
    double evicts_win;        /* EVICT events of the class this window, all keys */
    double evicts_smp;        /* ...of sampled keys */
    double evicts_untracked;  /* ...of sampled keys the table did not track (lost SET, or
                                 resident before the events began): if such an EVICT line is
                                 lost, nothing puts the key into the ghost (hc_profile_check_evictions) */

    curveacc acc;
    double lost_credit;       /* cfg.evict_budget: lost evictions not yet repaired (sampled) */
    double thinned;           /* evicted keys lost to a steady loss, never in the ghost (sampled;
                                 hc_profile_check_evictions: they thin it, no gap) */
    double reads;             /* all reads (estimated for deferred misses of sampled keys) */
    uint64_t hits_obs;
    double sampled_w;         /* sum of 1/R over sampled reads */
    double fp_reach[64];      /* weight of ghost lookups not yet charged for false positives,
                                 by the last rank they probed (a lookup that stopped at rank t
                                 probed ranks 0..t: one add per lookup, suffix sums at flush) */
    uint32_t fp_n;
    int has_emu;
    lruemu emu;
} hc_class;

struct hc_profile {
    hc_profile_config cfg;
    hc_class *cls[HC_MAX_CLASSES];
    keytable kt;
    uint64_t kt_limit;        /* fixed-size mode: most keys the table may hold */
    double rate;
    double inv_rate;          /* 1 / rate: every sampled read weighs this (no division per event) */
    uint64_t thresh;          /* sampled iff mix(h^seed) < thresh (rate < 1) */
    uint64_t *pending;
    uint64_t npending;        /* occupied pending slots: SETs skip the probe when none */
    /* hc_profile_set_refill_rule: misses waiting for their refill SET before their ghost lookup
     * counts (key hash, class index; 0 = free) */
    uint64_t *refill;
    uint8_t *refill_cls;
    uint64_t nrefill;
    int refill_rule;
    int mem_full;             /* memcached allocated all its memory (see hc_profile_set_memory_full) */
    int seen_from_start;      /* hc_profile_set_seen_from_start */
    uint32_t evicts_no_cap[HC_MAX_CLASSES]; /* EVICTs that came before the class had a capacity
                                 (saturating): keys its ghost never got (hc_curve.ghost_complete) */
    hc_profile_stats st;
};

void hc_profile_config_default(hc_profile_config *c)
{
    memset(c, 0, sizeof(*c));
    c->buckets = HC_DEFAULT_BUCKETS;
    c->ghost_factor = 2.0;
    c->ghost_filters = HC_DEFAULT_FILTERS;
    c->ghost_fpp = 0.01;
    c->sampling = HC_SAMPLE_OFF;
    c->sample_rate = 1.0;
    c->sample_max_keys = 16384;
    c->resolution = HC_DEFAULT_RESOLUTION;
    c->emulate_lru = 0;
    c->seed = 0;
    c->ghost_keep_coverage = 1;
    c->rounder_balanced = 1;
    c->evict_surplus = 1;
    c->estimator = HC_EST_ROUNDER;
}

const char *hc_estimator_name(int estimator)
{
    return estimator == HC_EST_STACKER ? "stacker" : estimator == HC_EST_ROUNDER ? "rounder" : "unknown";
}

int hc_estimator_parse(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "rounder")) return HC_EST_ROUNDER;
    if (!strcmp(name, "stacker")) return HC_EST_STACKER;
    return -1;
}

/* The estimator below N behind one set of calls. The uint32 the key table keeps per key is
 * ROUNDER's activity or STACKER's node handle; the profile never looks inside it. */
static inline uint32_t est_set(hc_class *k) { return k->stk ? stacker_set(&k->s) : rounder_set(&k->r); }
static inline uint32_t est_touch(hc_class *k, uint32_t a) { return k->stk ? stacker_touch(&k->s, a) : rounder_touch(&k->r, a); }
static inline void est_remove(hc_class *k, uint32_t a) { if (k->stk) stacker_remove(&k->s, a); else rounder_remove(&k->r, a); }
static inline int64_t est_total(const hc_class *k) { return k->stk ? k->s.total : k->r.total; }
static inline void est_hit(hc_class *k, uint32_t *a, int known, double *s, double *e)
{
    if (k->stk) (void)stacker_hit(&k->s, a, known, s, e);
    else rounder_hit(&k->r, a, known, s, e);
}
static inline void est_set_capacity(hc_class *k, double n) { if (k->stk) stacker_set_capacity(&k->s, n); else rounder_set_capacity(&k->r, n); }
static inline uint32_t est_nbuckets(const hc_class *k) { return k->stk ? stacker_nbuckets(&k->s) : rounder_nbuckets(&k->r); }
static inline int64_t est_rank_count(const hc_class *k, uint32_t j) { return k->stk ? stacker_rank_count(&k->s, j) : rounder_rank_count(&k->r, j); }
static inline uint32_t est_rank_of(const hc_class *k, uint32_t a) { return k->stk ? stacker_rank_of(&k->s, a) : rounder_rank_of(&k->r, a); }
static size_t est_bytes(const hc_class *k)
{
    return k->stk ? stacker_bytes(&k->s) : k->r.B * sizeof(int64_t);
}

static inline int cls_index(int clsid)
{
    return (clsid < 0 || clsid >= HC_MAX_CLASSES) ? 0 : clsid;
}

static void set_rate(hc_profile *p, double rate)
{
    p->rate = rate;
    p->inv_rate = 1.0 / rate;
    if (rate >= 1.0) { p->rate = 1.0; p->inv_rate = 1.0; p->thresh = UINT64_MAX; return; }
    p->thresh = (uint64_t)ldexp(rate, 64);
}

/* Sampling looks at the bits the key table keeps (kt_ident), so a sweep over the table after
 * the rate drops makes the same decision the event path made. */
static inline int sampled(const hc_profile *p, uint64_t h)
{
    return p->rate >= 1.0 || tr_mix64(kt_ident(h) ^ p->cfg.seed) < p->thresh;
}

hc_profile *hc_profile_new(const hc_profile_config *cfg, const char **err)
{
    hc_profile_config c;
    if (cfg) c = *cfg; else hc_profile_config_default(&c);
    const char *e = NULL;
    if (c.buckets < 1 || c.buckets > (1u << 20)) e = "buckets must be 1..1048576";
    else if (!(c.ghost_factor >= 1.0 && c.ghost_factor <= 16.0)) e = "ghost factor must be 1..16";
    else if (c.ghost_factor > 1.0 && (c.ghost_filters < 2 || c.ghost_filters > HC_MAX_FILTERS)) e = "ghost filters must be 2..64";
    else if (!(c.ghost_fpp > 0 && c.ghost_fpp < 0.5)) e = "ghost fpp must be in (0, 0.5)";
    else if (c.sampling < HC_SAMPLE_OFF || c.sampling > HC_SAMPLE_FIXED_SIZE) e = "bad sampling mode";
    else if (c.sampling == HC_SAMPLE_RATE && !(c.sample_rate > 0 && c.sample_rate <= 1)) e = "sample rate must be in (0, 1]";
    else if (c.sampling == HC_SAMPLE_FIXED_SIZE && c.sample_max_keys < 64) e = "sample max keys must be >= 64";
    else if (c.resolution < 100 || c.resolution > 1000000) e = "resolution must be 100..1000000";
    else if (c.estimator != HC_EST_ROUNDER && c.estimator != HC_EST_STACKER) e = "estimator must be rounder or stacker";
    if (e) { if (err) *err = e; return NULL; }
    /* the 100-point curve must land on grid points */
    c.resolution = (c.resolution + HC_CURVE_POINTS - 1) / HC_CURVE_POINTS * HC_CURVE_POINTS;

    hc_profile *p = calloc(1, sizeof(*p));
    if (!p) { if (err) *err = "out of memory"; return NULL; }
    p->cfg = c;
    p->mem_full = 1;
    set_rate(p, c.sampling == HC_SAMPLE_RATE ? c.sample_rate : 1.0);
    uint64_t max_slots = 0;
    if (c.sampling == HC_SAMPLE_FIXED_SIZE) {
        /* the table holds the sampled cache part (max_keys/k expected); 50% slack for
         * fluctuation and stale entries (lost EVICTs) before the rate is lowered */
        p->kt_limit = (uint64_t)(1.5 * c.sample_max_keys / c.ghost_factor) + 64;
        max_slots = 16;
        while (max_slots * KT_LOAD_NUM / KT_LOAD_DEN < p->kt_limit) max_slots <<= 1;
    }
    p->pending = calloc(PENDING_SLOTS, sizeof(uint64_t));
    p->refill = calloc(PENDING_SLOTS, sizeof(uint64_t));
    p->refill_cls = calloc(PENDING_SLOTS, 1);
    if (!p->pending || !p->refill || !p->refill_cls || kt_init(&p->kt, 1024, max_slots) != 0) {
        free(p->pending); free(p->refill); free(p->refill_cls); free(p);
        if (err) *err = "out of memory";
        return NULL;
    }
    return p;
}

static void class_free(hc_class *k)
{
    if (!k) return;
    if (k->stk) stacker_free(&k->s); else rounder_free(&k->r);
    if (k->has_ghost) ghost_free(&k->g);
    curveacc_free(&k->acc);
    if (k->has_emu) lruemu_free(&k->emu);
    free(k);
}

void hc_profile_free(hc_profile *p)
{
    if (!p) return;
    for (int i = 0; i < HC_MAX_CLASSES; i++) class_free(p->cls[i]);
    kt_free(&p->kt);
    free(p->pending);
    free(p->refill);
    free(p->refill_cls);
    free(p);
}

/* ---- event plumbing (sampled keys only) ---- */

/* Expected false positives are subtracted in batches: every lookup adds its weight to
 * fp_reach[last rank it probed] (it probed every rank up to that one), and every FP_FLUSH misses (and before the rate
 * changes) the batch is removed from each rank's current region at that rank's current
 * false-positive rate. Ranks shift by at most one filter within a batch. */
#define FP_FLUSH 64

static void flush_fp(hc_profile *p, hc_class *k)
{
    if (!k->has_ghost || k->fp_n == 0) return;
    ghost *g = &k->g;
    double inv = p->inv_rate, off = k->ns, s = 0;
    double pending[64], acc = 0;          /* pending[r]: lookups that probed rank r */
    for (uint32_t r = g->F; r-- > 0; ) {
        acc += k->fp_reach[r];
        pending[r] = acc;
        k->fp_reach[r] = 0;
    }
    for (uint32_t r = 0; r < g->F; r++) {
        double c = g->count[ghost_phys(g, r)];
        if (pending[r] > 0 && c > 0) {
            double fpp = ghost_rank_fpp(g, r);
            if (fpp > 0)
                curveacc_add_uniform(&k->acc, (off + s) * inv, (off + s + c) * inv, -pending[r] * fpp);
        }
        s += c;
    }
    k->fp_n = 0;
}

static void add_ghost_hit_or_miss(hc_profile *p, hc_class *k, uint64_t h)
{
    if (!k->has_ghost) return;
    ghost *g = &k->g;
    double w = p->inv_rate;
    /* ghost filters hash the identity bits the key table keeps, so a key the profile evicts
     * itself from the table (evict_surplus) hashes as its later lookup does */
    int found = ghost_lookup(g, kt_ident(h));   /* counts as they were: the found key is removed after */
    uint32_t reached = found < 0 ? g->F : (uint32_t)found + 1;
    if (found >= 0) {
        double s, e;
        ghost_rank_range(g, (uint32_t)found, &s, &e);
        e += 1;                        /* the key itself has just left the filter's count */
        double scale = GHOST_FP_SUBTRACT ? 1.0 : 1.0 - p->cfg.ghost_fpp;
        curveacc_add_uniform(&k->acc, (k->ns + s) * w, (k->ns + e) * w, w * scale);
    }
    if (GHOST_FP_SUBTRACT) {
        k->fp_reach[reached - 1] += w;
        if (++k->fp_n >= FP_FLUSH) flush_fp(p, k);
    }
}

/* hc_profile_set_refill_rule: a miss whose key is read or dropped again before any SET was not
 * a read memcached's clients refill: a delete or touch of a key memcached had evicted (or a
 * client that never refills). In a bigger cache that delete would have removed the key, so it
 * leaves the ghost without counting a hit; the read that follows, if any, misses at every size. */
static void refill_drop(hc_profile *p, uint64_t slot)
{
    uint64_t h = p->refill[slot];
    hc_class *k = p->cls[p->refill_cls[slot]];
    p->refill[slot] = 0;
    p->nrefill--;
    if (k && k->has_ghost) (void)ghost_lookup(&k->g, kt_ident(h));
    p->st.unrefilled_misses++;
}

static uint64_t refill_slot(uint64_t h) { return tr_mix64(h ^ 0x7265666cULL) & (PENDING_SLOTS - 1); }

/* The key's earlier miss, if it waits: resolved as unrefilled (any lookup of the key). */
static void refill_lookup(hc_profile *p, uint64_t h)
{
    uint64_t i = refill_slot(h);
    if (p->refill[i] == h) refill_drop(p, i);
}

static void refill_wait(hc_profile *p, int ci, uint64_t h)
{
    uint64_t i = refill_slot(h);
    if (p->refill[i]) refill_drop(p, i);        /* another key's: its refill did not come */
    p->refill[i] = h;
    p->refill_cls[i] = (uint8_t)ci;
    p->nrefill++;
}

static void lower_rate(hc_profile *p, double new_rate);
static void evict_surplus(hc_profile *p, hc_class *k, int ci);

/* Insert a sampled key at the head of class k. Returns 0 if the key is no longer sampled
 * (the rate was lowered to make room). */
static int track_new(hc_profile *p, hc_class *k, int ci, uint64_t h)
{
    if (p->cfg.sampling == HC_SAMPLE_FIXED_SIZE) {
        while (p->kt.count >= p->kt_limit) {
            lower_rate(p, p->rate * 0.8);
            if (!sampled(p, h)) return 0;
        }
    }
    uint32_t act = est_set(k);
    if (k->stk && act == STK_NIL) return 0;    /* out of memory: the key stays untracked */
    if (kt_insert(&p->kt, h, ci, act) == KT_NONE) {
        /* out of memory or slots: undo; the key stays untracked */
        est_remove(k, act);
        return 0;
    }
    if (__builtin_expect(est_total(k) > k->sweep_at, 0) && p->cfg.evict_surplus && p->mem_full)
        evict_surplus(p, k, ci);
    return 1;
}

/* A MISS of a key tracked as resident in its own class: memcached evicted it (or deleted it)
 * and we lost that line. It was evicted, so it belongs to the ghost before the lookup: put it
 * there, and the lookup then counts it as a ghost hit just past N (it is the most recently
 * evicted key we know of) instead of a cold miss. */
static void lost_evict(hc_profile *p, hc_class *k, uint64_t slot)
{
    /* the tracked keys referenced after this one (whole age buckets newer than its own) */
    double newer = 0;
    if (p->cfg.evict_budget) {
        uint32_t j = est_rank_of(k, p->kt.act[slot]), nb = est_nbuckets(k);
        for (uint32_t i = j + 1; i < nb; i++) newer += (double)est_rank_count(k, i);
    }
    est_remove(k, p->kt.act[slot]);
    uint64_t id = p->kt.tag[slot] & ~(uint64_t)0xFF;
    kt_remove_slot(&p->kt, slot);
    p->st.lost_evict_misses++;
    /* Without a lost eviction to account for it the key was deleted (or flushed): gone at
     * every size, not a hit for more memory. Nor can a key fewer than HC_EVICT_MIN_NEWER x N
     * keys deep have been evicted, credit or not (memcached evicts from COLD's tail: every
     * key of HOT was set after it); a deleted key read again soon is that shallow, and spending
     * the credit of a lost EVICT on it turned each into a ghost hit just past N. */
    if (p->cfg.evict_budget) {
        if (k->lost_credit < 1 || newer < HC_EVICT_MIN_NEWER * k->ns) { p->st.invalidated++; return; }
        k->lost_credit -= 1;
    }
    if (k->has_ghost) ghost_evict(&k->g, id);
}

static void ev_miss(hc_profile *p, hc_class *k, int ci, uint64_t h)
{
    if (p->nrefill) refill_lookup(p, h);
    if (p->cfg.evict_surplus) {
        uint64_t slot = kt_find(&p->kt, h);
        if (slot != KT_NONE && kt_class(&p->kt, slot) == ci) lost_evict(p, k, slot);
    }
    if (p->refill_rule && k->has_ghost) refill_wait(p, ci, h);
    else add_ghost_hit_or_miss(p, k, h);
}

static void ev_hit(hc_profile *p, hc_class *k, int ci, uint64_t h)
{
    double s, e, inv = p->inv_rate;
    if (p->nrefill) refill_lookup(p, h);
    uint64_t slot = kt_find(&p->kt, h);
    if (slot != KT_NONE && kt_class(&p->kt, slot) == ci) {
        est_hit(k, &p->kt.act[slot], 1, &s, &e);
        curveacc_add_uniform(&k->acc, s * inv, e * inv, inv);
        return;
    }
    if (slot != KT_NONE) {                 /* tracked under another class: it moved */
        hc_class *o = p->cls[kt_class(&p->kt, slot)];
        if (o) est_remove(o, p->kt.act[slot]);
        kt_remove_slot(&p->kt, slot);
    }
    p->st.unknown_hits++;
    uint32_t act = 0;
    est_hit(k, &act, 0, &s, &e);
    curveacc_add_uniform(&k->acc, s * inv, e * inv, inv);
    est_remove(k, act);            /* re-added by track_new (may age again: harmless) */
    track_new(p, k, ci, h);
}

static void ev_set(hc_profile *p, hc_class *k, int ci, uint64_t h)
{
    if (p->nrefill) {
        /* the refill of a waiting miss: a read's miss, its ghost lookup counts (in the class it
         * missed in) */
        uint64_t i = refill_slot(h);
        if (p->refill[i] == h) {
            hc_class *mk = p->cls[p->refill_cls[i]];
            p->refill[i] = 0;
            p->nrefill--;
            if (mk && mk->active) add_ghost_hit_or_miss(p, mk, h);
        }
    }
    uint64_t slot = kt_find(&p->kt, h);
    if (slot != KT_NONE) {
        int oc = kt_class(&p->kt, slot);
        if (oc == ci) {
            uint64_t *pe = p->npending && p->cfg.evict_surplus
                         ? &p->pending[tr_mix64(h) & (PENDING_SLOTS - 1)] : NULL;
            if (!pe || *pe != h) { p->kt.act[slot] = est_touch(k, p->kt.act[slot]); return; }
            /* refill after a miss without class of a key tracked as resident: lost EVICT */
            *pe = 0;
            p->npending--;
            k->reads += p->inv_rate;
            k->sampled_w += p->inv_rate;
            lost_evict(p, k, slot);
            add_ghost_hit_or_miss(p, k, h);
            track_new(p, k, ci, h);
            return;
        }
        hc_class *o = p->cls[oc];
        if (o) est_remove(o, p->kt.act[slot]);
        kt_remove_slot(&p->kt, slot);
    } else if (p->npending) {
        uint64_t *pe = &p->pending[tr_mix64(h) & (PENDING_SLOTS - 1)];
        if (*pe == h) {                    /* refill after a miss without class */
            *pe = 0;
            p->npending--;
            double inv = p->inv_rate;
            k->reads += inv;
            k->sampled_w += inv;
            add_ghost_hit_or_miss(p, k, h);
        }
    }
    track_new(p, k, ci, h);
}

static void ev_remove(hc_profile *p, hc_class *k, int ci, uint64_t h, int evicted)
{
    uint64_t slot = kt_find(&p->kt, h);
    hc_class *gk = k;
    if (evicted) {
        k->evicts_smp += 1;
        if (slot == KT_NONE) k->evicts_untracked += 1;
    }
    if (slot != KT_NONE) {
        int oc = kt_class(&p->kt, slot);
        hc_class *o = p->cls[oc];
        if (o) { est_remove(o, p->kt.act[slot]); gk = o; }
        kt_remove_slot(&p->kt, slot);
    }
    (void)ci;
    if (evicted && gk && gk->has_ghost) ghost_evict(&gk->g, kt_ident(h));
}

/* Offline: the emulated LRU decides. */
static __attribute__((noinline)) int ev_get(hc_profile *p, hc_class *k, int ci, uint64_t h)
{
    if (!k->has_emu) return 0;
    if (lruemu_access(&k->emu, h)) {
        k->hits_obs++;
        ev_hit(p, k, ci, h);
        return 1;
    }
    add_ghost_hit_or_miss(p, k, h);
    uint64_t victim;
    while (k->emu.size >= k->emu.cap && lruemu_pop(&k->emu, &victim))
        ev_remove(p, k, ci, victim, 1);
    lruemu_insert(&k->emu, h, &victim);
    ev_set(p, k, ci, h);
    return 0;
}

/* Event of a class without capacity (cold: kept out of line so the hot dispatch stays small). */
static __attribute__((noinline)) int ev_no_class(hc_profile *p, int op, int clsid, uint64_t h)
{
    if (op == HC_EV_MISS) {
        if (sampled(p, h)) {
            uint64_t *pe = &p->pending[tr_mix64(h) & (PENDING_SLOTS - 1)];
            if (*pe && *pe != h) p->st.pending_dropped++;
            if (!*pe) p->npending++;
            *pe = h;
        } else {
            p->st.unattributed_misses++;
        }
        return 0;
    }
    p->st.events_no_capacity++;
    if (op == HC_EV_EVICT) {
        p->st.evicts_no_capacity++;
        if (clsid >= 0 && clsid < HC_MAX_CLASSES && p->evicts_no_cap[clsid] < UINT32_MAX)
            p->evicts_no_cap[clsid]++;
    }
    return op == HC_EV_GET ? -1 : 0;
}

void hc_profile_prefetch(const hc_profile *p, uint64_t h, int clsid, int ghost)
{
    uint64_t i = kt_home(&p->kt, kt_ident(h));
    __builtin_prefetch(&p->kt.tag[i]);
    __builtin_prefetch(&p->kt.act[i]);
    const hc_class *k = ghost && clsid > 0 ? p->cls[cls_index(clsid)] : NULL;
    if (k && k->active && k->has_ghost)
        ghost_prefetch(&k->g, kt_ident(h));
}

int hc_profile_event(hc_profile *p, int op, int clsid, uint64_t h, uint32_t size)
{
    (void)size;
    p->st.events++;
    int ci = cls_index(clsid);
    hc_class *k = p->cls[ci];
    if (__builtin_expect(!k || !k->active, 0)) return ev_no_class(p, op, clsid, h);
    int smp = sampled(p, h);
    if ((unsigned)op <= HC_EV_MISS) {    /* GET, HIT, MISS: a read */
        k->reads += 1;
        if (smp) k->sampled_w += p->inv_rate;
        if (op == HC_EV_HIT) k->hits_obs++;
    } else if (op == HC_EV_EVICT) {
        k->evicts_win += 1;
    }
    if (!smp) return op == HC_EV_GET ? -1 : 0;
    switch (op) {
    case HC_EV_GET: return ev_get(p, k, ci, h);
    case HC_EV_HIT: ev_hit(p, k, ci, h); break;
    case HC_EV_MISS: ev_miss(p, k, ci, h); break;
    case HC_EV_SET: ev_set(p, k, ci, h); break;
    case HC_EV_DELETE: ev_remove(p, k, ci, h, 0); break;
    case HC_EV_EVICT: ev_remove(p, k, ci, h, 1); break;
    default: break;
    }
    return 0;
}

/* ---- capacity, sampling rate ---- */

static double total_capacity(const hc_profile *p)
{
    double t = 0;
    for (int i = 0; i < HC_MAX_CLASSES; i++)
        if (p->cls[i] && p->cls[i]->active) t += (double)p->cls[i]->cap_items;
    return t;
}

static double class_ns(const hc_profile *p, const hc_class *k)
{
    double ns = p->rate * (double)k->cap_items;
    return ns < 1 ? 1 : ns;
}

/* Surplus limits: a class holds at most its (sampled) capacity R*N; with sampling the number
 * of sampled keys in a full cache fluctuates around R*N (binomial, sd ~ sqrt(R*N)), so 3 sd are
 * kept on top. Sweeps start a little above that (ns/64: two ROUNDER buckets at B = 128), so
 * each sweep's cost (one pass over the key table) is paid for by ns/64 lost EVICTs. */
static void surplus_limits(const hc_profile *p, hc_class *k)
{
    double keep = k->ns + (p->cfg.sampling != HC_SAMPLE_OFF ? 3 * sqrt(k->ns) : 0);
    double m = k->ns / 64;
    k->keep_max = (int64_t)ceil(keep);
    k->sweep_at = (int64_t)ceil(keep + (m > 2 ? m : 2));
}

/* The class tracks more keys than its cache can hold: the surplus are keys memcached evicted
 * without our seeing the EVICT. LRU evicts the least recently used, so the oldest tracked keys
 * (whole ROUNDER buckets from the tail; the boundary bucket by a hash draw) go to the ghost, as
 * the lost EVICTs would have put them. One pass over the key table. */
static void evict_surplus(hc_profile *p, hc_class *k, int ci)
{
    double excess = (double)(est_total(k) - k->keep_max);
    if (excess < 1) return;
    uint32_t nb = est_nbuckets(k), j = 0;
    double cum = 0;
    while (j < nb && cum + (double)est_rank_count(k, j) <= excess) cum += (double)est_rank_count(k, j++);
    uint64_t fthr = 0;
    if (j < nb && est_rank_count(k, j) > 0) {
        double frac = (excess - cum) / (double)est_rank_count(k, j);
        fthr = frac >= 1 ? UINT64_MAX : (uint64_t)ldexp(frac, 64);
    }
    rounder_cut cut;
    if (!k->stk) rounder_cut_init(&cut, &k->r, j);
    for (uint64_t i = 0; i < p->kt.nslots; ) {
        i = kt_scan_class(&p->kt, i, ci); /* one pass over the whole table for one class */
        if (i >= p->kt.nslots) break;
        uint64_t tg = p->kt.tag[i];
        if (tg && (int)(tg & 0xFF) == ci) {
            int side;
            if (k->stk) {
                uint32_t jr = stacker_rank_of(&k->s, p->kt.act[i]);
                side = jr < j ? -1 : jr > j;
            } else {
                side = rounder_rank_side(&cut, p->kt.act[i]);
            }
            if (side < 0 || (side == 0 && tr_mix64(tg ^ 0x5bd1e9955bd1e995ULL) < fthr)) {
                est_remove(k, p->kt.act[i]);
                kt_remove_slot(&p->kt, i);
                p->st.surplus_evictions++;
                if (p->cfg.evict_budget && k->lost_credit < 1) {
                    p->st.invalidated++;    /* a deleted key's place, not an eviction */
                } else {
                    if (p->cfg.evict_budget) k->lost_credit -= 1;
                    if (k->has_ghost) ghost_evict(&k->g, tg & ~(uint64_t)0xFF);
                }
                continue;               /* slot i now holds a shifted entry: re-check it */
            }
        }
        i++;
    }
}

/* Fixed-size sampling: drop every tracked key whose hash is above the new threshold and
 * shrink the scaled caches (SHARDS fixed-size, with a sweep instead of a priority queue: the
 * rate drops by a constant factor, so the sweeps cost O(1) amortised per inserted key). */
static void lower_rate(hc_profile *p, double new_rate)
{
    double old = p->rate;
    if (new_rate >= old) return;
    for (int c = 0; c < HC_MAX_CLASSES; c++)
        if (p->cls[c] && p->cls[c]->active) flush_fp(p, p->cls[c]);
    set_rate(p, new_rate);
    p->st.rate_lowerings++;
    for (uint64_t i = 0; i < p->kt.nslots; ) {
        uint64_t tg = p->kt.tag[i];
        if (tg && !sampled(p, tg)) {
            hc_class *k = p->cls[tg & 0xFF];
            if (k) est_remove(k, p->kt.act[i]);
            kt_remove_slot(&p->kt, i);
            continue;                   /* slot i now holds a shifted entry: re-check it */
        }
        i++;
    }
    memset(p->pending, 0, PENDING_SLOTS * sizeof(uint64_t));
    p->npending = 0;
    for (int c = 0; c < HC_MAX_CLASSES; c++) {
        hc_class *k = p->cls[c];
        if (!k || !k->active) continue;
        k->ns = class_ns(p, k);
        surplus_limits(p, k);
        est_set_capacity(k, k->ns);
        if (k->has_ghost) ghost_rescale(&k->g, (p->cfg.ghost_factor - 1) * k->ns, new_rate / old);
        if (k->has_emu) {
            /* emulator keys: remove unsampled ones, then trim to the new capacity */
            lruemu *e = &k->emu;
            uint32_t n = e->head;
            while (n != EMU_NIL) {
                uint32_t nx = e->next[n];
                if (!sampled(p, e->key[n])) lruemu_remove(e, e->key[n]);
                n = nx;
            }
            lruemu_set_capacity(e, (uint64_t)llround(k->ns));
            uint64_t victim;
            while (e->size > e->cap && lruemu_pop(e, &victim)) ev_remove(p, k, c, victim, 1);
        }
    }
}

void hc_profile_set_memory_full(hc_profile *p, int full)
{
    p->mem_full = full != 0;
}

void hc_profile_set_seen_from_start(hc_profile *p, int yes)
{
    p->seen_from_start = yes != 0;
    if (yes) return;
    /* told late that evictions came before: ghosts created as exact are not */
    for (int i = 0; i < HC_MAX_CLASSES; i++)
        if (p->cls[i] && p->cls[i]->has_ghost && p->cls[i]->g.exact) {
            p->cls[i]->g.exact = 0;
            p->cls[i]->g.covered = 0;
        }
}

/* The window (or coverage) begins now: what the curve will say about completeness is whether the
 * ghost stays covered from here to the read. */
static void window_begins(hc_class *k)
{
    k->win_covered = k->has_ghost && ghost_check_covered(&k->g);
    k->win_uncovered = k->has_ghost ? k->g.uncovered : 0;
    k->evicts_win = k->evicts_smp = k->evicts_untracked = 0;
}

void hc_profile_check_evictions(hc_profile *p, int clsid, uint64_t evicted)
{
    hc_class *k = p->cls[cls_index(clsid)];
    if (!k || !k->active || !k->has_ghost) return;
    double short_by = (double)evicted - k->evicts_win;
    if (short_by <= 0) return;
    /* A lost EVICT of a tracked key is repaired (the surplus sweep or the key's next MISS puts it
     * into the ghost); one of a key the table does not track is not. The window's sampled EVICTs
     * say how many of the class's evictions are of untracked keys (all of them when none came). */
    double untracked = 1;
    if (p->cfg.evict_surplus && k->evicts_smp > 0) untracked = k->evicts_untracked / k->evicts_smp;
    /* A stretch whose evicted keys are mostly missing (a blind window, a burst) is a gap in the
     * ghost: the curve past it is not measured. A steady loss only thins the ghost (the lost
     * lines' keys are spread over the whole span, each stretch keeps most of its keys): the
     * curve above N reads low by the missing share, it still sees to k*N, and the window is
     * flagged for its loss anyway. Revoking completeness for thinning moved the loss mark
     * forward every lossy window, so under a 10-40 % loss the class never became complete
     * again. */
    if (short_by * untracked >= HC_GHOST_GAP_SHARE * (double)evicted)
        ghost_note_lost(&k->g, short_by * p->rate * untracked, HC_GHOST_LOST_TOLERANCE);
    else
        k->thinned += short_by * p->rate * untracked;
    /* cfg.evict_budget: that many repairs of resident keys may be lost evictions (kept until
     * used, at most the class's size) */
    k->lost_credit += short_by * p->rate;
    if (k->lost_credit > k->ns) k->lost_credit = k->ns;
    k->evicts_win = (double)evicted;     /* counted once if called again for the same window */
}

void hc_profile_set_refill_rule(hc_profile *p, int on)
{
    p->refill_rule = on != 0;
}

void hc_profile_forget_keys(hc_profile *p)
{
    for (uint64_t i = 0; i < p->kt.nslots; ) {
        uint64_t tg = p->kt.tag[i];
        if (tg) {
            hc_class *k = p->cls[tg & 0xFF];
            if (k) est_remove(k, p->kt.act[i]);
            kt_remove_slot(&p->kt, i);
            continue;                   /* slot i now holds a shifted entry: re-check it */
        }
        i++;
    }
    for (int c = 0; c < HC_MAX_CLASSES; c++) {
        hc_class *k = p->cls[c];
        if (!k || !k->active || !k->has_ghost) continue;
        /* an empty ghost: the keys it held are gone too (its completeness stays as it was:
         * flushed items are reclaimed without a line) */
        int exact = k->g.exact;
        double cap = k->g.capacity;
        uint32_t F = k->g.F;
        ghost_free(&k->g);
        if (ghost_init(&k->g, F, cap, p->cfg.ghost_fpp, p->cfg.ghost_keep_coverage, exact) != 0)
            k->has_ghost = 0;
        k->lost_credit = 0;
    }
    memset(p->pending, 0, PENDING_SLOTS * sizeof(uint64_t));
    p->npending = 0;
    memset(p->refill, 0, PENDING_SLOTS * sizeof(uint64_t));
    p->nrefill = 0;
}

int hc_profile_set_capacity(hc_profile *p, int clsid, uint64_t items, uint32_t chunk_size)
{
    if (items < 1) return -1;
    int ci = cls_index(clsid);
    hc_class *k = p->cls[ci];
    if (k && k->active && k->cap_items == items) { k->chunk = chunk_size; return 0; }
    if (!k) {
        k = calloc(1, sizeof(*k));
        if (!k) return -1;
        k->stk = p->cfg.estimator == HC_EST_STACKER;
        if (k->stk ? stacker_init(&k->s, p->cfg.buckets, 1) != 0
                   : rounder_init(&k->r, p->cfg.buckets, 1, p->cfg.rounder_balanced) != 0) { free(k); return -1; }
        p->cls[ci] = k;
    }
    k->cap_items = items;
    k->chunk = chunk_size;
    k->active = 1;
    if (p->cfg.sampling == HC_SAMPLE_FIXED_SIZE) {
        double want = (double)p->cfg.sample_max_keys / (p->cfg.ghost_factor * total_capacity(p));
        if (want < p->rate) lower_rate(p, want);
    }
    k->ns = class_ns(p, k);
    surplus_limits(p, k);
    est_set_capacity(k, k->ns);
    double kf = p->cfg.ghost_factor;
    /* A ghost holding evicted keys keeps them when its filters can take the new capacity (the
     * capacities are re-read when memcached's memory fills, after its first evictions: clearing
     * them there lost keys a complete ghost needs); otherwise it is re-created for the new size
     * and what it held is counted as dropped. */
    int keep = k->has_ghost && kf > 1.0 && ghost_entries(&k->g) > 0 &&
               ghost_resize(&k->g, (kf - 1) * k->ns) == 0;
    /* a new class's ghost misses nothing if memcached had evicted nothing before the events
     * began and none of the class's EVICTs came before it had a capacity; a re-created one
     * if the old one missed nothing and held nothing (otherwise its keys are lost here) */
    int exact = p->seen_from_start && p->evicts_no_cap[ci] == 0;
    if (k->has_ghost && !keep) {
        if (p->rate > 0) k->ghost_dropped += (ghost_entries(&k->g) + k->g.flushed) / p->rate;
        exact = k->g.exact && ghost_entries(&k->g) == 0;
        ghost_free(&k->g);
        k->has_ghost = 0;
    }
    if (kf > 1.0 && !keep) {
        if (ghost_init(&k->g, p->cfg.ghost_filters, (kf - 1) * k->ns, p->cfg.ghost_fpp, p->cfg.ghost_keep_coverage, exact) != 0) return -1;
        k->has_ghost = 1;
    }
    memset(k->fp_reach, 0, sizeof(k->fp_reach));
    k->fp_n = 0;
    curveacc_free(&k->acc);
    if (curveacc_init(&k->acc, p->cfg.resolution, kf * (double)items) != 0) return -1;
    k->reads = 0; k->hits_obs = 0; k->sampled_w = 0;
    window_begins(k);
    if (p->cfg.emulate_lru) {
        uint64_t cap = (uint64_t)llround(k->ns);
        if (!k->has_emu) {
            if (lruemu_init(&k->emu, cap) != 0) return -1;
            k->has_emu = 1;
        } else {
            lruemu_set_capacity(&k->emu, cap);
            uint64_t victim;
            while (k->emu.size > k->emu.cap && lruemu_pop(&k->emu, &victim)) ev_remove(p, k, ci, victim, 1);
        }
    }
    return 0;
}

int hc_profile_has_class(const hc_profile *p, int clsid)
{
    const hc_class *k = p->cls[cls_index(clsid)];
    return k && k->active;
}

/* ---- reading curves ---- */

static double *eval_class(const hc_profile *p, const hc_class *k)
{
    flush_fp((hc_profile *)p, (hc_class *)k);   /* pending corrections belong to the curve */
    double *H = malloc(((size_t)k->acc.G + 1) * sizeof(double));
    if (H) curveacc_eval(&k->acc, H);
    return H;
}

static double ratio_at(const hc_profile *p, const hc_class *k, const double *H, double x)
{
    if (k->reads <= 0) return 0;
    double adj = p->cfg.sampling != HC_SAMPLE_OFF ? k->reads - k->sampled_w : 0;
    double r = (curveacc_at(&k->acc, H, x) + adj) / k->reads;
    return r < 0 ? 0 : (r > 1 ? 1 : r);
}

int hc_profile_curve(const hc_profile *p, int clsid, hc_curve *out)
{
    int ci = cls_index(clsid);
    const hc_class *k = p->cls[ci];
    if (!k || !k->active) return -1;
    double *H = eval_class(p, k);
    if (!H) return -1;
    memset(out, 0, sizeof(*out));
    out->clsid = ci;
    out->capacity_items = k->cap_items;
    out->chunk_size = k->chunk;
    out->ghost_factor = p->cfg.ghost_factor;
    out->npoints = HC_CURVE_POINTS;
    double span = p->cfg.ghost_factor * (double)k->cap_items;
    for (int i = 0; i < HC_CURVE_POINTS; i++) {
        out->size_items[i] = (i + 1) * span / HC_CURVE_POINTS;
        out->hit_ratio[i] = ratio_at(p, k, H, out->size_items[i]);
    }
    out->reads = (uint64_t)llround(k->reads);
    out->hits_observed = k->hits_obs;
    out->sampled_reads = p->cfg.sampling != HC_SAMPLE_OFF ? k->reads : k->sampled_w;
    out->sample_rate = p->rate;
    /* Ghost counts are in sampled items (the class's ghost covers (k-1) * R * N positions). */
    double ghost_items = k->has_ghost && p->rate > 0 ? ghost_entries(&k->g) / p->rate : 0;
    out->ghost_filters = k->has_ghost ? k->g.F : 0;
    out->ghost_dropped_items = k->ghost_dropped + (k->has_ghost && p->rate > 0 ? k->g.flushed / p->rate : 0);
    out->ghost_thinned_items = p->rate > 0 ? k->thinned / p->rate : 0;
    /* covered from the window's start to now: every read it counted that missed the ghost was a
     * miss at every size of the curve */
    out->ghost_complete = k->has_ghost && k->win_covered && ghost_check_covered((ghost *)&k->g) &&
                          k->g.uncovered == k->win_uncovered;
    /* complete: past N + its entries only first reads miss, so the flat rest is measured */
    out->ghost_reach_items = out->ghost_complete ? span : fmin((double)k->cap_items + ghost_items, span);
    free(H);
    return 0;
}

double hc_profile_hit_ratio_at(const hc_profile *p, int clsid, double size_items)
{
    const hc_class *k = p->cls[cls_index(clsid)];
    if (!k || !k->active) return -1;
    double *H = eval_class(p, k);
    if (!H) return -1;
    double r = ratio_at(p, k, H, size_items);
    free(H);
    return r;
}

void hc_profile_reset(hc_profile *p, int clsid)
{
    for (int i = 0; i < HC_MAX_CLASSES; i++) {
        if (clsid >= 0 && i != cls_index(clsid)) continue;
        hc_class *k = p->cls[i];
        if (!k || !k->active) continue;
        curveacc_clear(&k->acc);
        memset(k->fp_reach, 0, sizeof(k->fp_reach));
        k->fp_n = 0;
        k->reads = 0; k->hits_obs = 0; k->sampled_w = 0;
        window_begins(k);
    }
}

void hc_profile_stats_get(const hc_profile *p, hc_profile_stats *out)
{
    *out = p->st;
    out->tracked_keys = p->kt.count;
    out->table_slots = p->kt.nslots;
    out->bytes_per_slot = sizeof(uint64_t) + sizeof(uint32_t);
    out->sample_rate = p->rate;
    size_t total = sizeof(*p) + kt_bytes(&p->kt) + PENDING_SLOTS * (2 * sizeof(uint64_t) + 1);
    double ge = 0;
    size_t gb = 0, eb = 0;
    for (int i = 0; i < HC_MAX_CLASSES; i++) {
        const hc_class *k = p->cls[i];
        if (!k) continue;
        total += sizeof(*k) + est_bytes(k) + 2 * ((size_t)k->acc.G + 1) * sizeof(double);
        out->estimator_bytes += est_bytes(k);
        if (k->has_ghost) { ge += ghost_entries(&k->g); gb += ghost_bytes(&k->g); }
        if (k->has_emu) eb += lruemu_bytes(&k->emu);
    }
    out->ghost_entries = (uint64_t)llround(ge);
    out->ghost_bytes = gb;
    out->emulator_bytes = eb;
    out->total_bytes = total + gb + eb;
}

const char *hc_profile_verify(const hc_profile *p)
{
    int64_t per_class[HC_MAX_CLASSES] = {0};
    for (uint64_t i = 0; i < p->kt.nslots; i++)
        if (p->kt.tag[i]) per_class[p->kt.tag[i] & 0xFF]++;
    for (int c = 0; c < HC_MAX_CLASSES; c++) {
        const hc_class *k = p->cls[c];
        if (!k) { if (per_class[c]) return "keys tracked in a class that does not exist"; continue; }
        if (est_total(k) != per_class[c]) return "estimator total differs from the keys tracked in the class";
        if (k->stk) {
            const char *e = stacker_verify(&k->s);
            if (e) return e;
            for (uint64_t i = 0; i < p->kt.nslots; i++)
                if (p->kt.tag[i] && (int)(p->kt.tag[i] & 0xFF) == c
                    && (p->kt.act[i] >= k->s.nnodes || k->s.node[p->kt.act[i]].prev == UINT32_MAX - 1))
                    return "a tracked key points at a free STACKER node";
        }
    }
    return NULL;
}
