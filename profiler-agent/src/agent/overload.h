/*
 * The agent's own cost and what a busy node loses where.
 *
 * Per window: the agent's CPU seconds (all threads) and resident memory, so an operator sees
 * what the agent costs the cache host; and where lines were lost (memcached's worker buffers,
 * the watcher buffer, the agent's ring). When loss is sustained (over --loss-threshold in 2 of
 * the last 3 windows) the snapshot and the log name the change that helps for the source that
 * lost most.
 *
 * Shedding: memcached's logger never waits for a watcher, it skips lines for it, so the agent
 * cannot slow memcached by reading; what it can do is take a core from memcached's workers on a
 * busy host and lose lines in its own ring. Under sustained overload (the ring dropped lines in
 * every check for a second) the main thread sheds its optional work, trace chunks first, then
 * the breakdown (TTL-aware curves, prefixes, hot keys, TTL what-if): the per-class curves, the
 * product's answer, keep every line. A shed window says so (`diagnostics.shed`) and carries no
 * partial breakdown or trace. After two windows without ring drops one level comes back.
 */
#ifndef AG_OVERLOAD_H
#define AG_OVERLOAD_H

#include <jansson.h>
#include <stdint.h>

#include "snapshot.h"
#include "stats.h"

enum { AG_SHED_NONE = 0, AG_SHED_TRACE = 1, AG_SHED_BREAKDOWN = 2 };

#define AG_SHED_CHECK_US 250000 /* ring drops are checked this often */
#define AG_SHED_CHECKS 4        /* consecutive checks with drops: sustained (1 s) */
#define AG_SHED_QUIET_WINDOWS 2 /* windows without ring drops before a level comes back */
#define AG_LOSS_HISTORY 3

typedef struct ag_overload {
    int enabled;             /* --shed */
    int level;               /* AG_SHED_* now */
    int window_level;        /* the highest level during the window */
    int64_t next_check_us;
    uint64_t drops_at_check;
    int over_checks;
    int quiet_windows;
    double cpu_at_window;    /* process CPU seconds at the window's start */
    /* the last windows' loss, for "sustained" */
    double loss_ratio[AG_LOSS_HISTORY];
    uint64_t worker[AG_LOSS_HISTORY], watcher[AG_LOSS_HISTORY], agent[AG_LOSS_HISTORY];
    int nhist;
} ag_overload;

void ag_overload_init(ag_overload *o, int enabled);
double ag_self_cpu_seconds(void);
/* Main loop: every AG_SHED_CHECK_US, look at the ring's drop counter. Returns the new level
 * when it changed (the caller stops or restarts the shed work), else -1. */
int ag_overload_check(ag_overload *o, int64_t now_us, uint64_t ring_dropped);
/* Window close: adds `diagnostics.agent_cost`, `diagnostics.loss_sources` and
 * `diagnostics.shed` to snap (if any), logs sustained loss, and returns the level for the next
 * window (a level may come back), or -1 when unchanged. */
int ag_overload_window(ag_overload *o, json_t *snap, const ag_loss *loss, double loss_ratio,
                       double loss_threshold, const mc_stats *s1, uint64_t lines);

#endif
