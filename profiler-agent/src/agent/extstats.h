/*
 * memcached's extstore counters, as `stats` prints them (memcached.c and storage.c, 1.5.x and
 * 1.6.x alike; `extstore_compact_resc_*` and `extstore_memory_pressure` only from 1.6.2x).
 * memcached prints them only while it runs a flash tier (-o ext_path=FILE:SIZE), so
 * `limit_maxbytes` > 0 is how the agent knows the server has one.
 *
 * Not read: `stats extstore`, which lists each flash page (version, bytes, bucket); every sum
 * the agent sends is in `stats` already, and the agent sends no command it does not need.
 */
#ifndef AG_EXTSTATS_H
#define AG_EXTSTATS_H

#include <stdint.h>

typedef struct mc_ext_stats {
    int present;                  /* extstore_limit_maxbytes was reported and > 0 */
    /* per request, counted by the worker threads */
    uint64_t get_extstore;        /* reads sent to flash (a header found in RAM) */
    uint64_t get_aborted_extstore, get_oom_extstore;
    uint64_t recache_from_extstore; /* values read back from flash into RAM, whole again */
    uint64_t miss_from_extstore;  /* flash reads that found nothing (page evicted or bad crc):
                                     memcached counted the lookup in get_hits already */
    uint64_t badcrc_from_extstore;
    /* the flash tier itself */
    uint64_t compact_lost, compact_rescues, compact_skipped;
    uint64_t page_allocs, page_evictions, page_reclaims, pages_free, pages_used;
    uint64_t objects_evicted, objects_read, objects_written, objects_used;
    uint64_t bytes_evicted, bytes_written, bytes_read, bytes_used, bytes_fragmented;
    uint64_t limit_maxbytes;      /* flash size: the ext_path's SIZE, in whole pages */
    uint64_t io_queue;
} mc_ext_stats;

/* One `STAT name value` of `stats`: 1 if it was an extstore counter (taken), 0 otherwise. */
int mc_ext_stats_apply(mc_ext_stats *e, const char *name, const char *value);

#endif
