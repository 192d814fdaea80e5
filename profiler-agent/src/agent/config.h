/* Agent configuration: defaults, config file (`name = value`, same names as the long flags),
 * then command-line flags (which win). */
#ifndef AG_CONFIG_H
#define AG_CONFIG_H

#include <stdint.h>

#define AG_VERSION "0.1.0"

typedef struct ag_config {
    char memcached[256];       /* host:port or /path/to/unix.sock */
    char backend_url[512];     /* https://host (no path); empty = no uploads */
    char agent_key_file[512];
    char ca_file[512];
    char spool_dir[512];
    char snapshot_dir[512];
    char hostname[128];
    char log_level[16];
    char events_log[512];      /* debugging/tests: every normalised event as a text line */
    double interval_s;         /* snapshot window */
    double stats_interval_s;
    double loss_threshold;
    double blind_loss;         /* a window losing more than this yields no curve at all */
    double ghost_factor;
    uint32_t ghost_filters;    /* 0 = auto (hc_ghost_filters_for): N/8 per filter */
    uint32_t buckets;
    char estimator[16];        /* below N: "rounder" (default) or "stacker" (hc_estimator_parse) */
    uint64_t profile_max_keys; /* 0 = track every key */
    uint32_t lookup_correction;/* 1 (default): other commands' lookups leave the reads
                                  (lookups.h); 0: every item_get counts as a read */
    double drop_lines;         /* testing: share of watch lines dropped at the reader (0) */
    uint32_t shed;             /* 1 (default): under sustained overload shed trace, breakdown */
    uint32_t breakdown_delay_us; /* testing: busy-wait per breakdown event (an overload) */
    uint32_t invalidations;    /* 1 (default): a miss of a key held as resident is a lost
                                  eviction only while memcached's counters say evictions were
                                  lost, else an invalidation (profile.h); 0: always an eviction */
    double trace_rate;         /* spatial sampling rate of the trace; 0 = no trace */
    uint32_t trace_max_records;/* per window (rate is lowered to stay under) */
    uint64_t spool_max_bytes;
    uint32_t spool_max_files;
    double reorder_ms;
    uint32_t ring_size;
    double shutdown_timeout_s;
    double duration_s;         /* 0 = run until SIGTERM */
    double upload_timeout_s;
    double backoff_max_s;
    uint64_t ttl_max_keys;     /* bound of the TTL tracker */
    /* TTL-aware curves, prefixes, hot keys (breakdown.h) */
    uint32_t breakdown;        /* 1 on (default), 0 off */
    char prefix_delimiter[8];  /* one character (default ":") */
    uint32_t prefix_depth;     /* fields in a prefix (default 1) */
    char prefix_regex[256];    /* overrides delimiter/depth when set */
    uint32_t prefix_top;       /* prefixes reported (default 20, max 100) */
    uint32_t hot_keys;         /* hot keys reported per list (default 10, max 100) */
    uint32_t hot_keys_clear;   /* 1: send hot keys in clear (default 0: hashed) */
} ag_config;

void ag_config_defaults(ag_config *c);
/* Parse argv (after "run"). Returns 0 ok, 1 = help/version printed (exit 0), -1 error
 * (message printed). */
int ag_config_parse(ag_config *c, int argc, char **argv);
void ag_config_usage(void);

#endif
