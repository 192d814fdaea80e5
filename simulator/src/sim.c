/* Simulation driver: sampling, request loop, metrics, and the (policy x size) thread pool. */
#include "cache.h"
#include "table.h"
#include "trmix.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void sim_config_default(sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->default_size = 1024;
    cfg->sample_rate = 1.0;
    cfg->sample_salt = 0x5a17ed5a17ull;
    cfg->fill_on_miss = 1;
    cfg->sample_adjust = 1;
}


int sim_sampled(uint64_t key, double rate, uint64_t salt)
{
    if (rate >= 1.0)
        return 1;
    /* compare the top 53 bits against rate * 2^53 (exact for every double rate) */
    uint64_t h = tr_mix64(key ^ salt) >> 11;
    return (double)h < rate * 9007199254740992.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct costvec {
    float *v;
    size_t n, cap;
} costvec;

static void cv_push(costvec *cv, float x)
{
    if (cv->n == cv->cap) {
        size_t cap = cv->cap ? cv->cap * 2 : 4096;
        float *v = realloc(cv->v, cap * sizeof *v);
        if (!v)
            abort();
        cv->v = v;
        cv->cap = cap;
    }
    cv->v[cv->n++] = x;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* k-th smallest (0-based); sorts in place, which also serves the per-GET percentile */
static double kth(costvec *cv, size_t k)
{
    qsort(cv->v, cv->n, sizeof(float), cmp_float);
    return cv->v[k];
}

/* p99 of per-GET recompute cost (hits cost 0) and p99 among misses */
static void fill_costs(sim_result *out, costvec *cv, uint64_t requests, uint64_t misses)
{
    if (!cv) {
        /* no cost array: every miss costs 1 */
        out->miss_cost_p99_misses = misses ? 1.0 : 0.0;
        uint64_t rank = (uint64_t)ceil(0.99 * (double)requests); /* 1-based */
        out->miss_cost_p99 = (requests && rank > requests - misses) ? 1.0 : 0.0;
        return;
    }
    if (cv->n == 0) {
        out->miss_cost_p99 = out->miss_cost_p99_misses = 0;
        return;
    }
    size_t km = (size_t)ceil(0.99 * (double)cv->n);
    if (km < 1)
        km = 1;
    uint64_t rank = (uint64_t)ceil(0.99 * (double)requests);
    uint64_t zeros = requests - cv->n;
    out->miss_cost_p99_misses = kth(cv, km - 1);
    out->miss_cost_p99 = rank > zeros ? cv->v[rank - zeros - 1] : 0.0;
}

static int cache_setup(sim_cache *c, const sim_policy_ops *ops, const sim_config *cfg,
                       uint64_t capacity, double R, uint64_t ndense, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->ops = ops;
    c->cfg = cfg;
    c->capacity = capacity;
    c->scale = R;
    c->free_head = SIM_NIL;
    uint64_t expect = cfg->unit_bytes ? capacity / (cfg->default_size ? cfg->default_size : 1) : capacity;
    if ((ndense ? sim_table_init_direct(&c->table, ndense) : sim_table_init(&c->table, expect * 2 + 16)) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (ops->init(c, err, errlen) < 0) {
        sim_table_free(&c->table);
        return -1;
    }
    return 0;
}

static void cache_teardown(sim_cache *c)
{
    c->ops->free(c);
    free(c->objs);
    sim_table_free(&c->table);
}

static void build_req(sim_req *r, const sim_config *cfg, int meta, uint64_t key, uint32_t size,
                      double cost, uint8_t op)
{
    r->key = key;
    r->hkey = key;
    r->size = size ? size : cfg->default_size;
    r->cost = (float)cost;
    r->op = op;
    r->cls = 0;
    r->next = UINT64_MAX;
    if (cfg->unit_bytes) {
        int64_t s = (int64_t)r->size + meta;
        if (s < 0)
            s = 0;
        if (cfg->slab) {
            uint64_t ch = sim_slab_charge((uint64_t)s);
            r->charge = ch > UINT32_MAX ? UINT32_MAX : (uint32_t)ch;
            r->cls = (uint8_t)sim_slab_class_of((uint32_t)(SIM_ITEM_HEADER + s));
        } else {
            r->charge = r->size ? r->size : 1;
        }
    } else {
        r->charge = 1;
    }
}

static inline bool resident(const sim_cache *c, uint32_t idx)
{
    return idx != SIM_NIL && !(c->objs[idx].flags & SIM_F_GHOST);
}

/* One request. Returns 1 GET hit, 0 GET miss, -1 not a GET. */
static int process(sim_cache *c, const sim_req *r)
{
    bool (*get)(sim_cache *, const sim_req *) = c->ops->get ? c->ops->get : sim_get_default;
    c->now++;
    switch (r->op) {
    case SIM_GET:
        if (c->cfg->fill_on_miss || resident(c, sim_find(c, r->key)))
            return get(c, r) ? 1 : 0;
        return 0;
    case SIM_SET: {
        uint32_t idx = sim_find(c, r->key);
        if (resident(c, idx))
            c->ops->remove(c, idx);
        get(c, r);
        return -1;
    }
    case SIM_ADD:
        if (!resident(c, sim_find(c, r->key)))
            get(c, r);
        return -1;
    case SIM_DELETE: {
        uint32_t idx = sim_find(c, r->key);
        if (resident(c, idx))
            c->ops->remove(c, idx);
        return -1;
    }
    default:
        return -1;
    }
}

/* ---- step-by-step API for unit tests (src/cache.h) ---- */
sim_cache *sim_cache_new(const char *policy, uint64_t capacity, const sim_config *cfg)
{
    const sim_policy_ops *ops = sim_policy_find(policy);
    sim_cache *c = malloc(sizeof *c);
    char err[256];
    if (!ops || !c || cache_setup(c, ops, cfg, capacity, 1.0, 0, err, sizeof err) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

void sim_cache_free(sim_cache *c)
{
    if (c) {
        cache_teardown(c);
        free(c);
    }
}

int sim_cache_access_next(sim_cache *c, uint64_t key, uint32_t size, double cost, int op, uint64_t next)
{
    sim_req r;
    int meta = (c->cfg->unit_bytes && c->cfg->slab && c->cfg->policy_metadata) ? c->ops->meta_delta : 0;
    build_req(&r, c->cfg, meta, key, size, cost, (uint8_t)op);
    r.next = next;
    return process(c, &r);
}

int sim_cache_access(sim_cache *c, uint64_t key, uint32_t size, double cost, int op)
{
    return sim_cache_access_next(c, key, size, cost, op, UINT64_MAX);
}

/*
 * Next-use positions for offline policies (OPT): next[i] = the position of the next request
 * to trace->keys[i], UINT32_MAX if none. One backward pass over dense ids (a grid) or a key
 * table. NULL (with a message) if the trace is too long for 32-bit positions or memory
 * runs out.
 */
static uint32_t *next_uses(const sim_trace *t, const uint32_t *ids, uint64_t nd, char *err, size_t errlen)
{
    if (t->n >= UINT32_MAX) {
        snprintf(err, errlen, "offline policy (opt): trace longer than %u requests", UINT32_MAX - 1);
        return NULL;
    }
    uint32_t *next = malloc((t->n ? t->n : 1) * sizeof *next);
    uint32_t *last = ids ? malloc((nd ? nd : 1) * sizeof *last) : NULL;
    sim_table tab = {0};
    if (!next || (ids && !last) || (!ids && sim_table_init(&tab, 1024) < 0)) {
        free(next);
        free(last);
        snprintf(err, errlen, "out of memory for next-use positions");
        return NULL;
    }
    for (uint64_t k = 0; ids && k < nd; k++)
        last[k] = UINT32_MAX;
    for (size_t i = t->n; i-- > 0;) {
        if (ids) {
            next[i] = last[ids[i]];
            last[ids[i]] = (uint32_t)i;
        } else {
            next[i] = sim_table_get(&tab, t->keys[i]);   /* SIM_NIL == UINT32_MAX */
            if (sim_table_put(&tab, t->keys[i], (uint32_t)i) < 0) {
                free(next);
                sim_table_free(&tab);
                snprintf(err, errlen, "out of memory for next-use positions");
                return NULL;
            }
        }
    }
    free(last);
    if (!ids)
        sim_table_free(&tab);
    return next;
}

int sim_cache_resident(const sim_cache *c, uint64_t key)
{
    return resident(c, sim_find(c, key));
}

sim_obj *sim_cache_obj(sim_cache *c, uint64_t key)
{
    uint32_t i = sim_find(c, key);
    return i == SIM_NIL ? NULL : &c->objs[i];
}

/* ids (optional): dense key ids 0..nd-1 for every request, shared by a grid of runs */
static int run_one(const sim_trace *t, const uint32_t *ids, uint64_t nd, const uint32_t *next,
                   const char *policy, uint64_t size, const sim_config *cfg, sim_result *out, char *err,
                   size_t errlen)
{
    const sim_policy_ops *ops = sim_policy_find(policy);
    if (!ops) {
        snprintf(err, errlen, "unknown policy '%s'", policy);
        return -1;
    }
    if (!t->keys && t->n) {
        snprintf(err, errlen, "trace has no keys");
        return -1;
    }
    double R = cfg->sample_rate;
    if (!(R > 0.0) || R > 1.0) {
        snprintf(err, errlen, "sample rate must be in (0, 1], got %g", R);
        return -1;
    }
    uint64_t sim_size = size;
    if (R < 1.0) {
        sim_size = (uint64_t)llround((double)size * R);
        if (sim_size < 1)
            sim_size = 1;
    }
    if (sim_size == 0) {
        snprintf(err, errlen, "cache size must be positive");
        return -1;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->policy, sizeof out->policy, "%s", ops->name);
    out->size = size;
    out->sim_size = sim_size;
    out->sample_rate = R;
    out->trace_requests = t->n;

    sim_cache c;
    if (cache_setup(&c, ops, cfg, sim_size, R, ids ? nd : 0, err, errlen) < 0)
        return -1;
    int meta = (cfg->unit_bytes && cfg->slab && cfg->policy_metadata) ? ops->meta_delta : 0;
    uint64_t warm = (uint64_t)(cfg->warmup_fraction * (double)t->n);
    costvec cv = {0};
    costvec *cvp = t->costs ? &cv : NULL;
    uint64_t hits = 0, reqs = 0, bytes_req = 0, bytes_hit = 0;
    double cost_total = 0;

    double t0 = now_s(), c0 = cpu_s();
    /* all GETs and their bytes, sampled or not: the expected sample is R times these */
    uint64_t all_gets = 0, all_bytes = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t key = t->keys[i];
        if (R < 1.0 && !cfg->presampled) {
            if (i >= warm && (!t->ops || t->ops[i] == SIM_GET)) {
                all_gets++;
                all_bytes += t->sizes && t->sizes[i] ? t->sizes[i] : cfg->default_size;
            }
            if (!sim_sampled(key, R, cfg->sample_salt))
                continue;
        }
        sim_req r;
        build_req(&r, cfg, meta, ids ? ids[i] : key, t->sizes ? t->sizes[i] : 0,
                  t->costs ? t->costs[i] : 1.0, t->ops ? t->ops[i] : SIM_GET);
        if (next && next[i] != UINT32_MAX)
            r.next = next[i];
        r.hkey = key;
        int hit = process(&c, &r);
        if (hit >= 0 && i >= warm) {
            reqs++;
            bytes_req += r.size;
            if (hit) {
                hits++;
                bytes_hit += r.size;
            } else {
                cost_total += r.cost;
                if (cvp)
                    cv_push(cvp, r.cost);
            }
        }
    }
    out->seconds = now_s() - t0;
    out->cpu_seconds = cpu_s() - c0;

    out->requests = reqs;
    out->hits = hits;
    out->hit_ratio = reqs ? (double)hits / (double)reqs : 0.0;
    out->byte_hit_ratio = bytes_req ? (double)bytes_hit / (double)bytes_req : 0.0;
    out->hit_ratio_raw = out->hit_ratio;
    out->byte_hit_ratio_raw = out->byte_hit_ratio;
    int filtered = R < 1.0 && !cfg->presampled;
    out->expected_requests = filtered ? R * (double)all_gets : (double)reqs;
    if (filtered && cfg->sample_adjust && all_gets) {
        /*
         * SHARDS_adj (Waldspurger et al., FAST'15): the sample holds more or fewer requests
         * than R x N mostly because a few very hot keys fell in or out of it; those are hits
         * at any useful size, so the difference is credited to (or taken from) the hits.
         */
        double en = R * (double)all_gets, eb = R * (double)all_bytes;
        double h = ((double)hits + en - (double)reqs) / en;
        double b = ((double)bytes_hit + eb - (double)bytes_req) / eb;
        out->hit_ratio = h < 0 ? 0 : h > 1 ? 1 : h;
        out->byte_hit_ratio = b < 0 ? 0 : b > 1 ? 1 : b;
    }
    out->miss_cost_total = cost_total / R;
    fill_costs(out, cvp, reqs, reqs - hits);
    out->evictions = c.evictions;
    out->max_objects = c.max_resident;
    free(cv.v);
    cache_teardown(&c);
    return 0;
}

int sim_simulate(const sim_trace *t, const char *policy, uint64_t size, const sim_config *cfg,
                sim_result *out, char *err, size_t errlen)
{
    const sim_policy_ops *ops = sim_policy_find(policy);
    uint32_t *next = NULL;
    if (ops && ops->needs_future && !(next = next_uses(t, NULL, 0, err, errlen)))
        return -1;
    int rc = run_one(t, NULL, 0, next, policy, size, cfg, out, err, errlen);
    free(next);
    return rc;
}

/* Dense ids for the keys (first-seen order). NULL when out of memory or the trace has
 * more than 2^32-2 distinct keys; callers then fall back to hashing. */
static uint32_t *dense_ids(const sim_trace *t, uint64_t *nd)
{
    sim_table tab;
    uint32_t *ids = malloc((t->n ? t->n : 1) * sizeof *ids);
    if (!ids || sim_table_init(&tab, 1024) < 0) {
        free(ids);
        return NULL;
    }
    uint32_t next = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t v = sim_table_get(&tab, t->keys[i]);
        if (v == SIM_NIL) {
            if (next == SIM_NIL - 1 || sim_table_put(&tab, t->keys[i], next) < 0) {
                free(ids);
                sim_table_free(&tab);
                return NULL;
            }
            v = next++;
        }
        ids[i] = v;
    }
    sim_table_free(&tab);
    *nd = next;
    return ids;
}

/* ---- thread pool over the (policy, size) grid ---- */

typedef struct grid {
    const sim_trace *t;
    const char *const *policies;
    int np;
    const uint64_t *sizes;
    int ns;
    const sim_config *cfg;
    sim_result *out;
    const uint32_t *ids;
    uint64_t nd;
    const uint32_t *nextuse; /* next-use positions, when an offline policy is in the grid */
    int *order;
    int next;           /* atomic job cursor */
    int failed;
    char err[256];
    pthread_mutex_t lock;
} grid;

static void *worker(void *arg)
{
    grid *g = arg;
    for (;;) {
        int j = __atomic_fetch_add(&g->next, 1, __ATOMIC_RELAXED);
        if (j >= g->np * g->ns)
            return NULL;
        int k = g->order[j];
        int p = k / g->ns, s = k % g->ns;
        char err[256];
        if (run_one(g->t, g->ids, g->nd, sim_policy_find(g->policies[p])->needs_future ? g->nextuse : NULL,
                    g->policies[p], g->sizes[s], g->cfg, &g->out[k], err, sizeof err) < 0) {
            pthread_mutex_lock(&g->lock);
            if (!g->failed)
                snprintf(g->err, sizeof g->err, "%s", err);
            g->failed = 1;
            pthread_mutex_unlock(&g->lock);
        }
    }
}

int sim_simulate_many(const sim_trace *t, const char *const *policies, int np,
                     const uint64_t *sizes, int ns, const sim_config *cfg, int threads,
                     sim_result *out, char *err, size_t errlen)
{
    for (int p = 0; p < np; p++) {
        if (!sim_policy_find(policies[p])) {
            snprintf(err, errlen, "unknown policy '%s'", policies[p]);
            return -1;
        }
    }
    int jobs = np * ns;
    if (jobs == 0)
        return 0;
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > jobs)
        threads = jobs;
    grid g = {.t = t, .policies = policies, .np = np, .sizes = sizes, .ns = ns, .cfg = cfg, .out = out};
    pthread_mutex_init(&g.lock, NULL);
    uint32_t *ids = NULL;
    if (jobs > 1) {
        ids = dense_ids(t, &g.nd);   /* one hashing pass instead of one per run */
        g.ids = ids;
    }
    uint32_t *next = NULL;
    for (int p = 0; p < np && !next; p++) {
        if (sim_policy_find(policies[p])->needs_future && !(next = next_uses(t, ids, g.nd, err, errlen))) {
            free(ids);
            pthread_mutex_destroy(&g.lock);
            return -1;
        }
    }
    g.nextuse = next;
    g.order = malloc(sizeof(int) * (size_t)jobs);
    if (!g.order) {
        free(ids);
        free(next);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* largest sizes first: they take longest, so the tail of the schedule stays short */
    for (int j = 0; j < jobs; j++)
        g.order[j] = j;
    for (int a = 1; a < jobs; a++) {
        int v = g.order[a], b = a;
        while (b > 0 && sizes[g.order[b - 1] % ns] < sizes[v % ns]) {
            g.order[b] = g.order[b - 1];
            b--;
        }
        g.order[b] = v;
    }
    if (threads == 1) {
        worker(&g);
    } else {
        pthread_t *th = malloc(sizeof(pthread_t) * (size_t)threads);
        int started = 0;
        for (int i = 0; th && i < threads; i++)
            if (pthread_create(&th[i], NULL, worker, &g) == 0)
                started++;
        if (started == 0)
            worker(&g);
        for (int i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        free(th);
    }
    free(g.order);
    free(ids);
    free(next);
    pthread_mutex_destroy(&g.lock);
    if (g.failed) {
        snprintf(err, errlen, "%s", g.err);
        return -1;
    }
    return 0;
}
