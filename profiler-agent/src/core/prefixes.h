/*
 * prefixes: per-prefix breakdown of one cache's traffic. Prefixes (64-bit hashes of the
 * prefix text, see keyprefix.h; the names stay with the caller) are ranked by reads in a
 * space-saving sketch of `slots` counters; each monitored prefix has its own TTL-aware byte
 * curve (sdcurve, SHARDS-sampled, a bounded key count per prefix) as if it had its own pool,
 * its measured reads and hits, its resident bytes (sampled keys stored and not since evicted,
 * deleted or expired, scaled by 1/R), and how its items left: expired, evicted, deleted.
 * A slot that changes hands starts over. Reads of unmonitored prefixes cannot happen (space-
 * saving always gives the read a slot); writes and removals of unmonitored prefixes only
 * count in the totals. Windows: hc_prefixes_window() clears per-window counts and curves'
 * histograms and halves the ranking, so steady heavy prefixes keep their slots.
 */
#ifndef HC_PREFIXES_H
#define HC_PREFIXES_H

#include <stddef.h>
#include <stdint.h>

#include "sdcurve.h"
#include "topk.h"

#define HC_PREFIXES_MAX_TOP 100

typedef struct hc_leave_counts {
    uint64_t expired;   /* TTL passed (read as expired, or silently by stream time) */
    uint64_t evicted;   /* eviction lines */
    uint64_t deleted;   /* user deletes (memcached >= 1.6.20 logs them; 1.6.18 does not) */
} hc_leave_counts;

typedef struct hc_prefix_stat {
    uint64_t prefix;            /* prefix hash */
    uint64_t reads, hits, sets; /* this window, measured (all keys, not sampled) */
    hc_leave_counts left;
    double resident_bytes;      /* estimated, scaled */
    double count_err;           /* space-saving bound on the ranking count */
    int slot;
} hc_prefix_stat;

typedef struct hc_prefixes_config {
    uint32_t top_n;             /* prefixes reported (1..HC_PREFIXES_MAX_TOP, default 20) */
    uint32_t slots;             /* counters in the ranking sketch (>= top_n; default 2*top_n) */
    uint32_t keys_per_prefix;   /* sdcurve bound per prefix (default 2048) */
    double rate;                /* initial sampling rate (default 1; halves per prefix to fit) */
    double max_bytes;           /* curve range in bytes (> 0) */
    uint32_t cells;             /* curve cells (default 1000) */
    uint64_t seed;
} hc_prefixes_config;

typedef struct hc_prefixes hc_prefixes;

void hc_prefixes_config_default(hc_prefixes_config *c);
hc_prefixes *hc_prefixes_new(const hc_prefixes_config *c, const char **err);
void hc_prefixes_free(hc_prefixes *p);

/* Events. prefix = hash of the key's prefix (the caller's choice for "no prefix", e.g. the
 * hash of ""); size = bytes the item takes (0 unknown: the tracked size is kept). */
void hc_prefixes_read(hc_prefixes *p, uint64_t prefix, uint64_t key, int hit, uint32_t size,
                      int64_t now_us);
void hc_prefixes_write(hc_prefixes *p, uint64_t prefix, uint64_t key, uint32_t size,
                       int64_t now_us, int64_t expire_us);
/* how: 0 expired, 1 evicted, 2 deleted */
void hc_prefixes_left(hc_prefixes *p, uint64_t prefix, uint64_t key, int how);
/* Change the curve range (clears the histograms). */
int hc_prefixes_set_range(hc_prefixes *p, double max_bytes);

/* The top prefixes by this window's reads, largest first (up to top_n); returns how many. */
uint32_t hc_prefixes_top(const hc_prefixes *p, hc_prefix_stat *out, uint32_t max);
/* The prefix curve of a slot returned by hc_prefixes_top. */
const hc_sdc *hc_prefixes_curve(const hc_prefixes *p, int slot);
/* Window totals over every prefix (reads, hits, sets, leave counts). */
void hc_prefixes_totals(const hc_prefixes *p, hc_prefix_stat *out);
void hc_prefixes_window(hc_prefixes *p);
void hc_prefixes_clear(hc_prefixes *p);
/* Memory: sketch + every curve allocated. */
size_t hc_prefixes_bytes(const hc_prefixes *p);
uint32_t hc_prefixes_top_n(const hc_prefixes *p);

#endif
