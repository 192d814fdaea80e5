#include "sdcurve.h"
#include "trmix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Entries are dense (swap-remove); the hash index maps key -> entry + 1 (0 = empty, linear
 * probing with backward-shift delete). Positions in the Fenwick tree only grow; when they run
 * out, live entries are renumbered in access order (compaction), so the tree stays 4x the
 * entry capacity. The expiry heap is lazy: a node is live iff its key is tracked with that
 * same expiry; stale nodes are dropped when popped or when the heap is rebuilt. */

typedef struct heapnode {
    int64_t exp;
    uint64_t key;
} heapnode;

struct hc_sdc {
    hc_sdc_config cfg;
    double rate, inv_rate;
    uint64_t thresh;
    /* entries */
    uint64_t *key;
    uint32_t *pos, *w;
    int64_t *exp;
    uint8_t *res;
    uint32_t n, ecap;
    /* index */
    uint32_t *idx;
    uint32_t imask;
    /* Fenwick over positions 1..tcap */
    int64_t *fw;
    uint32_t tcap, clock;
    int64_t total_w, resident_w;
    /* expiry heap */
    heapnode *heap;
    uint32_t hn, hcap;
    /* histogram */
    double *hist;        /* cells, weighted by 1/R */
    double beyond;       /* sampled reads past the range or cold */
    double cellw;
    hc_sdc_stats st;
};

void hc_sdc_config_default(hc_sdc_config *c)
{
    c->rate = 1.0;
    c->max_keys = 8192;
    c->ttl_aware = 1;
    c->max_size = 1.0;
    c->cells = 2000;
    c->seed = 0;
}

static uint64_t shash(const hc_sdc *s, uint64_t key)
{
    return tr_mix64(key ^ s->cfg.seed ^ 0x5d1c0ffee5d1c0ffULL);
}

static void set_rate(hc_sdc *s, double r)
{
    s->rate = r >= 1.0 ? 1.0 : r;
    s->inv_rate = 1.0 / s->rate;
    s->thresh = s->rate >= 1.0 ? UINT64_MAX : (uint64_t)ldexp(s->rate, 64);
}

static int sampled(const hc_sdc *s, uint64_t key)
{
    return s->rate >= 1.0 || shash(s, key) < s->thresh;
}

/* ---- Fenwick ---- */
static void fw_add(hc_sdc *s, uint32_t p, int64_t v)
{
    for (; p <= s->tcap; p += p & -p)
        s->fw[p] += v;
}
static int64_t fw_prefix(const hc_sdc *s, uint32_t p)
{
    int64_t r = 0;
    for (; p > 0; p -= p & -p)
        r += s->fw[p];
    return r;
}

/* ---- index ---- */
static uint32_t islot(const hc_sdc *s, uint64_t key) { return (uint32_t)tr_mix64(key) & s->imask; }

static long find(const hc_sdc *s, uint64_t key)
{
    for (uint32_t i = islot(s, key);; i = (i + 1) & s->imask) {
        uint32_t e = s->idx[i];
        if (!e)
            return -1;
        if (s->key[e - 1] == key)
            return (long)(e - 1);
    }
}

static void index_put(hc_sdc *s, uint64_t key, uint32_t e)
{
    uint32_t i = islot(s, key);
    while (s->idx[i] && s->key[s->idx[i] - 1] != key)
        i = (i + 1) & s->imask;
    s->idx[i] = e + 1;
}

static void index_del(hc_sdc *s, uint64_t key)
{
    uint32_t i = islot(s, key);
    while (s->idx[i] && s->key[s->idx[i] - 1] != key)
        i = (i + 1) & s->imask;
    if (!s->idx[i])
        return;
    /* backward-shift delete */
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & s->imask;
        if (!s->idx[j])
            break;
        uint32_t home = islot(s, s->key[s->idx[j] - 1]);
        /* can idx[j] move to i? yes iff home is not in (i, j] cyclically */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            s->idx[i] = s->idx[j];
            i = j;
        }
    }
    s->idx[i] = 0;
}

/* ---- heap ---- */
static void heap_push(hc_sdc *s, int64_t exp, uint64_t key)
{
    if (s->hn == s->hcap)
        return; /* cannot happen: rebuilt before it fills (see maybe_rebuild_heap) */
    uint32_t i = s->hn++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (s->heap[p].exp <= exp)
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = (heapnode){exp, key};
}

static void heap_sift_down(hc_sdc *s, uint32_t i)
{
    heapnode x = s->heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= s->hn)
            break;
        if (c + 1 < s->hn && s->heap[c + 1].exp < s->heap[c].exp)
            c++;
        if (s->heap[c].exp >= x.exp)
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    s->heap[i] = x;
}

static void heap_pop(hc_sdc *s)
{
    s->heap[0] = s->heap[--s->hn];
    if (s->hn)
        heap_sift_down(s, 0);
}

static void heap_rebuild(hc_sdc *s)
{
    s->hn = 0;
    for (uint32_t e = 0; e < s->n; e++)
        if (s->exp[e] > 0)
            s->heap[s->hn++] = (heapnode){s->exp[e], s->key[e]};
    for (uint32_t i = s->hn / 2; i-- > 0;)
        heap_sift_down(s, i);
}

/* ---- entries ---- */
static void entry_remove(hc_sdc *s, uint32_t e)
{
    fw_add(s, s->pos[e], -(int64_t)s->w[e]);
    s->total_w -= s->w[e];
    if (s->res[e])
        s->resident_w -= s->w[e];
    index_del(s, s->key[e]);
    uint32_t last = --s->n;
    if (e != last) {
        s->key[e] = s->key[last];
        s->pos[e] = s->pos[last];
        s->w[e] = s->w[last];
        s->exp[e] = s->exp[last];
        s->res[e] = s->res[last];
        index_put(s, s->key[e], e);
    }
}

static int cmp_pos(const void *a, const void *b, void *ctx)
{
    const uint32_t *pos = ctx;
    uint32_t x = pos[*(const uint32_t *)a], y = pos[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* Renumber live entries 1..n in access order, drop those not sampled at the current rate, and
 * rebuild the tree, the index and the heap. O(n + clock); amortised over >= tcap/2 accesses.
 * Positions are distinct and at most clock (only the entry touch() is moving has 0, and it
 * comes first), so access order is read off a position -> entry table in one sweep instead of
 * a sort (qsort_r was ~100 instructions a line at full speed). */
static void rebuild(hc_sdc *s)
{
    uint32_t *ord = malloc((size_t)s->n * sizeof *ord + 1);
    uint32_t *at = calloc((size_t)s->clock + 1, sizeof *at); /* position -> entry + 1 */
    uint32_t m = 0, want = 0;
    if (!ord || !at) {
        free(ord);
        free(at);
        return; /* keep going with the old numbering; clock is checked by the caller */
    }
    for (uint32_t e = 0; e < s->n; e++) {
        if (!sampled(s, s->key[e]))
            continue;
        want++;
        if (s->pos[e] == 0)
            ord[m++] = e;
        else if (s->pos[e] <= s->clock && !at[s->pos[e]])
            at[s->pos[e]] = e + 1;
    }
    for (uint32_t p = 1; p <= s->clock; p++)
        if (at[p])
            ord[m++] = at[p] - 1;
    free(at);
    if (m != want) { /* positions not as above (never seen): sort them */
        m = 0;
        for (uint32_t e = 0; e < s->n; e++)
            if (sampled(s, s->key[e]))
                ord[m++] = e;
        qsort_r(ord, m, sizeof *ord, cmp_pos, s->pos);
    }
    /* permute entries into access order (dense, new arrays in place via temporaries) */
    uint64_t *k2 = malloc((size_t)m * sizeof *k2 + 1);
    uint32_t *w2 = malloc((size_t)m * sizeof *w2 + 1);
    int64_t *x2 = malloc((size_t)m * sizeof *x2 + 1);
    uint8_t *r2 = malloc((size_t)m + 1);
    if (!k2 || !w2 || !x2 || !r2) {
        free(ord); free(k2); free(w2); free(x2); free(r2);
        return;
    }
    for (uint32_t i = 0; i < m; i++) {
        uint32_t e = ord[i];
        k2[i] = s->key[e]; w2[i] = s->w[e]; x2[i] = s->exp[e]; r2[i] = s->res[e];
    }
    memset(s->idx, 0, ((size_t)s->imask + 1) * sizeof *s->idx);
    memset(s->fw, 0, ((size_t)s->tcap + 1) * sizeof *s->fw);
    s->n = m;
    s->total_w = s->resident_w = 0;
    for (uint32_t i = 0; i < m; i++) {
        s->key[i] = k2[i]; s->w[i] = w2[i]; s->exp[i] = x2[i]; s->res[i] = r2[i];
        s->pos[i] = i + 1;
        s->fw[i + 1] = w2[i];
        s->total_w += w2[i];
        if (r2[i])
            s->resident_w += w2[i];
        index_put(s, k2[i], i);
    }
    /* the tree in one pass, each node's sum added to its parent: the sums m fw_adds make */
    for (uint32_t p = 1; p <= s->tcap; p++) {
        uint32_t up = p + (p & -p);
        if (up <= s->tcap)
            s->fw[up] += s->fw[p];
    }
    s->clock = m;
    free(ord); free(k2); free(w2); free(x2); free(r2);
    heap_rebuild(s);
}

/* Capacity for ecap entries: tree 4x, index 4x (load <= 1/4), heap 2x + slack. */
static int alloc_cap(hc_sdc *s, uint32_t ecap)
{
    uint32_t tcap = ecap * 4, icap = 64, hcap = ecap * 2 + 64;
    while (icap < ecap * 4)
        icap *= 2; /* power of two: the index is masked */
    uint64_t *k = realloc(s->key, (size_t)ecap * sizeof *k);
    if (k) s->key = k;
    uint32_t *p = realloc(s->pos, (size_t)ecap * sizeof *p);
    if (p) s->pos = p;
    uint32_t *w = realloc(s->w, (size_t)ecap * sizeof *w);
    if (w) s->w = w;
    int64_t *x = realloc(s->exp, (size_t)ecap * sizeof *x);
    if (x) s->exp = x;
    uint8_t *r = realloc(s->res, (size_t)ecap);
    if (r) s->res = r;
    heapnode *h = realloc(s->heap, (size_t)hcap * sizeof *h);
    if (h) s->heap = h;
    uint32_t *ix = calloc(icap, sizeof *ix);
    int64_t *fw = calloc((size_t)tcap + 1, sizeof *fw);
    if (!k || !p || !w || !x || !r || !h || !ix || !fw) {
        free(ix);
        free(fw);
        return -1;
    }
    free(s->idx);
    free(s->fw);
    s->idx = ix;
    s->imask = icap - 1;
    s->fw = fw;
    s->tcap = tcap;
    s->ecap = ecap;
    s->hcap = hcap;
    rebuild(s); /* renumbers into the new tree and index */
    return 0;
}

hc_sdc *hc_sdc_new(const hc_sdc_config *c, const char **err)
{
    hc_sdc_config d;
    if (!c) {
        hc_sdc_config_default(&d);
        c = &d;
    }
    const char *e = NULL;
    if (!(c->rate > 0 && c->rate <= 1)) e = "sample rate must be in (0, 1]";
    else if (c->max_keys < 16 || c->max_keys > (1u << 26)) e = "max keys must be in [16, 2^26]";
    else if (!(c->max_size > 0) || !isfinite(c->max_size)) e = "curve range must be > 0";
    else if (c->cells < 10 || c->cells > 1000000) e = "cells must be in [10, 10^6]";
    if (e) {
        if (err) *err = e;
        return NULL;
    }
    hc_sdc *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    s->cfg = *c;
    set_rate(s, c->rate);
    s->hist = calloc(c->cells, sizeof *s->hist);
    s->cellw = c->max_size / c->cells;
    if (!s->hist || alloc_cap(s, 64) < 0) goto oom;
    return s;
oom:
    hc_sdc_free(s);
    if (err) *err = "out of memory";
    return NULL;
}

void hc_sdc_free(hc_sdc *s)
{
    if (!s) return;
    free(s->key); free(s->pos); free(s->w); free(s->exp); free(s->res);
    free(s->idx); free(s->fw); free(s->heap); free(s->hist);
    free(s);
}

static void expire_until(hc_sdc *s, int64_t now_us)
{
    while (s->hn && s->heap[0].exp <= now_us) {
        heapnode top = s->heap[0];
        heap_pop(s);
        long e = find(s, top.key);
        if (e >= 0 && s->exp[e] == top.exp) {
            entry_remove(s, (uint32_t)e);
            s->st.expired++;
        }
    }
}

void hc_sdc_expire(hc_sdc *s, int64_t now_us)
{
    if (s->cfg.ttl_aware)
        expire_until(s, now_us);
}

/* Halve the rate until the entries fit max_keys (SHARDS fixed size). */
static void fit(hc_sdc *s)
{
    while (s->n > s->cfg.max_keys) {
        set_rate(s, s->rate / 2);
        s->st.rate_halvings++;
        rebuild(s);
    }
}

/* Move (or insert) the key to the top with weight w. Returns the entry. */
static long touch(hc_sdc *s, long e, uint64_t key, uint32_t w)
{
    if (e < 0) {
        if (s->n == s->ecap) {
            uint32_t want = s->ecap * 2;
            if (want > s->cfg.max_keys + 1)
                want = s->cfg.max_keys + 1;
            if (want <= s->ecap || alloc_cap(s, want) < 0)
                return -1;
        }
        e = s->n++;
        s->key[e] = key;
        s->w[e] = 0;
        s->exp[e] = 0;
        s->res[e] = 0;
        s->pos[e] = 0;
        index_put(s, key, (uint32_t)e);
    } else {
        fw_add(s, s->pos[e], -(int64_t)s->w[e]);
        s->total_w -= s->w[e];
        if (s->res[e])
            s->resident_w -= s->w[e];
    }
    if (s->clock >= s->tcap) {
        /* renumber everything but this entry's stale position (it is re-added below) */
        s->pos[e] = 0;
        rebuild(s);
        e = find(s, key);
        if (e < 0)
            return -1;
        fw_add(s, s->pos[e], -(int64_t)s->w[e]);
        s->total_w -= s->w[e];
        if (s->res[e])
            s->resident_w -= s->w[e];
    }
    s->pos[e] = ++s->clock;
    s->w[e] = w;
    fw_add(s, s->pos[e], w);
    s->total_w += w;
    s->res[e] = 1;
    s->resident_w += w;
    return e;
}

void hc_sdc_read(hc_sdc *s, uint64_t key, uint32_t weight, int64_t now_us)
{
    s->st.reads++;
    if (!sampled(s, key))
        return;
    if (s->cfg.ttl_aware)
        expire_until(s, now_us);
    s->st.sampled_reads++;
    s->st.sampled_weight += s->inv_rate;
    long e = find(s, key);
    if (e >= 0) {
        if (weight == 0)
            weight = s->w[e]; /* memcached logs misses with size 0 */
        /* distance: everything touched after it, plus itself at its current weight */
        int64_t after = s->total_w - fw_prefix(s, s->pos[e]);
        double d = ((double)after + weight) * s->inv_rate;
        double ci = ceil(d / s->cellw) - 1;
        if (ci < 0) ci = 0;
        if (ci < s->cfg.cells)
            s->hist[(uint32_t)ci] += s->inv_rate;
        else
            s->beyond += s->inv_rate;
    } else {
        s->beyond += s->inv_rate;
        if (weight == 0)
            return; /* a miss of an unknown key: its refill SET inserts it with a size */
    }
    int64_t keep_exp = e >= 0 ? s->exp[e] : 0;
    e = touch(s, e, key, weight);
    if (e >= 0)
        s->exp[e] = keep_exp; /* a read does not change the expiry (touch/gat are not logged) */
    fit(s);
}

void hc_sdc_write(hc_sdc *s, uint64_t key, uint32_t weight, int64_t now_us, int64_t expire_us)
{
    if (!sampled(s, key))
        return;
    if (s->cfg.ttl_aware)
        expire_until(s, now_us);
    long e = touch(s, find(s, key), key, weight);
    if (e < 0)
        return;
    s->exp[e] = expire_us > 0 ? expire_us : 0;
    if (s->cfg.ttl_aware && expire_us > 0) {
        if (s->hn >= s->hcap)
            heap_rebuild(s); /* drops stale nodes: at most one live node per entry */
        heap_push(s, expire_us, key);
    }
    fit(s);
}

void hc_sdc_remove(hc_sdc *s, uint64_t key)
{
    if (!sampled(s, key))
        return;
    long e = find(s, key);
    if (e >= 0)
        entry_remove(s, (uint32_t)e);
}

void hc_sdc_evicted(hc_sdc *s, uint64_t key)
{
    if (!sampled(s, key))
        return;
    long e = find(s, key);
    if (e >= 0 && s->res[e]) {
        s->res[e] = 0;
        s->resident_w -= s->w[e];
    }
}

int hc_sdc_set_range(hc_sdc *s, double max_size)
{
    if (!(max_size > 0) || !isfinite(max_size))
        return -1;
    s->cfg.max_size = max_size;
    s->cellw = max_size / s->cfg.cells;
    hc_sdc_reset(s);
    return 0;
}

double hc_sdc_max_size(const hc_sdc *s) { return s->cfg.max_size; }

/* SHARDS_adj (Waldspurger et al., FAST'15): the sampled reads' weight differs from the reads
 * actually seen mostly because a hot key is in or out of the sample; the difference goes to
 * the smallest distances, and the denominator is every read. Without it, zipf 0.9 at R = 0.05
 * read 4 pp low at every size (test_sdcurve). */
static double adj(const hc_sdc *s) { return (double)s->st.reads - s->st.sampled_weight; }
static double denom(const hc_sdc *s) { return (double)s->st.reads; }
static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

double hc_sdc_hit_ratio_at(const hc_sdc *s, double size)
{
    if (s->st.sampled_weight <= 0 || size <= 0)
        return 0;
    double x = size / s->cellw;
    if (x > s->cfg.cells)
        x = s->cfg.cells;
    uint32_t full = (uint32_t)x;
    double h = adj(s);
    for (uint32_t i = 0; i < full; i++)
        h += s->hist[i];
    if (full < s->cfg.cells)
        h += s->hist[full] * (x - full);
    return clamp01(h / denom(s));
}

void hc_sdc_curve(const hc_sdc *s, uint32_t npoints, double *size, double *hit_ratio)
{
    double cum = adj(s);
    uint32_t i = 0;
    for (uint32_t p = 0; p < npoints; p++) {
        double x = (p + 1) * s->cfg.max_size / npoints;
        double cx = x / s->cellw;
        if (cx > s->cfg.cells) cx = s->cfg.cells;
        while (i < (uint32_t)cx)
            cum += s->hist[i++];
        double part = i < s->cfg.cells ? s->hist[i] * (cx - i) : 0;
        size[p] = x;
        hit_ratio[p] = s->st.sampled_weight > 0 ? clamp01((cum + part) / denom(s)) : 0;
    }
}

double hc_sdc_size_for(const hc_sdc *s, double target)
{
    if (s->st.sampled_weight <= 0)
        return -1;
    double need = target * denom(s), cum = adj(s);
    if (cum >= need)
        return 0;
    for (uint32_t i = 0; i < s->cfg.cells; i++) {
        if (cum + s->hist[i] >= need && s->hist[i] > 0)
            return (i + (need - cum) / s->hist[i]) * s->cellw;
        cum += s->hist[i];
    }
    return -1;
}

void hc_sdc_reset(hc_sdc *s)
{
    memset(s->hist, 0, s->cfg.cells * sizeof *s->hist);
    s->beyond = 0;
    s->st.reads = s->st.sampled_reads = 0;
    s->st.sampled_weight = 0;
}

void hc_sdc_clear(hc_sdc *s)
{
    hc_sdc_reset(s);
    s->n = 0;
    s->hn = 0;
    s->clock = 0;
    s->total_w = s->resident_w = 0;
    memset(s->idx, 0, ((size_t)s->imask + 1) * sizeof *s->idx);
    memset(s->fw, 0, ((size_t)s->tcap + 1) * sizeof *s->fw);
    set_rate(s, s->cfg.rate);
}

void hc_sdc_stats_get(const hc_sdc *s, hc_sdc_stats *out)
{
    *out = s->st;
    out->tracked_keys = s->n;
    out->rate = s->rate;
    out->resident_weight = (double)s->resident_w * s->inv_rate;
    out->working_set = (double)s->total_w * s->inv_rate;
    out->bytes = sizeof *s + (size_t)s->ecap * (8 + 4 + 4 + 8 + 1) +
                 ((size_t)s->imask + 1) * 4 + ((size_t)s->tcap + 1) * 8 +
                 (size_t)s->hcap * sizeof(heapnode) + s->cfg.cells * sizeof(double);
}
