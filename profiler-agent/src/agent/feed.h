/*
 * From normalised events to the profiler, cost samples, TTL tracking and the trace.
 *
 * Class attribution of misses (memcached logs a miss with clsid=0): we remember the class in
 * which each key was last seen (hit, store or eviction) in a direct-mapped table. A MISS of a
 * key we remember goes straight to that class's ghost; in particular a key evicted from
 * class c and requested again is a ghost lookup in c, which is exactly the "would a bigger
 * c have hit?" question. Only misses of keys never seen before (or pushed out of the table)
 * are left to the profiler core, which defers them to the refill SET's class; misses that
 * are never refilled and never seen are unattributed. This replaces MIMIR's single shared
 * ghost with per-class ghosts fed with the right keys.
 */
#ifndef AG_FEED_H
#define AG_FEED_H

#include <stdint.h>

#include "../core/profile.h"
#include "breakdown.h"
#include "costs.h"
#include "trace.h"
#include "ttl.h"
#include "watchline.h"

typedef struct ag_window_counts {
    uint64_t events, hits, misses, sets, deletes, evictions;
    uint64_t miss_class_known;    /* misses attributed through the class table */
    uint64_t miss_class_deferred; /* misses left to the core (refill SET decides) */
    uint64_t silent_expiries;     /* keys removed because their TTL passed */
    uint64_t cost_samples;
} ag_window_counts;

typedef struct ag_feed {
    hc_profile *prof;
    /* class table */
    uint32_t *ctag;
    uint8_t *ccls;
    uint64_t cmask;
    /* pending misses for cost samples */
    uint64_t *pm_key;
    int64_t *pm_ts;
    uint64_t pm_mask;
    ag_costs costs;
    ag_ttl ttl;
    ag_trace trace;
    ag_bd bd;                /* TTL-aware, prefix and hot-key breakdown (issue 16) */
    int64_t stream_now_us;   /* latest event ts seen */
    ag_window_counts win;
} ag_feed;

typedef struct ag_feed_config {
    hc_profile_config prof;
    uint64_t ttl_max_keys;
    double trace_rate;
    uint32_t trace_max_records;
    uint64_t seed;
    ag_bd_config bd;
} ag_feed_config;

int ag_feed_init(ag_feed *f, const ag_feed_config *cfg, const char **err);
void ag_feed_free(ag_feed *f);
/* Drop every key-level state (new memcached instance): profile recreated by the caller. */
void ag_feed_clear_keys(ag_feed *f);
void ag_feed_event(ag_feed *f, const wn_event *ev);
/* Apply TTL expiries up to the current stream time. */
void ag_feed_expire(ag_feed *f);
void ag_feed_window_reset(ag_feed *f);

#endif
