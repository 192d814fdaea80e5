/* The breakdown's fields of a snapshot (docs/agent-protocol.md, "Breakdown"): per class
 * `curve.ttl_points` and `left`, top-level `ttl_points` and `ttl`, `prefixes`,
 * `prefix_other`, `prefix_rule`, `hot_keys`, `hot_keys_by_bytes`. Added to the document
 * ag_snapshot_build made. */
#ifndef AG_SNAPSHOT_BD_H
#define AG_SNAPSHOT_BD_H

#include <jansson.h>

#include "config.h"
#include "feed.h"
#include "keys.h"

void ag_snapshot_breakdown(json_t *snap, const ag_config *cfg, const ag_feed *feed,
                           ag_keys *keys);

#endif
