#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"
#include "log.h"
#include "../core/profile.h"
#include "../core/keyprefix.h"

#include <stddef.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ag_config_defaults(ag_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->memcached, sizeof c->memcached, "127.0.0.1:11211");
    snprintf(c->spool_dir, sizeof c->spool_dir, "/var/lib/hitcurve-agent/spool");
    snprintf(c->log_level, sizeof c->log_level, "info");
    if (gethostname(c->hostname, sizeof c->hostname) != 0)
        snprintf(c->hostname, sizeof c->hostname, "unknown");
    c->hostname[sizeof c->hostname - 1] = 0;
    c->interval_s = 60;
    c->stats_interval_s = 5;
    c->loss_threshold = 0.05;
    c->blind_loss = 0.5;
    /* 5: the curve reaches past 4x today's memory (at K = 4 the last point is 4N itself, where the
     * oldest filter is only partly covered and the curve's end reads low). Costs ~95 B per
     * tracked key against ~40 B at K = 2 (profiler-agent/README.md). */
    c->ghost_factor = 5;
    c->buckets = 128;
    snprintf(c->estimator, sizeof c->estimator, "rounder");
    c->profile_max_keys = 1u << 20;
    c->lookup_correction = 1;
    c->invalidations = 1;
    /* 0.05: the worker's policy correction (memcached's segmented LRU beats the LRU model by
     * ~2 pp at N/4 on Zipf traffic) trusts 20k sampled reads after its warm-up; at 0.01 a server
     * needed ~4M reads for that and answers below today's memory read low until then (measured
     * -2.5 pp at M/4). trace_max_records bounds a window's chunk whatever the traffic (the rate
     * halves for the window when it fills), so only quiet servers send more than before. */
    c->trace_rate = 0.05;
    c->trace_max_records = 100000;
    c->spool_max_bytes = 256ull << 20;
    c->spool_max_files = 10000;
    c->reorder_ms = 1000;
    c->ring_size = 1u << 17;
    c->shutdown_timeout_s = 10;
    c->upload_timeout_s = 30;
    c->backoff_max_s = 60;
    c->ttl_max_keys = 1u << 18;
    c->breakdown = 1;
    c->shed = 1;
    snprintf(c->prefix_delimiter, sizeof c->prefix_delimiter, ":");
    c->prefix_depth = 1;
    c->prefix_top = 20;
    c->hot_keys = 10;
}

void ag_config_usage(void)
{
    printf(
        "usage: hitcurve-agent run [options]\n"
        "\n"
        "Watch a running memcached (`watch fetchers mutations evictions` + stats polling),\n"
        "estimate hit-rate curves per slab class and upload them every interval.\n"
        "\n"
        "  --config FILE            read `name = value` lines (names as below, without --)\n"
        "  --memcached ADDR         host:port or /path/to/socket (default 127.0.0.1:11211)\n"
        "  --backend-url URL        e.g. https://hitcurve.example.com (empty: no uploads)\n"
        "  --agent-key-file FILE    file holding the agent key (hca_...), sent as bearer\n"
        "  --ca-file FILE           CA bundle for the backend's TLS certificate\n"
        "  --spool-dir DIR          on-disk upload queue (default /var/lib/hitcurve-agent/spool)\n"
        "  --spool-max-bytes N      bound of the queue (default 268435456); oldest dropped\n"
        "  --spool-max-files N      bound of the queue in files (default 10000)\n"
        "  --snapshot-dir DIR       also write every snapshot and trace chunk as JSON into DIR\n"
        "  --interval SECONDS       snapshot window (default 60)\n"
        "  --stats-interval SECONDS stats polling period (default 5)\n"
        "  --loss-threshold R       flag windows whose event loss ratio exceeds R (default 0.05)\n"
        "  --blind-loss R           a window losing more than R (or seeing < 5%% of the reads)\n"
        "                           uploads no curve, only a logged warning (default 0.5)\n"
        "  --ghost-factor K         curves span (0, K x current size] (default 5, max 16)\n"
        "  --ghost-filters F        counting filters in each ghost, 2..64 (default 0: 1 + 8(K-1),\n"
        "                           at most 64, so each filter spans N/8 items; MIMIR uses 3)\n"
        "  --buckets B              ROUNDER buckets (default 128)\n"
        "  --estimator NAME         below the current size: rounder (default) or stacker\n"
        "                           (exact LRU distances, 2x the bytes per tracked key and\n"
        "                           ~2-4x the CPU per event; profiler-agent/README.md)\n"
        "  --profile-max-keys N     keys tracked by the profiler, 0 = all (default 1048576)\n"
        "  --lookup-correction 0|1  leave touch/gat/incr/decr/delete lookups out of the reads,\n"
        "                           from memcached's counters (default 1; 0: count every lookup)\n"
        "  --invalidations 0|1      a miss of a key held as resident is an invalidation unless\n"
        "                           memcached's counters say evictions were lost (default 1;\n"
        "                           0: always a lost eviction)\n"
        "  --trace-rate R           key-hash sampling rate of the trace chunks, 0 = off (0.05)\n"
        "  --trace-max-records N    per window; the rate is lowered to stay under (100000)\n"
        "  --reorder-ms MS          gid reordering window (default 1000)\n"
        "  --ring-size N            lines buffered between the reader and the profiler (131072)\n"
        "  --ttl-max-keys N         keys with a TTL tracked for silent expiry (262144)\n"
        "  --breakdown 0|1          TTL-aware curves, prefixes, hot keys, expired vs evicted (1)\n"
        "  --shed 0|1               when the agent cannot keep up (its ring drops lines for 1 s)\n"
        "                           shed trace chunks, then the breakdown; said in the log and\n"
        "                           in diagnostics.shed (default 1)\n"
        "  --prefix-delimiter C     a key's prefix is its first fields split by C (default :)\n"
        "  --prefix-depth N         fields in a prefix, 1..8 (default 1: text before the first C)\n"
        "  --prefix-regex RE        POSIX extended regex instead; group 1 (or the match) is the\n"
        "                           prefix; keys without a match have none\n"
        "  --prefix-top N           prefixes reported per snapshot, 1..100 (default 20)\n"
        "  --hot-keys N             hot keys reported, by requests and by requests x size (10)\n"
        "  --hot-keys-clear 0|1     send hot keys in clear (default 0: XXH3 hashes only)\n"
        "  --upload-timeout SECONDS per request (default 30)\n"
        "  --backoff-max SECONDS    longest wait between retries (default 60)\n"
        "  --shutdown-timeout SECONDS  on SIGTERM, time allowed to drain the queue (default 10)\n"
        "  --duration SECONDS       exit after this long (default 0: run until SIGTERM)\n"
        "  --hostname NAME          reported agent hostname (default: gethostname)\n"
        "  --log-level LEVEL        debug, info, warn, error (default info)\n"
        "  --drop-lines R           testing: drop this share of watch lines at the reader, in\n"
        "                           runs of 256, counted as the agent's own loss (default 0)\n"
        "  --breakdown-delay-us N   testing: busy-wait N us per breakdown event (an overload)\n"
        "  --events-log FILE        debugging: write every normalised event as a line\n"
        "                           `op key_hash size clsid ttl gid cause` (op 1 hit .. 5 evict)\n"
        "  --check-config           parse the file and flags, print the settings as a config\n"
        "                           file and exit (0 valid, 2 invalid); nothing is started\n"
        "  --help, --version\n");
}

typedef enum { T_STR, T_DBL, T_U32, T_U64 } opt_type;
typedef struct {
    const char *name;
    opt_type type;
    size_t off;
    size_t size;
    double min, max;
} opt_def;

#define OSTR(n, f) {n, T_STR, offsetof(ag_config, f), sizeof(((ag_config *)0)->f), 0, 0}
#define ODBL(n, f, lo, hi) {n, T_DBL, offsetof(ag_config, f), 0, lo, hi}
#define OU32(n, f, lo, hi) {n, T_U32, offsetof(ag_config, f), 0, lo, hi}
#define OU64(n, f, lo, hi) {n, T_U64, offsetof(ag_config, f), 0, lo, hi}

static const opt_def opts[] = {
    OSTR("memcached", memcached),
    OSTR("backend-url", backend_url),
    OSTR("agent-key-file", agent_key_file),
    OSTR("ca-file", ca_file),
    OSTR("spool-dir", spool_dir),
    OSTR("snapshot-dir", snapshot_dir),
    OSTR("hostname", hostname),
    OSTR("log-level", log_level),
    OSTR("events-log", events_log),
    ODBL("interval", interval_s, 0.1, 86400),
    ODBL("stats-interval", stats_interval_s, 0.1, 3600),
    ODBL("loss-threshold", loss_threshold, 0, 1),
    ODBL("blind-loss", blind_loss, 0, 1),
    ODBL("ghost-factor", ghost_factor, 1, 16),
    OU32("ghost-filters", ghost_filters, 0, 64),
    OU32("buckets", buckets, 1, 65536),
    OSTR("estimator", estimator),
    OU64("profile-max-keys", profile_max_keys, 0, 1e12),
    OU32("lookup-correction", lookup_correction, 0, 1),
    OU32("invalidations", invalidations, 0, 1),
    ODBL("drop-lines", drop_lines, 0, 0.9),
    ODBL("trace-rate", trace_rate, 0, 1),
    OU32("trace-max-records", trace_max_records, 1, 200000),
    OU64("spool-max-bytes", spool_max_bytes, 4096, 1e15),
    OU32("spool-max-files", spool_max_files, 1, 1e9),
    ODBL("reorder-ms", reorder_ms, 1, 60000),
    OU32("ring-size", ring_size, 1024, 1 << 26),
    OU64("ttl-max-keys", ttl_max_keys, 0, 1e10),
    OU32("breakdown", breakdown, 0, 1),
    OU32("shed", shed, 0, 1),
    OU32("breakdown-delay-us", breakdown_delay_us, 0, 100000),
    OSTR("prefix-delimiter", prefix_delimiter),
    OU32("prefix-depth", prefix_depth, 1, 8),
    OSTR("prefix-regex", prefix_regex),
    OU32("prefix-top", prefix_top, 1, 100),
    OU32("hot-keys", hot_keys, 0, 100),
    OU32("hot-keys-clear", hot_keys_clear, 0, 1),
    ODBL("upload-timeout", upload_timeout_s, 0.1, 3600),
    ODBL("backoff-max", backoff_max_s, 0.01, 86400),
    ODBL("shutdown-timeout", shutdown_timeout_s, 0, 3600),
    ODBL("duration", duration_s, 0, 1e9),
};

static int set_opt(ag_config *c, const char *name, const char *val, const char *where)
{
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        const opt_def *o = &opts[i];
        if (strcmp(o->name, name) != 0)
            continue;
        char *p = (char *)c + o->off;
        if (o->type == T_STR) {
            if (strlen(val) >= o->size) {
                fprintf(stderr, "hitcurve-agent: %s: value of %s too long\n", where, name);
                return -1;
            }
            memcpy(p, val, strlen(val) + 1);
            return 0;
        }
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (errno || end == val || *end || d < o->min || d > o->max) {
            fprintf(stderr, "hitcurve-agent: %s: %s must be a number in [%g, %g], got '%s'\n",
                    where, name, o->min, o->max, val);
            return -1;
        }
        if (o->type == T_DBL)
            *(double *)p = d;
        else if (o->type == T_U32)
            *(uint32_t *)p = (uint32_t)d;
        else
            *(uint64_t *)p = (uint64_t)d;
        return 0;
    }
    fprintf(stderr, "hitcurve-agent: %s: unknown option '%s' (see --help)\n", where, name);
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = 0;
    return s;
}

static int load_file(ag_config *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hitcurve-agent: cannot read config file %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    char line[2048];
    int ln = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        char where[600];
        snprintf(where, sizeof where, "%s:%d", path, ln);
        if (!eq) {
            fprintf(stderr, "hitcurve-agent: %s: expected `name = value`\n", where);
            rc = -1;
            break;
        }
        *eq = 0;
        char *name = trim(s), *val = trim(eq + 1);
        size_t vl = strlen(val);
        if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
            val[vl - 1] = 0;
            val++;
        }
        if (set_opt(c, name, val, where) < 0) {
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* A double as the shortest text that parses back to it: 0.05, not %.17g's 0.050000000000000003
 * (both are the same double; an operator reads the first as what they wrote). */
static void print_double(const char *name, double v)
{
    char buf[40];
    if (v == (double)(long long)v && v > -1e15 && v < 1e15) { /* 30, not 3e+01 */
        printf("%s = %lld\n", name, (long long)v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    printf("%s = %s\n", name, buf);
}

/* --check-config: the effective settings in the config file's own syntax, so a packaged
 * file, a compose command or a unit's ExecStart can be checked without starting anything. */
static void print_config(const ag_config *c)
{
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        const opt_def *o = &opts[i];
        const char *p = (const char *)c + o->off;
        if (o->type == T_STR)
            printf("%s = %s\n", o->name, p);
        else if (o->type == T_DBL)
            print_double(o->name, *(const double *)p);
        else if (o->type == T_U32)
            printf("%s = %u\n", o->name, *(const uint32_t *)p);
        else
            printf("%s = %llu\n", o->name, (unsigned long long)*(const uint64_t *)p);
    }
}

int ag_config_parse(ag_config *c, int argc, char **argv)
{
    int check_only = 0;
    /* First pass: --help, --version and --config (the file is applied before other flags). */
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            ag_config_usage();
            return 1;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("hitcurve-agent %s\n", AG_VERSION);
            return 1;
        }
        if (strcmp(argv[i], "--check-config") == 0)
            check_only = 1;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--config", 8) == 0 && (a[8] == 0 || a[8] == '=')) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) {
                fprintf(stderr, "hitcurve-agent: --config needs a file\n");
                return -1;
            }
            if (load_file(c, v) < 0)
                return -1;
        }
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--check-config") == 0)
            continue;
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "hitcurve-agent: unexpected argument '%s' (see --help)\n", a);
            return -1;
        }
        char name[64];
        const char *eq = strchr(a, '=');
        const char *val;
        size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (nl >= sizeof name) {
            fprintf(stderr, "hitcurve-agent: unknown option '%s'\n", a);
            return -1;
        }
        memcpy(name, a + 2, nl);
        name[nl] = 0;
        if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc) {
                fprintf(stderr, "hitcurve-agent: --%s needs a value\n", name);
                return -1;
            }
            val = argv[++i];
        }
        if (strcmp(name, "config") == 0)
            continue;
        if (set_opt(c, name, val, "command line") < 0)
            return -1;
    }
    if (ag_log_parse_level(c->log_level) < 0) {
        fprintf(stderr, "hitcurve-agent: --log-level must be debug, info, warn or error\n");
        return -1;
    }
    if (hc_estimator_parse(c->estimator) < 0) {
        fprintf(stderr, "hitcurve-agent: --estimator must be rounder or stacker\n");
        return -1;
    }
    if (strlen(c->prefix_delimiter) != 1) {
        fprintf(stderr, "hitcurve-agent: --prefix-delimiter must be one character, got '%s'\n",
                c->prefix_delimiter);
        return -1;
    }
    if (c->prefix_regex[0]) {
        hc_prefix_rule r;
        char err[200];
        if (hc_prefix_rule_init(&r, c->prefix_delimiter[0], (int)c->prefix_depth, c->prefix_regex,
                                err, sizeof err) < 0) {
            fprintf(stderr, "hitcurve-agent: --prefix-regex: %s\n", err);
            return -1;
        }
        hc_prefix_rule_free(&r);
    }
    if (c->backend_url[0] && !c->agent_key_file[0]) {
        fprintf(stderr, "hitcurve-agent: --backend-url needs --agent-key-file\n");
        return -1;
    }
    if (check_only) {
        print_config(c);
        return 1;
    }
    return 0;
}
