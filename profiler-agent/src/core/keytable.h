/*
 * Key table: the out-of-process stand-in for MIMIR's 4-byte activity in the item header.
 * Open addressing with linear probing and backward-shift deletion (no tombstones, so a table
 * that sees billions of insert/delete pairs never degrades). Each slot is 12 bytes held in two
 * parallel arrays: an 8-byte tag (bits 8..63 of the key hash = identity, bits 0..7 = the slab
 * class the key is in) and a 4-byte ROUNDER activity. Identity is 56 bits, so two different
 * keys are merged only if their 64-bit hashes agree in 56 bits (~1e-8 chance per pair at 1e4
 * keys per table... far below the sampling error).
 */
#ifndef HC_KEYTABLE_H
#define HC_KEYTABLE_H
#include <stdint.h>
#include <stddef.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct keytable {
    uint64_t *tag;     /* 0 = empty */
    uint32_t *act;
    uint64_t nslots;   /* power of two */
    uint64_t mask;
    int shift;         /* 64 - log2(nslots) */
    uint64_t count;
    uint64_t max_slots;/* growth limit (0 = unlimited) */
} keytable;

#define KT_NONE UINT64_MAX
#define KT_LOAD_NUM 3  /* grow above 3/4 load */
#define KT_LOAD_DEN 4

int kt_init(keytable *t, uint64_t min_keys, uint64_t max_slots);
void kt_free(keytable *t);
void kt_clear(keytable *t);

static inline uint64_t kt_ident(uint64_t h)
{
    uint64_t id = h & ~(uint64_t)0xFF;
    return id ? id : 0x100;    /* keep 0 free as the empty marker */
}
static inline uint64_t kt_home(const keytable *t, uint64_t id)
{
    return (id * 0x9E3779B97F4A7C15ULL) >> t->shift;
}

/* Slot of key hash h, or KT_NONE. */
static inline uint64_t kt_find(const keytable *t, uint64_t h)
{
    uint64_t id = kt_ident(h);
    uint64_t i = kt_home(t, id);
    for (;;) {
        uint64_t g = t->tag[i];
        if (g == 0) return KT_NONE;
        if ((g & ~(uint64_t)0xFF) == id) return i;
        i = (i + 1) & t->mask;
    }
}
static inline int kt_class(const keytable *t, uint64_t slot) { return (int)(t->tag[slot] & 0xFF); }
static inline void kt_set_class(keytable *t, uint64_t slot, int cls)
{ t->tag[slot] = (t->tag[slot] & ~(uint64_t)0xFF) | (uint64_t)(cls & 0xFF); }

/* The first slot at or after i whose class byte is cls (empty slots have class byte 0), or
 * nslots. A sweep over one class's keys (profile.c's evict_surplus) skips the others' slots
 * here: 8 slots a step with SSE2 (~2 instructions a slot), one at a time elsewhere. */
static inline uint64_t kt_scan_class(const keytable *t, uint64_t i, int cls)
{
    const uint8_t c = (uint8_t)cls;
#ifdef __SSE2__
    const __m128i want = _mm_set1_epi8((char)c);
    while (i + 8 <= t->nslots) {
        const __m128i *p = (const __m128i *)(const void *)&t->tag[i];
        __m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128(p), want);     /* tags i, i+1 */
        __m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128(p + 1), want);
        __m128i e2 = _mm_cmpeq_epi8(_mm_loadu_si128(p + 2), want);
        __m128i e3 = _mm_cmpeq_epi8(_mm_loadu_si128(p + 3), want);
        /* bytes 0 and 8 of a lane are its two tags' class bytes */
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(e0, e1), _mm_or_si128(e2, e3))) & 0x0101) {
            uint64_t bits = (uint64_t)_mm_movemask_epi8(e0) | (uint64_t)_mm_movemask_epi8(e1) << 16 |
                            (uint64_t)_mm_movemask_epi8(e2) << 32 | (uint64_t)_mm_movemask_epi8(e3) << 48;
            return i + (uint64_t)__builtin_ctzll(bits & 0x0101010101010101ULL) / 8;
        }
        i += 8;
    }
#endif
    while (i < t->nslots && (uint8_t)t->tag[i] != c)
        i++;
    return i;
}

/* 1 if another key fits without growing past max_slots. */
int kt_has_room(const keytable *t);
/* Insert a key known to be absent; grows if needed. Returns its slot or KT_NONE if full. */
uint64_t kt_insert(keytable *t, uint64_t h, int cls, uint32_t act);
/* Remove the key in `slot` (backward shift: other slots may move). */
void kt_remove_slot(keytable *t, uint64_t slot);
size_t kt_bytes(const keytable *t);
#endif
