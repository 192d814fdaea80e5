#include "snapshot_bd.h"

#include <math.h>
#include <stdio.h>

/* 100 points of an sdcurve; sizes integral when the step is >= 1 (bytes always are). Hit
 * ratios never decrease (an LRU curve); estimator noise cannot make them. */
static json_t *points(const hc_sdc *s)
{
    double sz[HC_CURVE_POINTS], hr[HC_CURVE_POINTS];
    hc_sdc_curve(s, HC_CURVE_POINTS, sz, hr);
    int as_int = sz[0] >= 1.0;
    json_t *a = json_array();
    double best = 0;
    for (int i = 0; i < HC_CURVE_POINTS; i++) {
        double h = isfinite(hr[i]) ? hr[i] : 0;
        if (h < best)
            h = best;
        best = h;
        json_t *x = as_int ? json_integer((json_int_t)llround(sz[i]))
                           : json_real(round(sz[i] * 1000.0) / 1000.0);
        json_array_append_new(a, json_pack("[o,f]", x, round(h * 1e6) / 1e6));
    }
    return a;
}

static json_t *left_json(const hc_leave_counts *l)
{
    return json_pack("{s:I,s:I,s:I}", "expired", (json_int_t)l->expired, "evicted",
                     (json_int_t)l->evicted, "deleted", (json_int_t)l->deleted);
}

/* A prefix's TTL what-if (core/ttlwhatif): per column (0: each store's own TTL, then the grid
 * `ttl_whatif_ttls_s`), the hit ratio TTL allows and the byte-seconds its live items held in
 * the window. NULL when no read of a known sampled key was seen. */
static json_t *ttlw_json(const ag_bd *b, uint16_t id)
{
    const hc_ttlw_prefix *p = hc_ttlw_get(b->tw, id);
    if (!p || p->sampled_reads == 0 || p->reads <= 0)
        return NULL;
    json_t *h = json_array(), *l = json_array();
    for (int c = 0; c < HC_TTLW_COLS; c++) {
        double r = p->hits[c] / p->reads;
        json_array_append_new(h, json_real(round((r > 1 ? 1 : r) * 1e6) / 1e6));
        json_array_append_new(l, json_integer((json_int_t)llround(p->live[c])));
    }
    double m = p->real_hits / p->reads;
    return json_pack("{s:I,s:f,s:f,s:o,s:o}", "sampled_reads", (json_int_t)p->sampled_reads,
                     "sample_rate", hc_ttlw_rate(b->tw), "sampled_hit_ratio",
                     round((m > 1 ? 1 : m) * 1e6) / 1e6, "hit_ratio", h, "live_byte_s", l);
}

static json_t *hot_list(const ag_config *cfg, const ag_bd *b, hc_topk *t, ag_keys *keys,
                        int by_bytes)
{
    uint32_t idx[AG_HOT_MAX];
    uint32_t n = hc_topk_sorted(t, idx, cfg->hot_keys < AG_HOT_MAX ? cfg->hot_keys : AG_HOT_MAX);
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        hc_topk_slot *s = hc_topk_slot_at(t, idx[i]);
        /* requests come from the request sketch when the key is there (exact bound), else
         * from the bytes sketch divided by the size */
        long r = hc_topk_find(b->hot, s->key);
        double req = r >= 0 ? hc_topk_slot_at(b->hot, (uint32_t)r)->count
                            : (s->aux ? s->count / (double)s->aux : s->count);
        double err = r >= 0 ? hc_topk_slot_at(b->hot, (uint32_t)r)->err : 0;
        uint64_t size = by_bytes ? s->aux : s->aux ? s->aux : 0;
        char name[AG_HOT_KEY_MAX + 1];
        int clear = ag_keys_clear_name(keys, s->key, name, sizeof name);
        if (!clear)
            snprintf(name, sizeof name, "xxh3:%016llx", (unsigned long long)s->key);
        json_array_append_new(
            a, json_pack("{s:s,s:I,s:I,s:I,s:b}", "key", name, "requests",
                         (json_int_t)llround(req), "bytes", (json_int_t)size, "error",
                         (json_int_t)llround(err), "hashed", !clear));
    }
    return a;
}

void ag_snapshot_breakdown(json_t *snap, const ag_config *cfg, const ag_feed *feed,
                           ag_keys *keys)
{
    const ag_bd *b = &feed->bd;
    if (!b->cfg.enabled)
        return;
    /* per class: TTL-aware curve beside the LRU points, and how items left */
    json_t *classes = json_object_get(snap, "classes");
    size_t i;
    json_t *co;
    json_array_foreach(classes, i, co) {
        int c = (int)json_integer_value(json_object_get(co, "id"));
        if (c <= 0 || c >= HC_MAX_CLASSES)
            continue;
        json_object_set_new(co, "left", left_json(&b->left[c]));
        if (b->cls[c]) {
            hc_sdc_stats st;
            hc_sdc_stats_get(b->cls[c], &st);
            if (st.sampled_reads > 0)
                json_object_set_new(json_object_get(co, "curve"), "ttl_points", points(b->cls[c]));
        }
    }
    /* merged, in bytes */
    hc_sdc_stats sa, so;
    hc_sdc_stats_get(b->all_ttl, &sa);
    hc_sdc_stats_get(b->all_obl, &so);
    if (b->have_range && sa.sampled_reads > 0) {
        json_object_set_new(snap, "ttl_points", points(b->all_ttl));
        json_object_set_new(
            snap, "ttl",
            json_pack("{s:s,s:o,s:I,s:I,s:f,s:I,s:I,s:s}", "unit", "bytes", "oblivious_points",
                      points(b->all_obl), "working_set_bytes", (json_int_t)llround(sa.working_set),
                      "working_set_bytes_oblivious", (json_int_t)llround(so.working_set),
                      "sample_rate", sa.rate, "sampled_reads", (json_int_t)sa.sampled_reads,
                      "expired_reads", (json_int_t)b->expired_reads, "gaps",
                      "touch/gat TTL changes are not in the watch stream"));
    }
    /* prefixes */
    char rule[300];
    if (cfg->prefix_regex[0])
        snprintf(rule, sizeof rule, "regex %s", cfg->prefix_regex);
    else
        snprintf(rule, sizeof rule, "delimiter '%s' depth %u", cfg->prefix_delimiter,
                 cfg->prefix_depth);
    json_object_set_new(snap, "prefix_rule", json_string(rule));
    hc_prefix_stat top[HC_PREFIXES_MAX_TOP], tot;
    uint32_t n = hc_prefixes_top(b->pfx, top, HC_PREFIXES_MAX_TOP);
    hc_prefixes_totals(b->pfx, &tot);
    /* Memory held per prefix is memcached's stored bytes (stats `bytes`, measured.bytes) split in
     * proportion to the sampled keys' resident bytes: the estimate is in slab chunks and keeps
     * items whose eviction the stream did not show (page moves, lost lines), so on its own its
     * sum can pass what memcached holds. Below memcached's figure (keys stored before the agent
     * started are not known to it) it is left as estimated. Rounded down: the sum never passes. */
    double stored = (double)json_integer_value(json_object_get(json_object_get(snap, "measured"), "bytes"));
    double scale = tot.resident_bytes > stored && tot.resident_bytes > 0 ? stored / tot.resident_bytes : 1.0;
    json_t *arr = json_array();
    uint64_t r_sum = 0, h_sum = 0;
    hc_leave_counts l_sum = {0, 0, 0};
    double b_sum = 0;
    for (uint32_t j = 0; j < n; j++) {
        char name[HC_PREFIX_MAX + 16];
        ag_keys_prefix_name(keys, (uint16_t)top[j].prefix, name, sizeof name);
        if (!name[0])
            snprintf(name, sizeof name, "(none)");
        const hc_sdc *cv = hc_prefixes_curve(b->pfx, top[j].slot);
        json_t *o = json_pack(
            "{s:s,s:I,s:f,s:I,s:o,s:I,s:o}", "prefix", name, "requests", (json_int_t)top[j].reads,
            "hit_ratio", top[j].reads ? (double)top[j].hits / (double)top[j].reads : 0.0, "bytes",
            (json_int_t)floor(top[j].resident_bytes * scale), "points",
            cv && b->have_range ? points(cv) : json_array(), "sets", (json_int_t)top[j].sets,
            "left", left_json(&top[j].left));
        json_t *tw = ttlw_json(b, (uint16_t)top[j].prefix);
        if (tw)
            json_object_set_new(o, "ttl_whatif", tw);
        json_array_append_new(arr, o);
        r_sum += top[j].reads;
        h_sum += top[j].hits;
        b_sum += top[j].resident_bytes;
        l_sum.expired += top[j].left.expired;
        l_sum.evicted += top[j].left.evicted;
        l_sum.deleted += top[j].left.deleted;
    }
    json_object_set_new(snap, "prefixes", arr);
    json_t *grid = json_array();
    for (int g = 0; g < HC_TTLW_NTTL; g++)
        json_array_append_new(grid, json_integer(HC_TTLW_TTLS[g]));
    json_object_set_new(snap, "ttl_whatif_ttls_s", grid);
    uint64_t ro = tot.reads - r_sum, ho = tot.hits - h_sum;
    hc_leave_counts lo = {tot.left.expired - l_sum.expired, tot.left.evicted - l_sum.evicted,
                          tot.left.deleted - l_sum.deleted};
    json_object_set_new(
        snap, "prefix_other",
        json_pack("{s:I,s:o,s:I,s:o}", "requests", (json_int_t)ro, "hit_ratio",
                  ro ? json_real((double)ho / (double)ro) : json_null(), "bytes",
                  (json_int_t)floor((tot.resident_bytes > b_sum ? tot.resident_bytes - b_sum : 0) * scale),
                  "left", left_json(&lo)));
    /* hot keys */
    json_object_set_new(snap, "hot_keys", hot_list(cfg, b, b->hot, keys, 0));
    json_object_set_new(snap, "hot_keys_by_bytes", hot_list(cfg, b, b->hot_bytes, keys, 1));
    json_object_set_new(snap, "hot_keys_hashed", json_boolean(!cfg->hot_keys_clear));
    json_t *diag = json_object_get(snap, "diagnostics");
    if (diag) {
        json_object_set_new(diag, "breakdown_bytes", json_integer((json_int_t)ag_bd_bytes(b)));
        json_object_set_new(diag, "prefix_unregistered",
                            json_integer((json_int_t)atomic_load(&keys->overflow)));
        json_object_set_new(diag, "prefix_cut", json_integer((json_int_t)atomic_load(&keys->cut)));
        json_object_set_new(diag, "prefix_lost", json_integer((json_int_t)b->pfx_lost));
        json_object_set_new(diag, "prefix_bytes_estimated",
                            json_integer((json_int_t)llround(tot.resident_bytes)));
        json_object_set_new(diag, "prefix_bytes_scale", json_real(scale));
    }
}
