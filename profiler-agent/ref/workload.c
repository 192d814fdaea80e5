#include "workload.h"
#include "tracereader.h"
#include "../src/core/keytable.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

uint64_t refwl_keyhash(uint64_t i)
{
    uint64_t z = i + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDULL;
    z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53ULL;
    return z ^ (z >> 33);
}

static void push(workload *w, uint64_t *cap, uint64_t k)
{
    if (w->n == *cap) {
        *cap = *cap ? *cap * 2 : 1 << 20;
        w->keys = realloc(w->keys, *cap * sizeof(uint64_t));
        if (!w->keys) { perror("realloc"); exit(1); }
    }
    w->keys[w->n++] = k;
}

int refwl_load_trace(workload *w, const char *name, const char *path, const char *format)
{
    memset(w, 0, sizeof(*w));
    snprintf(w->name, sizeof(w->name), "%s", name);
    const char *err = NULL;
    tr_reader *r = tr_open(path, format, &err);
    if (!r) { fprintf(stderr, "%s: %s\n", path, err); return -1; }
    tr_request q;
    uint64_t cap = 0;
    int rc;
    while ((rc = tr_next(r, &q)) == 1) push(w, &cap, q.key);
    if (rc < 0) { fprintf(stderr, "%s: %s\n", path, tr_error(r)); tr_close(r); return -1; }
    tr_close(r);
    refwl_count_distinct(w);
    return 0;
}

void refwl_count_distinct(workload *w)
{
    keytable t;
    kt_init(&t, 1024, 0);
    for (uint64_t i = 0; i < w->n; i++)
        if (kt_find(&t, w->keys[i]) == KT_NONE) kt_insert(&t, w->keys[i], 0, 0);
    w->distinct = t.count;
    kt_free(&t);
}

/* Zipf by inverse CDF over a precomputed table. */
typedef struct { double *cdf; uint64_t k; } zipf_t;
static void zipf_init(zipf_t *z, uint64_t k, double alpha)
{
    z->k = k;
    z->cdf = malloc(k * sizeof(double));
    double s = 0;
    for (uint64_t i = 0; i < k; i++) { s += pow((double)(i + 1), -alpha); z->cdf[i] = s; }
    for (uint64_t i = 0; i < k; i++) z->cdf[i] /= s;
}
static uint64_t zipf_draw(const zipf_t *z, uint64_t *rs)
{
    double u = refwl_unif(rs);
    uint64_t lo = 0, hi = z->k - 1;
    while (lo < hi) { uint64_t m = (lo + hi) / 2; if (z->cdf[m] < u) lo = m + 1; else hi = m; }
    return lo;
}

void refwl_zipf(workload *w, const char *name, uint64_t n, uint64_t keys, double alpha, uint64_t seed)
{
    refwl_mix(w, name, n, keys, alpha, 0, 0, 0, seed);
}

void refwl_mix(workload *w, const char *name, uint64_t n, uint64_t keys, double alpha,
            uint64_t loop_keys, double f, double s, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->keys = malloc(n * sizeof(uint64_t));
    w->n = n;
    zipf_t z;
    zipf_init(&z, keys, alpha);
    uint64_t rs = seed * 7919 + 1, loop_pos = 0, scan_next = 0;
    for (uint64_t i = 0; i < n; i++) {
        double u = refwl_unif(&rs);
        uint64_t k;
        if (u < f) k = (1ULL << 40) + (loop_pos++ % loop_keys);        /* loop */
        else if (u < f + s) k = (2ULL << 40) + scan_next++;            /* one-time scan */
        else k = zipf_draw(&z, &rs);                                     /* Zipf background */
        w->keys[i] = refwl_keyhash(k);
    }
    free(z.cdf);
    refwl_count_distinct(w);
}

void refwl_free(workload *w)
{
    free(w->keys);
    w->keys = NULL;
}

const char *refwl_traces_dir(void)
{
    const char *d = getenv("HITCURVE_TRACES_DIR");
    return (d && *d) ? d : "../../shared/traces";
}
