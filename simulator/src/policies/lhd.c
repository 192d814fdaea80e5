/*
 * LHD, Least Hit Density (Beckmann, Chen & Cidon, NSDI'18), ported from the authors' code
 * as libCacheSim ships it (cache/eviction/LHD/lhd.cpp). Each resident has an age (updates
 * since its last access, coarsened by a shift) and a class (from the sum of its last two
 * hit ages). Per class, histograms of hits and evictions by age give, by one backward pass,
 * the hit density at each age: expected hits / expected lifetime still ahead. The victim is
 * the lowest density / size among 8 random residents (32 after 50 reconfigurations) and the
 * 8 most recent admissions that looked poor. Histograms decay by 0.9 every 2^20 updates;
 * the age coarsening adapts at the 5th and 25th reconfiguration; 1 % of the cache goes to
 * "explorers" (1 in 32 updates, density + 1) for the first 50 reconfigurations.
 * Size = the object's charge, so byte mode ranks by density per byte, as the paper does.
 * Only the one application class libCacheSim uses exists here (16 classes, not 256).
 *
 * Residents live in a dense tag array (random sampling); an object's aux is its tag index.
 */
#include "../cache.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AGE 20000u
#define HIT_AGE_CLASSES 16u
#define APP_OFFSET 16u           /* libCacheSim: app id 1, class ids 16..31 */
#define ACCS_PER_RECONF (1u << 20)
#define EWMA_DECAY 0.9f
#define ADMISSIONS 8
#define EXPLORE_INV 32u

typedef struct {
    uint64_t ts;
    uint32_t idx;                /* object */
    uint32_t last_hit, last_last;
    float size;                  /* the object's charge, kept here: ranking reads only tags */
    uint8_t cls;                 /* hit-age class, fixed between accesses */
    uint8_t explorer;
} lhd_tag;

typedef struct {
    float hits[MAX_AGE], evictions[MAX_AGE], density[MAX_AGE];
} lhd_class;

typedef struct {
    lhd_tag *tags;
    uint32_t ntags, cap;
    lhd_class *cls;              /* HIT_AGE_CLASSES */
    uint64_t timestamp, next_reconf, rng;
    int nreconf;
    uint32_t shift;
    float ewma_objs, ewma_mass, ewma_victim;
    int64_t explorer_budget;
    uint64_t admitted[ADMISSIONS];     /* keys of recent poor admissions ... */
    uint32_t admitted_idx[ADMISSIONS]; /* ... and their objects (checked before use) */
    int admitted_head;
} lhd_state;

static inline uint64_t next_rand(lhd_state *s)
{
    /* xorshift64*: deterministic per run (libCacheSim's next_rand is another generator) */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545F4914F6CDD1Dull;
}

static uint32_t hit_age_class(uint64_t age)
{
    if (age == 0)
        return HIT_AGE_CLASSES - 1;
    uint32_t log = 0;
    while (age < MAX_AGE && log < HIT_AGE_CLASSES - 1) {
        age <<= 1;
        log++;
    }
    return log;
}

static inline lhd_class *class_of(lhd_state *s, const lhd_tag *t) { return &s->cls[t->cls]; }

static inline uint32_t age_of(const lhd_state *s, const lhd_tag *t)
{
    uint64_t age = (s->timestamp - t->ts) >> s->shift;
    return age >= MAX_AGE ? MAX_AGE - 1 : (uint32_t)age;
}

static float density_of(sim_cache *c, lhd_state *s, const lhd_tag *t)
{
    uint32_t age = age_of(s, t);
    if (age == MAX_AGE - 1)
        return -FLT_MAX;
    (void)c;
    float d = class_of(s, t)->density[age] / t->size;
    return t->explorer ? d + 1.0f : d;
}

static int lhd_init(sim_cache *c, char *err, size_t errlen)
{
    lhd_state *s = calloc(1, sizeof *s);
    if (!s || !(s->cls = calloc(HIT_AGE_CLASSES, sizeof *s->cls))) {
        free(s);
        snprintf(err, errlen, "lhd: out of memory");
        return -1;
    }
    for (uint32_t k = 0; k < HIT_AGE_CLASSES; k++)
        for (uint32_t a = 0; a < MAX_AGE; a++)
            s->cls[k].density[a] = (float)(APP_OFFSET + k + 1) / (float)(a + 1);
    s->next_reconf = ACCS_PER_RECONF;
    s->shift = 10;
    s->rng = 0x9E3779B97F4A7C15ull;
    s->explorer_budget = (int64_t)((double)c->capacity * 0.01);
    for (int i = 0; i < ADMISSIONS; i++)
        s->admitted[i] = UINT64_MAX;
    c->priv = s;
    return 0;
}

static void lhd_free(sim_cache *c)
{
    lhd_state *s = c->priv;
    free(s->tags);
    free(s->cls);
    free(s);
}

static void model_hit_density(lhd_state *s)
{
    for (uint32_t k = 0; k < HIT_AGE_CLASSES; k++) {
        lhd_class *cl = &s->cls[k];
        float events = cl->hits[MAX_AGE - 1] + cl->evictions[MAX_AGE - 1];
        float hits = cl->hits[MAX_AGE - 1];
        float lifetime = events;
        for (uint32_t a = MAX_AGE - 1; a-- > 0;) {
            hits += cl->hits[a];
            events += cl->hits[a] + cl->evictions[a];
            lifetime += events;
            cl->density[a] = events > 1e-5f ? hits / lifetime : 0.0f;
        }
    }
}

static void adapt_age_coarsening(sim_cache *c, lhd_state *s)
{
    s->ewma_objs = s->ewma_objs * EWMA_DECAY + (float)c->nresident;
    s->ewma_mass = s->ewma_mass * EWMA_DECAY + 1.0f;
    if (s->nreconf != 5 && s->nreconf != 25)
        return;
    float optimal = (s->ewma_objs / s->ewma_mass) / (0.01f * (float)MAX_AGE);
    uint32_t lg = 1;
    while ((float)(1u << lg) < optimal)
        lg++;
    int delta = (int)lg - (int)s->shift;
    s->shift = lg;
    s->ewma_objs *= 8;
    s->ewma_mass *= 8;
    for (uint32_t k = 0; k < HIT_AGE_CLASSES; k++) {
        lhd_class *cl = &s->cls[k];
        if (delta < 0) {
            for (uint32_t a = MAX_AGE >> -delta; a < MAX_AGE - 1; a++) {
                cl->hits[MAX_AGE - 1] += cl->hits[a];
                cl->evictions[MAX_AGE - 1] += cl->evictions[a];
            }
            for (uint32_t a = MAX_AGE - 1; a-- > 0;) {
                cl->hits[a] = cl->hits[a >> -delta] / (float)(1 << -delta);
                cl->evictions[a] = cl->evictions[a >> -delta] / (float)(1 << -delta);
            }
        } else if (delta > 0) {
            for (uint32_t a = 0; a < (MAX_AGE >> delta); a++) {
                float h = 0, e = 0;
                for (uint32_t i = 0; i < (1u << delta); i++) {
                    h += cl->hits[(a << delta) + i];
                    e += cl->evictions[(a << delta) + i];
                }
                cl->hits[a] = h;
                cl->evictions[a] = e;
            }
            for (uint32_t a = MAX_AGE >> delta; a < MAX_AGE - 1; a++)
                cl->hits[a] = cl->evictions[a] = 0;
        }
    }
}

static void reconfigure(sim_cache *c, lhd_state *s)
{
    for (uint32_t k = 0; k < HIT_AGE_CLASSES; k++)
        for (uint32_t a = 0; a < MAX_AGE; a++) {
            s->cls[k].hits[a] *= EWMA_DECAY;
            s->cls[k].evictions[a] *= EWMA_DECAY;
        }
    adapt_age_coarsening(c, s);
    model_hit_density(s);
}

/* an access to tag t (a hit, or a new tag when inserted) */
static void update(sim_cache *c, lhd_state *s, lhd_tag *t, int insert)
{
    uint32_t charge = c->objs[t->idx].charge;
    if (insert) {
        t->last_last = MAX_AGE;
        t->last_hit = 0;
    } else {
        uint32_t age = age_of(s, t);
        class_of(s, t)->hits[age] += 1;
        if (t->explorer)
            s->explorer_budget += charge;
        t->last_last = t->last_hit;
        t->last_hit = age;
    }
    t->cls = (uint8_t)hit_age_class((uint64_t)t->last_hit + t->last_last);
    t->size = (float)charge;
    t->ts = s->timestamp;
    int explore = next_rand(s) % EXPLORE_INV == 0;
    if (explore && s->explorer_budget > 0 && s->nreconf < 50) {
        t->explorer = 1;
        s->explorer_budget -= charge;
    } else {
        t->explorer = 0;
    }
    if (insert && !explore && density_of(c, s, t) < s->ewma_victim)
    {
        s->admitted[s->admitted_head % ADMISSIONS] = c->objs[t->idx].key;
        s->admitted_idx[s->admitted_head++ % ADMISSIONS] = t->idx;
    }
    s->timestamp++;
    if (--s->next_reconf == 0) {
        reconfigure(c, s);
        s->next_reconf = ACCS_PER_RECONF;
        s->nreconf++;
    }
}

static void lhd_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    lhd_state *s = c->priv;
    update(c, s, &s->tags[c->objs[idx].aux], 0);
}

static uint32_t lhd_insert(sim_cache *c, const sim_req *r)
{
    lhd_state *s = c->priv;
    if (s->ntags == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 1024;
        lhd_tag *t = realloc(s->tags, (size_t)cap * sizeof *t);
        if (!t) {
            fprintf(stderr, "hcsim: out of memory growing the LHD tags\n");
            abort();
        }
        s->tags = t;
        s->cap = cap;
    }
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].aux = s->ntags;
    lhd_tag *t = &s->tags[s->ntags++];
    memset(t, 0, sizeof *t);
    t->idx = i;
    sim_charge(c, i);
    update(c, s, t, 1);
    return i;
}

static void drop(sim_cache *c, lhd_state *s, uint32_t idx)
{
    uint32_t k = c->objs[idx].aux;
    s->tags[k] = s->tags[--s->ntags];
    if (k < s->ntags)
        c->objs[s->tags[k].idx].aux = k;
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void lhd_remove(sim_cache *c, uint32_t idx) { drop(c, c->priv, idx); }

static void lhd_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    lhd_state *s = c->priv;
    uint32_t n = s->nreconf > 50 ? 32 : 8, victim = SIM_NIL;
    float best = FLT_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)(next_rand(s) % s->ntags);
        float d = density_of(c, s, &s->tags[k]);
        if (d < best) {
            best = d;
            victim = k;
        }
    }
    for (int i = 0; i < ADMISSIONS; i++) {
        /* still resident as the same key? (an index lookup per slot would cost more) */
        uint32_t o = s->admitted_idx[i];
        if (s->admitted[i] == UINT64_MAX || c->objs[o].key != s->admitted[i] || c->objs[o].aux >= s->ntags ||
            s->tags[c->objs[o].aux].idx != o)
            continue;
        float d = density_of(c, s, &s->tags[c->objs[o].aux]);
        if (d < best) {
            best = d;
            victim = c->objs[o].aux;
        }
    }
    s->ewma_victim = EWMA_DECAY * s->ewma_victim + (1 - EWMA_DECAY) * best;
    lhd_tag *t = &s->tags[victim];
    class_of(s, t)->evictions[age_of(s, t)] += 1;
    if (t->explorer)
        s->explorer_budget += c->objs[t->idx].charge;
    drop(c, s, t->idx);
    c->evictions++;
}

static int lhd_verify(sim_cache *c, char *why, size_t n)
{
    lhd_state *s = c->priv;
    if (s->ntags != c->nresident)
        return snprintf(why, n, "tags %u != residents", s->ntags), -1;
    for (uint32_t k = 0; k < s->ntags; k++) {
        const lhd_tag *t = &s->tags[k];
        if (c->objs[t->idx].aux != k || (c->objs[t->idx].flags & SIM_F_GHOST))
            return snprintf(why, n, "tag %u does not point back", k), -1;
        if (t->ts >= s->timestamp || t->last_hit >= MAX_AGE || t->last_last > MAX_AGE ||
            t->cls != hit_age_class((uint64_t)t->last_hit + t->last_last) ||
            t->size != (float)c->objs[t->idx].charge)
            return snprintf(why, n, "tag %u: age fields out of range", k), -1;
    }
    if (s->shift > 40)
        return snprintf(why, n, "age coarsening shift %u", s->shift), -1;
    return 0;
}

const sim_policy_ops sim_policy_lhd = {
    .name = "lhd", .describe = "LHD (Beckmann et al. 2018): evict the least hit density per byte",
    .init = lhd_init, .free = lhd_free, .hit = lhd_hit,
    .insert = lhd_insert, .evict = lhd_evict, .verify = lhd_verify, .remove = lhd_remove,
};
