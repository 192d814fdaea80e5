/*
 * Counting Bloom filter with 4-bit saturating counters (Fan et al.), blocked: all l counters of
 * a key lie in one 64-byte block (128 counters), so a lookup touches one cache line. A counter
 * that reaches 15 sticks (never decremented), the usual rule that keeps removals safe.
 *
 * Blocks are `stride` bytes apart: 64 for a standalone filter; a ghost interleaves its F filters
 * block by block (stride F*64), so the F blocks one key maps to are adjacent (one page, one DRAM
 * row, one prefetch stream) instead of F scattered lines.
 *
 * Hot path: the key's block offset and probe bits are computed once into a cbf_pos (filters of
 * one geometry share it), then each filter is tested with plain byte loads, the first three
 * probes under one branch (see cbf_block_contains).
 */
#ifndef HC_CBF_H
#define HC_CBF_H
#include <stdint.h>
#include <stddef.h>
#include "trmix.h"

#define CBF_BLOCK_BYTES 64
#define CBF_BLOCK_CELLS 128
#define CBF_MAX_PROBES 9     /* 9 probes x 7 bits fit in one 64-bit mix */

typedef struct cbf {
    uint8_t *cells;      /* block b at cells + b * stride, two counters per byte */
    uint64_t nblocks;
    uint32_t probes;     /* l */
    uint32_t stride;     /* bytes between consecutive blocks (>= 64, multiple of 64) */
    int owned;           /* cells allocated by cbf_init (freed by cbf_free) */
} cbf;

/* Standalone filter sized for `capacity` keys at `bits_per_key` counters per key. */
int cbf_init(cbf *f, uint64_t capacity, double bits_per_key, uint32_t probes);
/* Geometry only (no allocation): blocks for `capacity` keys, probes clamped to 1..9. */
void cbf_geometry(uint64_t capacity, double bits_per_key, uint32_t probes, uint64_t *nblocks, uint32_t *probes_out);
/* A filter living in memory owned by someone else (a ghost's interleaved array). */
void cbf_view(cbf *f, uint8_t *cells, uint64_t nblocks, uint32_t probes, uint32_t stride);
void cbf_free(cbf *f);
void cbf_flush(cbf *f);
int cbf_contains(const cbf *f, uint64_t h);
void cbf_insert(cbf *f, uint64_t h);
void cbf_remove(cbf *f, uint64_t h);
size_t cbf_bytes(const cbf *f);
/* dst += src counter by counter (saturating at 15); both must have the same geometry. */
void cbf_merge(cbf *dst, const cbf *src);
/* Expected false-positive probability with n keys inserted. */
double cbf_fpp(const cbf *f, double n);

/* Where key h lives in every filter of one geometry (nblocks, probes, stride): the block
 * offset, the probe bits (7 per probe: counter index in the block), and the first three probes
 * unpacked into (byte, nibble mask), since an absent key is rejected by them in ~95% of filters.
 * With fewer than three probes the unused slots repeat probe 0. */
#define CBF_FIRST 3
typedef struct cbf_pos {
    uint64_t off;                    /* byte offset of the block from `cells` */
    uint64_t bits;                   /* probe i is counter (bits >> 7i) & 127 */
    uint8_t byte[CBF_FIRST];         /* byte within the block of probes 0..2 */
    uint8_t mask[CBF_FIRST];         /* 0x0F (low counter) or 0xF0 (high counter) */
} cbf_pos;

/* Block from one mix of the key, counter positions from another (independent bits). */
static inline void cbf_position(const cbf *f, uint64_t h, cbf_pos *p)
{
    uint64_t a = tr_mix64(h ^ 0xa0761d6478bd642fULL);
    uint64_t bits = tr_mix64(h ^ 0xe7037ed1a0b428dbULL);
    p->off = (uint64_t)(((unsigned __int128)a * f->nblocks) >> 64) * f->stride;
    p->bits = bits;
    for (int i = 0; i < CBF_FIRST; i++) {
        unsigned q = (unsigned)(i < (int)f->probes ? bits >> (7 * i) : bits) & 127;
        p->byte[i] = (uint8_t)(q >> 1);
        p->mask[i] = (uint8_t)(0x0Fu << ((q & 1) << 2));
    }
}

static inline unsigned cbf_counter(const uint8_t *blk, unsigned q)
{
    return (blk[q >> 1] >> ((q & 1) << 2)) & 0xF;
}

/* Membership in the block at `blk`: the first three probes are tested without branches between
 * them, so an absent key (about 3 in 4 probes find a zero) costs one well-predicted branch per
 * filter instead of a mispredicted early exit per probe; the rare survivors test the rest. */
static inline int cbf_block_contains(const uint8_t *blk, const cbf_pos *p, uint32_t probes)
{
    unsigned z = ((blk[p->byte[0]] & p->mask[0]) == 0)
               | ((blk[p->byte[1]] & p->mask[1]) == 0)
               | ((blk[p->byte[2]] & p->mask[2]) == 0);
    if (z) return 0;
    uint64_t bits = p->bits >> (7 * CBF_FIRST);
    for (uint32_t i = CBF_FIRST; i < probes; i++, bits >>= 7)
        if (cbf_counter(blk, bits & 127) == 0) return 0;
    return 1;
}
static inline int cbf_contains_at(const cbf *f, const cbf_pos *p)
{
    return cbf_block_contains(f->cells + p->off, p, f->probes);
}
/* Increment / decrement the key's counters (a counter at 15 is saturated and stays). A counter
 * probed twice by one key moves twice, and back twice on removal. */
static inline void cbf_insert_at(cbf *f, const cbf_pos *p)
{
    uint8_t *blk = f->cells + p->off;
    uint64_t bits = p->bits;
    for (uint32_t i = 0; i < f->probes; i++, bits >>= 7) {
        unsigned q = bits & 127, sh = (q & 1) << 2, v = blk[q >> 1];
        if (((v >> sh) & 0xF) != 0xF) blk[q >> 1] = (uint8_t)(v + (1u << sh));
    }
}
static inline void cbf_remove_at(cbf *f, const cbf_pos *p)
{
    uint8_t *blk = f->cells + p->off;
    uint64_t bits = p->bits;
    for (uint32_t i = 0; i < f->probes; i++, bits >>= 7) {
        unsigned q = bits & 127, sh = (q & 1) << 2, v = blk[q >> 1], c = (v >> sh) & 0xF;
        if (c != 0 && c != 0xF) blk[q >> 1] = (uint8_t)(v - (1u << sh));
    }
}
#endif
