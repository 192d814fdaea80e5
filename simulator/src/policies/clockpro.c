/*
 * CLOCK-Pro (Jiang, Chen & Zhang, USENIX ATC'05), the canonical rules (digest_thesis 2.3),
 * not Haura's crippled variant:
 *  - one circular list of hot pages, resident cold pages and non-resident cold pages that
 *    are still in their test period; new pages go to the list head, just behind HAND_hot;
 *  - hit on a resident page: set its reference bit, nothing moves;
 *  - miss on a non-resident page in test: m_c += 1 (it was re-used within its test
 *    period), it comes back as a hot page at the head; HAND_hot then runs while
 *    #hot > m - m_c;
 *  - miss on an unknown page: it enters as a resident cold page in test, ref 0;
 *  - HAND_cold (to free space) at a resident cold page: ref 0 -> evict, stay as a
 *    non-resident page if in test else leave the list; ref 1 and in test -> hot, m_c += 1,
 *    to the head; ref 1 not in test -> new test period, to the head;
 *  - HAND_hot at a hot page: ref 1 -> clear; ref 0 -> demote to cold. At a cold page it
 *    passes: end its test period (m_c -= 1) and drop it if non-resident;
 *  - HAND_test runs while the non-resident pages exceed m: ends test periods (m_c -= 1) and
 *    drops non-resident pages.
 * Sizes: every count is in capacity units (objects, or bytes with --unit bytes), m_c moves
 * by the page's charge. Parameters: clockpro.cold (initial m_c / m, default 1.0, as
 * libCacheSim), clockpro.min (bounds m_c to [min*m, (1-min)*m], default 0.01).
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>

#define CP_HOT 0x01
#define CP_REF 0x02
#define CP_TEST 0x04

typedef struct {
    uint32_t hand_hot, hand_cold, hand_test;
    uint64_t n;                   /* pages in the ring */
    uint64_t hot, cold, nonres;   /* units of hot, resident cold, non-resident pages */
    double mc, mc_min, mc_max;
} cp_state;

#define O(i) (c->objs[(i)])

static void ring_insert_head(sim_cache *c, cp_state *s, uint32_t i)
{
    if (s->n == 0) {
        O(i).prev = O(i).next = i;
        s->hand_hot = s->hand_cold = s->hand_test = i;
    } else {
        uint32_t at = s->hand_hot, pv = O(at).prev;
        O(i).next = at;
        O(i).prev = pv;
        O(pv).next = i;
        O(at).prev = i;
    }
    s->n++;
}

static void ring_remove(sim_cache *c, cp_state *s, uint32_t i)
{
    uint32_t nx = O(i).next == i ? SIM_NIL : O(i).next;
    if (s->hand_hot == i)
        s->hand_hot = nx;
    if (s->hand_cold == i)
        s->hand_cold = nx;
    if (s->hand_test == i)
        s->hand_test = nx;
    if (nx != SIM_NIL) {
        O(O(i).prev).next = O(i).next;
        O(O(i).next).prev = O(i).prev;
    }
    O(i).prev = O(i).next = SIM_NIL;
    s->n--;
}

static void move_head(sim_cache *c, cp_state *s, uint32_t i)
{
    ring_remove(c, s, i);
    ring_insert_head(c, s, i);
}

static void mc_add(cp_state *s, double d)
{
    s->mc += d;
    if (s->mc > s->mc_max)
        s->mc = s->mc_max;
    if (s->mc < s->mc_min)
        s->mc = s->mc_min;
}

static void drop_nonresident(sim_cache *c, cp_state *s, uint32_t i)
{
    s->nonres -= O(i).charge;
    ring_remove(c, s, i);
    sim_obj_release(c, i);
}

/* HAND_test: end one cold page's test period; drop it if non-resident */
static void run_test(sim_cache *c, cp_state *s)
{
    for (;;) {
        uint32_t i = s->hand_test;
        if (!(O(i).flags & CP_HOT)) {
            if (O(i).flags & CP_TEST) {
                O(i).flags &= (uint8_t)~CP_TEST;
                mc_add(s, -(double)O(i).charge);
            }
            if (O(i).flags & SIM_F_GHOST) {
                drop_nonresident(c, s, i);   /* advances the hand */
                return;
            }
        }
        s->hand_test = O(i).next;
    }
}

/* HAND_hot: demote one hot page (the one with the largest recency and ref 0) */
static void run_hot(sim_cache *c, cp_state *s)
{
    if (s->hot == 0)
        return;
    for (;;) {
        uint32_t i = s->hand_hot;
        uint8_t f = O(i).flags;
        if (f & CP_HOT) {
            s->hand_hot = O(i).next;
            if (f & CP_REF) {
                O(i).flags &= (uint8_t)~CP_REF;
                continue;
            }
            O(i).flags &= (uint8_t)~CP_HOT;
            s->hot -= O(i).charge;
            s->cold += O(i).charge;
            return;
        }
        /* a cold page: HAND_hot ends its test period on behalf of HAND_test */
        if (f & CP_TEST) {
            O(i).flags &= (uint8_t)~CP_TEST;
            mc_add(s, -(double)O(i).charge);
        }
        if (f & SIM_F_GHOST) {
            drop_nonresident(c, s, i);
            continue;
        }
        s->hand_hot = O(i).next;
    }
}

static void balance_hot(sim_cache *c, cp_state *s)
{
    while (s->hot > 0 && (double)s->hot > (double)c->capacity - s->mc)
        run_hot(c, s);
}

/* HAND_cold: free the space of one resident cold page */
static void run_cold(sim_cache *c, cp_state *s)
{
    if (s->cold == 0)
        run_hot(c, s);   /* everything resident is hot: demote one so there is a victim */
    for (;;) {
        uint32_t i = s->hand_cold;
        uint8_t f = O(i).flags;
        if ((f & CP_HOT) || (f & SIM_F_GHOST)) {
            s->hand_cold = O(i).next;
            continue;
        }
        if (f & CP_REF) {
            O(i).flags &= (uint8_t)~CP_REF;
            if (f & CP_TEST) {
                /* re-used within its test period: small reuse distance, becomes hot */
                O(i).flags = (uint8_t)((O(i).flags & ~CP_TEST) | CP_HOT);
                s->cold -= O(i).charge;
                s->hot += O(i).charge;
                mc_add(s, O(i).charge);
                move_head(c, s, i);
                balance_hot(c, s);
                if (s->cold == 0)
                    run_hot(c, s);
            } else {
                O(i).flags |= CP_TEST;
                move_head(c, s, i);
            }
            continue;
        }
        /* victim */
        s->hand_cold = O(i).next;
        sim_uncharge(c, i);
        s->cold -= O(i).charge;
        c->evictions++;
        if (f & CP_TEST) {
            O(i).flags |= SIM_F_GHOST;
            s->nonres += O(i).charge;
            while (s->nonres > c->capacity)
                run_test(c, s);
        } else {
            ring_remove(c, s, i);
            sim_obj_release(c, i);
        }
        return;
    }
}

static int cp_init(sim_cache *c, char *err, size_t errlen)
{
    double cold = sim_param(c, "cold", 1.0), mn = sim_param(c, "min", 0.01);
    if (cold < 0 || cold > 1 || mn < 0 || mn >= 0.5) {
        snprintf(err, errlen, "clockpro: need 0<=cold<=1, 0<=min<0.5");
        return -1;
    }
    cp_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    double m = (double)c->capacity;
    s->mc_min = mn * m < 1 ? 1 : mn * m;
    s->mc_max = m - s->mc_min < s->mc_min ? s->mc_min : m - s->mc_min;
    s->mc = cold * m;
    mc_add(s, 0);
    s->hand_hot = s->hand_cold = s->hand_test = SIM_NIL;
    c->priv = s;
    return 0;
}

static void cp_free(sim_cache *c) { free(c->priv); }

static void cp_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    O(idx).flags |= CP_REF;
}

static bool cp_get(sim_cache *c, const sim_req *r)
{
    cp_state *s = c->priv;
    uint32_t i = sim_find(c, r->key);
    if (i != SIM_NIL && !(O(i).flags & SIM_F_GHOST)) {
        O(i).flags |= CP_REF;
        return true;
    }
    if (r->charge > c->capacity)
        return false;
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        run_cold(c, s);
    /* the page may have left the list while HAND_cold ran (its test ended) */
    i = sim_find(c, r->key);
    if (i != SIM_NIL) {
        /* non-resident and in its test period: re-used, comes back hot */
        mc_add(s, r->charge);
        s->nonres -= O(i).charge;
        ring_remove(c, s, i);
        O(i).flags = CP_HOT;
        O(i).size = r->size;
        O(i).charge = r->charge;
        O(i).cost = r->cost;
        sim_charge(c, i);
        s->hot += r->charge;
        ring_insert_head(c, s, i);
        balance_hot(c, s);
        return false;
    }
    uint32_t n = sim_obj_alloc(c, r);
    O(n).flags = CP_TEST;
    sim_charge(c, n);
    s->cold += r->charge;
    ring_insert_head(c, s, n);
    return false;
}

static uint32_t cp_insert(sim_cache *c, const sim_req *r)
{
    cp_get(c, r);
    return sim_find(c, r->key);
}

static void cp_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    run_cold(c, c->priv);
}

static void cp_remove(sim_cache *c, uint32_t idx)
{
    cp_state *s = c->priv;
    if (O(idx).flags & CP_HOT)
        s->hot -= O(idx).charge;
    else
        s->cold -= O(idx).charge;
    sim_uncharge(c, idx);
    ring_remove(c, s, idx);
    sim_obj_release(c, idx);
}

/* exported for unit tests */
void sim_clockpro_debug(const sim_cache *c, double *mc, uint64_t *hot, uint64_t *cold, uint64_t *nonres)
{
    const cp_state *s = c->priv;
    *mc = s->mc;
    *hot = s->hot;
    *cold = s->cold;
    *nonres = s->nonres;
}

static int cp_verify(sim_cache *c, char *why, size_t n)
{
    cp_state *s = c->priv;
    uint64_t cnt = 0, hot = 0, cold = 0, nonres = 0;
    if (s->n) {
        uint32_t i = s->hand_hot;
        do {
            uint8_t f = O(i).flags;
            if (O(O(i).next).prev != i)
                return snprintf(why, n, "ring links"), -1;
            if ((f & SIM_F_GHOST) && ((f & CP_HOT) || !(f & CP_TEST)))
                return snprintf(why, n, "non-resident page must be cold and in test"), -1;
            if (f & SIM_F_GHOST)
                nonres += O(i).charge;
            else if (f & CP_HOT)
                hot += O(i).charge;
            else
                cold += O(i).charge;
            cnt++;
            i = O(i).next;
        } while (i != s->hand_hot && cnt <= s->n);
    }
    if (cnt != s->n || hot != s->hot || cold != s->cold || nonres != s->nonres)
        return snprintf(why, n, "ring %llu/%llu hot %llu/%llu cold %llu/%llu nonres %llu/%llu",
                        (unsigned long long)cnt, (unsigned long long)s->n, (unsigned long long)hot,
                        (unsigned long long)s->hot, (unsigned long long)cold, (unsigned long long)s->cold,
                        (unsigned long long)nonres, (unsigned long long)s->nonres), -1;
    if (hot + cold != c->used || nonres > c->capacity)
        return snprintf(why, n, "resident units or non-resident bound"), -1;
    if (s->mc < s->mc_min || s->mc > s->mc_max)
        return snprintf(why, n, "m_c out of bounds"), -1;
    return 0;
}

const sim_policy_ops sim_policy_clockpro = {
    .name = "clockpro", .describe = "CLOCK-Pro (Jiang, Chen & Zhang 2005), canonical adaptive m_c",
    .init = cp_init, .free = cp_free, .get = cp_get, .hit = cp_hit,
    .insert = cp_insert, .evict = cp_evict, .verify = cp_verify, .remove = cp_remove,
};
