/*
 * sdcurve: a SHARDS-sampled exact stack-distance curve, optionally TTL-aware (SHARDS++, "TTLs
 * Matter", Sultan et al., EuroSys'24): a min-heap of the sampled keys by expiry time, and
 * every access first removes the keys whose expiry has passed, so an expired item neither
 * occupies the stack (it leaves memory at its TTL, as memcached's crawler and lazy expiry make
 * it) nor turns its next read into a hit.
 *
 * Why a second estimator beside ROUNDER: ROUNDER's stack is per slab class in items and is
 * bounded to the class's capacity N. Prefix curves and the merged curve need sizes in bytes
 * over keys of every class, and the TTL-aware vs TTL-oblivious comparison needs the same
 * estimator run both ways. Sampled keys only (spatial hash sampling, fixed size: past
 * max_keys the rate halves and the keys above the new threshold leave), Olken's Fenwick tree
 * over access positions, so a sampled access is O(log S).
 *
 * Distances are weighted (bytes, or 1 per item): the size needed to hit a re-reference is the
 * weight of every distinct key touched since, plus its own. Sizes and hits are scaled by 1/R
 * at the rate in force when they were measured. Windows: hc_sdc_reset clears the histogram,
 * never the keys.
 *
 * Keys are 64-bit hashes; 0 is a valid key. Not thread-safe. Memory grows with tracked keys
 * (about 70 B per key) up to max_keys, and never past it.
 */
#ifndef HC_SDCURVE_H
#define HC_SDCURVE_H

#include <stddef.h>
#include <stdint.h>

typedef struct hc_sdc_config {
    double rate;           /* initial sampling rate in (0, 1] */
    uint32_t max_keys;     /* bound on tracked keys (>= 16); past it the rate halves */
    int ttl_aware;         /* 1: keys leave at their expiry (SHARDS++); 0: TTL-oblivious */
    double max_size;       /* histogram range (0, max_size] in weight units (> 0) */
    uint32_t cells;        /* histogram cells over the range (>= 10) */
    uint64_t seed;         /* sampling salt */
} hc_sdc_config;

typedef struct hc_sdc hc_sdc;

typedef struct hc_sdc_stats {
    uint64_t reads;            /* all reads reported (sampled or not) */
    uint64_t sampled_reads;    /* reads of sampled keys */
    double sampled_weight;     /* sum of 1/R over sampled reads (the hit-ratio denominator) */
    uint64_t tracked_keys;
    uint64_t expired;          /* keys removed by expiry (ttl_aware), cumulative */
    uint64_t rate_halvings;
    double rate;
    double resident_weight;    /* estimated weight of keys resident in the real cache: set or
                                  hit and not since evicted, deleted or expired (scaled 1/R) */
    double working_set;        /* estimated weight of all tracked keys (scaled 1/R): the
                                  working-set size, TTL-aware when ttl_aware */
    size_t bytes;              /* memory allocated */
} hc_sdc_stats;

void hc_sdc_config_default(hc_sdc_config *c);
/* NULL and *err set on a bad config or memory shortage. */
hc_sdc *hc_sdc_new(const hc_sdc_config *c, const char **err);
void hc_sdc_free(hc_sdc *s);

/* A read at now_us (a hit or a miss in the real cache: the model decides by distance).
 * Counts its distance (or a cold miss) in the histogram, then moves the key to the top. */
void hc_sdc_read(hc_sdc *s, uint64_t key, uint32_t weight, int64_t now_us);
/* A store at now_us: the key moves to the top with its new weight and expiry (expire_us <= 0:
 * none). Not a read. */
void hc_sdc_write(hc_sdc *s, uint64_t key, uint32_t weight, int64_t now_us, int64_t expire_us);
/* The user deleted the key (it leaves the model). */
void hc_sdc_remove(hc_sdc *s, uint64_t key);
/* The real cache evicted the key: it stays in the model (a bigger cache holds it) but no
 * longer counts as resident. */
void hc_sdc_evicted(hc_sdc *s, uint64_t key);
/* Apply expiries up to now_us without an access (ttl_aware only; idle periods). */
void hc_sdc_expire(hc_sdc *s, int64_t now_us);

/* Change the histogram range (clears the histogram). */
int hc_sdc_set_range(hc_sdc *s, double max_size);
double hc_sdc_max_size(const hc_sdc *s);
/* npoints points evenly over (0, max_size]: size[i] = (i+1) * max_size / npoints, hit ratio
 * of an LRU cache of that size (0 when no sampled read). */
void hc_sdc_curve(const hc_sdc *s, uint32_t npoints, double *size, double *hit_ratio);
/* Hit ratio at any size (linear inside a cell); sizes past the range give the range's end. */
double hc_sdc_hit_ratio_at(const hc_sdc *s, double size);
/* Smallest size whose hit ratio reaches target, or -1 if the range never does. */
double hc_sdc_size_for(const hc_sdc *s, double target);
/* Clear the histogram and read counters (new window); keys, heap and resident state stay. */
void hc_sdc_reset(hc_sdc *s);
/* Forget everything (new memcached instance). */
void hc_sdc_clear(hc_sdc *s);
void hc_sdc_stats_get(const hc_sdc *s, hc_sdc_stats *out);

#endif
