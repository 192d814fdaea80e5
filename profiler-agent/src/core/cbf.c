#include "cbf.h"
#include "hashmix.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>

int cbf_init(cbf *f, uint64_t capacity, double bits_per_key, uint32_t probes)
{
    if (capacity < 1) capacity = 1;
    if (probes < 1) probes = 1;
    if (probes > 9) probes = 9;          /* 9 probes x 7 bits fit in one 64-bit mix */
    double cells = ceil((double)capacity * bits_per_key);
    uint64_t nb = (uint64_t)ceil(cells / CBF_BLOCK_CELLS);
    if (nb < 1) nb = 1;
    f->cells = aligned_alloc(CBF_BLOCK_BYTES, nb * CBF_BLOCK_BYTES);
    if (!f->cells) return -1;
    memset(f->cells, 0, nb * CBF_BLOCK_BYTES);
    f->nblocks = nb;
    f->probes = probes;
    return 0;
}

void cbf_free(cbf *f)
{
    free(f->cells);
    f->cells = NULL;
}

void cbf_flush(cbf *f)
{
    memset(f->cells, 0, f->nblocks * CBF_BLOCK_BYTES);
}

/* Block from one mix of the key, counter positions from another (independent bits). */
static inline uint8_t *block_of(const cbf *f, uint64_t h, uint64_t *bits)
{
    cbf_pos p = cbf_position(f, h);
    *bits = p.bits;
    return f->cells + p.block * CBF_BLOCK_BYTES;
}

static inline unsigned get_c(const uint8_t *blk, unsigned pos)
{
    return (blk[pos >> 1] >> ((pos & 1) * 4)) & 0xF;
}
static inline void put_c(uint8_t *blk, unsigned pos, unsigned v)
{
    unsigned sh = (pos & 1) * 4;
    blk[pos >> 1] = (uint8_t)((blk[pos >> 1] & ~(0xF << sh)) | (v << sh));
}

int cbf_contains(const cbf *f, uint64_t h)
{
    uint64_t bits;
    const uint8_t *blk = block_of(f, h, &bits);
    for (uint32_t i = 0; i < f->probes; i++, bits >>= 7)
        if (get_c(blk, bits & 127) == 0) return 0;
    return 1;
}

void cbf_insert(cbf *f, uint64_t h)
{
    uint64_t bits;
    uint8_t *blk = block_of(f, h, &bits);
    for (uint32_t i = 0; i < f->probes; i++, bits >>= 7) {
        unsigned p = bits & 127, v = get_c(blk, p);
        if (v < 15) put_c(blk, p, v + 1);
    }
}

void cbf_remove(cbf *f, uint64_t h)
{
    uint64_t bits;
    uint8_t *blk = block_of(f, h, &bits);
    for (uint32_t i = 0; i < f->probes; i++, bits >>= 7) {
        unsigned p = bits & 127, v = get_c(blk, p);
        if (v > 0 && v < 15) put_c(blk, p, v - 1);
    }
}

size_t cbf_bytes(const cbf *f)
{
    return (size_t)f->nblocks * CBF_BLOCK_BYTES;
}

double cbf_fpp(const cbf *f, double n)
{
    double m = (double)f->nblocks * CBF_BLOCK_CELLS;
    if (n <= 0) return 0;
    return pow(1.0 - exp(-(double)f->probes * n / m), f->probes);
}

void cbf_merge(cbf *dst, const cbf *src)
{
    uint64_t n = dst->nblocks * CBF_BLOCK_BYTES;
    for (uint64_t i = 0; i < n; i++) {
        unsigned a = dst->cells[i], b = src->cells[i];
        if (!b) continue;
        unsigned lo = (a & 0xF) + (b & 0xF), hi = (a >> 4) + (b >> 4);
        if (lo > 15) lo = 15;
        if (hi > 15) hi = 15;
        dst->cells[i] = (uint8_t)(lo | (hi << 4));
    }
}
