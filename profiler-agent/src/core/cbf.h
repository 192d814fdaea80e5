/*
 * Counting Bloom filter with 4-bit saturating counters (Fan et al.), blocked: all l counters of
 * a key lie in one 64-byte block (128 counters), so a lookup touches one cache line. A counter
 * that reaches 15 sticks (never decremented), the usual rule that keeps removals safe.
 */
#ifndef HC_CBF_H
#define HC_CBF_H
#include <stdint.h>
#include <stddef.h>

#define CBF_BLOCK_BYTES 64
#define CBF_BLOCK_CELLS 128

typedef struct cbf {
    uint8_t *cells;      /* nblocks * 64 bytes, two counters per byte */
    uint64_t nblocks;
    uint32_t probes;     /* l */
} cbf;

int cbf_init(cbf *f, uint64_t capacity, double bits_per_key, uint32_t probes);
void cbf_free(cbf *f);
void cbf_flush(cbf *f);
int cbf_contains(const cbf *f, uint64_t h);
/* Filters of one geometry share a key's block and counter positions: compute them once. */
typedef struct cbf_pos { uint64_t block; uint64_t bits; } cbf_pos;
static inline cbf_pos cbf_position(const cbf *f, uint64_t h);
static inline int cbf_contains_at(const cbf *f, cbf_pos p);
void cbf_insert(cbf *f, uint64_t h);
void cbf_remove(cbf *f, uint64_t h);
size_t cbf_bytes(const cbf *f);
/* dst += src counter by counter (saturating); both must have the same geometry. */
void cbf_merge(cbf *dst, const cbf *src);
/* Expected false-positive probability with n keys inserted. */
double cbf_fpp(const cbf *f, double n);

#include "hashmix.h"
static inline cbf_pos cbf_position(const cbf *f, uint64_t h)
{
    uint64_t a = hc_mix64(h ^ 0xa0761d6478bd642fULL);
    cbf_pos p;
    p.bits = hc_mix64(h ^ 0xe7037ed1a0b428dbULL);
    p.block = (uint64_t)(((unsigned __int128)a * f->nblocks) >> 64);
    return p;
}
static inline int cbf_contains_at(const cbf *f, cbf_pos p)
{
    const uint8_t *blk = f->cells + p.block * CBF_BLOCK_BYTES;
    uint64_t bits = p.bits;
    for (uint32_t i = 0; i < f->probes; i++, bits >>= 7) {
        unsigned q = bits & 127;
        if (((blk[q >> 1] >> ((q & 1) * 4)) & 0xF) == 0) return 0;
    }
    return 1;
}
#endif
