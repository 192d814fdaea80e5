/*
 * GD-Wheel (Li & Cox, EuroSys'15, "GD-Wheel: A Cost-Aware Replacement Policy for Key-Value
 * Stores"): GreedyDual (H(p) = L + c(p) on insert and hit; evict the
 * minimum H and set L to it) on Hierarchical Cost Wheels. Level j holds objects whose H
 * lies in L's current level-(j+1) window but not its level-j window, in slot
 * floor(H / N^j) mod N; the top level holds the rest. Eviction scans level 0 from L mod N;
 * when the level-0 window is exhausted it advances L to the next non-empty slot of the
 * lowest level that has one and migrates that slot's objects down (the paper's "when L
 * reaches a multiple of N, do migration"). Equal H is FIFO by enqueue time, which
 * migration preserves. Costs are integers: c = round(cost * gdwheel.scale), clamped to
 * [1, (N-1) * N^(levels-1)] so that the top level never aliases.
 * Parameters: gdwheel.n (256), gdwheel.levels (2), gdwheel.scale (1). Metadata +8 bytes.
 */
#include "../cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define GD_MAX_LEVELS 6

typedef struct {
    uint32_t n, levels;
    uint64_t pw[GD_MAX_LEVELS + 1];   /* N^j */
    uint64_t cmax;
    double scale;
    uint64_t L;
    sim_list *wheel;                   /* levels * n queues */
    uint64_t migrations;              /* objects moved between levels (tests look at it) */
} gd_state;

static int gd_init(sim_cache *c, char *err, size_t errlen)
{
    double n = sim_param(c, "n", 256), lv = sim_param(c, "levels", 2), sc = sim_param(c, "scale", 1);
    if (n < 2 || n > 65536 || lv < 2 || lv > GD_MAX_LEVELS || !(sc > 0)) {
        snprintf(err, errlen, "gdwheel: need 2<=n<=65536, 2<=levels<=%d, scale>0", GD_MAX_LEVELS);
        return -1;
    }
    gd_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->n = (uint32_t)n;
    s->levels = (uint32_t)lv;
    s->pw[0] = 1;
    for (uint32_t j = 1; j <= s->levels; j++)
        s->pw[j] = s->pw[j - 1] * s->n;
    s->cmax = (s->n - 1) * s->pw[s->levels - 1];
    s->scale = sc;
    s->wheel = malloc(sizeof(sim_list) * s->n * s->levels);
    if (!s->wheel) {
        free(s);
        return -1;
    }
    for (uint32_t k = 0; k < s->n * s->levels; k++)
        sim_list_init(&s->wheel[k]);
    c->priv = s;
    return 0;
}

static void gd_free(sim_cache *c)
{
    gd_state *s = c->priv;
    free(s->wheel);
    free(s);
}

static uint64_t int_cost(const gd_state *s, float cost)
{
    double v = floor((double)cost * s->scale + 0.5);
    if (v < 1)
        v = 1;
    if (v > (double)s->cmax)
        v = (double)s->cmax;
    return (uint64_t)v;
}

/* enqueue object i by its H (o->prio) relative to the current L */
static void place(sim_cache *c, gd_state *s, uint32_t i)
{
    uint64_t H = c->objs[i].prio;
    uint32_t lvl = 0;
    while (lvl + 1 < s->levels && H / s->pw[lvl + 1] != s->L / s->pw[lvl + 1])
        lvl++;
    uint32_t slot = (uint32_t)((H / s->pw[lvl]) % s->n);
    c->objs[i].aux = lvl * s->n + slot;
    sim_list_push_head(c, &s->wheel[lvl * s->n + slot], i);
}

static void gd_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    gd_state *s = c->priv;
    sim_list_unlink(c, &s->wheel[c->objs[idx].aux], idx);
    c->objs[idx].prio = s->L + int_cost(s, c->objs[idx].cost);
    place(c, s, idx);
}

static uint32_t gd_insert(sim_cache *c, const sim_req *r)
{
    gd_state *s = c->priv;
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].prio = s->L + int_cost(s, r->cost);
    place(c, s, i);
    sim_charge(c, i);
    return i;
}

static void gd_remove(sim_cache *c, uint32_t idx)
{
    gd_state *s = c->priv;
    sim_list_unlink(c, &s->wheel[c->objs[idx].aux], idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void migrate(sim_cache *c, gd_state *s, uint32_t lvl, uint32_t slot)
{
    sim_list *q = &s->wheel[lvl * s->n + slot];
    /* oldest first, so FIFO order among equal H survives the move */
    while (q->count) {
        uint32_t i = q->tail;
        sim_list_unlink(c, q, i);
        place(c, s, i);
        s->migrations++;
    }
}

static void gd_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    gd_state *s = c->priv;
    const uint32_t N = s->n;
    for (;;) {
        uint64_t base0 = s->L - s->L % N;
        for (uint32_t k = (uint32_t)(s->L % N); k < N; k++) {
            sim_list *q = &s->wheel[k];
            if (q->count) {
                s->L = base0 + k;   /* L <- min H */
                gd_remove(c, q->tail);
                c->evictions++;
                return;
            }
        }
        /* level-0 window exhausted: next non-empty slot of the lowest higher level */
        int found = 0;
        for (uint32_t lvl = 1; lvl < s->levels && !found; lvl++) {
            uint64_t P = s->pw[lvl];
            uint32_t d = (uint32_t)((s->L / P) % N);
            if (lvl + 1 < s->levels) {
                for (uint32_t k = d + 1; k < N; k++) {
                    if (s->wheel[lvl * N + k].count) {
                        s->L = s->L / (P * N) * (P * N) + (uint64_t)k * P;
                        migrate(c, s, lvl, k);
                        found = 1;
                        break;
                    }
                }
            } else {
                for (uint32_t k = 1; k < N; k++) {
                    uint32_t slot = (d + k) % N;
                    if (s->wheel[lvl * N + slot].count) {
                        s->L = (s->L / P + k) * P;
                        migrate(c, s, lvl, slot);
                        found = 1;
                        break;
                    }
                }
            }
        }
        if (!found)
            return;   /* empty */
    }
}

/* exported for unit tests */
uint64_t sim_gdwheel_L(const sim_cache *c) { return ((const gd_state *)c->priv)->L; }
uint64_t sim_gdwheel_migrations(const sim_cache *c) { return ((const gd_state *)c->priv)->migrations; }

static int gd_verify(sim_cache *c, char *why, size_t n)
{
    gd_state *s = c->priv;
    uint64_t total = 0;
    for (uint32_t k = 0; k < s->n * s->levels; k++) {
        if (sim_list_check(c, &s->wheel[k], "wheel", why, n) < 0)
            return -1;
        for (uint32_t i = s->wheel[k].head; i != SIM_NIL; i = c->objs[i].next) {
            if (c->objs[i].aux != k || c->objs[i].prio < s->L)
                return snprintf(why, n, "object in slot %u has aux %u, H %llu < L %llu", k, c->objs[i].aux,
                                (unsigned long long)c->objs[i].prio, (unsigned long long)s->L), -1;
        }
        total += s->wheel[k].count;
    }
    return total == c->nresident ? 0 : (snprintf(why, n, "wheel total != residents"), -1);
}

const sim_policy_ops sim_policy_gdwheel = {
    .name = "gdwheel", .describe = "GD-Wheel (Li & Cox): GreedyDual on hierarchical cost wheels",
    .meta_delta = 8,
    .init = gd_init, .free = gd_free, .hit = gd_hit,
    .insert = gd_insert, .evict = gd_evict, .verify = gd_verify, .remove = gd_remove,
};
