/* Workloads for tests and benchmarks: traces loaded into memory, synthetic Zipf and
 * scan/loop mixes (deterministic PRNG), and scoring of an estimated curve against Mattson. */
#ifndef REF_WORKLOAD_H
#define REF_WORKLOAD_H
#include <stdint.h>
#include <stddef.h>

#include "trmix.h"

typedef struct workload {
    char name[64];
    uint64_t *keys;
    uint64_t n;
    uint64_t distinct;
} workload;

/* Read every request's key (GET semantics). Returns 0 or -1 (message on stderr). */
int refwl_load_trace(workload *w, const char *name, const char *path, const char *format);
/* n requests, Zipf(alpha) over `keys` keys, keys hashed so they look like tr_hash_key output. */
void refwl_zipf(workload *w, const char *name, uint64_t n, uint64_t keys, double alpha, uint64_t seed);
/* Zipf background mixed with a loop over `loop_keys` keys (fraction f of requests go to the
 * loop, taken in order) and one-time scan keys (fraction s). */
void refwl_mix(workload *w, const char *name, uint64_t n, uint64_t keys, double alpha,
            uint64_t loop_keys, double f, double s, uint64_t seed);
void refwl_count_distinct(workload *w);
void refwl_free(workload *w);

/* splitmix64 PRNG (the shared finaliser in tracereader's trmix.h) */
static inline uint64_t refwl_rand(uint64_t *s) { return tr_splitmix_next(s); }
static inline double refwl_unif(uint64_t *s) { return (refwl_rand(s) >> 11) * 0x1.0p-53; }
/* The key hash of integer key i (a fixed bijection). */
uint64_t refwl_keyhash(uint64_t i);

const char *refwl_traces_dir(void);
#endif
