#include "trace_load.h"
#include "tracereader.h"
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int grow(sim_loaded *l, size_t *cap, int want_sizes, int want_ops)
{
    size_t n = *cap ? *cap * 2 : (1u << 20);
    uint64_t *k = realloc(l->keys, n * sizeof *k);
    if (!k)
        return -1;
    l->keys = k;
    if (want_sizes) {
        uint32_t *s = realloc(l->sizes, n * sizeof *s);
        if (!s)
            return -1;
        l->sizes = s;
    }
    if (want_ops) {
        uint8_t *o = realloc(l->ops, n * sizeof *o);
        if (!o)
            return -1;
        l->ops = o;
    }
    *cap = n;
    return 0;
}

/*
 * A read miss carries no size (memcached logs size=0 on a miss). Take the size of the same
 * key's next store (the application's refill), else its last known size; 0 stays 0 and the
 * simulator then uses the configured default size.
 */
static void fill_zero_sizes(const uint64_t *keys, uint32_t *sizes, size_t n)
{
    sim_table t;
    for (int pass = 0; pass < 2; pass++) {
        if (sim_table_init(&t, 1024) < 0)
            return;
        for (size_t k = 0; k < n; k++) {
            size_t i = pass == 0 ? n - 1 - k : k;
            if (sizes[i]) {
                if (sim_table_put(&t, keys[i], sizes[i] == SIM_NIL ? SIM_NIL - 1 : sizes[i]) < 0)
                    break;
            } else {
                uint32_t v = sim_table_get(&t, keys[i]);
                if (v != SIM_NIL)
                    sizes[i] = v;
            }
        }
        sim_table_free(&t);
    }
}

int sim_load_trace(const char *path, const char *format, uint64_t max_requests, sim_loaded *out,
                  char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *e = NULL;
    tr_reader *r = tr_open(path, format, &e);
    if (!r) {
        snprintf(err, errlen, "%s: %s", path, e ? e : "cannot open");
        return -1;
    }
    /* arc, lirs and cache2k carry keys only; csv and watchlog carry sizes and operations */
    int with_sizes = strcmp(format, "csv") == 0 || strcmp(format, "watchlog") == 0;
    int with_ops = with_sizes;
    size_t cap = 0, n = 0;
    tr_request q;
    int rc;
    while ((rc = tr_next(r, &q)) == 1) {
        uint8_t op;
        switch (q.op) {
        case TR_GET: case TR_HIT: case TR_MISS: op = SIM_GET; break;
        case TR_SET: op = SIM_SET; break;
        case TR_DELETE: op = SIM_DELETE; break;
        default: out->ignored++; continue;   /* TR_EVICT: the real cache's decision */
        }
        if (n == cap && grow(out, &cap, with_sizes, with_ops) < 0) {
            snprintf(err, errlen, "out of memory loading %s", path);
            tr_close(r);
            sim_loaded_free(out);
            return -1;
        }
        out->keys[n] = q.key;
        if (with_sizes)
            out->sizes[n] = q.size;
        if (with_ops)
            out->ops[n] = op;
        n++;
        if (max_requests && n >= max_requests)
            break;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, tr_error(r));
        tr_close(r);
        sim_loaded_free(out);
        return -1;
    }
    out->skipped = tr_skipped(r);
    tr_close(r);
    if (with_sizes) {
        /* a csv without a size column reports 0: fall back to the configured size */
        int any = 0;
        for (size_t i = 0; i < n && !any; i++)
            any = out->sizes[i] != 0;
        if (!any) {
            free(out->sizes);
            out->sizes = NULL;
        } else {
            fill_zero_sizes(out->keys, out->sizes, n);
        }
    }
    out->t.n = n;
    out->t.keys = out->keys;
    out->t.sizes = out->sizes;
    out->t.ops = out->ops;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return 0;
}

void sim_loaded_free(sim_loaded *l)
{
    free(l->keys);
    free(l->sizes);
    free(l->ops);
    memset(l, 0, sizeof *l);
}
