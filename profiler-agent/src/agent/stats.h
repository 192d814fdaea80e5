/* Ground truth from memcached: `stats`, `stats items`, `stats slabs`, `stats settings`,
 * polled on a connection of their own by a poller thread. */
#ifndef AG_STATS_H
#define AG_STATS_H

#include <pthread.h>
#include <stdint.h>

#include "extstats.h"

#define MC_MAX_CLASSES 64
#define MC_MAX_SETTINGS 128

typedef struct mc_class_stats {
    int present;
    uint32_t chunk_size;
    uint64_t total_pages, total_chunks, used_chunks;
    uint64_t items, evicted, mem_requested, age;
    /* `stats slabs` per-class hit counters (misses have no class in memcached): which of the
     * class's found lookups were reads (get_hits) and which another command's */
    uint64_t get_hits, delete_hits, incr_hits, decr_hits, touch_hits;
} mc_class_stats;

typedef struct mc_stats {
    int ok;                      /* a complete poll */
    int64_t wall_us, mono_us;    /* when it was taken */
    uint64_t pid, uptime, time;
    char version[32];
    char instance_id[48];        /* "<start time>-<pid>" */
    /* counters from `stats` */
    uint64_t cmd_get, get_hits, get_misses, get_expired, get_flushed, cmd_set, cmd_touch;
    uint64_t evictions, bytes, curr_items, limit_maxbytes, total_items;
    uint64_t delete_hits, delete_misses, incr_hits, incr_misses, decr_hits, decr_misses;
    uint64_t touch_hits, touch_misses, cas_hits, cas_misses, cas_badval, cmd_flush;
    uint64_t reclaimed, expired_unfetched, evicted_unfetched, slabs_moved;
    uint64_t log_worker_dropped, log_worker_written, log_watcher_skipped, log_watcher_sent;
    int has_watcher_skipped;     /* this memcached reports log_watcher_skipped */
    uint64_t total_malloced, hash_bytes, curr_connections;
    mc_ext_stats ext;            /* the flash tier (extstats.h); ext.present 0 without one */
    mc_class_stats cls[MC_MAX_CLASSES];
    int nsettings;
    char set_name[MC_MAX_SETTINGS][40];
    char set_value[MC_MAX_SETTINGS][64];
} mc_stats;

/* memcached has taken (nearly) all of -m: it allocates 1 MiB pages until total_malloced reaches
 * limit_maxbytes, so within two pages of it no class can grow any more. */
int ag_memory_full(uint64_t total_malloced, uint64_t limit_maxbytes);

/* One synchronous poll over fd (all four commands). 0 ok, -1 error. */
int mc_stats_poll(int fd, mc_stats *out);
/* Parse one `STAT name value` line into *s (exposed for tests). */
void mc_stats_apply(mc_stats *s, const char *group, const char *name, const char *value);

typedef struct ag_poller {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *addr;
    double interval_s;
    volatile int stop;
    int want_now;         /* a poll was requested */
    uint64_t gen;         /* completed polls (ok or failed) */
    mc_stats last;        /* latest successful poll */
    uint64_t ok_gen;      /* gen of `last` */
    int connected;
    uint64_t failures;
} ag_poller;

int ag_poller_start(ag_poller *p, const char *addr, double interval_s);
void ag_poller_stop(ag_poller *p);
/* Ask for a poll now and wait up to timeout_ms for it. Copies the latest successful stats
 * into *out. Returns 1 if *out is from this fresh poll, 0 if stale (or none: out->ok = 0). */
int ag_poller_poll_now(ag_poller *p, int timeout_ms, mc_stats *out);
/* Ask for a poll soon, without waiting. */
void ag_poller_request(ag_poller *p);
/* Latest successful stats without waiting; returns its gen (0 none). */
uint64_t ag_poller_latest(ag_poller *p, mc_stats *out);

#endif
