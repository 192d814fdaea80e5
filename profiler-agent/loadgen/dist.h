/* Key and size distributions of the load generator (deterministic for a seed). */
#ifndef LG_DIST_H
#define LG_DIST_H

#include <stdint.h>

#include "trmix.h" /* tr_mix64: the shared hash finaliser */

typedef struct lg_rng { uint64_t s[2]; } lg_rng;
void lg_rng_seed(lg_rng *r, uint64_t seed);
uint64_t lg_rng_next(lg_rng *r);
double lg_rng_unit(lg_rng *r);               /* [0, 1) */

/* Zipf(alpha) over ranks 0..n-1 by inverse CDF (table of n doubles). */
typedef struct lg_zipf { uint64_t n; double *cdf; } lg_zipf;
int lg_zipf_init(lg_zipf *z, uint64_t n, double alpha);
uint64_t lg_zipf_sample(const lg_zipf *z, lg_rng *r);
void lg_zipf_free(lg_zipf *z);

/* Facebook ETC (Atikoglu et al., SIGMETRICS 2012, Table 5 fits): key size GEV(30.7984,
 * 8.20449, 0.078688); value size Generalized Pareto(0, 214.476, 0.348238). Sizes are drawn
 * once per key from a hash of its id, so a key keeps its size. */
uint32_t lg_etc_key_size(uint64_t id);
uint32_t lg_etc_value_size(uint64_t id, uint32_t max);

#endif
