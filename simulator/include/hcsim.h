/*
 * hcsim: the Hitcurve policy simulator core.
 *
 * A trace is a struct of arrays (keys, optional sizes, costs, ops) owned by the caller, so
 * the CLI, the benchmarks and the Python extension feed the same engine without copies.
 * One simulation = one (policy, cache size) pair; sim_simulate_many runs a grid of them on a
 * small thread pool. Results carry hit ratio, byte hit ratio and recomputation cost.
 */
#ifndef HCSIM_H
#define HCSIM_H

#include <stddef.h>
#include <stdint.h>

enum sim_op {
    SIM_GET = 0,   /* read; on a miss the object is refilled (SET) when fill_on_miss */
    SIM_SET,       /* store: replaces the object as a fresh item (as memcached does) */
    SIM_ADD,       /* store only if absent (Eads' workload: no demand fill) */
    SIM_DELETE     /* explicit removal */
};

typedef struct sim_trace {
    size_t n;
    const uint64_t *keys;   /* key hashes (required) */
    const uint32_t *sizes;  /* object size in bytes (key + value); NULL: cfg default_size */
    const double *costs;    /* recomputation cost of a miss; NULL: 1 per miss */
    const uint8_t *ops;     /* enum sim_op; NULL: every request is SIM_GET */
} sim_trace;

typedef struct sim_config {
    int unit_bytes;          /* 0: capacity counts objects; 1: capacity counts bytes */
    int slab;                /* bytes mode: charge memcached chunk sizes (48 B header + size) */
    int policy_metadata;     /* slab mode: add each policy's per-item metadata delta */
    uint32_t default_size;   /* object size when the trace has none */
    double sample_rate;      /* spatial sampling rate R (1 = full simulation) */
    uint64_t sample_salt;    /* salt of the sampling hash */
    int fill_on_miss;        /* GET miss inserts the object (demand fill); default 1 */
    double warmup_fraction;  /* first fraction of the (sampled) requests is not counted */
    int sample_adjust;       /* SHARDS_adj-style correction of sampled hit ratios (default 1) */
    /* The trace already is a spatial sample at sample_rate (the agent sampled it): keys are not
     * filtered again, but sizes and memcached's pages still shrink by sample_rate. No
     * SHARDS_adj: the unsampled request count is not known here. */
    int presampled;
    const char *params;      /* policy parameters "policy.key=value,..." (may be NULL) */
} sim_config;

void sim_config_default(sim_config *cfg);

typedef struct sim_result {
    char policy[32];
    uint64_t size;              /* requested cache size (objects or bytes, unscaled) */
    uint64_t sim_size;          /* size actually simulated (size * R when sampling) */
    uint64_t requests;          /* GET requests counted (after sampling and warm-up) */
    uint64_t hits;
    uint64_t trace_requests;    /* all requests in the trace */
    double hit_ratio;
    double byte_hit_ratio;
    double hit_ratio_raw;       /* sampled runs: hit ratio before the correction */
    double byte_hit_ratio_raw;
    double expected_requests;   /* sampled runs: R x GETs in the trace */
    double miss_cost_total;     /* sum of costs of missed GETs, scaled by 1/R */
    double miss_cost_p99;       /* 99th percentile of per-GET recompute cost (hit = 0) */
    double miss_cost_p99_misses;/* 99th percentile among misses only */
    uint64_t evictions;
    uint64_t max_objects;       /* peak resident objects */
    double sample_rate;
    double seconds;             /* wall time of this simulation */
    double cpu_seconds;         /* CPU time of the thread that ran it (load-independent) */
} sim_result;

/* Policy names known to the engine, NULL-terminated. */
const char *const *sim_policy_names(void);
/* One-line description of a policy, NULL if unknown. */
const char *sim_policy_describe(const char *name);

/*
 * Run one policy at one size. Returns 0 on success, -1 with a message in err.
 * Thread-safe: every call owns its cache.
 */
int sim_simulate(const sim_trace *t, const char *policy, uint64_t size, const sim_config *cfg,
                sim_result *out, char *err, size_t errlen);

/*
 * Run every (policy, size) pair on `threads` worker threads (0 = number of CPUs).
 * out has np*ns entries in policy-major order. Returns 0 or -1 (first error in err).
 */
int sim_simulate_many(const sim_trace *t, const char *const *policies, int np,
                     const uint64_t *sizes, int ns, const sim_config *cfg, int threads,
                     sim_result *out, char *err, size_t errlen);

/*
 * Exact LRU curve by Mattson stack distances (Fenwick tree), independent of the policy
 * code: hits_out[i] = GET hits of an LRU cache of sizes[i] objects. Unit-size objects, all
 * requests treated as GET with demand fill. Returns the number of GET requests or -1.
 */
int64_t sim_exact_lru_hits(const sim_trace *t, const uint64_t *sizes, int ns, uint64_t *hits_out);

/* memcached 1.6 default slab classes (growth factor 1.25, 48-byte minimum + 48-byte item
 * header, 8-byte alignment, 512 KiB largest chunk). */
#define SIM_ITEM_HEADER 48u
#define SIM_PAGE_SIZE (1u << 20)
int sim_slab_nclasses(void);
uint32_t sim_slab_chunk(int cls);            /* chunk size of class cls (1-based) */
int sim_slab_class_of(uint32_t item_bytes);  /* class for an item of that many bytes */
/* Bytes charged for an object of `size` bytes (header + size rounded up to the chunk). */
uint64_t sim_slab_charge(uint64_t size);

/* Spatial sampling predicate (SHARDS/MiniSim): 1 if key is in a sample of rate R. */
int sim_sampled(uint64_t key, double rate, uint64_t salt);

#endif
