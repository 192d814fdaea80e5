#include "costs.h"

#include <stdlib.h>
#include <string.h>

void ag_costs_init(ag_costs *c, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static uint64_t next_rand(ag_costs *c)
{
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return c->rng;
}

void ag_costs_add(ag_costs *c, int clsid, int64_t cost_us)
{
    if (clsid < 0 || clsid >= AG_COST_CLASSES || cost_us < 0)
        return;
    ag_cost_class *k = &c->cls[clsid];
    uint32_t v = cost_us > UINT32_MAX ? UINT32_MAX : (uint32_t)cost_us;
    k->count++;
    k->sum_us += (double)cost_us;
    if (k->n < AG_COST_RESERVOIR) {
        k->res[k->n++] = v;
    } else {
        uint64_t j = next_rand(c) % k->count; /* Algorithm R */
        if (j < AG_COST_RESERVOIR)
            k->res[j] = v;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t ag_costs_summary(const ag_costs *c, int clsid, double *mean, double *p50, double *p90,
                          double *p99)
{
    if (clsid < 0 || clsid >= AG_COST_CLASSES || c->cls[clsid].count == 0)
        return 0;
    const ag_cost_class *k = &c->cls[clsid];
    uint32_t tmp[AG_COST_RESERVOIR];
    memcpy(tmp, k->res, k->n * sizeof tmp[0]);
    qsort(tmp, k->n, sizeof tmp[0], cmp_u32);
    double q[3] = {0.50, 0.90, 0.99};
    double *o[3] = {p50, p90, p99};
    for (int i = 0; i < 3; i++) {
        /* nearest rank: ceil(q * n) - 1 */
        uint32_t r = (uint32_t)(q[i] * k->n + 0.999999999);
        if (r < 1)
            r = 1;
        *o[i] = tmp[r - 1];
    }
    *mean = k->sum_us / (double)k->count;
    return k->count;
}

void ag_costs_reset(ag_costs *c)
{
    for (int i = 0; i < AG_COST_CLASSES; i++) {
        c->cls[i].count = 0;
        c->cls[i].sum_us = 0;
        c->cls[i].n = 0;
    }
}
