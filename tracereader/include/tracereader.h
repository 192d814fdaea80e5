/*
 * tracereader: read cache request traces one request at a time.
 *
 * Formats: "arc" (ARC .lis: start n ignore reqno -> n accesses), "lirs" (one integer key per
 * line, "*" markers skipped), "cache2k" (big-endian int32 keys back to back), "csv"
 * (key,size[,op]) and "watchlog" (a saved memcached 1.6 `watch fetchers mutations evictions`
 * stream, normalised as described in watchline.h and tracereader/README.md).
 * Input may be plain, gzip, xz or zstd (detected by magic bytes, not by file name); "-" is stdin.
 *
 * Keys are reduced to 64-bit hashes (XXH3 of the key bytes; integer keys are hashed from their
 * decimal text so "42" in csv and 42 in lirs are the same key). Every consumer uses `key` for
 * identity and for spatial sampling.
 */
#ifndef TRACEREADER_H
#define TRACEREADER_H

#include <stdint.h>
#include <stddef.h>

enum tr_op {
    TR_GET = 0,    /* read with unknown outcome (offline traces): miss implies refill SET */
    TR_HIT,        /* read that hit (watchlog) */
    TR_MISS,       /* read that missed (watchlog) */
    TR_SET,        /* store (set/add/replace/cas/append/prepend that stored) */
    TR_DELETE,     /* explicit removal (or expired/flushed found on read: see watchlog) */
    TR_EVICT       /* eviction reported by the cache */
};

typedef struct tr_request {
    uint64_t key;      /* XXH3-64 of the key bytes */
    uint32_t size;     /* object size in bytes; 0 if the trace has none */
    uint8_t op;        /* enum tr_op */
    int16_t clsid;     /* memcached slab class, -1 when unknown */
    int64_t ts_us;     /* microseconds since epoch, 0 when the trace has no time */
    int32_t ttl;       /* seconds, -1 none/unknown */
} tr_request;

typedef struct tr_reader tr_reader;

/* Returns NULL and sets *err (static string) on failure. format: see above. */
tr_reader *tr_open(const char *path, const char *format, const char **err);
/* 1 = a request was stored in *out, 0 = end of trace, -1 = error (see tr_error). */
int tr_next(tr_reader *r, tr_request *out);
const char *tr_error(const tr_reader *r);
/* Lines/records skipped as malformed so far (readers are tolerant but count what they skip). */
uint64_t tr_skipped(const tr_reader *r);
void tr_close(tr_reader *r);

uint64_t tr_hash_key(const void *bytes, size_t len);

/* Additions (not in the original fixed API; optional for consumers). */
/* watchlog: lines the watcher lost (sum of `skipped=N`); 0 for other formats. */
uint64_t tr_stream_skipped(const tr_reader *r);
/* watchlog: normaliser counters (struct wn_stats, see watchline.h); NULL for other formats. */
const struct wn_stats *tr_watchlog_stats(const tr_reader *r);

#endif
