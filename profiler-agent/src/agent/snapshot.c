#include "snapshot.h"
#include "pagemove.h"
#include "util.h"

#include <math.h>
#include <string.h>

static uint64_t delta(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

static json_t *num_point(double v, int as_int)
{
    if (as_int)
        return json_integer((json_int_t)llround(v));
    return json_real(round(v * 1000.0) / 1000.0);
}

static json_t *class_json(const ag_feed *f, const mc_stats *s0, const mc_stats *s1, int c,
                          const ag_lookups *lk, double *pred_num, double *pred_den,
                          double *error_pp, double *thinned)
{
    hc_curve cv;
    if (hc_profile_curve(f->prof, c, &cv) != 0)
        return NULL;
    *thinned += cv.ghost_thinned_items;
    /* the other commands' lookups out of the class's reads and hits (lookups.h) */
    double at_n = hc_profile_hit_ratio_at(f->prof, c, (double)cv.capacity_items);
    double err = 0;
    at_n = ag_lookups_correct_curve(lk, c, &cv, at_n, &err);
    if (err > *error_pp)
        *error_pp = err;
    const mc_class_stats *k = &s1->cls[c];
    /* Sizes: integers when the step is >= 1 item (then rounding keeps them strictly
     * increasing), else 3-decimal reals. */
    double step = cv.npoints ? cv.size_items[0] : 0;
    int as_int = step >= 1.0;
    json_t *pts = json_array();
    double best = 0;
    for (uint32_t i = 0; i < cv.npoints; i++) {
        double h = cv.hit_ratio[i];
        if (!isfinite(h) || h < 0)
            h = 0;
        if (h > 1)
            h = 1;
        if (h < best) /* LRU curves never decrease; guard against estimator noise */
            h = best;
        best = h;
        json_array_append_new(pts, json_pack("[o,f]", num_point(cv.size_items[i], as_int),
                                             round(h * 1e6) / 1e6));
    }
    if (cv.reads > 0 && at_n >= 0) {
        *pred_num += at_n * (double)cv.reads;
        *pred_den += (double)cv.reads;
    }
    json_t *o = json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:{s:s,s:I,s:o},s:I,s:f}", "id", c,
                          "chunk_size", (json_int_t)k->chunk_size, "pages",
                          (json_int_t)k->total_pages, "items", (json_int_t)k->items, "evictions",
                          (json_int_t)delta(s0->cls[c].evicted, k->evicted), "requests",
                          (json_int_t)cv.reads, "curve", "unit", "items", "current_items",
                          (json_int_t)cv.capacity_items, "points", pts, "hits_observed",
                          (json_int_t)cv.hits_observed, "sample_rate", cv.sample_rate);
    /* How far the ghost sees now: the backend answers "unreachable" only where the curve is
     * measured, and a lower bound beyond this (a target above today's memory read
     * "unreachable" while the ghost was still filling after the warm-up). */
    json_object_set_new(json_object_get(o, "curve"), "ghost_reach_items",
                        json_integer((json_int_t)llround(cv.ghost_reach_items)));
    /* ...and to what resolution there: the band widens by one filter's span, (reach - N)/F */
    if (cv.ghost_filters > 0) {
        json_t *curve = json_object_get(o, "curve");
        json_object_set_new(curve, "ghost_filters", json_integer(cv.ghost_filters));
        /* ...and whether it holds every key memcached evicted from the class that has not come
         * back: then the curve past its entries is flat, measured, and the reach is k*N */
        json_object_set_new(curve, "ghost_complete", json_boolean(cv.ghost_complete));
        json_object_set_new(curve, "ghost_dropped_items",
                            json_integer((json_int_t)llround(cv.ghost_dropped_items)));
    }
    /* the part of `evictions` a slab page move caused (not cache pressure; see pagemove.h) */
    json_object_set_new(o, "page_move_evictions",
                        json_integer((json_int_t)ag_page_move_evictions(s0, s1, c)));
    double mean, p50, p90, p99;
    uint64_t n = ag_costs_summary(&f->costs, c, &mean, &p50, &p90, &p99);
    if (n > 0)
        json_object_set_new(o, "cost_us",
                            json_pack("{s:I,s:f,s:f,s:f,s:f}", "count", (json_int_t)n, "mean",
                                      round(mean * 10) / 10, "p50", p50, "p90", p90, "p99", p99));
    return o;
}

void ag_window_verdict(const ag_config *cfg, const mc_stats *s0, const mc_stats *s1,
                       const ag_feed *feed, const ag_loss *loss, const ag_lookups *lk,
                       ag_verdict *v)
{
    memset(v, 0, sizeof *v);
    /* Skipped lines: memcached's log_watcher_skipped counts them when they happen (all
     * watchers together: never under-reports ours). Our skipped=N lines arrive only when the
     * stream flows again, often a window later, so adding them to that window would count
     * the same loss twice; they are reported (stream_skipped) and used only where the stats
     * counter is missing. */
    uint64_t skipped = s1->has_watcher_skipped ? loss->watcher_skipped : loss->stream_skipped;
    uint64_t lost = loss->worker_dropped + skipped + loss->agent_dropped;
    v->loss_ratio =
        loss->events_seen + lost ? (double)lost / (double)(loss->events_seen + lost) : 0;
    uint64_t hits = delta(s0->get_hits, s1->get_hits), misses = delta(s0->get_misses, s1->get_misses);
    v->reads_measured = hits + misses;
    /* Like with like: the agent's lookups less the other commands' (lookups.h), against
     * memcached's get_hits / get_misses. */
    v->reads_seen = (uint64_t)llround(ag_lookups_reads(lk, feed->win.hits, feed->win.misses));
    v->measured_hit_ratio = v->reads_measured ? (double)hits / (double)v->reads_measured : -1;
    v->agent_hit_ratio = ag_lookups_hit_ratio(lk, feed->win.hits, feed->win.misses);
    /* What loss can explain: every lost line a read of the rarer outcome, at worst (lost
     * lines are bursty, not a random sample); 1 pp for the window edges (requests straddling
     * the boundary poll) and the rounding of the shares. Nothing for the command mix: a
     * window whose lookups the correction cannot account for is what this check is for. */
    double l = v->loss_ratio < 0.99 ? v->loss_ratio : 0.99;
    v->tolerance = AG_SELF_CHECK_PP / 100.0 + l / (1 - l);
    v->blind = v->reads_measured >= 100 &&
               (v->reads_seen * 20 < v->reads_measured || v->loss_ratio > cfg->blind_loss);
    if (v->reads_measured < 100 || v->reads_seen < 50) {
        v->check = -1;
    } else {
        double d = fabs(v->agent_hit_ratio - v->measured_hit_ratio);
        v->check = d <= v->tolerance;
    }
    v->flagged = v->loss_ratio > cfg->loss_threshold || v->check == 0 || v->blind;
}

json_t *ag_snapshot_build(const ag_config *cfg, const char *snapshot_id, const mc_stats *s0,
                          const mc_stats *s1, const ag_feed *feed, const ag_loss *loss,
                          const ag_spool_info *spool, const ag_features *feat,
                          const ag_verdict *v, const ag_lookups *lk, const sm_fit *stats_only)
{
    char ws[40], we[40];
    ag_iso8601(s0->wall_us, ws, sizeof ws);
    ag_iso8601(s1->wall_us, we, sizeof we);

    json_t *settings = json_object();
    for (int i = 0; i < s1->nsettings; i++)
        json_object_set_new(settings, s1->set_name[i], json_string(s1->set_value[i]));

    uint64_t hits = delta(s0->get_hits, s1->get_hits), misses = delta(s0->get_misses, s1->get_misses);
    json_t *measured = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "cmd_get", (json_int_t)delta(s0->cmd_get, s1->cmd_get),
        "get_hits", (json_int_t)hits, "get_misses", (json_int_t)misses, "cmd_set",
        (json_int_t)delta(s0->cmd_set, s1->cmd_set), "evictions",
        (json_int_t)delta(s0->evictions, s1->evictions), "bytes", (json_int_t)s1->bytes,
        "curr_items", (json_int_t)s1->curr_items);
    json_object_set_new(measured, "hit_ratio",
                        hits + misses ? json_real((double)hits / (double)(hits + misses))
                                      : json_null());
    /* Optional extras: what else looks like a read in the watch stream on 1.6.18. */
    json_object_set_new(measured, "get_expired",
                        json_integer((json_int_t)delta(s0->get_expired, s1->get_expired)));
    json_object_set_new(measured, "get_flushed",
                        json_integer((json_int_t)delta(s0->get_flushed, s1->get_flushed)));
    uint64_t other_reads =
        delta(s0->delete_hits + s0->delete_misses, s1->delete_hits + s1->delete_misses) +
        delta(s0->touch_hits + s0->touch_misses, s1->touch_hits + s1->touch_misses) +
        delta(s0->incr_hits + s0->incr_misses, s1->incr_hits + s1->incr_misses) +
        delta(s0->decr_hits + s0->decr_misses, s1->decr_hits + s1->decr_misses);
    json_object_set_new(measured, "non_get_lookups", json_integer((json_int_t)other_reads));
    json_object_set_new(measured, "reclaimed",
                        json_integer((json_int_t)delta(s0->reclaimed, s1->reclaimed)));
    uint64_t page_move = 0;
    for (int c = 1; c < MC_MAX_CLASSES; c++)
        page_move += ag_page_move_evictions(s0, s1, c);
    json_object_set_new(measured, "page_move_evictions", json_integer((json_int_t)page_move));
    json_object_set_new(measured, "slabs_moved",
                        json_integer((json_int_t)delta(s0->slabs_moved, s1->slabs_moved)));

    double ratio = v->loss_ratio;
    json_t *jl = json_pack("{s:I,s:I,s:I,s:I,s:f,s:b,s:I,s:I}", "events_seen",
                           (json_int_t)loss->events_seen, "worker_dropped",
                           (json_int_t)loss->worker_dropped, "watcher_skipped",
                           (json_int_t)loss->watcher_skipped, "stream_skipped",
                           (json_int_t)loss->stream_skipped, "loss_ratio", ratio, "flagged",
                           v->flagged, "agent_dropped",
                           (json_int_t)loss->agent_dropped, "malformed",
                           (json_int_t)loss->malformed);
    /* why a flagged window is flagged, for the dashboard: each reason, and the self-check's
     * figures when it disagreed */
    if (v->flagged) {
        json_t *why = json_array();
        if (v->loss_ratio > cfg->loss_threshold || v->blind)
            json_array_append_new(why, json_string("stream_loss"));
        if (v->check == 0) {
            json_array_append_new(why, json_string("self_check"));
            json_object_set_new(jl, "self_check",
                                json_pack("{s:f,s:f,s:f}", "agent_hit_ratio",
                                          round(v->agent_hit_ratio * 1e6) / 1e6,
                                          "measured_hit_ratio",
                                          round(v->measured_hit_ratio * 1e6) / 1e6, "tolerance",
                                          round(v->tolerance * 1e6) / 1e6));
        }
        if (v->flushed)
            json_array_append_new(why, json_string("flush"));
        json_object_set_new(jl, "flagged_by", why);
        json_object_set_new(jl, "threshold", json_real(cfg->loss_threshold));
    }

    json_t *classes = json_array();
    double pn = 0, pd = 0, curve_err = 0, thinned = 0;
    for (int c = 1; c < MC_MAX_CLASSES && c < HC_MAX_CLASSES && !stats_only; c++) {
        if (!s1->cls[c].present || !hc_profile_has_class(feed->prof, c))
            continue;
        json_t *o = class_json(feed, s0, s1, c, lk, &pn, &pd, &curve_err, &thinned);
        if (o)
            json_array_append_new(classes, o);
    }

    hc_profile_stats ps;
    hc_profile_stats_get(feed->prof, &ps);
    const ag_window_counts *w = &feed->win;
    json_t *diag = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:I,s:I}", "hits", (json_int_t)w->hits,
        "misses", (json_int_t)w->misses, "sets", (json_int_t)w->sets, "deletes",
        (json_int_t)w->deletes, "evictions", (json_int_t)w->evictions, "miss_class_known",
        (json_int_t)w->miss_class_known, "miss_class_deferred", (json_int_t)w->miss_class_deferred,
        "silent_expiries", (json_int_t)w->silent_expiries, "cost_samples",
        (json_int_t)w->cost_samples, "tracked_keys", (json_int_t)ps.tracked_keys,
        "profile_bytes", (json_int_t)ps.total_bytes, "unattributed_misses",
        (json_int_t)ps.unattributed_misses, "profile_sample_rate", ps.sample_rate,
        "ttl_untracked", (json_int_t)feed->ttl.untracked, "unknown_hits",
        (json_int_t)ps.unknown_hits);
    /* Repairs of lost evictions (cumulative): how much the curve above N leaned on them. */
    json_object_set_new(diag, "surplus_evictions", json_integer((json_int_t)ps.surplus_evictions));
    json_object_set_new(diag, "lost_evict_misses", json_integer((json_int_t)ps.lost_evict_misses));
    /* ...the repairs taken as invalidations, and the evicted keys a steady loss kept out of
     * the ghosts (cumulative; the curves above N read low by that share, no gap) */
    json_object_set_new(diag, "invalidated", json_integer((json_int_t)ps.invalidated));
    json_object_set_new(diag, "unrefilled_misses", json_integer((json_int_t)ps.unrefilled_misses));
    json_object_set_new(diag, "ghost_thinned_items", json_integer((json_int_t)llround(thinned)));
    if (pd > 0)
        json_object_set_new(diag, "predicted_hit_ratio_at_current", json_real(pn / pd));
    if (spool->enabled)
        json_object_set_new(diag, "spool",
                            json_pack("{s:I,s:I,s:I,s:I,s:I}", "pending", (json_int_t)spool->pending,
                                      "pending_bytes", (json_int_t)spool->pending_bytes,
                                      "dropped", (json_int_t)spool->dropped, "rejected",
                                      (json_int_t)spool->rejected, "sent",
                                      (json_int_t)spool->sent));

    json_t *sc = json_pack("{s:I,s:I,s:o,s:o,s:f,s:s}", "reads_seen", (json_int_t)v->reads_seen,
                           "reads_measured", (json_int_t)v->reads_measured, "agent_hit_ratio",
                           v->agent_hit_ratio >= 0 ? json_real(v->agent_hit_ratio) : json_null(),
                           "measured_hit_ratio",
                           v->measured_hit_ratio >= 0 ? json_real(v->measured_hit_ratio)
                                                      : json_null(),
                           "tolerance", round(v->tolerance * 1e6) / 1e6, "result",
                           v->check < 0 ? "too_few_reads" : v->check ? "ok" : "disagrees");
    json_t *ft = json_pack("{s:s,s:b,s:b,s:I}", "watch", feat->watch_mode, "cfd", feat->cfd,
                           "size", feat->size, "unknown_lines", (json_int_t)feat->unknown_lines);
    json_object_set_new(diag, "self_check", sc);
    /* What the stream could not tell apart and what the counters corrected (lookups.h) */
    const ag_window_counts *wc = &feed->win;
    json_t *lj = json_pack(
        "{s:b,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:o}", "corrected", lk->enabled,
        "told_apart",
        lk->told_deletes ? (lk->told_counters ? "stores, deletes, counters" : "stores, deletes")
                         : (lk->told_counters ? "stores, counters" : "stores"),
        "reads_found",
        (json_int_t)lk->reads_found, "reads_missed", (json_int_t)lk->reads_missed, "other_found",
        (json_int_t)lk->other_found, "other_missed", (json_int_t)lk->other_missed,
        "told_deletes", (json_int_t)lk->told_deletes, "told_counters",
        (json_int_t)lk->told_counters, "found_share",
        round(lk->found_share_all * 1e6) / 1e6, "miss_share", round(lk->miss_share * 1e6) / 1e6,
        "curve_error_pp", round(curve_err * 1000) / 1000, "raw_hit_ratio",
        wc->hits + wc->misses ? json_real((double)wc->hits / (double)(wc->hits + wc->misses))
                              : json_null());
    json_object_set_new(diag, "lookups", lj);
    json_object_set_new(diag, "features", ft);

    /* How full memcached is: it takes 1 MiB pages until total_malloced reaches -m
     * (limit_maxbytes); until then it evicts nothing and today's curve is still growing, so the
     * backend says "warming up" instead of sizing on it. hash_bytes and connections live outside
     * -m. total_malloced 0 = not reported by this memcached (then `full` is unknown: null). */
    json_t *mem = json_pack("{s:I,s:I,s:I,s:I,s:I}", "total_malloced",
                            (json_int_t)s1->total_malloced, "limit_maxbytes",
                            (json_int_t)s1->limit_maxbytes, "evictions_total",
                            (json_int_t)s1->evictions, "hash_bytes", (json_int_t)s1->hash_bytes,
                            "curr_connections", (json_int_t)s1->curr_connections);
    json_object_set_new(mem, "full",
                        s1->total_malloced > 0 && s1->limit_maxbytes > 0
                            ? json_boolean(ag_memory_full(s1->total_malloced, s1->limit_maxbytes) ||
                                           s1->evictions > 0)
                            : json_null());

    json_t *snap = json_pack(
        "{s:i,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:I,s:o},s:{s:s,s:s},s:o,s:o,s:o,s:i,s:o,s:o}",
        "schema_version", 1, "snapshot_id", snapshot_id, "agent", "version", AG_VERSION,
        "hostname", cfg->hostname, "server", "address", cfg->memcached, "instance_id",
        s1->instance_id, "version", s1->version, "limit_maxbytes",
        (json_int_t)s1->limit_maxbytes, "settings", settings, "window", "start", ws, "end", we,
        "measured", measured, "memory", mem, "loss", jl, "curve_points", HC_CURVE_POINTS, "classes", classes,
        "diagnostics", diag);
    if (snap && stats_only) {
        /* Optional fields (protocol v1): the basis, and the model's whole-cache curve. */
        json_object_set_new(snap, "basis", json_string("stats_only"));
        json_t *sm = json_pack("{s:s,s:s,s:b,s:s,s:f,s:f}", "model", "che-zipf", "citation",
                               "Che, Tung, Wang, IEEE JSAC 20(7) 2002; Fricker, Robert, Roberts, "
                               "ITC 24 2012", "fitted", stats_only->ok, "state", stats_only->why,
                               "current_items", stats_only->current_items, "hit_ratio",
                               stats_only->hit_ratio);
        if (stats_only->ok) {
            json_t *pts = json_array();
            for (int k = 0; k < SM_POINTS; k++)
                json_array_append_new(pts, json_pack("[f,f]", round(stats_only->size_items[k] * 1000) / 1000,
                                                     round(stats_only->hit[k] * 1e6) / 1e6));
            json_object_set_new(sm, "alpha", json_real(round(stats_only->alpha * 1e4) / 1e4));
            json_object_set_new(sm, "keys", json_real(round(stats_only->keys)));
            json_object_set_new(sm, "t_requests", json_real(round(stats_only->t_requests)));
            json_object_set_new(sm, "unit", json_string("items"));
            json_object_set_new(sm, "points", pts);
        }
        json_object_set_new(snap, "stats_model", sm);
    }
    /* which estimator drew the curves below N (optional field, protocol v1) */
    if (snap)
        json_object_set_new(json_object_get(snap, "agent"), "estimator",
                            json_string(cfg->estimator));
    return snap;
}
