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
#include "config.h"
#include "costs.h"
#include "trace.h"
#include "ttl.h"
#include "watchline.h"

#define AG_FEED_CLASSES 64

typedef struct ag_window_counts {
    uint64_t events, hits, misses, sets, deletes, evictions;
    uint64_t miss_class_known;    /* misses attributed through the class table */
    uint64_t miss_class_deferred; /* misses left to the core (refill SET decides) */
    uint64_t silent_expiries;     /* keys removed because their TTL passed */
    uint64_t cost_samples;
    /* successful deletes the stream told apart (`deleted` lines, memcached >= 1.6.20: text
     * and meta protocol, not binary): their lookups left the stream, by class */
    uint64_t told_deletes, told_deletes_cls[AG_FEED_CLASSES];
    /* misses refilled by an `add` (where memcached's other commands' misses go: incr on a
     * counter that does not exist yet, then add), by class; and all misses by class */
    uint64_t add_refills_cls[AG_FEED_CLASSES], misses_cls[AG_FEED_CLASSES];
    /* found lookups of keys an `add` created (counters: a rate limiter's add after its first
     * incr missed, `ma` with N, a binary incr's initial value), by class; and those told apart
     * as counter lookups (the class's counter rule engaged: kept out of the profile) */
    uint64_t counter_found_cls[AG_FEED_CLASSES];
    uint64_t hits_cls[AG_FEED_CLASSES]; /* found lookups fed to the profile, by class */
    uint64_t told_counters, told_counters_cls[AG_FEED_CLASSES];
} ag_window_counts;

/* Counter lookups. memcached bumps an item in its LRU on a read, touch or gat (do_item_get with
 * DO_UPDATE: do_item_bump marks it fetched, then active), not on an incr, decr or ma
 * (do_add_delta looks it up with DONT_UPDATE; its do_item_update only refreshes the time, and
 * moves an item to WARM only if a read had already made it active). A counter only ever
 * incremented is never active: it flows HOT -> COLD and is evicted in insertion order however
 * often it is incremented. The stream prints an incr's lookup exactly like a read's, so the
 * agent tells counters apart by key: a key an `add` created is taken for a counter, and in a
 * class where memcached's counters bear that out (every found lookup of such keys in the window
 * were incrs or decrs: stats slabs N:incr_hits + N:decr_hits at least as many over recent windows)
 * its found lookups are kept out of the profile, the next window on: no read, no bump. Found
 * lookups of such keys beyond memcached's incrs and decrs (an `add` refilling keys that are
 * read) refute the rule for the class for the profile's life. */
typedef struct ag_counter_rule {
    uint8_t engaged[AG_FEED_CLASSES];
    uint8_t refuted[AG_FEED_CLASSES];
    /* decayed sums over recent windows (a window's edge can put a few hundred lookups on the
     * stream's side of it that memcached counts in the next; the sums even that out) */
    double seen[AG_FEED_CLASSES], arith[AG_FEED_CLASSES], last_arith[AG_FEED_CLASSES];
} ag_counter_rule;

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
    ag_bd bd;                /* TTL-aware, prefix and hot-key breakdown */
    int64_t stream_now_us;   /* latest event ts seen */
    int trace_shed;          /* overload.h: trace records are not taken */
    uint32_t bd_delay_us;    /* testing (--breakdown-delay-us): an overloaded breakdown */
    ag_window_counts win;
    ag_counter_rule counters;
} ag_feed;

typedef struct ag_feed_config {
    hc_profile_config prof;
    uint64_t ttl_max_keys;
    double trace_rate;
    uint32_t trace_max_records;
    uint64_t seed;
    ag_bd_config bd;
} ag_feed_config;

/* The feed's configuration from the agent's (run.c, and bench/linepath.c that replays the same
 * line path offline). */
void ag_feed_config_from(const ag_config *c, ag_feed_config *fc);
int ag_feed_init(ag_feed *f, const ag_feed_config *cfg, const char **err);
void ag_feed_free(ag_feed *f);
/* Drop every key-level state (new memcached instance): profile recreated by the caller. */
void ag_feed_clear_keys(ag_feed *f);
void ag_feed_event(ag_feed *f, const wn_event *ev);
/* Start loading what ag_feed_event will read for this event (the class, pending-miss and TTL
 * tables, the profile's key table, the prefix table): the caller pops a batch of events and
 * prefetches all of them before feeding the first, so the batch's cache misses overlap
 * instead of each event waiting for its own (the tables are tens of MiB, a miss each).
 * No effect on any state or output. */
void ag_feed_prefetch(const ag_feed *f, const wn_event *ev);
/* Apply TTL expiries up to the current stream time. */
void ag_feed_expire(ag_feed *f);
void ag_feed_window_reset(ag_feed *f);

#endif
