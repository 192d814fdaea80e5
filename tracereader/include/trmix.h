/*
 * The one 64-bit hash finaliser of the C components (splitmix64's, Steele et al. 2014): a
 * bijection with full avalanche. The agent's core mixes key hashes with it before sampling,
 * table slots and filter probes (each must draw on independent bits, or sampled keys would
 * cluster in the table), the simulator before its spatial sampling, the load generator and
 * the test workloads to seed and step their PRNGs. Header-only, so the load generator, which
 * links nothing else of tracereader, shares it too.
 */
#ifndef TRMIX_H
#define TRMIX_H
#include <stdint.h>

static inline uint64_t tr_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* splitmix64 as a generator: advance the state by the golden gamma, finalise it. */
static inline uint64_t tr_splitmix_next(uint64_t *state)
{
    return tr_mix64(*state += 0x9e3779b97f4a7c15ULL);
}
#endif
