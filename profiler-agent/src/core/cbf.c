#include "cbf.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>

void cbf_geometry(uint64_t capacity, double bits_per_key, uint32_t probes, uint64_t *nblocks, uint32_t *probes_out)
{
    if (capacity < 1) capacity = 1;
    if (probes < 1) probes = 1;
    if (probes > CBF_MAX_PROBES) probes = CBF_MAX_PROBES;
    double cells = ceil((double)capacity * bits_per_key);
    uint64_t nb = (uint64_t)ceil(cells / CBF_BLOCK_CELLS);
    *nblocks = nb < 1 ? 1 : nb;
    *probes_out = probes;
}

void cbf_view(cbf *f, uint8_t *cells, uint64_t nblocks, uint32_t probes, uint32_t stride)
{
    f->cells = cells;
    f->nblocks = nblocks;
    f->probes = probes;
    f->stride = stride;
    f->owned = 0;
}

int cbf_init(cbf *f, uint64_t capacity, double bits_per_key, uint32_t probes)
{
    uint64_t nb;
    uint32_t l;
    cbf_geometry(capacity, bits_per_key, probes, &nb, &l);
    uint8_t *cells = aligned_alloc(CBF_BLOCK_BYTES, nb * CBF_BLOCK_BYTES);
    if (!cells) return -1;
    memset(cells, 0, nb * CBF_BLOCK_BYTES);
    cbf_view(f, cells, nb, l, CBF_BLOCK_BYTES);
    f->owned = 1;
    return 0;
}

void cbf_free(cbf *f)
{
    if (f->owned) free(f->cells);
    f->cells = NULL;
    f->owned = 0;
}

void cbf_flush(cbf *f)
{
    if (f->stride == CBF_BLOCK_BYTES) { memset(f->cells, 0, f->nblocks * CBF_BLOCK_BYTES); return; }
    for (uint64_t b = 0; b < f->nblocks; b++) memset(f->cells + b * f->stride, 0, CBF_BLOCK_BYTES);
}

int cbf_contains(const cbf *f, uint64_t h)
{
    cbf_pos p;
    cbf_position(f, h, &p);
    return cbf_contains_at(f, &p);
}

void cbf_insert(cbf *f, uint64_t h)
{
    cbf_pos p;
    cbf_position(f, h, &p);
    cbf_insert_at(f, &p);
}

void cbf_remove(cbf *f, uint64_t h)
{
    cbf_pos p;
    cbf_position(f, h, &p);
    cbf_remove_at(f, &p);
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

/* Sixteen 4-bit saturating additions at once: even and odd nibbles are spread into bytes
 * (sums <= 30 cannot carry into the next byte), a sum >= 16 (bit 4 of its byte) becomes 15. */
static inline uint64_t add_nibbles_sat(uint64_t a, uint64_t b)
{
    const uint64_t M = 0x0F0F0F0F0F0F0F0FULL, S = 0x1010101010101010ULL;
    uint64_t lo = (a & M) + (b & M);
    uint64_t hi = ((a >> 4) & M) + ((b >> 4) & M);
    lo = (lo | ((lo & S) >> 4) * 0x0F) & M;
    hi = (hi | ((hi & S) >> 4) * 0x0F) & M;
    return lo | (hi << 4);
}

void cbf_merge(cbf *dst, const cbf *src)
{
    for (uint64_t b = 0; b < dst->nblocks; b++) {
        uint8_t *d = dst->cells + b * dst->stride;
        const uint8_t *s = src->cells + b * src->stride;
        for (int w = 0; w < CBF_BLOCK_BYTES; w += 8) {
            uint64_t x, y;
            memcpy(&x, d + w, 8);
            memcpy(&y, s + w, 8);
            x = add_nibbles_sat(x, y);
            memcpy(d + w, &x, 8);
        }
    }
}
