/* 64-bit mixers used by the core: sampling, table slots and filter probes must draw on
 * independent bits of the key hash, or sampled keys would cluster in the table. */
#ifndef HC_HASHMIX_H
#define HC_HASHMIX_H
#include <stdint.h>

/* splitmix64 finalizer: a bijection, so distinct key hashes stay distinct. */
static inline uint64_t hc_mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}
#endif
