#include "trace.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t thr_of(double rate)
{
    if (rate >= 1.0)
        return UINT64_MAX;
    return (uint64_t)ldexp(rate, 64);
}

int ag_trace_init(ag_trace *t, double rate, uint32_t max_records, uint64_t salt)
{
    memset(t, 0, sizeof *t);
    t->max_rate = t->rate = rate;
    t->threshold = rate > 0 ? thr_of(rate) : 0;
    t->salt = salt;
    t->cap = max_records;
    if (rate > 0) {
        t->recs = malloc((size_t)max_records * sizeof *t->recs);
        if (!t->recs)
            return -1;
    }
    return 0;
}

void ag_trace_free(ag_trace *t)
{
    free(t->recs);
    t->recs = NULL;
}

int ag_trace_enabled(const ag_trace *t) { return t->rate > 0 && t->recs; }

static int sampled(const ag_trace *t, uint64_t key)
{
    return t->threshold == UINT64_MAX || tr_mix64(key ^ t->salt) < t->threshold;
}

void ag_trace_add(ag_trace *t, const ag_trace_rec *r)
{
    if (!ag_trace_enabled(t) || !sampled(t, r->key))
        return;
    while (t->n >= t->cap) {
        t->rate /= 2;
        t->threshold = thr_of(t->rate);
        t->rate_halvings++;
        uint32_t o = 0;
        for (uint32_t i = 0; i < t->n; i++)
            if (sampled(t, t->recs[i].key))
                t->recs[o++] = t->recs[i];
        t->n = o;
        if (!sampled(t, r->key))
            return;
    }
    t->recs[t->n++] = *r;
}

void ag_trace_next_window(ag_trace *t)
{
    if (t->n < t->cap / 4 && t->rate < t->max_rate) {
        t->rate = t->rate * 2 > t->max_rate ? t->max_rate : t->rate * 2;
        t->threshold = thr_of(t->rate);
    }
    t->n = 0;
}

json_t *ag_trace_chunk(const ag_trace *t, const char *chunk_id, uint64_t seq,
                       const char *address, const char *instance_id, int64_t start_wall_us,
                       int64_t end_wall_us)
{
    if (!ag_trace_enabled(t) || t->n == 0)
        return NULL;
    char s[40], e[40];
    ag_iso8601(start_wall_us, s, sizeof s);
    ag_iso8601(end_wall_us, e, sizeof e);
    json_t *ts = json_array(), *key = json_array(), *op = json_array(), *size = json_array(),
           *cls = json_array(), *ttl = json_array(), *cost = json_array();
    for (uint32_t i = 0; i < t->n; i++) {
        const ag_trace_rec *r = &t->recs[i];
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->key);
        json_array_append_new(ts, json_integer(r->ts_us));
        json_array_append_new(key, json_string(hex));
        json_array_append_new(op, json_integer(r->op));
        json_array_append_new(size, json_integer(r->size));
        json_array_append_new(cls, json_integer(r->clsid < 0 ? 0 : r->clsid));
        json_array_append_new(ttl, json_integer(r->ttl));
        json_array_append_new(cost, r->cost_us >= 0 ? json_integer(r->cost_us) : json_null());
    }
    json_t *recs = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "ts_us", ts, "key", key, "op", op,
                             "size", size, "clsid", cls, "ttl", ttl, "cost_us", cost);
    return json_pack("{s:i,s:s,s:{s:s,s:s},s:f,s:I,s:s,s:s,s:o}", "schema_version", 1,
                     "chunk_id", chunk_id, "server", "address", address, "instance_id",
                     instance_id, "sample_rate", t->rate, "seq", (json_int_t)seq, "start", s,
                     "end", e, "records", recs);
}
