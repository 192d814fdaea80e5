/*
 * TTL tracker: memcached never logs background expiry, so keys stored with a TTL would stay
 * in the profile (and inflate its stack) after memcached silently reclaimed them. We keep each
 * key's expiry from its item_store line and remove the key from the profile once stream time
 * passes it. Bounded: past max_keys new TTLs are not tracked (counted).
 */
#ifndef AG_TTL_H
#define AG_TTL_H

#include <stdint.h>

typedef struct ag_ttl_entry {
    int64_t expire_us;
    uint64_t key;
    int16_t clsid;
} ag_ttl_entry;

typedef struct ag_ttl {
    /* key -> expire_us (open addressing, backward-shift delete; key 0 is remapped) */
    uint64_t *keys;
    int64_t *exp;
    int16_t *cls;
    uint64_t mask, count, max_keys;
    /* min-heap on expire_us; entries whose expiry no longer matches the map are stale */
    ag_ttl_entry *heap;
    uint64_t hn, hcap;
    uint64_t untracked;      /* TTLs not tracked because the table was full */
    uint64_t expired;        /* silent expiries applied */
} ag_ttl;

int ag_ttl_init(ag_ttl *t, uint64_t max_keys);
void ag_ttl_free(ag_ttl *t);
void ag_ttl_clear(ag_ttl *t);
/* A store: ttl_s > 0 tracks it, otherwise forgets any earlier expiry of the key. Returns 1
 * when the key's tracked expiry had already passed at ts_us (memcached's store found it
 * expired: an expiry not yet applied here, which the caller counts), else 0. */
int ag_ttl_store(ag_ttl *t, uint64_t key, int clsid, int64_t ts_us, int32_t ttl_s);
/* The key left the cache (delete, evict, expired read). Returns 1 if it was tracked. */
int ag_ttl_forget(ag_ttl *t, uint64_t key);
/* Next key expired at stream time now_us: 1 with key and clsid set (and forgotten), else 0. */
int ag_ttl_next_expired(ag_ttl *t, int64_t now_us, uint64_t *key, int *clsid);
/* Start loading the key's home slot (feed.c's batch prefetch; no effect on state). */
void ag_ttl_prefetch(const ag_ttl *t, uint64_t key);

#endif
