/*
 * `hitcurve-agent replay`: offline profiling of a captured trace (stable interface, extend only):
 *   replay --format arc|lirs|cache2k|csv|watchlog --cache-size N [--unit items|bytes]
 *          [--ghost-factor K] [--sample-keys M | --sample-rate R] FILE|-
 * extra options: --estimator rounder|stacker, --buckets B, --filters F (default the agent's
 * 1 + 8(K-1), at most 64), --points P (>= 100), --object-size BYTES, --csv.
 * Key-only traces are GETs against an emulated LRU of N items (a miss refills a fixed-size
 * object); watchlog events (HIT/MISS/SET/DELETE/EVICT) drive the profile as the live agent
 * does, all classes folded into one cache of N. Output: one JSON object on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <jansson.h>
#include "commands.h"
#include "version.h"
#include "../core/profile.h"
#include "../../../tracereader/include/tracereader.h"

static void replay_usage(FILE *f)
{
    fprintf(f,
        "usage: hitcurve-agent replay --format arc|lirs|cache2k|csv|watchlog --cache-size N\n"
        "         [--unit items|bytes] [--ghost-factor K] [--sample-keys M | --sample-rate R]\n"
        "         [--estimator rounder|stacker] [--buckets B] [--filters F] [--points P]\n"
        "         [--object-size BYTES] [--csv] FILE|-\n"
        "Prints {\"unit\", \"current_size\", \"points\": [[size, hit_ratio], ...], ...}: P (default 100)\n"
        "points evenly spaced over (0, K*N]; hit ratio over all reads of the trace.\n"
        "--unit bytes: N is in bytes; items = N / object size (--object-size, default the first\n"
        "request's size, or 4096 when the trace has no sizes).\n"
        "--estimator: below N, rounder (default; uniform within a bucket, 12 B per tracked key) or\n"
        "stacker (exact LRU distance, 24 B per tracked key, slower per hit).\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cmd_replay(int argc, char **argv)
{
    const char *format = NULL, *path = NULL, *unit = "items";
    uint64_t cache_size = 0, sample_keys = 0, points = 100, object_size = 0, u;
    double sample_rate = 0, d;
    int csv = 0, filters_set = 0;
    hc_profile_config cfg;
    hc_profile_config_default(&cfg);
    cfg.emulate_lru = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define NEED_ARG() do { if (!v) { fprintf(stderr, "replay: %s needs a value\n", a); return 2; } i++; } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { replay_usage(stdout); return 0; }
        else if (!strcmp(a, "--format")) { NEED_ARG(); format = v; }
        else if (!strcmp(a, "--cache-size")) {
            NEED_ARG();
            if (parse_u64(v, &cache_size) || cache_size == 0) { fprintf(stderr, "replay: --cache-size must be a positive integer\n"); return 2; }
        } else if (!strcmp(a, "--unit")) {
            NEED_ARG(); unit = v;
            if (strcmp(unit, "items") && strcmp(unit, "bytes")) { fprintf(stderr, "replay: --unit must be items or bytes\n"); return 2; }
        } else if (!strcmp(a, "--ghost-factor")) {
            NEED_ARG();
            if (parse_double(v, &d) || d < 1 || d > 16) { fprintf(stderr, "replay: --ghost-factor must be in [1, 16]\n"); return 2; }
            cfg.ghost_factor = d;
        } else if (!strcmp(a, "--sample-keys")) {
            NEED_ARG();
            if (parse_u64(v, &sample_keys) || sample_keys < 64) { fprintf(stderr, "replay: --sample-keys must be an integer >= 64\n"); return 2; }
        } else if (!strcmp(a, "--sample-rate")) {
            NEED_ARG();
            if (parse_double(v, &sample_rate) || !(sample_rate > 0 && sample_rate <= 1)) { fprintf(stderr, "replay: --sample-rate must be in (0, 1]\n"); return 2; }
        } else if (!strcmp(a, "--estimator")) {
            NEED_ARG();
            if ((cfg.estimator = hc_estimator_parse(v)) < 0) { fprintf(stderr, "replay: --estimator must be rounder or stacker\n"); return 2; }
        } else if (!strcmp(a, "--buckets")) {
            NEED_ARG();
            if (parse_u64(v, &u) || u < 1 || u > (1u << 20)) { fprintf(stderr, "replay: --buckets must be 1..1048576\n"); return 2; }
            cfg.buckets = (uint32_t)u;
        } else if (!strcmp(a, "--filters")) {
            NEED_ARG();
            if (parse_u64(v, &u) || u < 2 || u > 64) { fprintf(stderr, "replay: --filters must be 2..64\n"); return 2; }
            cfg.ghost_filters = (uint32_t)u;
            filters_set = 1;
        } else if (!strcmp(a, "--points")) {
            NEED_ARG();
            if (parse_u64(v, &points) || points < 100 || points > 100000) { fprintf(stderr, "replay: --points must be 100..100000\n"); return 2; }
        } else if (!strcmp(a, "--object-size")) {
            NEED_ARG();
            if (parse_u64(v, &object_size) || object_size == 0 || object_size > UINT32_MAX) { fprintf(stderr, "replay: --object-size must be a positive integer\n"); return 2; }
        } else if (!strcmp(a, "--csv")) csv = 1;
        else if (a[0] == '-' && a[1] != 0) { fprintf(stderr, "replay: unknown option %s\n", a); replay_usage(stderr); return 2; }
        else if (!path) path = a;
        else { fprintf(stderr, "replay: more than one input file\n"); return 2; }
#undef NEED_ARG
    }
    if (!format || !cache_size || !path) {
        fprintf(stderr, "replay: --format, --cache-size and an input file (or -) are required\n");
        replay_usage(stderr);
        return 2;
    }
    /* the live agent's rule unless --filters was given: N/8 per filter (hc_ghost_filters_for) */
    if (!filters_set) cfg.ghost_filters = hc_ghost_filters_for(cfg.ghost_factor);
    if (sample_keys && sample_rate > 0) { fprintf(stderr, "replay: --sample-keys and --sample-rate are exclusive\n"); return 2; }
    if (sample_keys) { cfg.sampling = HC_SAMPLE_FIXED_SIZE; cfg.sample_max_keys = sample_keys; }
    else if (sample_rate > 0) { cfg.sampling = HC_SAMPLE_RATE; cfg.sample_rate = sample_rate; }
    /* the grid must hold the requested points exactly */
    if (points > cfg.resolution) cfg.resolution = (uint32_t)points;
    else cfg.resolution = (uint32_t)((cfg.resolution + points - 1) / points * points);

    const char *err = NULL;
    tr_reader *rd = tr_open(path, format, &err);
    if (!rd) { fprintf(stderr, "replay: %s: %s\n", path, err ? err : "cannot open"); return 1; }

    tr_request rq;
    int have = tr_next(rd, &rq);
    if (have < 0) { fprintf(stderr, "replay: %s: %s\n", path, tr_error(rd)); tr_close(rd); return 1; }
    int bytes = !strcmp(unit, "bytes");
    if (!object_size) object_size = (have == 1 && rq.size > 0) ? rq.size : 4096;
    uint64_t items = bytes ? cache_size / object_size : cache_size;
    if (items < 1) { fprintf(stderr, "replay: cache of %llu bytes holds no %llu-byte object\n", (unsigned long long)cache_size, (unsigned long long)object_size); tr_close(rd); return 2; }

    hc_profile *p = hc_profile_new(&cfg, &err);
    if (!p) { fprintf(stderr, "replay: %s\n", err); tr_close(rd); return 2; }
    if (hc_profile_set_capacity(p, 0, items, (uint32_t)object_size) != 0) {
        fprintf(stderr, "replay: out of memory for a cache of %llu items\n", (unsigned long long)items);
        hc_profile_free(p); tr_close(rd); return 1;
    }

    double t0 = now_s();
    uint64_t nreq = 0;
    while (have == 1) {
        nreq++;
        int op = rq.op <= TR_EVICT ? rq.op : TR_GET;
        (void)hc_profile_event(p, op, 0, rq.key, rq.size);
        have = tr_next(rd, &rq);
    }
    double elapsed = now_s() - t0;
    if (have < 0) {
        fprintf(stderr, "replay: %s: %s (after %llu requests)\n", path, tr_error(rd), (unsigned long long)nreq);
        hc_profile_free(p); tr_close(rd); return 1;
    }
    uint64_t skipped = tr_skipped(rd);
    tr_close(rd);

    hc_curve cv;
    hc_profile_curve(p, 0, &cv);
    hc_profile_stats st;
    hc_profile_stats_get(p, &st);
    double scale = bytes ? (double)object_size : 1.0;
    double span = cfg.ghost_factor * (double)items;

    if (csv) {
        printf("size,hit_ratio\n");
        for (uint64_t i = 0; i < points; i++) {
            double x = (i + 1) * span / points;
            printf("%.6g,%.6f\n", x * scale, hc_profile_hit_ratio_at(p, 0, x));
        }
        hc_profile_free(p);
        return 0;
    }

    json_t *o = json_object();
    json_object_set_new(o, "unit", json_string(unit));
    json_object_set_new(o, "current_size", json_integer((json_int_t)cache_size));
    json_object_set_new(o, "current_items", json_integer((json_int_t)items));
    if (bytes) json_object_set_new(o, "object_size", json_integer((json_int_t)object_size));
    json_object_set_new(o, "ghost_factor", json_real(cfg.ghost_factor));
    json_object_set_new(o, "format", json_string(format));
    json_object_set_new(o, "requests", json_integer((json_int_t)nreq));
    json_object_set_new(o, "reads", json_integer((json_int_t)cv.reads));
    json_object_set_new(o, "skipped_records", json_integer((json_int_t)skipped));
    json_object_set_new(o, "hit_ratio_at_current", json_real(hc_profile_hit_ratio_at(p, 0, (double)items)));
    json_t *prof = json_object();
    json_object_set_new(prof, "estimator", json_string(hc_estimator_name(cfg.estimator)));
    json_object_set_new(prof, "buckets", json_integer(cfg.buckets));
    json_object_set_new(prof, "ghost_filters", json_integer(cfg.ghost_filters));
    json_object_set_new(prof, "sampling", json_string(cfg.sampling == HC_SAMPLE_OFF ? "off" : cfg.sampling == HC_SAMPLE_RATE ? "rate" : "fixed-size"));
    json_object_set_new(prof, "sample_rate", json_real(st.sample_rate));
    if (cfg.sampling == HC_SAMPLE_FIXED_SIZE) json_object_set_new(prof, "sample_max_keys", json_integer((json_int_t)cfg.sample_max_keys));
    json_object_set_new(prof, "tracked_keys", json_integer((json_int_t)st.tracked_keys));
    json_object_set_new(prof, "memory_bytes", json_integer((json_int_t)st.total_bytes));
    json_object_set_new(prof, "elapsed_s", json_real(elapsed));
    json_object_set_new(o, "profile", prof);
    json_object_set_new(o, "version", json_string(HC_VERSION));
    json_t *pts = json_array();
    for (uint64_t i = 0; i < points; i++) {
        double x = (i + 1) * span / points;
        json_t *pt = json_array();
        double xs = x * scale;
        if (xs == (double)(json_int_t)xs) json_array_append_new(pt, json_integer((json_int_t)xs));
        else json_array_append_new(pt, json_real(xs));
        json_array_append_new(pt, json_real(hc_profile_hit_ratio_at(p, 0, x)));
        json_array_append_new(pts, pt);
    }
    json_object_set_new(o, "points", pts);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(8));
    if (s) { fputs(s, stdout); fputc('\n', stdout); free(s); }
    json_decref(o);
    hc_profile_free(p);
    return s ? 0 : 1;
}
