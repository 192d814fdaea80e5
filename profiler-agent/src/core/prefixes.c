#include "prefixes.h"

#include <stdlib.h>
#include <string.h>

typedef struct pslot {
    hc_sdc *curve;              /* created on the slot's first use */
    uint64_t reads, hits, sets; /* window */
    hc_leave_counts left;
} pslot;

struct hc_prefixes {
    hc_prefixes_config cfg;
    hc_topk *rank;
    pslot *slot;
    hc_prefix_stat total;
};

void hc_prefixes_config_default(hc_prefixes_config *c)
{
    c->top_n = 20;
    c->slots = 0;
    c->keys_per_prefix = 2048;
    c->rate = 1.0;
    c->max_bytes = 64.0 * 1024 * 1024;
    c->cells = 1000;
    c->seed = 0;
}

hc_prefixes *hc_prefixes_new(const hc_prefixes_config *cin, const char **err)
{
    hc_prefixes_config c;
    if (cin) c = *cin; else hc_prefixes_config_default(&c);
    if (c.slots == 0)
        c.slots = 2 * c.top_n;
    const char *e = NULL;
    if (c.top_n < 1 || c.top_n > HC_PREFIXES_MAX_TOP) e = "prefix top-N must be 1..100";
    else if (c.slots < c.top_n || c.slots > 4 * HC_PREFIXES_MAX_TOP) e = "prefix slots must be top-N..400";
    else if (!(c.max_bytes > 0)) e = "prefix curve range must be > 0";
    if (e) {
        if (err) *err = e;
        return NULL;
    }
    hc_prefixes *p = calloc(1, sizeof *p);
    if (!p || !(p->rank = hc_topk_new(c.slots)) || !(p->slot = calloc(c.slots, sizeof *p->slot))) {
        hc_prefixes_free(p);
        if (err) *err = "out of memory";
        return NULL;
    }
    p->cfg = c;
    return p;
}

void hc_prefixes_free(hc_prefixes *p)
{
    if (!p) return;
    if (p->slot)
        for (uint32_t i = 0; i < p->cfg.slots; i++)
            hc_sdc_free(p->slot[i].curve);
    free(p->slot);
    hc_topk_free(p->rank);
    free(p);
}

static pslot *take(hc_prefixes *p, uint32_t s, int replaced)
{
    pslot *ps = &p->slot[s];
    if (replaced) {
        ps->reads = ps->hits = ps->sets = 0;
        memset(&ps->left, 0, sizeof ps->left);
        if (ps->curve)
            hc_sdc_clear(ps->curve);
    }
    if (!ps->curve) {
        hc_sdc_config c;
        hc_sdc_config_default(&c);
        c.rate = p->cfg.rate;
        c.max_keys = p->cfg.keys_per_prefix;
        c.ttl_aware = 1;
        c.max_size = p->cfg.max_bytes;
        c.cells = p->cfg.cells;
        c.seed = p->cfg.seed;
        ps->curve = hc_sdc_new(&c, NULL); /* NULL on memory shortage: counts still work */
    }
    return ps;
}

static pslot *find(hc_prefixes *p, uint64_t prefix)
{
    long s = hc_topk_find(p->rank, prefix);
    return s < 0 ? NULL : &p->slot[s];
}

void hc_prefixes_read(hc_prefixes *p, uint64_t prefix, uint64_t key, int hit, uint32_t size,
                      int64_t now_us)
{
    int replaced;
    uint32_t s = hc_topk_add(p->rank, prefix, 1.0, &replaced);
    pslot *ps = take(p, s, replaced);
    ps->reads++;
    ps->hits += hit != 0;
    p->total.reads++;
    p->total.hits += hit != 0;
    if (ps->curve)
        hc_sdc_read(ps->curve, key, size, now_us);
}

void hc_prefixes_write(hc_prefixes *p, uint64_t prefix, uint64_t key, uint32_t size,
                       int64_t now_us, int64_t expire_us)
{
    p->total.sets++;
    pslot *ps = find(p, prefix);
    if (!ps)
        return;
    ps->sets++;
    if (ps->curve)
        hc_sdc_write(ps->curve, key, size, now_us, expire_us);
}

void hc_prefixes_left(hc_prefixes *p, uint64_t prefix, uint64_t key, int how)
{
    pslot *ps = find(p, prefix);
    uint64_t *tc = how == 0 ? &p->total.left.expired : how == 1 ? &p->total.left.evicted
                                                                : &p->total.left.deleted;
    (*tc)++;
    if (!ps)
        return;
    if (how == 0) ps->left.expired++;
    else if (how == 1) ps->left.evicted++;
    else ps->left.deleted++;
    if (!ps->curve)
        return;
    /* expiry is applied inside the TTL-aware curve by its own heap; an eviction keeps the
     * key in the model; a delete removes it */
    if (how == 1)
        hc_sdc_evicted(ps->curve, key);
    else if (how == 2)
        hc_sdc_remove(ps->curve, key);
}

int hc_prefixes_set_range(hc_prefixes *p, double max_bytes)
{
    if (!(max_bytes > 0))
        return -1;
    p->cfg.max_bytes = max_bytes;
    for (uint32_t i = 0; i < p->cfg.slots; i++)
        if (p->slot[i].curve)
            hc_sdc_set_range(p->slot[i].curve, max_bytes);
    return 0;
}

uint32_t hc_prefixes_top(const hc_prefixes *p, hc_prefix_stat *out, uint32_t max)
{
    uint32_t idx[4 * HC_PREFIXES_MAX_TOP];
    uint32_t n = hc_topk_sorted(p->rank, idx, p->cfg.slots);
    /* rank by this window's reads (the sketch carries decayed history) */
    uint32_t m = 0;
    hc_prefix_stat all[4 * HC_PREFIXES_MAX_TOP];
    for (uint32_t i = 0; i < n; i++) {
        const pslot *ps = &p->slot[idx[i]];
        hc_topk_slot *ts = hc_topk_slot_at(p->rank, idx[i]);
        if (ps->reads == 0)
            continue;
        hc_prefix_stat *o = &all[m++];
        memset(o, 0, sizeof *o);
        o->prefix = ts->key;
        o->reads = ps->reads;
        o->hits = ps->hits;
        o->sets = ps->sets;
        o->left = ps->left;
        o->count_err = ts->err;
        o->slot = (int)idx[i];
        if (ps->curve) {
            hc_sdc_stats st;
            hc_sdc_stats_get(ps->curve, &st);
            o->resident_bytes = st.resident_weight;
        }
    }
    /* insertion sort by reads, descending (m <= 400) */
    for (uint32_t i = 1; i < m; i++) {
        hc_prefix_stat x = all[i];
        uint32_t j = i;
        while (j > 0 && all[j - 1].reads < x.reads) {
            all[j] = all[j - 1];
            j--;
        }
        all[j] = x;
    }
    if (max > p->cfg.top_n)
        max = p->cfg.top_n;
    if (m > max)
        m = max;
    memcpy(out, all, m * sizeof *out);
    return m;
}

const hc_sdc *hc_prefixes_curve(const hc_prefixes *p, int slot)
{
    return slot >= 0 && (uint32_t)slot < p->cfg.slots ? p->slot[slot].curve : NULL;
}

void hc_prefixes_totals(const hc_prefixes *p, hc_prefix_stat *out)
{
    *out = p->total;
    out->resident_bytes = 0;
    for (uint32_t i = 0; i < p->cfg.slots; i++)
        if (p->slot[i].curve) {
            hc_sdc_stats st;
            hc_sdc_stats_get(p->slot[i].curve, &st);
            out->resident_bytes += st.resident_weight;
        }
}

void hc_prefixes_window(hc_prefixes *p)
{
    for (uint32_t i = 0; i < p->cfg.slots; i++) {
        pslot *ps = &p->slot[i];
        ps->reads = ps->hits = ps->sets = 0;
        memset(&ps->left, 0, sizeof ps->left);
        if (ps->curve)
            hc_sdc_reset(ps->curve);
    }
    memset(&p->total, 0, sizeof p->total);
    hc_topk_scale(p->rank, 0.5);
}

void hc_prefixes_clear(hc_prefixes *p)
{
    hc_prefixes_window(p);
    hc_topk_scale(p->rank, 0);
    for (uint32_t i = 0; i < p->cfg.slots; i++)
        if (p->slot[i].curve)
            hc_sdc_clear(p->slot[i].curve);
}

size_t hc_prefixes_bytes(const hc_prefixes *p)
{
    size_t b = sizeof *p + hc_topk_bytes(p->rank) + p->cfg.slots * sizeof *p->slot;
    for (uint32_t i = 0; i < p->cfg.slots; i++)
        if (p->slot[i].curve) {
            hc_sdc_stats st;
            hc_sdc_stats_get(p->slot[i].curve, &st);
            b += st.bytes;
        }
    return b;
}

uint32_t hc_prefixes_top_n(const hc_prefixes *p) { return p->cfg.top_n; }
