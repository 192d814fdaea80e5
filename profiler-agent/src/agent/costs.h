/* Recompute-cost samples per slab class: the gap between a MISS and the SET of the same key
 * (the application recomputing the value; GD-Wheel's cost input). Exact count and mean, and
 * a fixed-size uniform reservoir for percentiles. */
#ifndef AG_COSTS_H
#define AG_COSTS_H

#include <stdint.h>

#define AG_COST_RESERVOIR 2048
#define AG_COST_CLASSES 64

typedef struct ag_cost_class {
    uint64_t count;
    double sum_us;
    uint32_t n;                      /* samples held */
    uint32_t res[AG_COST_RESERVOIR];
} ag_cost_class;

typedef struct ag_costs {
    ag_cost_class cls[AG_COST_CLASSES];
    uint64_t rng;
} ag_costs;

void ag_costs_init(ag_costs *c, uint64_t seed);
void ag_costs_add(ag_costs *c, int clsid, int64_t cost_us);
/* Percentiles (nearest rank) of a class; returns count. */
uint64_t ag_costs_summary(const ag_costs *c, int clsid, double *mean, double *p50, double *p90,
                          double *p99);
void ag_costs_reset(ag_costs *c);

#endif
