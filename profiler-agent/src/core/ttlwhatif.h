/*
 * ttlwhatif: "if prefix P's TTL were X", measured on a sample of keys by replaying
 * their reads and stores against unbounded-memory caches whose items live X seconds, one per
 * TTL of a fixed grid (HC_TTLW_TTLS), plus one whose items live the TTL each store carried
 * (column 0, "today": it reproduces memcached's hits whenever memory evicted nothing, the
 * self-check).
 *
 * Why a replay and not a histogram of ages at hits: memcached is used cache-aside (a miss is
 * followed by the client's set), so a TTL decides when the next store happens. With TTL T and
 * a key read at Poisson rate L, the hit ratio is L T / (1 + L T) (Jung, Berger, Balakrishnan,
 * INFOCOM'03); ages at hits are uniform over (0, T), so cutting at X < T predicts
 * (X / T) L T / (1 + L T), half of the true 0.99 for a key read 100 times a second at
 * T = 3 s, X = 1.5 s. The replay keeps for each column the time its item was stored:
 *  - a store after a real miss of the key is the client's refill: columns that missed too
 *    take it (their item is stored then), columns that hit keep their item (the client would
 *    not have stored);
 *  - any other store (a write) stores in every column;
 *  - a read a column misses while memcached hit: that column's client would have refilled,
 *    stored at the read (assumed: cache-aside);
 *  - a delete or flush removes the item from every column.
 * memcached's clock has 1 s ticks: an item stored at time s with TTL X is expired from the
 * second floor(s) + X (lifetime in (X - 1, X]); the columns use the same rule, so TTLs are
 * whole seconds. The columns ignore memory: they give the hit ratio TTL allows, and the bytes
 * the prefix's live items hold (the memory it would need to keep them), as byte-seconds per
 * window. Reads of a key before its first store or miss seen are not counted (its age is not
 * known).
 *
 * Keys are sampled by hash (SHARDS, fixed size: past max_keys the rate halves and keys above
 * the new threshold leave); counts are weighted by 1/R at the rate in force. A key carries the
 * prefix id of its latest event. Not thread-safe. Memory: ~160 B per sampled key (bounded by
 * max_keys) and ~540 B per prefix id seen (at most HC_TTLW_MAX_PREFIX ids).
 */
#ifndef HC_TTLWHATIF_H
#define HC_TTLWHATIF_H

#include <stddef.h>
#include <stdint.h>

/* The grid: 1 s, then 2^k and 3 x 2^k s up to 65536 s (18.2 h); whole seconds, as memcached
 * takes TTLs. The one definition: the agent sends it in every snapshot (`ttl_whatif_ttls_s`). */
#define HC_TTLW_NTTL 32
#define HC_TTLW_COLS (HC_TTLW_NTTL + 1) /* column 0: each store's own TTL */
#define HC_TTLW_MAX_PREFIX 4096
extern const uint32_t HC_TTLW_TTLS[HC_TTLW_NTTL];

typedef struct hc_ttlw_config {
    uint32_t max_keys;  /* sampled keys (>= 64) */
    uint64_t seed;
} hc_ttlw_config;

typedef struct hc_ttlw_prefix {
    double reads;                  /* sampled reads of known keys, weighted 1/R */
    double real_hits;              /* of those, memcached's own hits: the sample's measured hit
                                      ratio, to correct the sample's bias (a hot key in or out of
                                      the sample moves every column) against the prefix's */
    uint64_t sampled_reads;        /* the same, unweighted (for the noise of the ratios) */
    double hits[HC_TTLW_COLS];     /* weighted hits per column */
    double live[HC_TTLW_COLS];     /* byte-seconds of live items per column, weighted 1/R */
} hc_ttlw_prefix;

typedef struct hc_ttlw hc_ttlw;

hc_ttlw *hc_ttlw_new(const hc_ttlw_config *c);
void hc_ttlw_free(hc_ttlw *w);
/* Events, in stream time (microseconds). size: bytes the item takes (0: keep the known one);
 * ttl_s: the store's TTL (<= 0: none). */
void hc_ttlw_read(hc_ttlw *w, uint64_t key, uint16_t pfx, int hit, int64_t t_us);
void hc_ttlw_store(hc_ttlw *w, uint64_t key, uint16_t pfx, uint32_t size, int32_t ttl_s,
                   int64_t t_us);
void hc_ttlw_remove(hc_ttlw *w, uint64_t key, int64_t t_us);
/* This window's counts of a prefix id (NULL: none seen). */
const hc_ttlw_prefix *hc_ttlw_get(const hc_ttlw *w, uint16_t pfx);
void hc_ttlw_window(hc_ttlw *w);  /* zero the counts; the keys' state stays */
void hc_ttlw_clear(hc_ttlw *w);   /* forget everything (a new memcached instance) */
double hc_ttlw_rate(const hc_ttlw *w);
size_t hc_ttlw_bytes(const hc_ttlw *w);
size_t hc_ttlw_key_bytes(void);     /* per sampled key */
size_t hc_ttlw_prefix_bytes(void);  /* per prefix id */

#endif
