/* Snapshot JSON (agent protocol v1, docs/agent-protocol.md) for one window. */
#ifndef AG_SNAPSHOT_H
#define AG_SNAPSHOT_H

#include <jansson.h>

#include "config.h"
#include "feed.h"
#include "lookups.h"
#include "stats.h"
#include "statsmodel.h"

typedef struct ag_loss {
    uint64_t events_seen;      /* watch lines parsed in the window */
    uint64_t worker_dropped;   /* delta log_worker_dropped */
    uint64_t watcher_skipped;  /* delta log_watcher_skipped */
    uint64_t stream_skipped;   /* skipped=N lines */
    uint64_t agent_dropped;    /* our ring overflowed */
    uint64_t malformed;        /* lines we could not parse */
} ag_loss;

typedef struct ag_spool_info {
    int enabled;
    uint64_t pending, pending_bytes, dropped, rejected, sent;
} ag_spool_info;

/* What the agent saw of the stream (probing), for the snapshot's `features`. */
typedef struct ag_features {
    const char *watch_mode;    /* ag_watch_mode_name(): deletions, no_deletions, refused */
    int cfd, size;             /* item lines carry cfd= / size= (1.5.x: neither) */
    uint64_t unknown_lines;    /* lines of a type= the parser does not know (cumulative) */
} ag_features;

/* The window's verdict: its loss, and the self-check of the agent's event-derived hit ratio
 * against memcached's own get_hits/get_misses delta (a 1.5.16 double count read
 * 17 pp low in every window with nothing in the log; this check names such a window). */
/* The self-check flags a window whose agent hit ratio is further than this from memcached's,
 * beyond what the window's measured loss explains. */
#define AG_SELF_CHECK_PP 1.0

typedef struct ag_verdict {
    double loss_ratio;
    double agent_hit_ratio, measured_hit_ratio, tolerance; /* -1: not computable */
    uint64_t reads_seen, reads_measured;
    int check;       /* 1 agrees, 0 disagrees beyond what loss explains, -1 too few reads */
    int blind;       /* reads happened but the agent saw (almost) none of them */
    int flagged;     /* loss above the threshold or the self-check failed */
    int flushed;     /* cmd_flush grew in the window (run.c flags it too) */
} ag_verdict;

/* The verdict alone (run.c decides from it whether the window yields a snapshot at all). */
void ag_window_verdict(const ag_config *cfg, const mc_stats *s0, const mc_stats *s1,
                       const ag_feed *feed, const ag_loss *loss, const ag_lookups *lk,
                       ag_verdict *v);

json_t *ag_snapshot_build(const ag_config *cfg, const char *snapshot_id, const mc_stats *s0,
                          const mc_stats *s1, const ag_feed *feed, const ag_loss *loss,
                          const ag_spool_info *spool, const ag_features *feat,
                          const ag_verdict *v, const ag_lookups *lk, const sm_fit *stats_only);
/* stats_only != NULL: `watch` is refused; no per-class curves, `basis: "stats_only"` and the
 * model's curve in `stats_model` (statsmodel.h). */

#endif
