/*
 * profile.h — Hitcurve profiler core: public API (STABLE; extend, do not change).
 *
 * Estimates LRU hit-rate curves (HRC) per memcached slab class from a stream of cache events:
 *   - ROUNDER (MIMIR: Sæmundsson, "Performance Profiling of Cache Systems at Scale", MSc thesis
 *     2014, Alg. 1-8) for sizes 0..N (N = the class's current capacity), or
 *     STACKER (Sæmundsson 2014 §3.3.1; exact ranks inside each bucket, cfg.estimator),
 *   - COUNTINGGHOST (rotating counting Bloom filters, Alg. 9-12) for sizes N..k*N,
 *   - SHARDS spatial sampling by key hash (fixed rate, or fixed size = bounded tracked keys with
 *     the rate lowered adaptively) with the SHARDS_adj correction.
 *
 * Keys are 64-bit hashes (tracereader's tr_hash_key / XXH3 of the key bytes); the core never sees
 * key bytes. Every read event of a class must be reported (sampled or not): the core samples
 * internally and uses the full count for the SHARDS adjustment and for hit-ratio denominators.
 *
 * Classes: clsid 0..HC_MAX_CLASSES-1 (memcached slab class ids are 1..63); clsid < 0 or
 * >= HC_MAX_CLASSES is folded into class 0 ("unclassified"). A class must get a capacity
 * (hc_profile_set_capacity) before its events count; events for a class without capacity are
 * counted in stats.events_no_capacity and otherwise ignored.
 *
 * Threading: a hc_profile is not thread-safe; use it from one thread (the agent's event loop).
 * Memory: everything is allocated in new/set_capacity; the event path never allocates except
 * for lazily created per-class state on a class's first capacity.
 */
#ifndef HC_PROFILE_H
#define HC_PROFILE_H

#include <stdint.h>
#include <stddef.h>
#include <math.h>

#define HC_MAX_CLASSES 64
#define HC_CURVE_POINTS 100

enum hc_event {             /* same numbering as tracereader's enum tr_op */
    HC_EV_GET = 0,          /* read, outcome unknown (offline): needs cfg.emulate_lru */
    HC_EV_HIT = 1,          /* read that hit in the real cache */
    HC_EV_MISS = 2,         /* read that missed in the real cache */
    HC_EV_SET = 3,          /* item stored (set/add/replace/cas/append/prepend, or refill) */
    HC_EV_DELETE = 4,       /* item removed by the user (delete, expired/flushed found on read) */
    HC_EV_EVICT = 5         /* item evicted by the cache */
};

enum hc_sampling {
    HC_SAMPLE_OFF = 0,      /* track every key */
    HC_SAMPLE_RATE = 1,     /* fixed rate: key sampled iff hash(key) < rate * 2^64 */
    HC_SAMPLE_FIXED_SIZE = 2 /* at most sample_max_keys tracked keys (cache + ghost, all
                                classes); rate = min(1, max_keys / sum_c(k*N_c)) and lowered
                                further if the key table fills (lost EVICTs, capacity growth) */
};

typedef struct hc_profile_config {
    uint32_t buckets;        /* ROUNDER buckets B, >= 1 (default HC_DEFAULT_BUCKETS) */
    double ghost_factor;     /* k >= 1: curve spans (0, k*N]; 1 = no ghost (default 2, max 16) */
    uint32_t ghost_filters;  /* counting filters in the ghost, >= 2 (default HC_DEFAULT_FILTERS);
                                F filters of capacity (k-1)*N/(F-1) each, the oldest is the
                                flush buffer (MIMIR uses F = 3) */
    double ghost_fpp;        /* target false-positive probability of one ghost lookup over all
                                filters (each filter gets ghost_fpp/F; default 0.01) */
    int sampling;            /* enum hc_sampling (default HC_SAMPLE_OFF) */
    double sample_rate;      /* HC_SAMPLE_RATE: rate in (0, 1] */
    uint64_t sample_max_keys;/* HC_SAMPLE_FIXED_SIZE: bound on tracked keys (default 16384) */
    uint32_t resolution;     /* internal curve cells over (0, k*N] (default 2000; the 100-point
                                curve and hc_profile_hits_at are read from these cells) */
    int emulate_lru;         /* 1: HC_EV_GET events run an exact LRU cache of the class
                                capacity inside the core to decide hit/miss/evict (offline
                                replay of key-only traces); 0: the caller reports HIT/MISS/
                                SET/EVICT itself (live agent). Default 0. */
    uint64_t seed;           /* salt for the sampling hash (default 0) */
    /* Improvements over the printed algorithms (1 = on; defaults chosen by `make bench`,
     * 0 = MIMIR as printed, for comparison): */
    int ghost_keep_coverage; /* merge the two oldest filters instead of flushing while the
                                ghost covers fewer than (k-1)*N live keys */
    int rounder_balanced;    /* ROUNDER aging merges the adjacent bucket pair with the fewest
                                items instead of always the two oldest */
    /* Lost EVICTs (live: memcached's watch stream drops lines, evictions first). Without them
     * evicted keys stay "resident" in the profile and never reach the ghost, so the curve
     * beyond N sags as loss grows. 1 (default): a class tracking more keys than its capacity
     * (plus a margin for bucket granularity and sampling noise) evicts its oldest tracked keys
     * into its ghost itself, as the LRU it models would have; and a MISS (or a deferred miss
     * resolved by the refill SET) of a key tracked as resident in its class is taken as the
     * proof of a lost EVICT: the key goes to the ghost first, then the lookup finds it there.
     * 0: trust the stream (the behaviour before this option existed). */
    int evict_surplus;
    /* Invalidations the stream does not show (memcached < 1.6.20 prints no line for a delete,
     * none for flush_all or a binary delete): a key deleted stays "resident" in the profile and
     * its next read misses, which evict_surplus would take for a lost EVICT and turn into a hit
     * just past N. 1: such a repair needs a lost eviction to pay for it, the class's credit
     * (hc_profile_add_lost_evictions: memcached's evictions the stream did not show); without
     * credit the key was invalidated: it leaves the profile and its read is a miss at every
     * size, and surplus keys leave without entering the ghost. A resident key's miss spends no
     * credit and is an invalidation while fewer than HC_EVICT_MIN_NEWER x N tracked keys are
     * newer than it: memcached evicts from COLD's tail, and every item of HOT (hot_lru_pct,
     * 20 % of the class by default) was set after the evicted one. 0 (default, offline replay
     * where no counters exist): every repair is a lost EVICT. */
    int evict_budget;
    /* Estimator below N (enum hc_estimator, default HC_EST_ROUNDER): ROUNDER spreads a hit
     * uniformly over its bucket (12 B per tracked key, O(log B) per event); STACKER keeps the
     * recency order inside each bucket and puts the hit at its exact LRU stack distance (24 B
     * per tracked key, plus a walk of up to half a bucket per hit). `make bench` measures both. */
    int estimator;
} hc_profile_config;

enum hc_estimator { HC_EST_ROUNDER = 0, HC_EST_STACKER = 1 };
/* "rounder" / "stacker" (the names the CLI, the agent config and the snapshot use). */
const char *hc_estimator_name(int estimator);
/* Name -> enum hc_estimator, or -1 if unknown. */
int hc_estimator_parse(const char *name);

/* Defaults chosen by measurement (see profiler-agent/README.md and `make bench`): B = 128 with
 * balanced aging (mean MAE on [0,N] 0.02 pp vs 0.22 pp for tail-pair aging), F = 9 filters with
 * coverage-keeping rotation (mean MAE on [N,2N] 0.17 pp vs 0.60 pp for MIMIR's F = 3 flush). */
#define HC_DEFAULT_BUCKETS 128
#define HC_DEFAULT_FILTERS 9
/* The ghost places a reuse distance beyond N only to within one filter's span, (k-1) N / (F-1);
 * the default gives each filter N/8 (F = 1 + 8(k-1): 9 at k = 2, 33 at the agent's k = 5), at
 * most HC_MAX_FILTERS. Measured (bench/accuracy/ghost_resolution.py, the accuracy bench's scan
 * mix, a cliff at ~4.1 N): at 4N F = 9 read +4.1 pp above exact LRU, F = 17 +1.3, F = 33 0.0;
 * cost +24 % instructions per event (447 -> 553: every miss probes F filters), +5 % profile memory. */
#define HC_FILTERS_PER_N 8
#define HC_MAX_FILTERS 64
static inline uint32_t hc_ghost_filters_for(double k)
{
    double f = 1 + ceil(HC_FILTERS_PER_N * (k - 1) - 1e-9);
    return f < 2 ? 2 : f > HC_MAX_FILTERS ? HC_MAX_FILTERS : (uint32_t)f;
}
#define HC_DEFAULT_RESOLUTION 2000

typedef struct hc_profile hc_profile;

/* One class's curve: HC_CURVE_POINTS points evenly spaced over (0, k*N]:
 * size_items[i] = (i+1) * k * N / HC_CURVE_POINTS. Sizes in bytes = size_items * chunk_size. */
typedef struct hc_curve {
    int clsid;
    uint64_t capacity_items;      /* N as last set */
    uint32_t chunk_size;          /* bytes per item in this class (0 if unknown) */
    double ghost_factor;          /* k */
    uint32_t npoints;             /* HC_CURVE_POINTS */
    double size_items[HC_CURVE_POINTS];
    double hit_ratio[HC_CURVE_POINTS]; /* estimated LRU hit ratio at that size, 0..1 */
    uint64_t reads;               /* read events (GET/HIT/MISS) of the class, all keys (see
                                     hc_profile_event on misses without a class) */
    uint64_t hits_observed;       /* HIT events seen (or emulated hits) */
    double sampled_reads;         /* read events of sampled keys (after SHARDS_adj: expected) */
    double sample_rate;           /* current sampling rate (1 when off) */
    double ghost_reach_items;     /* how far the curve is seen now: N + the keys the ghost holds
                                     (unsampled items), at most k*N. The ghost fills only with
                                     evictions, so after memcached fills it takes (k-1)*N of them
                                     before the curve is measured out to k*N; beyond this size the
                                     points are held flat, not measured. */
    double ghost_thinned_items;   /* evicted keys (unsampled items) lost to a steady stream loss
                                     since the profile began: missing from the ghost, spread over
                                     its span (HC_GHOST_GAP_SHARE) */
    uint32_t ghost_filters;       /* F of the class's ghost (0: no ghost): a distance beyond N is
                                     placed to within (k-1) N / (F-1) (the backend's band) */
    double ghost_dropped_items;   /* evicted keys (unsampled items) the class's ghost lost since
                                     the profile began: flushed past (k-1)*N (Alg. 12) or cleared
                                     when the class's capacity moved too far to keep them
                                     (approximate after sampling-rate changes). A flush while the
                                     newer entries cover (k-1)*N drops only keys beyond k*N, so
                                     a complete ghost may have dropped some */
    int ghost_complete;           /* every key memcached evicted from this class that
                                     has not come back and that the ghost does not hold lies beyond
                                     k*N, and did for every read of the window (ghost.h, `covered`).
                                     A read that misses the ghost is then a first read, a read of
                                     an expired or deleted key, or one from beyond k*N: a miss at
                                     every size of the curve, which is measured to k*N
                                     (ghost_reach_items is k*N). True from the start when
                                     memcached had evicted nothing when the profile began
                                     (hc_profile_set_seen_from_start) and no eviction of the class
                                     came before it had a capacity; otherwise (an agent attached
                                     to a memcached already evicting) once the ghost has held
                                     (k-1)*N entries (unsampled: evictions minus the evicted keys
                                     read back since attaching; (k-1)*N evictions alone are not
                                     enough when evicted keys come back, the key evicted last before
                                     the attach then lies at N + the entries + 1). Lost until
                                     earned again by an Alg. 12 flush while the newer entries cover
                                     less than (k-1)*N, a capacity growth, or lost EVICT lines of
                                     untracked keys past HC_GHOST_LOST_TOLERANCE
                                     (hc_profile_check_evictions; then only entries evicted after
                                     the loss count) */
} hc_curve;

typedef struct hc_profile_stats {
    uint64_t tracked_keys;        /* keys in the key table (all classes) */
    uint64_t table_slots;         /* key table capacity (slots) */
    size_t bytes_per_slot;        /* key table bytes per slot (hash + activity) */
    uint64_t ghost_entries;       /* entries currently counted in ghost filters (all classes) */
    size_t ghost_bytes;           /* bytes of all ghost filters */
    size_t emulator_bytes;        /* bytes of the offline LRU emulator (0 when not emulating) */
    size_t total_bytes;           /* everything the profile allocated */
    double sample_rate;           /* current rate */
    uint64_t rate_lowerings;      /* times fixed-size sampling lowered the rate */
    uint64_t events;              /* all events passed in */
    uint64_t events_no_capacity;  /* events for classes without a capacity */
    uint64_t evicts_no_capacity;  /* ...of them EVICTs: keys no ghost was given (their class's
                                     ghost is not complete, hc_curve.ghost_complete) */
    uint64_t unknown_hits;        /* HITs of sampled keys the table did not know (lost SETs,
                                     items older than the profile): spread over the range
                                     between the bottom of the tracked stack and N */
    uint64_t unattributed_misses; /* MISS of unsampled keys whose class was unknown */
    uint64_t pending_dropped;     /* deferred MISS lookups overwritten before their SET */
    uint64_t surplus_evictions;   /* keys the profile evicted itself (class over capacity) */
    uint64_t lost_evict_misses;   /* MISSes of keys tracked as resident (lost EVICT/DELETE) */
    uint64_t unrefilled_misses;   /* misses looked up again before a refill SET
                                     (hc_profile_set_refill_rule): no ghost hit counted */
    uint64_t invalidated;         /* of them and of the surplus, keys taken as invalidated (no
                                     lost eviction to pay for them: cfg.evict_budget) */
    size_t estimator_bytes;       /* ROUNDER/STACKER state of all classes (STACKER: its node
                                     pool, 12 B per tracked key, grows by doubling) */
} hc_profile_stats;

/* Fill *cfg with defaults. */
void hc_profile_config_default(hc_profile_config *cfg);

/* Returns NULL and sets *err (static string) if cfg is invalid or memory is short. cfg may be
 * NULL for defaults. */
hc_profile *hc_profile_new(const hc_profile_config *cfg, const char **err);
void hc_profile_free(hc_profile *p);

/* Set (or change) a class's capacity in items (memcached: total_chunks of the class) and its
 * chunk size in bytes. items >= 1. Changing the capacity keeps tracked keys but clears the
 * class's accumulated curve (its x axis changes). Returns 0, or -1 on bad arguments/memory. */
int hc_profile_set_capacity(hc_profile *p, int clsid, uint64_t items, uint32_t chunk_size);

/* Whether memcached has allocated all the memory it may (default: yes). While it has not, a
 * class grows by taking new pages instead of evicting, so keys beyond the class's capacity as
 * last set are growth, not lost EVICTs: the surplus repair (evicting a class's oldest keys into
 * its ghost) is off. Without this a warming cache had its profile swept away and the sweeps,
 * each a pass over the key table, took a quarter of the agent's CPU. */
void hc_profile_set_memory_full(hc_profile *p, int full);

/* Whether the events start before memcached's first eviction (the live agent: memcached's
 * `evictions` was 0 when it attached or when memcached restarted; default: no). Then a ghost holds
 * every key memcached evicted and is complete from the start (hc_curve.ghost_complete); otherwise
 * it becomes complete once it has held (k-1)*N entries. Call before the first capacity. */
void hc_profile_set_seen_from_start(hc_profile *p, int yes);

/* memcached counted `evicted` evictions of the class over the window (since the last
 * hc_profile_reset) and lines of the watch stream were lost in it: the EVICTs the profile did not
 * get may be keys its ghost never holds (those of keys it does not track; a lost EVICT of a tracked
 * key is repaired, see evict_surplus). Past a tolerance of such keys inside the span
 * (HC_GHOST_LOST_TOLERANCE of the ghost's (k-1)*N; a loss leaves the span once (k-1)*N keys evicted
 * after it are held) the class's curve stops being complete until (k-1)*N evicted keys newer than
 * the loss are held (hc_curve.ghost_complete). The live agent calls it per class at the close of
 * every window that lost lines (and after a blind stretch). */
#define HC_GHOST_LOST_TOLERANCE 0.05
/* Only a stretch that lost at least this share of its evicted keys (of untracked keys: a tracked
 * one is repaired) counts as a gap in the ghost; a smaller steady loss thins the ghost, counted
 * in hc_curve.ghost_thinned_items, without revoking completeness. */
#define HC_GHOST_GAP_SHARE 0.5
/* cfg.evict_budget: the fewest newer keys (x N) a key memcached evicted can have (HOT's share) */
#define HC_EVICT_MIN_NEWER 0.2
void hc_profile_check_evictions(hc_profile *p, int clsid, uint64_t evicted);

/* on: a MISS's ghost lookup counts only once the key's refill SET arrives; a miss whose key is
 * looked up again first (or whose wait is overwritten) leaves the ghost uncounted
 * (stats.unrefilled_misses). For streams where lookups other than reads miss (a delete or touch
 * of a key memcached evicted looks like a read's miss and would read as a hit for more memory);
 * the live agent turns it on while memcached counts such misses. Default off. */
void hc_profile_set_refill_rule(hc_profile *p, int on);

/* Every key memcached held is gone (flush_all): tracked keys and ghost entries are forgotten,
 * a later read of any of them is a miss at every size. */
void hc_profile_forget_keys(hc_profile *p);

/* Report one event. op: enum hc_event. size = item size in bytes (0 if unknown; informational).
 * Returns for HC_EV_GET with emulation: 1 hit, 0 miss, -1 key not sampled (unsampled keys are
 * only counted); otherwise 0. Never fails.
 * Semantics (live): HIT = stack-distance sample + move to head; MISS = ghost lookup (the SET
 * that follows inserts the key); SET = insert/refresh at head (a SET of a tracked key is a
 * re-store, not a hit); EVICT/DELETE = remove (EVICT also enters the class's ghost).
 * memcached logs a miss with clsid=0 (the class is unknown until the refill): a MISS whose
 * class has no capacity is remembered (small direct-mapped table) and its ghost lookup is done
 * by the next SET of the same key, in the SET's class; that read is then counted in the SET's
 * class too (for sampled keys, with weight 1/rate: the class's `reads` is then an estimate).
 * Misses of unsampled keys with no class cannot be attributed and are counted in
 * stats.unattributed_misses. */
int hc_profile_event(hc_profile *p, int op, int clsid, uint64_t key, uint32_t size);

/* Convenience wrappers around hc_profile_event. */
static inline void hc_profile_hit(hc_profile *p, int c, uint64_t k, uint32_t s)
{ (void)hc_profile_event(p, HC_EV_HIT, c, k, s); }
static inline void hc_profile_miss(hc_profile *p, int c, uint64_t k, uint32_t s)
{ (void)hc_profile_event(p, HC_EV_MISS, c, k, s); }
static inline void hc_profile_set(hc_profile *p, int c, uint64_t k, uint32_t s)
{ (void)hc_profile_event(p, HC_EV_SET, c, k, s); }
static inline void hc_profile_evict(hc_profile *p, int c, uint64_t k, uint32_t s)
{ (void)hc_profile_event(p, HC_EV_EVICT, c, k, s); }
static inline void hc_profile_delete(hc_profile *p, int c, uint64_t k, uint32_t s)
{ (void)hc_profile_event(p, HC_EV_DELETE, c, k, s); }
static inline int hc_profile_get(hc_profile *p, int c, uint64_t k, uint32_t s)
{ return hc_profile_event(p, HC_EV_GET, c, k, s); }

/* The class's 100-point curve. Returns 0, or -1 if the class has no capacity. */
int hc_profile_curve(const hc_profile *p, int clsid, hc_curve *out);

/* Estimated LRU hit ratio of the class at an arbitrary size in items (0 <= size <= k*N;
 * linear between internal cells). Returns -1 if the class has no capacity. */
double hc_profile_hit_ratio_at(const hc_profile *p, int clsid, double size_items);

/* Clear accumulated curves and counters (clsid < 0: all classes) but keep tracked keys, ghost
 * contents and capacities: the agent calls this after each snapshot window. */
void hc_profile_reset(hc_profile *p, int clsid);

/* 1 if the class has a capacity set. */
int hc_profile_has_class(const hc_profile *p, int clsid);
/* Start loading the key table slot of key hash h and, with ghost set (a miss or an eviction
 * in class clsid), the class's ghost blocks of the key: a caller with a batch of events asks
 * for all of them before feeding the first, so their cache misses overlap (no effect on
 * state). */
void hc_profile_prefetch(const hc_profile *p, uint64_t h, int clsid, int ghost);

void hc_profile_stats_get(const hc_profile *p, hc_profile_stats *out);

/* Check the core's invariants (tests, O(tracked keys)): every class's estimator holds exactly
 * the keys the key table tracks in that class, and STACKER's list and buckets are consistent.
 * Returns NULL, or a static description of the first violation. */
const char *hc_profile_verify(const hc_profile *p);

#endif
