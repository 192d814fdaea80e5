/*
 * linepath: the live agent's line path, offline and single-threaded, on a stream recorded by
 * bench/agent_cost.py: each line parsed (wl_parse), its prefix registered (ag_keys_line), noted
 * in the breakdown's key -> prefix table, normalised (wn_push/wn_pop, offline clock: released
 * by the reorder bound, not by time) and fed (ag_feed_event, ag_feed_expire), with the agent's
 * default configuration (ag_config_defaults, trace on). Class capacities and memcached's memory
 * limit come from the recorded `stats` polls as the stream passes each poll's offset.
 *
 * Two uses:
 *  - the same input always gives the same output (no threads, no clock), so --dump writes every
 *    curve (per-class profile curves, and the breakdown's document: TTL-aware and oblivious
 *    curves, prefixes, TTL what-if, hot keys) to compare builds: a change on the line path must
 *    leave the dump identical;
 *  - CPU per line of each stage (parse on the reader's side, normalise + feed on the main
 *    thread's) on one core, and under callgrind an instruction count free of the live agent's
 *    sockets, threads and idle waits.
 *
 * usage: linepath STREAM.watch [--lines N] [--dump OUT.json] [--hot-keys N]
 *        (STREAM.watch.stats.json beside it, as agent_cost.py record writes it; --hot-keys as
 *        the agent's, up to 100 listed in the dump, for bench/hotkeys_check.py)
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/config.h"
#include "agent/feed.h"
#include "agent/keys.h"
#include "agent/snapshot_bd.h"
#include "agent/stats.h"
#include "watchline.h"

typedef struct poll {
    size_t offset;
    mc_stats st;
} poll;

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b)
        b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* One reply's `STAT name value` lines into *s (group: "" for `stats`, else its argument). */
static void apply_reply(mc_stats *s, const char *group, const char *text)
{
    char name[256], value[256];
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (sscanf(p, "STAT %255s %255s", name, value) == 2)
            mc_stats_apply(s, group, name, value);
        p += n + (e ? 1 : 0);
    }
}

static poll *load_polls(const char *path, size_t *np)
{
    json_error_t jerr;
    json_t *a = json_load_file(path, 0, &jerr);
    if (!a || !json_is_array(a)) {
        fprintf(stderr, "%s: %s\n", path, jerr.text);
        exit(2);
    }
    *np = json_array_size(a);
    poll *ps = calloc(*np ? *np : 1, sizeof *ps);
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        ps[i].offset = (size_t)json_integer_value(json_object_get(e, "offset"));
        json_t *r = json_object_get(e, "replies");
        static const char *const cmds[][2] = {{"stats", ""}, {"stats items", "items"},
                                              {"stats slabs", "slabs"},
                                              {"stats settings", "settings"}};
        for (int c = 0; c < 4; c++)
            apply_reply(&ps[i].st, cmds[c][1], json_string_value(json_object_get(r, cmds[c][0])));
        ps[i].st.ok = 1;
    }
    json_decref(a);
    return ps;
}

/* As run.c's sync_capacities: classes get a capacity when memcached has pages for them; the
 * breakdown follows every class's size and the memory limit. */
static void capacities(ag_feed *f, const mc_stats *s)
{
    if (s->total_malloced > 0 && s->limit_maxbytes > 0)
        hc_profile_set_memory_full(f->prof, ag_memory_full(s->total_malloced, s->limit_maxbytes));
    ag_bd_set_memory(&f->bd, s->limit_maxbytes);
    for (int c = 1; c < MC_MAX_CLASSES && c < HC_MAX_CLASSES; c++) {
        const mc_class_stats *k = &s->cls[c];
        if (!k->present || k->total_chunks == 0 || k->chunk_size == 0)
            continue;
        ag_bd_set_class(&f->bd, c, k->total_chunks, k->chunk_size);
        if (!hc_profile_has_class(f->prof, c))
            hc_profile_set_capacity(f->prof, c, k->total_chunks, k->chunk_size);
    }
}

static json_t *curves(const ag_feed *f)
{
    json_t *classes = json_array();
    for (int c = 1; c < HC_MAX_CLASSES; c++) {
        hc_curve cv;
        if (hc_profile_curve(f->prof, c, &cv) < 0)
            continue;
        json_t *pts = json_array();
        for (uint32_t i = 0; i < cv.npoints; i++)
            json_array_append_new(pts, json_pack("[f,f]", cv.size_items[i], cv.hit_ratio[i]));
        json_t *o = json_pack("{s:I,s:I,s:I,s:f,s:f,s:f,s:i}", "reads", (json_int_t)cv.reads,
                              "capacity_items",
                              (json_int_t)cv.capacity_items, "hits_observed",
                              (json_int_t)cv.hits_observed, "sampled_reads", cv.sampled_reads,
                              "ghost_reach_items", cv.ghost_reach_items, "sample_rate",
                              cv.sample_rate, "ghost_complete", cv.ghost_complete);
        json_object_set_new(o, "points", pts);
        json_array_append_new(classes, json_pack("{s:i,s:o}", "id", c, "curve", o));
    }
    return classes;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *dump = NULL;
    size_t max_lines = 0;
    long hot_keys = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--lines") && i + 1 < argc)
            max_lines = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
            dump = argv[++i];
        else if (!strcmp(argv[i], "--hot-keys") && i + 1 < argc)
            hot_keys = strtol(argv[++i], NULL, 10);
        else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "usage: linepath STREAM.watch [--lines N] [--dump OUT.json] [--hot-keys N]\n");
        return 2;
    }
    size_t len = 0;
    char *data = slurp(file, &len);
    char spath[4096];
    snprintf(spath, sizeof spath, "%s.stats.json", file);
    size_t np;
    poll *polls = load_polls(spath, &np);
    if (!data) {
        fprintf(stderr, "%s: cannot read\n", file);
        return 2;
    }

    ag_config cfg;
    ag_config_defaults(&cfg);
    snprintf(cfg.snapshot_dir, sizeof cfg.snapshot_dir, "-"); /* as agent_cost.py: trace on */
    if (hot_keys >= 0)
        cfg.hot_keys = (uint32_t)(hot_keys > AG_HOT_MAX ? AG_HOT_MAX : hot_keys);
    ag_feed_config fc;
    ag_feed_config_from(&cfg, &fc);
    ag_keys keys;
    char err[200];
    const char *ferr = NULL;
    static ag_feed feed;
    if (ag_keys_init(&keys, cfg.prefix_delimiter[0], (int)cfg.prefix_depth, cfg.prefix_regex, 0,
                     err, sizeof err) < 0 ||
        ag_feed_init(&feed, &fc, &ferr) < 0) {
        fprintf(stderr, "init: %s\n", ferr ? ferr : err);
        return 1;
    }
    wn_config wc = {.reorder_lines = 1u << 17, .pair_gids = 1u << 16};
    wn_norm *wn = wn_new(&wc);

    /* Stage 1 (the reader's work) over the whole stream first, into an array of ring items,
     * then stage 2 (the main thread's): two CPU figures, as the agent's two threads. */
    size_t cap = 1 << 20, n = 0;
    wl_line *items = malloc(cap * sizeof *items);
    uint16_t *pfx = malloc(cap * sizeof *pfx);
    size_t *off = malloc(cap * sizeof *off);
    unsigned char key[WL_MAX_KEY + 1];
    uint64_t malformed = 0;
    double t0 = cpu_s();
    for (size_t s = 0; s < len && (!max_lines || n < max_lines);) {
        char *nl = memchr(data + s, '\n', len - s);
        size_t e = nl ? (size_t)(nl - data) : len, l = e - s;
        if (l > 0 && data[s + l - 1] == '\r')
            l--;
        if (n == cap) {
            cap *= 2;
            items = realloc(items, cap * sizeof *items);
            pfx = realloc(pfx, cap * sizeof *pfx);
            off = realloc(off, cap * sizeof *off);
        }
        if (l > 0 && wl_parse(data + s, l, &items[n], key) == 0) {
            pfx[n] = items[n].keylen ? ag_keys_line(&keys, items[n].key, key, items[n].keylen) : 0;
            off[n] = e + 1;
            n++;
        } else if (l > 0) {
            malformed++;
        }
        s = e + 1;
    }
    double t1 = cpu_s();
    size_t pi = 0;
    wn_event ev;
    for (size_t i = 0; i < n; i++) {
        while (pi < np && polls[pi].offset <= off[i])
            capacities(&feed, &polls[pi++].st);
        wl_line *ln = &items[i];
        if (ln->type == WL_EXTWRITE)
            continue;
        if (ln->type != WL_SKIPPED && ln->type != WL_OTHER)
            ag_bd_note_prefix(&feed.bd, ln->key, pfx[i]);
        wn_push(wn, ln, 0);
        while (wn_pop(wn, 0, &ev))
            ag_feed_event(&feed, &ev);
        if ((i & 1023) == 1023)
            ag_feed_expire(&feed);
    }
    wn_flush(wn);
    while (wn_pop(wn, 0, &ev))
        ag_feed_event(&feed, &ev);
    ag_feed_expire(&feed);
    double t2 = cpu_s();
    printf("{\"lines\": %zu, \"malformed\": %llu, \"parse_us_per_line\": %.3f, "
           "\"feed_us_per_line\": %.3f, \"total_us_per_line\": %.3f}\n",
           n, (unsigned long long)malformed, (t1 - t0) / (double)(n ? n : 1) * 1e6,
           (t2 - t1) / (double)(n ? n : 1) * 1e6, (t2 - t0) / (double)(n ? n : 1) * 1e6);

    if (dump) {
        json_t *snap = json_object();
        json_object_set_new(snap, "classes", curves(&feed));
        json_object_set_new(snap, "measured", json_pack("{s:I}", "bytes",
                                                        (json_int_t)(np ? polls[np - 1].st.bytes : 0)));
        json_object_set_new(snap, "diagnostics", json_object());
        ag_snapshot_breakdown(snap, &cfg, &feed, &keys);
        const wn_stats *ws = wn_get_stats(wn);
        json_object_set_new(snap, "normaliser",
                            json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "hits", (json_int_t)ws->hits,
                                      "misses", (json_int_t)ws->misses, "sets",
                                      (json_int_t)ws->sets, "deletes", (json_int_t)ws->deletes,
                                      "evictions", (json_int_t)ws->evictions, "internal_gets",
                                      (json_int_t)ws->internal_gets));
        if (json_dump_file(snap, dump, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_REAL_PRECISION(17)) < 0) {
            fprintf(stderr, "%s: cannot write\n", dump);
            return 1;
        }
        json_decref(snap);
    }
    return 0;
}
