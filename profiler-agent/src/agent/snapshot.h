/* Snapshot JSON (agent protocol v1, docs/agent-protocol.md) for one window. */
#ifndef AG_SNAPSHOT_H
#define AG_SNAPSHOT_H

#include <jansson.h>

#include "config.h"
#include "feed.h"
#include "stats.h"

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

json_t *ag_snapshot_build(const ag_config *cfg, const char *snapshot_id, const mc_stats *s0,
                          const mc_stats *s1, const ag_feed *feed, const ag_loss *loss,
                          const ag_spool_info *spool, double *loss_ratio_out);

#endif
