/* Workloads for tests and benchmarks: traces loaded into memory, synthetic Zipf and
 * scan/loop mixes (deterministic PRNG), and scoring of an estimated curve against Mattson. */
#ifndef HC_WORKLOAD_H
#define HC_WORKLOAD_H
#include <stdint.h>
#include <stddef.h>

typedef struct workload {
    char name[64];
    uint64_t *keys;
    uint64_t n;
    uint64_t distinct;
} workload;

/* Read every request's key (GET semantics). Returns 0 or -1 (message on stderr). */
int wl_load_trace(workload *w, const char *name, const char *path, const char *format);
/* n requests, Zipf(alpha) over `keys` keys, keys hashed so they look like tr_hash_key output. */
void wl_zipf(workload *w, const char *name, uint64_t n, uint64_t keys, double alpha, uint64_t seed);
/* Zipf background mixed with a loop over `loop_keys` keys (fraction f of requests go to the
 * loop, taken in order) and one-time scan keys (fraction s). */
void wl_mix(workload *w, const char *name, uint64_t n, uint64_t keys, double alpha,
            uint64_t loop_keys, double f, double s, uint64_t seed);
void wl_count_distinct(workload *w);
void wl_free(workload *w);

/* splitmix-based PRNG */
static inline uint64_t wl_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline double wl_unif(uint64_t *s) { return (wl_rand(s) >> 11) * 0x1.0p-53; }
/* The key hash of integer key i (a fixed bijection). */
uint64_t wl_keyhash(uint64_t i);

const char *wl_traces_dir(void);
#endif
