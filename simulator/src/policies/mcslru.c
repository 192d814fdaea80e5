/*
 * memcached 1.6's segmented LRU, per slab class (research_memcached_watch.md 5.1; items.c
 * do_item_alloc_pull, do_item_bump, do_item_update, lru_pull_tail, lru_maintainer_juggle):
 *  - new items enter HOT; hits do not relink: the first hit ever sets FETCHED, a hit on a
 *    FETCHED item sets ACTIVE (HOT/WARM: only its time is bumped; COLD: it moves to WARM,
 *    the async bump modelled as immediate, ACTIVE cleared as do_item_update does);
 *  - the maintainer juggle, run after every store (an ideal, never-lagging maintainer):
 *    HOT tail: ACTIVE -> WARM, else -> COLD when HOT > hot_pct of the class's bytes or
 *    older than hot_max_factor x COLD-tail age; WARM tail: ACTIVE -> requeued in WARM,
 *    else -> COLD when WARM > warm_pct or older than warm_max_factor x COLD age; COLD tail:
 *    ACTIVE -> WARM. Up to 500 rounds, HOT||WARM then COLD, as lru_maintainer_juggle;
 *  - allocation: a free chunk of the class, else a new page (1 MiB, from the global
 *    limit; a class with no page always gets its first one, as do_slabs_newslab), else
 *    evict the COLD tail, or push the HOT tail to COLD when COLD is empty.
 * Time is logical (requests), so ages are in requests. Pages are never moved between
 * classes (slab_automove is not modelled). In items mode there is one class of `size`
 * chunks. In a mini-simulation the page shrinks with the sample rate.
 * Parameters: mcslru.hot (20), mcslru.warm (40), mcslru.hot_age (0.2), mcslru.warm_age
 * (2.0), mcslru.ages (1: use the age caps), mcslru.base (0: off; items mode only).
 *
 * mcslru.base = B (items) simulates what the profiler agent measures above today's memory
 * rather than memcached at the cache's size S: memcached's segmented LRU at B items plus a
 * ghost of the S - B keys it evicted last, in eviction order (the agent's ghost is fed with
 * memcached's own evictions). A read of a ghost key counts as a hit (the agent's curve at S
 * counts it) and, as at B, the key is stored again as a new item and leaves the ghost. The
 * worker's policy correction compares this with mcslru at S (worker/README.md): memcached at
 * 2B protects its twice-read keys in WARM, which the ghost extension of memcached at B cannot.
 * S <= B is plain mcslru at S.
 */
#include "../cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define F_FETCHED 0x01
#define F_ACTIVE 0x02
enum { HOT = 0, WARM = 1, COLD = 2, GHOST = 3 };
#define MAXCLS 64

typedef struct {
    sim_list lru[3];
    uint64_t chunks_total, chunks_used;
    uint32_t chunk, perslab, pages;
} mc_class;

typedef struct {
    mc_class cls[MAXCLS];
    uint64_t pages_total, pages_used;
    double hot_pct, warm_pct, hot_age, warm_age;
    int ages;
    int bytes;
    /* mcslru.base: the evicted keys kept as ghosts (0: none), newest at the head */
    uint64_t ghost_cap;
    sim_list ghost;
} mc_state;

static int mc_init(sim_cache *c, char *err, size_t errlen)
{
    mc_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->hot_pct = sim_param(c, "hot", 20);
    s->warm_pct = sim_param(c, "warm", 40);
    s->hot_age = sim_param(c, "hot_age", 0.2);
    s->warm_age = sim_param(c, "warm_age", 2.0);
    s->ages = sim_param(c, "ages", 1) != 0;
    if (s->hot_pct < 0 || s->warm_pct < 0 || s->hot_pct + s->warm_pct >= 100) {
        snprintf(err, errlen, "mcslru: need hot, warm >= 0 and hot + warm < 100");
        free(s);
        return -1;
    }
    s->bytes = c->cfg->unit_bytes;
    double base = sim_param(c, "base", 0);
    if (base < 0 || (base > 0 && s->bytes)) {
        snprintf(err, errlen, "mcslru: base must be >= 0 and is for items mode only");
        free(s);
        return -1;
    }
    for (int k = 0; k < MAXCLS; k++)
        for (int q = 0; q < 3; q++)
            sim_list_init(&s->cls[k].lru[q]);
    sim_list_init(&s->ghost);
    if (!s->bytes) {
        uint64_t b = (uint64_t)llround(base);
        s->cls[0].chunks_total = c->capacity;
        if (b > 0 && c->capacity > b) {
            s->cls[0].chunks_total = b;
            s->ghost_cap = c->capacity - b;
        }
        s->cls[0].chunk = 1;
    } else {
        double page = (double)SIM_PAGE_SIZE * c->scale;
        /* A mini-simulation's capacity is size x R rounded to whole bytes (off by up to half a
         * byte), and so is the page: 4 MiB x 0.05 over 1 MiB x 0.05 must stay 4 pages, not
         * floor(3.99999) = 3. */
        s->pages_total = (uint64_t)floor(((double)c->capacity + 0.5) / page + 1e-9);
        for (int k = 1; k <= sim_slab_nclasses() && k < MAXCLS; k++) {
            mc_class *m = &s->cls[k];
            m->chunk = sim_slab_chunk(k);
            m->perslab = (uint32_t)(page / m->chunk);
            if (m->perslab < 1)
                m->perslab = 1;
        }
    }
    c->priv = s;
    return 0;
}

static void mc_free(sim_cache *c) { free(c->priv); }

static void relink(sim_cache *c, mc_class *m, uint32_t i, int to)
{
    sim_list_unlink(c, &m->lru[c->objs[i].qid], i);
    c->objs[i].qid = (uint8_t)to;
    sim_list_push_head(c, &m->lru[to], i);
}

static void mc_hit(sim_cache *c, uint32_t i, const sim_req *r)
{
    (void)r;
    mc_state *s = c->priv;
    sim_obj *o = &c->objs[i];
    if (o->flags & F_ACTIVE)
        return;
    if (!(o->flags & F_FETCHED)) {
        o->flags |= F_FETCHED;
        return;
    }
    if (o->qid != COLD) {
        o->flags |= F_ACTIVE;
        o->prio = c->now;
    } else {
        /* second hit in COLD: bumped to WARM (do_item_update clears ACTIVE) */
        o->prio = c->now;
        relink(c, &s->cls[o->cls], i, WARM);
    }
}

/* one lru_pull_tail on HOT or WARM (no eviction); returns 1 if it moved an item */
static int pull_hw(sim_cache *c, mc_state *s, mc_class *m, int q, uint64_t total, double max_age)
{
    uint32_t i = m->lru[q].tail;
    if (i == SIM_NIL)
        return 0;
    sim_obj *o = &c->objs[i];
    double limit = (double)total * (q == HOT ? s->hot_pct : s->warm_pct) / 100.0;
    if (o->flags & F_ACTIVE) {
        o->flags &= (uint8_t)~F_ACTIVE;
        if (q == WARM) {
            o->prio = c->now;
            sim_list_move_head(c, &m->lru[WARM], i);
        } else {
            relink(c, m, i, WARM);
        }
        return 1;
    }
    if ((double)m->lru[q].bytes > limit || (s->ages && (double)(c->now - o->prio) > max_age)) {
        relink(c, m, i, COLD);
        return 1;
    }
    return 0;
}

static int pull_cold_active(sim_cache *c, mc_class *m)
{
    uint32_t i = m->lru[COLD].tail;
    if (i == SIM_NIL || !(c->objs[i].flags & F_ACTIVE))
        return 0;
    c->objs[i].flags &= (uint8_t)~F_ACTIVE;
    relink(c, m, i, WARM);
    return 1;
}

static void juggle(sim_cache *c, mc_state *s, mc_class *m)
{
    uint64_t total = m->lru[HOT].bytes + m->lru[WARM].bytes + m->lru[COLD].bytes;
    double cold_age = 0;
    if (m->lru[COLD].tail != SIM_NIL)
        cold_age = (double)(c->now - c->objs[m->lru[COLD].tail].prio);
    double hot_age = cold_age * s->hot_age, warm_age = cold_age * s->warm_age;
    for (int k = 0; k < 500; k++) {
        int more = 0;
        if (pull_hw(c, s, m, HOT, total, hot_age) || pull_hw(c, s, m, WARM, total, warm_age))
            more++;
        more += pull_cold_active(c, m);
        if (!more)
            break;
    }
}

static void evict_one(sim_cache *c, mc_state *s, mc_class *m, int q)
{
    uint32_t i = m->lru[q].tail;
    sim_list_unlink(c, &m->lru[q], i);
    m->chunks_used -= c->objs[i].charge / m->chunk;
    sim_uncharge(c, i);
    c->evictions++;
    if (!s->ghost_cap) {
        sim_obj_release(c, i);
        return;
    }
    /* mcslru.base: the evicted key becomes the newest ghost (items mode: a charge of 1 each) */
    sim_ghost_push(c, &s->ghost, i, GHOST, s->ghost_cap);
}

static bool mc_get(sim_cache *c, const sim_req *r)
{
    mc_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    bool ghost_hit = false;
    if (i != SIM_NIL && (c->objs[i].flags & SIM_F_GHOST)) {
        /* mcslru.base: a hit within the ghost; memcached at base stores the key again */
        sim_list_unlink(c, &s->ghost, i);
        sim_obj_release(c, i);
        ghost_hit = true;
        i = SIM_NIL;
    }
    if (i != SIM_NIL) {
        mc_hit(c, i, r);
        return true;
    }
    int k = 0;
    uint64_t need = 1;
    sim_req rr = *r;
    if (s->bytes) {
        k = sim_slab_class_of(SIM_ITEM_HEADER + r->size);
        uint64_t item = SIM_ITEM_HEADER + (uint64_t)r->size;
        need = (item + s->cls[k].chunk - 1) / s->cls[k].chunk;   /* >1 only for huge items */
        rr.charge = (uint32_t)(need * s->cls[k].chunk);
        rr.cls = (uint8_t)k;
    } else {
        rr.charge = 1;
        rr.cls = 0;
    }
    mc_class *m = &s->cls[k];
    if (!s->bytes && c->capacity < need)
        return false;
    for (int tries = 0; m->chunks_total - m->chunks_used < need; tries++) {
        if (s->bytes && (s->pages_used < s->pages_total || m->pages == 0)) {
            m->pages++;
            s->pages_used++;
            m->chunks_total += m->perslab;
            continue;
        }
        if (m->lru[COLD].count)
            evict_one(c, s, m, COLD);
        else if (m->lru[HOT].count)
            relink(c, m, m->lru[HOT].tail, COLD);
        else if (m->lru[WARM].count)
            relink(c, m, m->lru[WARM].tail, COLD);   /* memcached would fail the store */
        else
            return false;   /* an item larger than a whole page-limited class */
        (void)tries;
    }
    uint32_t n = sim_obj_alloc(c, &rr);
    c->objs[n].qid = HOT;
    c->objs[n].prio = c->now;
    sim_list_push_head(c, &m->lru[HOT], n);
    m->chunks_used += need;
    sim_charge(c, n);
    juggle(c, s, m);
    return ghost_hit;
}

static void mc_remove(sim_cache *c, uint32_t idx)
{
    mc_state *s = c->priv;
    mc_class *m = &s->cls[c->objs[idx].cls];
    sim_list_unlink(c, &m->lru[c->objs[idx].qid], idx);
    m->chunks_used -= c->objs[idx].charge / m->chunk;
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static uint32_t mc_insert(sim_cache *c, const sim_req *r)
{
    mc_get(c, r);
    return sim_find(c, r->key);
}

static void mc_evict(sim_cache *c, const sim_req *r)
{
    mc_state *s = c->priv;
    mc_class *m = &s->cls[s->bytes ? sim_slab_class_of(SIM_ITEM_HEADER + r->size) : 0];
    if (m->lru[COLD].count)
        evict_one(c, s, m, COLD);
}

/* exported for unit tests: items in HOT, WARM, COLD of class k */
void sim_mcslru_counts(const sim_cache *c, int k, uint64_t out[3])
{
    const mc_state *s = c->priv;
    for (int q = 0; q < 3; q++)
        out[q] = s->cls[k].lru[q].count;
}

static int mc_verify(sim_cache *c, char *why, size_t n)
{
    mc_state *s = c->priv;
    uint64_t total = 0, pages = 0;
    for (int k = 0; k < MAXCLS; k++) {
        mc_class *m = &s->cls[k];
        uint64_t chunks = 0;
        for (int q = 0; q < 3; q++) {
            if (sim_list_check(c, &m->lru[q], "lru", why, n) < 0)
                return -1;
            for (uint32_t i = m->lru[q].head; i != SIM_NIL; i = c->objs[i].next) {
                if (c->objs[i].qid != q || c->objs[i].cls != k)
                    return snprintf(why, n, "item on wrong queue/class"), -1;
                chunks += m->chunk ? c->objs[i].charge / m->chunk : 0;
            }
            total += m->lru[q].count;
        }
        if (chunks != m->chunks_used || m->chunks_used > m->chunks_total)
            return snprintf(why, n, "class %d chunks %llu used %llu total %llu", k, (unsigned long long)chunks,
                            (unsigned long long)m->chunks_used, (unsigned long long)m->chunks_total), -1;
        pages += m->pages;
    }
    if (pages != s->pages_used)
        return snprintf(why, n, "page accounting"), -1;
    if (sim_list_check(c, &s->ghost, "ghost", why, n) < 0)
        return -1;
    if (s->ghost.count > s->ghost_cap)
        return snprintf(why, n, "ghost over its cap"), -1;
    for (uint32_t i = s->ghost.head; i != SIM_NIL; i = c->objs[i].next)
        if (!(c->objs[i].flags & SIM_F_GHOST) || c->objs[i].qid != GHOST || sim_find(c, c->objs[i].key) != i)
            return snprintf(why, n, "ghost entry not a ghost"), -1;
    return total == c->nresident ? 0 : (snprintf(why, n, "queues total != residents"), -1);
}

const sim_policy_ops sim_policy_mcslru = {
    .name = "mcslru", .describe = "memcached 1.6 segmented LRU (HOT/WARM/COLD per slab class, pages)",
    .init = mc_init, .free = mc_free, .get = mc_get, .hit = mc_hit,
    .insert = mc_insert, .evict = mc_evict, .verify = mc_verify, .remove = mc_remove,
};
