/* Synthetic workloads for tests and benchmarks (deterministic for a given seed). */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H
#include <stddef.h>
#include <stdint.h>

typedef struct { uint64_t s[4]; } sim_rng;
void sim_rng_seed(sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(sim_rng *r);
double sim_rng_unit(sim_rng *r);   /* [0, 1) */

/* Zipf(alpha) over n keys: rank r (0 = hottest) with probability ~ 1/(r+1)^alpha. */
typedef struct { double *cdf; size_t n; } sim_zipf;
int sim_zipf_init(sim_zipf *z, size_t n, double alpha);
size_t sim_zipf_draw(const sim_zipf *z, sim_rng *r);
void sim_zipf_free(sim_zipf *z);

/* Key ids are scrambled so that hot keys do not sit next to each other in any table. */
uint64_t sim_key_of(uint64_t rank);

/* n zipf GET requests (keys only). */
uint64_t *sim_wl_zipf(size_t n, size_t nkeys, double alpha, uint64_t seed);

/*
 * GD-Wheel workload 1 (Li & Cox, EuroSys'15, Table I): zipf keys, each key with a fixed cost drawn
 * once from 10-30 (80 %), 120-180 (15 %), 350-450 (5 %). Fills keys and costs (n each).
 */
int sim_wl_gdwheel1(size_t n, size_t nkeys, double alpha, uint64_t seed, uint64_t **keys,
                   double **costs);
/*
 * Cost distributions of Li & Cox (EuroSys'15) Table I workloads 1-5 (values 16+256 B): per key, a group
 * is drawn with its probability, then a uniform integer cost inside the group.
 */
int sim_wl_gdwheel_costs(int workload, size_t nkeys, uint64_t seed, double *kc);
/*
 * The same, built like the paper's YCSB run: a warm-up phase that SETs every key once (in
 * random order), then n zipf GETs (a miss is refilled). *total = nkeys + n; *ops filled.
 */
int sim_wl_gdwheel1_ycsb(size_t n, size_t nkeys, double alpha, uint64_t seed, uint64_t **keys,
                        double **costs, uint8_t **ops, size_t *total);
/* Any of workloads 1-5 built like the YCSB run above. */
int sim_wl_gdwheel_ycsb(int workload, size_t n, size_t nkeys, double alpha, uint64_t seed,
                       uint64_t **keys, double **costs, uint8_t **ops, size_t *total);
#endif
