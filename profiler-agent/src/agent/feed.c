#include "feed.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define CLASS_TABLE_BITS 20   /* 1M keys, 5 MiB */
#define PENDING_BITS 16       /* 64K outstanding misses */
#define MAX_COST_US (60LL * 1000000) /* a refill later than this is not a recompute */

void ag_feed_config_from(const ag_config *c, ag_feed_config *fc)
{
    hc_profile_config_default(&fc->prof);
    fc->prof.buckets = c->buckets;
    fc->prof.estimator = hc_estimator_parse(c->estimator);   /* validated by the config */
    fc->prof.ghost_factor = c->ghost_factor;
    /* The ghost resolves distances beyond N only to one filter's span (N/8 by default, see
     * hc_ghost_filters_for): a reuse cliff above N then stays a cliff. */
    fc->prof.ghost_filters = c->ghost_filters ? c->ghost_filters : hc_ghost_filters_for(c->ghost_factor);
    if (fc->prof.ghost_filters < 2)
        fc->prof.ghost_filters = 2;
    if (c->profile_max_keys > 0) {
        fc->prof.sampling = HC_SAMPLE_FIXED_SIZE;
        fc->prof.sample_max_keys = c->profile_max_keys;
    } else {
        fc->prof.sampling = HC_SAMPLE_OFF;
    }
    fc->prof.emulate_lru = 0;
    fc->prof.evict_budget = (int)c->invalidations;
    fc->ttl_max_keys = c->ttl_max_keys;
    /* The trace goes to the backend and/or, as JSON files, to the snapshot dir. */
    fc->trace_rate = (c->backend_url[0] || c->snapshot_dir[0]) ? c->trace_rate : 0;
    fc->trace_max_records = c->trace_max_records;
    fc->seed = 0x48435f4147454e54ULL;
    fc->bd = (ag_bd_config){.enabled = (int)c->breakdown,
                            .prefix_top = c->prefix_top,
                            .hot_keys = c->hot_keys,
                            .class_keys = 1024,
                            .merged_keys = 32768,
                            .prefix_keys = 1024,
                            .ghost_factor = c->ghost_factor,
                            .seed = fc->seed + 16};
}

int ag_feed_init(ag_feed *f, const ag_feed_config *cfg, const char **err)
{
    memset(f, 0, sizeof *f);
    f->prof = hc_profile_new(&cfg->prof, err);
    if (!f->prof)
        return -1;
    f->cmask = (1u << CLASS_TABLE_BITS) - 1;
    f->ctag = calloc(f->cmask + 1, sizeof *f->ctag);
    f->ccls = calloc(f->cmask + 1, sizeof *f->ccls);
    f->pm_mask = (1u << PENDING_BITS) - 1;
    f->pm_key = calloc(f->pm_mask + 1, sizeof *f->pm_key);
    f->pm_ts = calloc(f->pm_mask + 1, sizeof *f->pm_ts);
    if (!f->ctag || !f->ccls || !f->pm_key || !f->pm_ts ||
        ag_ttl_init(&f->ttl, cfg->ttl_max_keys) < 0 ||
        ag_trace_init(&f->trace, cfg->trace_rate, cfg->trace_max_records,
                      tr_mix64(cfg->seed + 7)) < 0) {
        *err = "out of memory";
        ag_feed_free(f);
        return -1;
    }
    if (ag_bd_init(&f->bd, &cfg->bd, err) < 0) {
        ag_feed_free(f);
        return -1;
    }
    ag_costs_init(&f->costs, cfg->seed + 1);
    return 0;
}

void ag_feed_free(ag_feed *f)
{
    hc_profile_free(f->prof);
    free(f->ctag);
    free(f->ccls);
    free(f->pm_key);
    free(f->pm_ts);
    ag_ttl_free(&f->ttl);
    ag_trace_free(&f->trace);
    ag_bd_free(&f->bd);
    memset(f, 0, sizeof *f);
}

void ag_feed_clear_keys(ag_feed *f)
{
    memset(f->ctag, 0, (f->cmask + 1) * sizeof *f->ctag);
    memset(&f->counters, 0, sizeof f->counters);
    memset(f->pm_key, 0, (f->pm_mask + 1) * sizeof *f->pm_key);
    ag_ttl_clear(&f->ttl);
    ag_bd_clear(&f->bd);
    f->stream_now_us = 0;
}

static uint32_t tag_of(uint64_t key) { return (uint32_t)(key >> 32) | 1; }

/* The class table's byte: the class (1..63) and, in its top bit, "an add created the item"
 * (ag_counter_rule). */
#define CLS_ADDED 0x80
enum { KEEP_ADDED = -1 };

/* added: 1 / 0 sets / clears the key's add mark (a store), KEEP_ADDED keeps it (a hit, an
 * eviction: the item memcached had is the one the last store made). */
static void class_remember(ag_feed *f, uint64_t key, int cls, int added)
{
    if (cls <= 0 || cls >= CLS_ADDED)
        return;
    uint64_t i = key & f->cmask;
    int same = f->ctag[i] == tag_of(key);
    if (added == KEEP_ADDED)
        added = same && (f->ccls[i] & CLS_ADDED);
    f->ctag[i] = tag_of(key);
    f->ccls[i] = (uint8_t)(cls | (added ? CLS_ADDED : 0));
}

static int class_recall(const ag_feed *f, uint64_t key)
{
    uint64_t i = key & f->cmask;
    return f->ctag[i] == tag_of(key) ? f->ccls[i] & ~CLS_ADDED : -1;
}

static int added_key(const ag_feed *f, uint64_t key)
{
    uint64_t i = key & f->cmask;
    return f->ctag[i] == tag_of(key) && (f->ccls[i] & CLS_ADDED);
}

static void trace_add(ag_feed *f, const wn_event *ev, int cls, int64_t cost)
{
    ag_trace_rec r = {ev->req.ts_us, ev->req.key, ev->req.size, ev->req.ttl, cost, ev->req.op,
                      (int16_t)cls};
    ag_trace_add(&f->trace, &r);
}

void ag_feed_event(ag_feed *f, const wn_event *ev)
{
    const tr_request *q = &ev->req;
    if (q->ts_us > f->stream_now_us)
        f->stream_now_us = q->ts_us;
    f->win.events++;
    int cls = q->clsid;
    int64_t cost = -1;
    switch (q->op) {
    case TR_HIT:
        if (cls > 0 && cls < AG_FEED_CLASSES && added_key(f, q->key)) {
            f->win.counter_found_cls[cls]++;
            if (f->counters.engaged[cls]) {
                /* an incr/decr/ma of a counter: not a read, and memcached does not bump it */
                f->win.told_counters++;
                f->win.told_counters_cls[cls]++;
                class_remember(f, q->key, cls, KEEP_ADDED);
                return;
            }
        }
        f->win.hits++;
        if (cls > 0 && cls < AG_FEED_CLASSES)
            f->win.hits_cls[cls]++;
        class_remember(f, q->key, cls, KEEP_ADDED);
        hc_profile_event(f->prof, HC_EV_HIT, cls, q->key, q->size);
        break;
    case TR_MISS: {
        f->win.misses++;
        cls = class_recall(f, q->key);
        if (cls > 0)
            f->win.miss_class_known++;
        else
            f->win.miss_class_deferred++;
        hc_profile_event(f->prof, HC_EV_MISS, cls, q->key, q->size);
        uint64_t i = tr_mix64(q->key) & f->pm_mask;
        f->pm_key[i] = q->key;
        f->pm_ts[i] = q->ts_us;
        break;
    }
    case TR_SET: {
        f->win.sets++;
        class_remember(f, q->key, cls, ev->add);
        hc_profile_event(f->prof, HC_EV_SET, cls, q->key, q->size);
        uint64_t i = tr_mix64(q->key) & f->pm_mask;
        if (f->pm_key[i] == q->key && f->pm_ts[i] > 0 && cls > 0 && cls < AG_FEED_CLASSES) {
            /* the refill of a miss: the miss belongs to this class's misses */
            f->win.misses_cls[cls]++;
            if (ev->add)
                f->win.add_refills_cls[cls]++;
        }
        if (f->pm_key[i] == q->key && f->pm_ts[i] > 0) {
            int64_t d = q->ts_us - f->pm_ts[i];
            if (d >= 0 && d <= MAX_COST_US) {
                cost = d;
                ag_costs_add(&f->costs, cls, d);
                f->win.cost_samples++;
            }
            f->pm_key[i] = 0;
        }
        /* a store over an item whose TTL passed: memcached found it expired (the store's
         * internal read, which the normaliser drops); count that expiry */
        if (ag_ttl_store(&f->ttl, q->key, cls, q->ts_us, q->ttl))
            ag_bd_silent_expiry(&f->bd, q->key, cls);
        break;
    }
    case TR_DELETE:
        f->win.deletes++;
        if (cls <= 0)
            cls = class_recall(f, q->key);
        if (ev->cause == WN_DELETED) {
            f->win.told_deletes++;
            if (cls > 0 && cls < AG_FEED_CLASSES)
                f->win.told_deletes_cls[cls]++;
        }
        hc_profile_event(f->prof, HC_EV_DELETE, cls, q->key, q->size);
        /* an expired read of a key whose expiry the tracker had not applied yet (memcached's
         * 1 s clock; our 1 s slack) is that key's expiry */
        if (ag_ttl_forget(&f->ttl, q->key) && ev->cause == WN_EXPIRED)
            ag_bd_silent_expiry(&f->bd, q->key, cls);
        break;
    case TR_EVICT:
        f->win.evictions++;
        /* a later miss of this key is this class's ghost hit */
        class_remember(f, q->key, cls, KEEP_ADDED);
        hc_profile_event(f->prof, HC_EV_EVICT, cls, q->key, q->size);
        ag_ttl_forget(&f->ttl, q->key);
        break;
    default:
        return;
    }
    if (f->bd_delay_us && f->bd.cfg.enabled) {
        int64_t until = ag_mono_us() + f->bd_delay_us;
        while (ag_mono_us() < until) {
        }
    }
    ag_bd_event(&f->bd, ev, cls);
    if (!f->trace_shed)
        trace_add(f, ev, cls, cost);
}

void ag_feed_prefetch(const ag_feed *f, const wn_event *ev)
{
    uint64_t k = ev->req.key, i = k & f->cmask;
    __builtin_prefetch(&f->ctag[i]);
    __builtin_prefetch(&f->ccls[i]);
    if (ev->req.op == TR_MISS || ev->req.op == TR_SET) {
        uint64_t j = tr_mix64(k) & f->pm_mask;
        __builtin_prefetch(&f->pm_key[j]);
        __builtin_prefetch(&f->pm_ts[j]);
    }
    if (ev->req.op != TR_HIT && ev->req.op != TR_MISS)
        ag_ttl_prefetch(&f->ttl, k);
    /* a miss looks its key up in the ghost of the class it was last seen in, an eviction
     * inserts it in its own class's (the recall's load overlaps the batch's other misses) */
    int ghost = ev->req.op == TR_MISS || ev->req.op == TR_EVICT;
    int cls = ev->req.op == TR_MISS ? class_recall(f, k) : ev->req.clsid;
    hc_profile_prefetch(f->prof, k, cls, ghost);
    ag_bd_prefetch(&f->bd, k);
}

void ag_feed_expire(ag_feed *f)
{
    uint64_t key;
    int cls;
    /* memcached's clock ticks in whole seconds: give a second of slack. */
    while (ag_ttl_next_expired(&f->ttl, f->stream_now_us - 1000000, &key, &cls)) {
        hc_profile_event(f->prof, HC_EV_DELETE, cls, key, 0);
        ag_bd_silent_expiry(&f->bd, key, cls);
        f->win.silent_expiries++;
    }
    ag_bd_expire(&f->bd, f->stream_now_us);
}

void ag_feed_window_reset(ag_feed *f)
{
    memset(&f->win, 0, sizeof f->win);
    ag_costs_reset(&f->costs);
    ag_trace_next_window(&f->trace);
    ag_bd_window(&f->bd);
}
