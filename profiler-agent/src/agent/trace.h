/*
 * Sampled request trace for the policy simulator. Spatial (key-hash) sampling keeps every
 * request of a sampled key, which is what a cache simulation needs (SHARDS). The number of
 * records per window is bounded: when a window would exceed it, the rate is halved and the
 * records already taken are filtered with the new threshold, so the chunk stays a consistent
 * sample at its final rate. A window that used < 1/4 of the budget doubles the rate again (up
 * to the configured one).
 */
#ifndef AG_TRACE_H
#define AG_TRACE_H

#include <jansson.h>
#include <stdint.h>

typedef struct ag_trace_rec {
    int64_t ts_us;
    uint64_t key;
    uint32_t size;
    int32_t ttl;
    int64_t cost_us;   /* -1 = none */
    uint8_t op;        /* 1 hit, 2 miss, 3 set, 4 delete, 5 evict */
    int16_t clsid;
} ag_trace_rec;

typedef struct ag_trace {
    double max_rate, rate;
    uint64_t threshold;        /* sampled iff mix(key) < threshold */
    uint64_t salt;
    uint32_t cap;
    ag_trace_rec *recs;
    uint32_t n;
    uint64_t rate_halvings;
} ag_trace;

int ag_trace_init(ag_trace *t, double rate, uint32_t max_records, uint64_t salt);
void ag_trace_free(ag_trace *t);
int ag_trace_enabled(const ag_trace *t);
void ag_trace_add(ag_trace *t, const ag_trace_rec *r);
/* Chunk JSON (protocol v1) of the records held; NULL if there are none. */
json_t *ag_trace_chunk(const ag_trace *t, const char *chunk_id, uint64_t seq,
                       const char *address, const char *instance_id, int64_t start_wall_us,
                       int64_t end_wall_us);
/* Start a new window (records dropped, rate adapted). */
void ag_trace_next_window(ag_trace *t);

#endif
