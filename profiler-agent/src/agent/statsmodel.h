/*
 * Stats-only mode (where `watch` is refused: ElastiCache Serverless, a memcached run with -W):
 * a hit-rate curve estimated from `stats` counters alone, a lower-confidence basis than the
 * event-derived curves.
 *
 * Model: Che's approximation of an LRU cache under the independent reference model (H. Che,
 * Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling, design and experimental
 * results", IEEE JSAC 20(7), 2002; its accuracy for LRU: C. Fricker, P. Robert, J. Roberts,
 * "A versatile and accurate approximation for LRU cache performance", ITC 24, 2012), with Zipf
 * popularity p_i ~ i^-alpha over U keys. An object of popularity p is in a cache of
 * characteristic time t (in requests) with probability 1 - exp(-p t); the cache holds
 * C = sum_i (1 - exp(-p_i t)) objects and hits h = sum_i p_i (1 - exp(-p_i t)).
 * Three figures from `stats` pin alpha and U: the items memcached holds (C), its measured hit
 * ratio (h), and its characteristic time t = read rate x the age of the COLD tail (`stats
 * items` age, the oldest item's idle time: what LRU's characteristic time is). Every point of
 * the curve is then the model at another C. Only while memcached evicts (a cache that still
 * has room says nothing about the sizes below what it holds): otherwise no curve.
 * What it cannot see: the real popularity shape (fitted as Zipf), per-class differences,
 * memcached's segmented LRU; hence "stats_only" everywhere the curve goes.
 */
#ifndef AG_STATSMODEL_H
#define AG_STATSMODEL_H

#include <stdint.h>

#define SM_POINTS 100

typedef struct sm_fit {
    int ok;                 /* 1: fitted; 0: see why */
    const char *why;        /* "not_evicting", "no_reads", "no_age", "no_fit" */
    double alpha, keys;     /* fitted Zipf exponent and key universe U */
    double t_requests;      /* characteristic time in requests */
    double current_items;   /* C */
    double hit_ratio;       /* measured h the fit reproduces */
    double size_items[SM_POINTS], hit[SM_POINTS]; /* the curve over (0, span x C] */
} sm_fit;

/* items: resident items; hit_ratio: measured; reads_per_s; age_s: COLD-tail age; evicting:
 * memcached evicted in the window; span: the curve reaches span x items. */
void sm_fit_curve(double items, double hit_ratio, double reads_per_s, double age_s,
                  int evicting, double span, sm_fit *out);

/* The model at one point (tests): occupancy and hit ratio at characteristic time t. */
void sm_che(double alpha, double keys, double t, double *occupancy, double *hit);

#endif
