/*
 * `hitcurve-agent run`: the live agent beside an unmodified memcached.
 *
 * Threads:
 *   watch reader  one `watch fetchers mutations evictions` connection; reads, parses, enqueues
 *                 (never waits on anything else: a slow watcher makes memcached skip lines)
 *   stats poller  `stats`, `stats items`, `stats slabs`, `stats settings` on a second connection
 *   uploader      sends the on-disk spool in order (only with --backend-url)
 *   writer        writes and fsyncs the snapshot-dir files and spool entries, in order
 *                 (writer.h: a slow disk must never hold up a window)
 *   main (here)   normalises events, feeds the profiler, closes windows into snapshots
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli/commands.h"
#include "config.h"
#include "extstore.h"
#include "feed.h"
#include "log.h"
#include "overload.h"
#include "ring.h"
#include "snapshot.h"
#include "snapshot_bd.h"
#include "spool.h"
#include "stats.h"
#include "statsmodel.h"
#include "upload.h"
#include "util.h"
#include "watch.h"
#include "watchline.h"
#include "writer.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig) { got_signal = sig; }

typedef struct agent {
    ag_config cfg;
    ag_ring ring;
    ag_watch watch;
    ag_poller poller;
    ag_spool spool;
    int spool_on;
    ag_writer writer;          /* started with a spool or a snapshot dir */
    ag_uploader up;
    wn_norm *wn;
    ag_feed feed;
    ag_ext ext;                /* the flash tier: extwrite lines, header items (extstore.h) */
    ag_feed_config fcfg;
    ag_keys keys;              /* prefix ids and clear hot keys (reader thread side) */
    int keys_on;
    int64_t hot_published_us;  /* stream time of the last hot-key request to the reader */
    /* window */
    int have_start;
    int mem_full;              /* memcached had allocated all its memory at the last poll */
    mc_stats *s0, *s1, *tmp;
    int64_t win_end_mono;
    uint64_t poll_gen_seen;
    /* counters at window start */
    uint64_t lines_total, lines_at_start;
    uint64_t ring_drop_at_start, stream_skip_at_start, malformed_at_start;
    uint64_t windows, chunks_local_seq, blind_windows;
    /* After a blind window (the agent was stalled; memcached skipped its lines, and keeps
     * skipping for seconds after the agent runs again): restart the window once the stream
     * flows cleanly, so the first window after a stall is a whole, clean one. */
    int resync;
    int64_t resync_check_mono, resync_since_mono;
    int64_t discard_before_wall_us; /* events of the skipped stretch still in the buffers */
    uint64_t resync_lines, resync_skipped;
    FILE *events_log;
    /* Two-phase close: the window ends at the stats poll (s1, wall time `boundary`); events
     * with ts <= boundary still in the reorder buffers are let in during a grace period,
     * later ones are held for the next window. */
    int closing;
    int64_t boundary_wall_us, grace_end_mono;
    ag_loss loss_at_close;
    wn_event *held;
    size_t nheld, capheld;
    int64_t cap_poll_at[MC_MAX_CLASSES]; /* last on-demand poll for a class without capacity */
    uint64_t held_dropped;
    ag_overload ov;            /* own cost, loss sources, shedding (overload.h) */
} agent;

/* The shed level's work off (or back on: a breakdown that was shed restarts from empty). */
static void apply_shed(agent *a)
{
    a->feed.trace_shed = a->ov.level >= AG_SHED_TRACE;
    int bd = a->cfg.breakdown && a->ov.level < AG_SHED_BREAKDOWN;
    if (bd && !a->feed.bd.cfg.enabled) {
        a->feed.bd.cfg.enabled = 1;
        ag_bd_clear(&a->feed.bd);
    }
    a->feed.bd.cfg.enabled = bd;
    a->feed.bd_delay_us = a->cfg.breakdown_delay_us;
}

static int feed_init(agent *a)
{
    const char *err = NULL;
    if (ag_feed_init(&a->feed, &a->fcfg, &err) < 0) {
        ag_log(AG_LOG_ERROR, "profiler_init_failed", "error=\"%s\"", err ? err : "?");
        return -1;
    }
    apply_shed(a);
    return 0;
}

/* Give the profiler the capacity of every class memcached has pages for. Changing an
 * existing class's capacity clears its curve, so only new classes get one mid-window
 * (force=1 at window boundaries updates all). */
static void sync_capacities(agent *a, const mc_stats *s, int force)
{
    /* memcached takes pages (1 MiB, item_size_max by default) until mem_limit; an unknown
     * total_malloced keeps the profiler's default (full: lost EVICTs are repaired). */
    if (s->total_malloced > 0 && s->limit_maxbytes > 0) {
        int full = ag_memory_full(s->total_malloced, s->limit_maxbytes);
        /* The classes grew while memory was filling: once it is full, their capacities as
         * memcached now holds them are what the surplus repair must check against. */
        if (full && !a->mem_full)
            force = 1;
        a->mem_full = full;
        hc_profile_set_memory_full(a->feed.prof, full);
    }
    ag_bd_set_memory(&a->feed.bd, s->limit_maxbytes);
    for (int c = 1; c < MC_MAX_CLASSES && c < HC_MAX_CLASSES; c++) {
        const mc_class_stats *k = &s->cls[c];
        if (!k->present || k->total_chunks == 0 || k->chunk_size == 0)
            continue;
        ag_bd_set_class(&a->feed.bd, c, k->total_chunks, k->chunk_size);
        if (force || !hc_profile_has_class(a->feed.prof, c)) {
            hc_curve cv;
            if (hc_profile_has_class(a->feed.prof, c) &&
                hc_profile_curve(a->feed.prof, c, &cv) == 0 &&
                cv.capacity_items == k->total_chunks)
                continue;
            hc_profile_set_capacity(a->feed.prof, c, k->total_chunks, k->chunk_size);
        }
    }
}

/* A stretch that lost lines (a window's, or the blind stretch before a resync) may have lost
 * EVICTs: each class's EVICTs in it against memcached's count of its evictions tell the profile
 * whether its ghost may now lack keys inside the curve's span (hc_profile_check_evictions: the
 * class then stops saying ghost_complete until (k-1)*N keys evicted after the loss are held).
 * Only lossy stretches: in a clean one a shortfall is the few lines that straddle the boundary. */
static void check_lost_evictions(agent *a, const mc_stats *s0, const mc_stats *s1)
{
    for (int c = 1; c < MC_MAX_CLASSES && c < HC_MAX_CLASSES; c++) {
        uint64_t e0 = s0->cls[c].evicted, e1 = s1->cls[c].evicted;
        if (e1 > e0 && hc_profile_has_class(a->feed.prof, c))
            hc_profile_check_evictions(a->feed.prof, c, e1 - e0);
    }
}

static void feed_one(agent *a, const wn_event *in)
{
    wn_event copy;
    const wn_event *ev = in;
    int c = ev->req.clsid;
    if (ev->nosize && c > 0 && c < MC_MAX_CLASSES && a->s0->cls[c].chunk_size &&
        (ev->req.op == TR_SET || ev->req.op == TR_HIT || ev->req.op == TR_EVICT)) {
        /* memcached 1.5.x prints no size=: the item occupies one chunk of its class, the
         * best size there is (an upper bound, within the 1.25 growth factor). */
        copy = *in;
        copy.req.size = a->s0->cls[c].chunk_size;
        ev = &copy;
    }
    if (c > 0 && c < MC_MAX_CLASSES && a->have_start && !hc_profile_has_class(a->feed.prof, c)) {
        /* memcached just created this class: fetch its size before feeding its first
         * events (once per class per 5 s; a loopback poll takes well under a millisecond). */
        int64_t now = ag_mono_us();
        if (now - a->cap_poll_at[c] > 5000000 || a->cap_poll_at[c] == 0) {
            a->cap_poll_at[c] = now;
            if (ag_poller_poll_now(&a->poller, 500, a->tmp) && a->tmp->ok &&
                strcmp(a->tmp->instance_id, a->s0->instance_id) == 0)
                sync_capacities(a, a->tmp, 0);
        }
    }
    /* the extwrites logged before this event first, then what the event does to a header */
    ag_ext_release(&a->ext, a->feed.prof, a->s0, ev->gid, 0);
    ag_ext_event(&a->ext, ev->req.op, ev->req.key, ev->req.clsid, ev->gid);
    ag_feed_event(&a->feed, ev);
    if (a->cfg.hot_keys_clear && (a->feed.bd.reads_since_publish >= 4096 ||
                                  ev->req.ts_us - a->hot_published_us > 1000000)) {
        /* ask the reader for the clear text of the current hot keys */
        uint64_t want[2 * AG_HOT_MAX];
        uint32_t n = 2 * (a->cfg.hot_keys + 8);
        ag_keys_want(&a->keys, want, ag_bd_hot_candidates(&a->feed.bd, want, n));
        a->feed.bd.reads_since_publish = 0;
        a->hot_published_us = ev->req.ts_us;
    }
}

static void hold(agent *a, const wn_event *ev)
{
    if (a->nheld == a->capheld) {
        size_t nc = a->capheld ? a->capheld * 2 : 65536;
        wn_event *nh = nc <= (1u << 24) ? realloc(a->held, nc * sizeof *nh) : NULL;
        if (!nh) {
            a->held_dropped++;
            return;
        }
        a->held = nh;
        a->capheld = nc;
    }
    a->held[a->nheld++] = *ev;
}

/* Events are taken from the normaliser a batch at a time and their table slots prefetched
 * (ag_feed_prefetch) before the first is fed: the main thread's time went mostly to waiting
 * for one cache miss after another. Feeding never touches the normaliser, so the events and
 * their order are the same as one at a time. */
#define DRAIN_BATCH 16

static void drain_events(agent *a, int64_t now)
{
    wn_event evs[DRAIN_BATCH];
    int logged = 0;
    for (;;) {
        int n = 0;
        while (n < DRAIN_BATCH && wn_pop(a->wn, now, &evs[n]))
            ag_feed_prefetch(&a->feed, &evs[n++]);
        for (int i = 0; i < n; i++) {
            const wn_event *ev = &evs[i];
            if (ev->req.ts_us > 0 && ev->req.ts_us <= a->discard_before_wall_us)
                continue; /* from the lossy stretch a resync dropped */
            if (a->closing && ev->req.ts_us > a->boundary_wall_us)
                hold(a, ev);
            else
                feed_one(a, ev);
            if (a->events_log)
                fprintf(a->events_log, "%d %016llx %u %d %d %llu %d\n", ev->req.op,
                        (unsigned long long)ev->req.key, ev->req.size, ev->req.clsid, ev->req.ttl,
                        (unsigned long long)ev->gid, ev->cause);
            logged = 1;
        }
        if (n < DRAIN_BATCH)
            break;
    }
    /* Flushed per batch: tests wait for an event to appear in it instead of sleeping. */
    if (logged && a->events_log)
        fflush(a->events_log);
    /* extwrites the normaliser's reorder time has passed: every event before them is out */
    ag_ext_release(&a->ext, a->feed.prof, a->s0, 0, now - (int64_t)(a->cfg.reorder_ms * 1000) - 1000);
    ag_feed_expire(&a->feed);
}

static void window_counters_start(agent *a)
{
    a->lines_at_start = a->lines_total;
    a->ring_drop_at_start = atomic_load(&a->ring.dropped);
    a->stream_skip_at_start = atomic_load(&a->watch.skipped);
    a->malformed_at_start = atomic_load(&a->watch.malformed);
    ag_feed_window_reset(&a->feed);
    ag_ext_window_reset(&a->ext);
    hc_profile_reset(a->feed.prof, -1);
}

/* A different memcached answers (restart): nothing learned about the old one applies. */
static int new_instance(agent *a, const mc_stats *s)
{
    ag_log(AG_LOG_INFO, "memcached_instance", "instance=%s version=%s limit_maxbytes=%" PRIu64,
           s->instance_id, s->version, s->limit_maxbytes);
    wn_flush(a->wn);
    wn_event ev;
    while (wn_pop(a->wn, 0, &ev)) {
    }
    wn_reset(a->wn);
    a->closing = 0;
    a->nheld = 0;
    a->resync = 0;
    ag_feed_free(&a->feed);
    ag_ext_clear(&a->ext);
    if (feed_init(a) < 0)
        return -1;
    /* Attached before memcached's first eviction (or it restarted): every key it evicts from now
     * on reaches a ghost, which can then be complete (hc_curve.ghost_complete). */
    hc_profile_set_seen_from_start(a->feed.prof, s->evictions == 0);
    sync_capacities(a, s, 1);
    *a->s0 = *s;
    a->have_start = 1;
    a->win_end_mono = ag_mono_us() + (int64_t)(a->cfg.interval_s * 1e6);
    window_counters_start(a);
    return 0;
}

/* Hand one document to the writer thread: a file in the snapshot dir and/or a spool entry.
 * Takes `text`. The file name's time is the window's close, taken here, not when it lands. */
static void queue_doc(agent *a, char *text, const char *what, const char *id, int64_t ms,
                      uint64_t seq)
{
    ag_wdoc *d = calloc(1, sizeof *d);
    if (!d) {
        ag_log(AG_LOG_ERROR, "out_of_memory", "doc=%s id=%s", what, id);
        free(text);
        return;
    }
    d->text = text;
    d->len = strlen(text);
    d->what = what;
    if (a->cfg.snapshot_dir[0])
        snprintf(d->path, sizeof d->path, "%s/%s-%013" PRId64 "-%s.json", a->cfg.snapshot_dir,
                 what, ms, id);
    if (a->spool_on) {
        snprintf(d->spool_kind, sizeof d->spool_kind, "%s", what);
        snprintf(d->spool_id, sizeof d->spool_id, "%s", id);
        d->spool_seq = seq;
    }
    ag_writer_put(&a->writer, d);
}

static void write_outputs(agent *a, json_t *snap, const char *sid, json_t *chunk,
                          const char *cid, uint64_t seq_snap, uint64_t seq_chunk)
{
    if (!a->cfg.snapshot_dir[0] && !a->spool_on)
        return;
    char *text = json_dumps(snap, JSON_COMPACT);
    if (!text)
        return;
    /* The trace chunk, as uploaded: written beside the snapshot too, so benchmarks and
     * debugging have the sampled trace without a backend. */
    char *ct = chunk ? json_dumps(chunk, JSON_COMPACT) : NULL;
    int64_t ms = ag_wall_us() / 1000;
    queue_doc(a, text, "snapshot", sid, ms, seq_snap);
    if (ct)
        queue_doc(a, ct, "trace", cid, ms, seq_chunk);
}

/* Phase 1: the window ends now, at a fresh stats poll. Returns -1 when memcached did not
 * answer (the window stays open and is retried in a second). */
static int begin_close(agent *a)
{
    int64_t now = ag_mono_us();
    drain_events(a, now);
    int fresh = ag_poller_poll_now(&a->poller, 2000, a->s1);
    if (!fresh || !a->s1->ok) {
        ag_log(AG_LOG_WARN, "window_stats_unavailable", "retry_s=1");
        a->win_end_mono = now + 1000000;
        return -1;
    }
    if (strcmp(a->s1->instance_id, a->s0->instance_id) != 0) {
        ag_log(AG_LOG_WARN, "window_discarded", "reason=memcached_restarted");
        return new_instance(a, a->s1);
    }
    a->closing = 1;
    a->boundary_wall_us = a->s1->wall_us;
    /* Lines are counted as they arrive, like the stats counters they are compared with. */
    a->loss_at_close = (ag_loss){
        .events_seen = a->lines_total - a->lines_at_start,
        .worker_dropped = a->s1->log_worker_dropped >= a->s0->log_worker_dropped
                              ? a->s1->log_worker_dropped - a->s0->log_worker_dropped : 0,
        .watcher_skipped = a->s1->log_watcher_skipped >= a->s0->log_watcher_skipped
                               ? a->s1->log_watcher_skipped - a->s0->log_watcher_skipped : 0,
        .stream_skipped = atomic_load(&a->watch.skipped) - a->stream_skip_at_start,
        .agent_dropped = atomic_load(&a->ring.dropped) - a->ring_drop_at_start,
        .malformed = atomic_load(&a->watch.malformed) - a->malformed_at_start,
    };
    a->lines_at_start = a->lines_total;
    a->ring_drop_at_start = atomic_load(&a->ring.dropped);
    a->stream_skip_at_start = atomic_load(&a->watch.skipped);
    a->malformed_at_start = atomic_load(&a->watch.malformed);
    /* memcached's logger delivers up to ~1 s late, then our reorder buffer holds a line up to
     * reorder_ms and a lone read up to 2 x reorder_ms. */
    a->grace_end_mono = now + (int64_t)(2 * a->cfg.reorder_ms * 1000) + 300000;
    a->win_end_mono = now + (int64_t)(a->cfg.interval_s * 1e6);
    return 0;
}

/* Phase 2: everything up to the boundary is in; emit the snapshot, start the next window
 * with the events held back. */
static void finish_close(agent *a)
{
    drain_events(a, ag_mono_us());
    char sid[37], cid[37];
    ag_uuid4(sid);
    ag_uuid4(cid);
    ag_loss loss = a->loss_at_close;
    ag_spool_info si = {0};
    if (a->spool_on) {
        si.enabled = 1;
        /* Counters in memory (a directory listing could wait on a busy disk); entries still
         * with the writer are pending too. */
        ag_writer_spool_counts(&a->writer, &a->spool, &si.pending, &si.pending_bytes,
                               &si.dropped, &si.rejected, &si.sent);
    }
    ag_lookups lk;
    ag_lookups_window(&lk, a->s0, a->s1, (int)a->cfg.lookup_correction, &a->feed.win);
    if (ag_lookups_judge_counters(&a->feed.counters, a->s0, a->s1, lk.enabled, &a->feed.win))
        ag_log(AG_LOG_INFO, "counter_rule_refuted",
               "reason=added_keys_read action=their_lookups_counted_as_reads");
    /* While memcached counts misses of other commands (a delete or touch of a key it had
     * evicted looks like a read's miss), a miss's ghost hit waits for its refill SET: the
     * lookups no client refills leave the ghost uncounted (profile.h). */
    hc_profile_set_refill_rule(a->feed.prof, lk.enabled && lk.miss_share >= AG_REFILL_RULE_SHARE);
    ag_verdict v;
    ag_window_verdict(&a->cfg, a->s0, a->s1, &a->feed, &loss, &lk, &v);
    /* flush_all prints no line: every key memcached held is gone, and the ghost's hits since
     * then were misses. The window is flagged (left out of answers as a lossy one is) and the
     * profile forgets its keys below, once the snapshot is built. */
    int flushed = a->s1->cmd_flush > a->s0->cmd_flush;
    if (flushed) {
        v.flagged = 1;
        v.flushed = 1;
        ag_log(AG_LOG_WARN, "window_flushed", "cmd_flush=%" PRIu64 " action=flagged_keys_forgotten",
               a->s1->cmd_flush - a->s0->cmd_flush);
    }
    if (v.blind || loss.worker_dropped + loss.watcher_skipped + loss.stream_skipped +
                       loss.agent_dropped > 0)
        check_lost_evictions(a, a->s0, a->s1);
    unsigned fields = atomic_load(&a->watch.fields);
    int have_items = atomic_load(&a->watch.item_lines_seen) > 0;
    ag_features feat = {ag_watch_mode_name(atomic_load(&a->watch.mode)),
                        have_items ? !!(fields & WLF_CFD) : 1,
                        have_items ? !!(fields & WLF_SIZE) : 1,
                        wn_get_stats(a->wn)->unknown_lines};
    json_t *snap = NULL;
    int stats_only = atomic_load(&a->watch.mode) == AG_WATCH_REFUSED;
    sm_fit fit;
    if (stats_only) {
        /* No events at all: nothing is blind, the curve comes from the stats model. */
        v.blind = 0;
        v.check = -1;
        v.flagged = 0;
        double secs = (double)(a->s1->wall_us - a->s0->wall_us) / 1e6;
        double age_num = 0, age_den = 0;
        for (int c = 1; c < MC_MAX_CLASSES; c++)
            if (a->s1->cls[c].present && a->s1->cls[c].items > 0) {
                age_num += (double)a->s1->cls[c].age * (double)a->s1->cls[c].items;
                age_den += (double)a->s1->cls[c].items;
            }
        sm_fit_curve((double)a->s1->curr_items,
                     v.reads_measured ? v.measured_hit_ratio : -1,
                     secs > 0 ? (double)v.reads_measured / secs : 0,
                     age_den > 0 ? age_num / age_den : 0,
                     a->s1->evictions > a->s0->evictions, a->cfg.ghost_factor, &fit);
    }
    if (v.blind) {
        /* A window the agent could not see (a stall: memcached skipped our lines) says
         * nothing about the curve; an empty or starved curve would read as "no hits at any
         * size". Nothing is uploaded for it; the log says why. */
        a->blind_windows++;
        a->resync = 1;
        a->resync_since_mono = ag_mono_us();
        a->resync_check_mono = 0;
        ag_log(AG_LOG_WARN, "window_blind",
               "reads_measured=%" PRIu64 " reads_seen=%" PRIu64 " loss_ratio=%.4f skipped=%" PRIu64
               " watcher_skipped=%" PRIu64 " action=no_curve_uploaded",
               v.reads_measured, v.reads_seen, v.loss_ratio, loss.stream_skipped,
               loss.watcher_skipped);
    } else {
        snap = ag_snapshot_build(&a->cfg, sid, a->s0, a->s1, &a->feed, &loss, &si, &feat, &v,
                                 &lk, stats_only ? &fit : NULL);
        if (stats_only)
            ag_log(AG_LOG_INFO, "stats_only_window",
                   "measured_hit_ratio=%.4f items=%.0f model=%s alpha=%.3f keys=%.0f",
                   fit.hit_ratio, fit.current_items, fit.why, fit.alpha, fit.keys);
        if (snap && a->keys_on && a->ov.window_level < AG_SHED_BREAKDOWN)
            ag_snapshot_breakdown(snap, &a->cfg, &a->feed, &a->keys); /* none partial: shed */
        json_t *ext = snap ? ag_ext_json(&a->ext, a->s0, a->s1) : NULL;
        if (ext) /* optional field (protocol v1): the server's flash tier */
            json_object_set_new(snap, "extstore", ext);
        if (v.check == 0)
            ag_log(AG_LOG_WARN, "self_check_failed",
                   "agent_hit_ratio=%.4f measured_hit_ratio=%.4f tolerance=%.4f reads_seen=%"
                   PRIu64 " reads_measured=%" PRIu64 " cfd=%d size=%d",
                   v.agent_hit_ratio, v.measured_hit_ratio, v.tolerance, v.reads_seen,
                   v.reads_measured, feat.cfd, feat.size);
    }
    double loss_ratio = v.loss_ratio;
    uint64_t seq_snap = 0, seq_chunk = 0;
    json_t *chunk = NULL;
    if (a->spool_on && snap)
        seq_snap = ag_spool_next_seq(&a->spool);
    /* a window that shed its trace at any point sends none (a partial chunk would understate) */
    if (snap && (a->spool_on || a->cfg.snapshot_dir[0]) && a->ov.window_level < AG_SHED_TRACE) {
        chunk = ag_trace_chunk(&a->feed.trace, cid, 0, a->cfg.memcached, a->s1->instance_id,
                               a->s0->wall_us, a->s1->wall_us);
        if (chunk) {
            /* Without a spool the chunks only go to the snapshot dir: number them locally. */
            seq_chunk = a->spool_on ? ag_spool_next_seq(&a->spool) : ++a->chunks_local_seq;
            json_object_set_new(chunk, "seq", json_integer((json_int_t)seq_chunk));
        }
    }
    int shed_next = ag_overload_window(&a->ov, snap, &loss, loss_ratio, a->cfg.loss_threshold,
                                       a->s1, loss.events_seen);
    if (snap)
        write_outputs(a, snap, sid, chunk, cid, seq_snap, seq_chunk);
    json_decref(snap);
    json_decref(chunk);
    a->windows++;
    uint64_t gh = a->s1->get_hits - a->s0->get_hits, gm = a->s1->get_misses - a->s0->get_misses;
    ag_log(v.flagged ? AG_LOG_WARN : AG_LOG_INFO, "window",
           "snapshot_id=%s lines=%" PRIu64 " events=%" PRIu64 " measured_hit_ratio=%.4f "
           "agent_hit_ratio=%.4f self_check=%s "
           "loss_ratio=%.4f worker_dropped=%" PRIu64 " skipped=%" PRIu64 " watcher_skipped=%" PRIu64
           " agent_dropped=%" PRIu64 " trace_records=%u flagged=%d blind=%d",
           snap ? sid : "none", loss.events_seen, a->feed.win.events,
           gh + gm ? (double)gh / (double)(gh + gm) : 0.0, v.agent_hit_ratio,
           v.check < 0 ? "too_few_reads" : v.check ? "ok" : "disagrees", loss_ratio,
           loss.worker_dropped, loss.stream_skipped, loss.watcher_skipped, loss.agent_dropped,
           a->feed.trace.n, v.flagged, v.blind);
    /* Next window starts where this one ended. */
    mc_stats *t = a->s0;
    a->s0 = a->s1;
    a->s1 = t;
    ag_feed_window_reset(&a->feed);
    ag_ext_window_reset(&a->ext);
    if (shed_next >= 0)
        apply_shed(a);
    if (flushed)
        hc_profile_forget_keys(a->feed.prof);
    hc_profile_reset(a->feed.prof, -1);
    sync_capacities(a, a->s0, 1);
    a->closing = 0;
    for (size_t i = 0; i < a->nheld; i++)
        feed_one(a, &a->held[i]);
    a->nheld = 0;
}

/* Resync after a blind window: every 0.5 s, is the stream flowing (lines arrived) with no new
 * watcher skips? Then what has been gathered since the blind window is dropped (it was still
 * lossy) and a fresh window starts now. */
static void check_resync(agent *a, int64_t now)
{
    if (now < a->resync_check_mono)
        return;
    a->resync_check_mono = now + 500000;
    if (!ag_poller_poll_now(&a->poller, 1000, a->tmp) || !a->tmp->ok ||
        strcmp(a->tmp->instance_id, a->s0->instance_id) != 0)
        return;
    int flowing = a->lines_total > a->resync_lines &&
                  a->tmp->log_watcher_skipped == a->resync_skipped;
    a->resync_lines = a->lines_total;
    a->resync_skipped = a->tmp->log_watcher_skipped;
    /* memcached that never stops skipping us (an overloaded host): after three windows,
     * give up waiting and let ordinary windows (flagged by their loss) go on. */
    int give_up = now - a->resync_since_mono > (int64_t)(3 * a->cfg.interval_s * 1e6);
    if (!flowing && !give_up)
        return;
    a->resync = 0;
    drain_events(a, now);
    a->discard_before_wall_us = a->tmp->wall_us;
    ag_log(flowing ? AG_LOG_INFO : AG_LOG_WARN, flowing ? "window_resynced" : "window_resync_gave_up",
           "discarded_s=%.1f lines=%" PRIu64 " skipped=%" PRIu64 " watcher_skipped=%" PRIu64,
           (double)(now - a->resync_since_mono) / 1e6, a->lines_total - a->lines_at_start,
           atomic_load(&a->watch.skipped) - a->stream_skip_at_start,
           a->tmp->log_watcher_skipped >= a->s0->log_watcher_skipped
               ? a->tmp->log_watcher_skipped - a->s0->log_watcher_skipped : 0);
    /* the stretch since the blind window was lossy, and what of it arrives late is dropped */
    check_lost_evictions(a, a->s0, a->tmp);
    *a->s0 = *a->tmp;
    window_counters_start(a);
    a->win_end_mono = now + (int64_t)(a->cfg.interval_s * 1e6);
}

static int check_stats(agent *a)
{
    uint64_t g = ag_poller_latest(&a->poller, a->tmp);
    if (g == 0 || g == a->poll_gen_seen)
        return 0;
    a->poll_gen_seen = g;
    if (!a->have_start || strcmp(a->tmp->instance_id, a->s0->instance_id) != 0)
        return new_instance(a, a->tmp);
    sync_capacities(a, a->tmp, 0);
    return 0;
}

/* How far ahead process_ring prefetches the prefix set a line will be noted in. */
#define NOTE_AHEAD 8

static void process_ring(agent *a, ag_item *batch, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (i + NOTE_AHEAD < n)
            ag_bd_prefetch(&a->feed.bd, batch[i + NOTE_AHEAD].line.key);
        wl_line *l = &batch[i].line;
        if (l->type == AG_MARK_STREAM_START || l->type == AG_MARK_STREAM_END) {
            /* A new watcher starts at a new gid: whatever is held belongs to the old stream. */
            wn_flush(a->wn);
            drain_events(a, batch[i].arrival_us);
            ag_ext_release(&a->ext, a->feed.prof, a->s0, UINT64_MAX, 0);
            wn_reset(a->wn);
            continue;
        }
        if (l->type == WL_EXTWRITE) { /* not an event: the key stays cached (extstore.h) */
            a->lines_total++;
            ag_ext_line(&a->ext, a->feed.prof, a->s0, l, batch[i].arrival_us);
            continue;
        }
        if (l->type != WL_SKIPPED && l->type != WL_OTHER) {
            a->lines_total++;
            ag_bd_note_prefix(&a->feed.bd, l->key, batch[i].pfx);
        }
        wn_push(a->wn, l, batch[i].arrival_us);
    }
}

static int setup(agent *a)
{
    ag_config *c = &a->cfg;
    ag_feed_config_from(c, &a->fcfg);
    ag_overload_init(&a->ov, (int)c->shed);
    if (c->breakdown) {
        char err[200];
        if (ag_keys_init(&a->keys, c->prefix_delimiter[0], (int)c->prefix_depth, c->prefix_regex,
                         (int)c->hot_keys_clear, err, sizeof err) < 0) {
            ag_log(AG_LOG_ERROR, "prefix_rule_failed", "error=\"%s\"", err);
            return -1;
        }
        a->keys_on = 1;
    }
    if (feed_init(a) < 0)
        return -1;
    wn_config wc = {.reorder_lines = 1u << 17,
                    .reorder_us = (int64_t)(c->reorder_ms * 1000),
                    .pair_gids = 1u << 16};
    a->wn = wn_new(&wc);
    a->s0 = calloc(1, sizeof *a->s0);
    a->s1 = calloc(1, sizeof *a->s1);
    a->tmp = calloc(1, sizeof *a->tmp);
    if (!a->wn || !a->s0 || !a->s1 || !a->tmp || ag_ring_init(&a->ring, c->ring_size) < 0) {
        ag_log(AG_LOG_ERROR, "out_of_memory", "%s", "");
        return -1;
    }
    if (c->events_log[0] && !(a->events_log = fopen(c->events_log, "w"))) {
        ag_log(AG_LOG_ERROR, "events_log_failed", "file=%s error=\"%s\"", c->events_log,
               strerror(errno));
        return -1;
    }
    if (c->snapshot_dir[0] && ag_mkdirs(c->snapshot_dir, 0750) < 0) {
        ag_log(AG_LOG_ERROR, "snapshot_dir_failed", "dir=%s error=\"%s\"", c->snapshot_dir,
               strerror(errno));
        return -1;
    }
    if (c->backend_url[0]) {
        if (ag_spool_open(&a->spool, c->spool_dir, c->spool_max_bytes, c->spool_max_files) < 0)
            return -1;
        a->spool_on = 1;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
            ag_log(AG_LOG_ERROR, "curl_init_failed", "%s", "");
            return -1;
        }
        if (ag_uploader_start(&a->up, &a->spool, c->backend_url, c->agent_key_file, c->ca_file,
                              c->upload_timeout_s, c->backoff_max_s) < 0)
            return -1;
    }
    if ((a->spool_on || c->snapshot_dir[0]) &&
        ag_writer_start(&a->writer, a->spool_on ? &a->spool : NULL) < 0) {
        ag_log(AG_LOG_ERROR, "thread_start_failed", "thread=writer");
        return -1;
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    agent *a = calloc(1, sizeof *a);
    if (!a)
        return 1;
    ag_config_defaults(&a->cfg);
    /* argv[0] may be "run" when called from main's dispatcher. */
    int skip = argc > 0 && strcmp(argv[0], "run") == 0;
    int pr = ag_config_parse(&a->cfg, argc - skip, argv + skip);
    if (pr != 0) {
        free(a);
        return pr > 0 ? 0 : 2;
    }
    ag_log_set_level(ag_log_parse_level(a->cfg.log_level));

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (setup(a) < 0)
        return 1;
    ag_log(AG_LOG_INFO, "agent_start",
           "version=%s memcached=%s interval_s=%.1f backend=%s snapshot_dir=%s spool_dir=%s",
           AG_VERSION, a->cfg.memcached, a->cfg.interval_s,
           a->cfg.backend_url[0] ? a->cfg.backend_url : "none",
           a->cfg.snapshot_dir[0] ? a->cfg.snapshot_dir : "none",
           a->spool_on ? a->cfg.spool_dir : "none");
    if (ag_poller_start(&a->poller, a->cfg.memcached, a->cfg.stats_interval_s) < 0 ||
        ag_watch_start(&a->watch, a->cfg.memcached, &a->ring, a->keys_on ? &a->keys : NULL,
                       a->cfg.drop_lines) < 0) {
        ag_log(AG_LOG_ERROR, "thread_start_failed", "%s", "");
        return 1;
    }
    int64_t t_start = ag_mono_us();
    int64_t next_check = 0;
    enum { BATCH = 4096 };
    ag_item *batch = malloc(BATCH * sizeof *batch);
    int rc = 0;
    long idle_ns = 2000000;
    while (!got_signal && batch) {
        int64_t now = ag_mono_us();
        if (a->cfg.duration_s > 0 && now - t_start >= (int64_t)(a->cfg.duration_s * 1e6))
            break;
        uint32_t n = ag_ring_pop(&a->ring, batch, BATCH);
        process_ring(a, batch, n);
        drain_events(a, now);
        if (ag_overload_check(&a->ov, now,
                              atomic_load(&a->ring.dropped) - atomic_load(&a->watch.injected)) >= 0)
            apply_shed(a);
        if (now >= next_check) {
            if (check_stats(a) < 0) {
                rc = 1;
                break;
            }
            next_check = now + 200000;
        }
        if (a->have_start && a->resync && !a->closing)
            check_resync(a, now);
        if (a->have_start && a->closing && now >= a->grace_end_mono)
            finish_close(a);
        else if (a->have_start && !a->closing && !a->resync && now >= a->win_end_mono)
            begin_close(a); /* (while resyncing, the window waits for a clean stream) */
        if (n == 0) {
            /* Idle: back off to 10 ms (the ring holds far more than 10 ms of any real stream). */
            struct timespec ts = {0, idle_ns};
            nanosleep(&ts, NULL);
            idle_ns = idle_ns * 2 > 10000000 ? 10000000 : idle_ns * 2;
        } else {
            idle_ns = 2000000;
        }
    }
    ag_log(AG_LOG_INFO, "agent_stopping", "signal=%d", (int)got_signal);
    /* Final partial window, then stop the readers, then drain the upload queue. */
    uint32_t n;
    while (batch && (n = ag_ring_pop(&a->ring, batch, BATCH)) > 0)
        process_ring(a, batch, n);
    if (a->have_start && rc == 0) {
        /* Everything read so far belongs to the last window. */
        wn_flush(a->wn);
        if (a->closing)
            finish_close(a);
        if (begin_close(a) == 0) {
            wn_flush(a->wn);
            finish_close(a);
        }
    }
    ag_watch_stop(&a->watch);
    ag_poller_stop(&a->poller);
    /* Every window is on disk before the uploader's last drain. */
    ag_writer_stop(&a->writer);
    if (a->writer.failed || a->writer.waits)
        ag_log(AG_LOG_WARN, "writer_stopped",
               "written=%" PRIu64 " failed=%" PRIu64 " queue_full_waits=%" PRIu64,
               a->writer.written, a->writer.failed, a->writer.waits);
    if (a->spool_on) {
        uint64_t left = ag_uploader_drain_and_stop(&a->up, a->cfg.shutdown_timeout_s);
        ag_log(left ? AG_LOG_WARN : AG_LOG_INFO, "spool_drained",
               "unsent=%" PRIu64 " sent=%" PRIu64 " dropped=%" PRIu64 " rejected=%" PRIu64, left,
               a->spool.sent, a->spool.dropped, a->spool.rejected);
        ag_spool_close(&a->spool);
        curl_global_cleanup();
    }
    ag_log(AG_LOG_INFO, "agent_exit", "windows=%" PRIu64 " lines=%" PRIu64
           " agent_dropped=%" PRIu64, a->windows, a->lines_total,
           (uint64_t)atomic_load(&a->ring.dropped));
    free(batch);
    free(a->held);
    if (a->events_log)
        fclose(a->events_log);
    ag_feed_free(&a->feed);
    ag_ext_free(&a->ext);
    if (a->keys_on)
        ag_keys_free(&a->keys);
    wn_free(a->wn);
    ag_ring_free(&a->ring);
    free(a->s0);
    free(a->s1);
    free(a->tmp);
    free(a);
    return rc;
}
