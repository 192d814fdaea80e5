/*
 * The breakdown's view of the event stream, beside the per-class LRU profile: TTL-aware curves
 * (SHARDS++, core/sdcurve) per class in items and merged in bytes, the merged TTL-oblivious
 * curve from the same estimator (so the two differ only in expiry), per-prefix curves and
 * counts (core/prefixes), hot keys by requests and by requests x size (core/topk,
 * space-saving, reset every window), and how items left per class and prefix: expired,
 * evicted, deleted; and the TTL what-if per prefix (core/ttlwhatif: the sampled keys' reads
 * and stores replayed at a grid of TTLs). Fed by feed.c on the main thread; the prefix id of each key comes from the
 * reader thread (keys.c) through the ring and a key -> prefix table here.
 */
#ifndef AG_BREAKDOWN_H
#define AG_BREAKDOWN_H

#include <stdint.h>

#include "../core/prefixes.h"
#include "../core/profile.h"
#include "../core/sdcurve.h"
#include "../core/topk.h"
#include "../core/ttlwhatif.h"
#include "watchline.h"

#define AG_HOT_SLOTS 256       /* space-saving counters per hot-key sketch */
#define AG_HOT_MAX 100         /* hot keys reported (protocol limit) */
#define AG_TTLW_KEYS 8192      /* sampled keys of the TTL what-if replay (1.4 MiB at 176 B) */

typedef struct ag_bd_config {
    int enabled;
    uint32_t prefix_top;       /* prefixes reported (1..100) */
    uint32_t hot_keys;         /* hot keys reported (0..100) */
    uint32_t class_keys;       /* sampled keys per class curve */
    uint32_t merged_keys;      /* sampled keys of each merged curve */
    uint32_t prefix_keys;      /* sampled keys per prefix curve */
    double ghost_factor;       /* curves span (0, k x current size] like the LRU curves */
    uint64_t seed;
} ag_bd_config;

#define AG_BD_PWAYS 8
typedef struct ag_bd_pset {
    _Alignas(64) uint32_t tag[AG_BD_PWAYS]; /* 0 = empty; most recently noted first */
    uint16_t pid[AG_BD_PWAYS];
} ag_bd_pset;

typedef struct ag_bd {
    ag_bd_config cfg;
    hc_sdc *cls[HC_MAX_CLASSES];
    uint32_t chunk[HC_MAX_CLASSES];
    hc_leave_counts left[HC_MAX_CLASSES];
    hc_sdc *all_ttl, *all_obl;
    hc_prefixes *pfx;
    hc_topk *hot, *hot_bytes;
    hc_ttlw *tw;               /* the TTL what-if replay (core/ttlwhatif) */
    /* key -> prefix id, 8-way set-associative, one 64-byte cache line a set (the line path
     * touches it twice per event: noted when the line leaves the ring, read when its event
     * leaves the normaliser, up to the reorder delay later). Ways are kept most recently noted
     * first, so an entry is lost only when eight newer keys of its set were noted meanwhile (a
     * direct-mapped table lost ~0.2 % of keys at 3,000 lines/s and a 300 ms delay: their reads,
     * stores and evictions went to "(none)", which kept their bytes). Tags, ids and stamps in
     * three arrays cost three cache misses a note: ~7 % of the agent's CPU at full speed. */
    ag_bd_pset *pset;
    uint64_t pmask;            /* sets - 1 */
    uint64_t pfx_lost;         /* events whose key's prefix was no longer in the table */
    /* misses of keys whose class is not known yet (never seen stored), direct-mapped: each
     * reaches its class's TTL-aware curve at the key's next set, when the class is known, as
     * the LRU profile defers it (without this those curves missed their cold misses) */
    uint64_t *dkey;
    uint8_t *dset;
    uint64_t expired_reads, reads_since_publish;
    int have_range;
} ag_bd;

int ag_bd_init(ag_bd *b, const ag_bd_config *c, const char **err);
void ag_bd_free(ag_bd *b);
/* A class's capacity (items) and chunk size: its TTL curve spans k x items. */
void ag_bd_set_class(ag_bd *b, int cls, uint64_t items, uint32_t chunk);
/* memcached's memory limit: the merged and prefix curves span k x bytes. */
void ag_bd_set_memory(ag_bd *b, uint64_t limit_bytes);
/* From the ring, before the line enters the normaliser. */
void ag_bd_note_prefix(ag_bd *b, uint64_t key, uint16_t pfx);
/* Start loading the key's prefix set (before ag_bd_note_prefix or ag_bd_event of a batch,
 * so their cache misses overlap; no effect on state). */
void ag_bd_prefetch(const ag_bd *b, uint64_t key);
/* A normalised event; cls is the class feed.c attributed (-1 unknown). */
void ag_bd_event(ag_bd *b, const wn_event *ev, int cls);
/* A key memcached expired silently (its TTL passed in stream time). */
void ag_bd_silent_expiry(ag_bd *b, uint64_t key, int cls);
/* Stream time moved: apply expiries in the TTL-aware curves. */
void ag_bd_expire(ag_bd *b, int64_t now_us);
/* The hot keys the reader should capture in clear (at most n hashes into out). */
uint32_t ag_bd_hot_candidates(const ag_bd *b, uint64_t *out, uint32_t n);
void ag_bd_window(ag_bd *b);
void ag_bd_clear(ag_bd *b);
size_t ag_bd_bytes(const ag_bd *b);

#endif
