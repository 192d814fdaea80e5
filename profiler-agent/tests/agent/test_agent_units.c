/*
 * Unit tests of the live agent's building blocks (TTL tracker, trace sampler, cost
 * percentiles, stats parsing, spool, gzip, the disk writer thread, the lookup shares, prefix
 * ids, the watch reader against a scripted stream). Built and run by test_agent_units.py.
 * Expected values are computed independently (closed forms, zlib's own inflate).
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/agent/costs.h"
#include "../../src/agent/keys.h"
#include "../../src/agent/lookups.h"
#include "../../src/agent/pagemove.h"
#include "../../src/agent/spool.h"
#include "../../src/agent/stats.h"
#include "../../src/agent/statsmodel.h"
#include "../../src/agent/trace.h"
#include "../../src/agent/ttl.h"
#include "../../src/agent/util.h"
#include "../../src/agent/watch.h"
#include "../../src/agent/writer.h"

static int passed, failed;
#define CHECK(c, ...)                                                                      \
    do {                                                                                   \
        if (c)                                                                             \
            passed++;                                                                      \
        else {                                                                             \
            failed++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

static void test_ttl(void)
{
    ag_ttl t;
    CHECK(ag_ttl_init(&t, 4) == 0, "init");
    ag_ttl_store(&t, 11, 3, 1000000, 10);   /* expires at 11 s */
    ag_ttl_store(&t, 22, 4, 1000000, 5);    /* 6 s */
    ag_ttl_store(&t, 33, 5, 1000000, 0);    /* no TTL: not tracked */
    ag_ttl_store(&t, 22, 4, 2000000, 20);   /* re-stored: now 22 s; the 6 s entry is stale */
    uint64_t k;
    int c;
    CHECK(ag_ttl_next_expired(&t, 7000000, &k, &c) == 0, "nothing at 7 s (22 was re-stored)");
    CHECK(ag_ttl_next_expired(&t, 12000000, &k, &c) == 1 && k == 11 && c == 3, "11 at 12 s");
    CHECK(ag_ttl_next_expired(&t, 12000000, &k, &c) == 0, "once only");
    CHECK(ag_ttl_forget(&t, 22) == 1 && ag_ttl_forget(&t, 22) == 0, "forget says if it was tracked");
    CHECK(ag_ttl_next_expired(&t, 99000000, &k, &c) == 0, "forgotten key never expires");
    /* a store over a passed expiry reports it (memcached found the item expired) */
    CHECK(ag_ttl_store(&t, 44, 2, 1000000, 2) == 0, "new key");
    CHECK(ag_ttl_store(&t, 44, 2, 2500000, 2) == 0, "re-stored before its expiry");
    CHECK(ag_ttl_store(&t, 44, 2, 4600000, 0) == 1, "re-stored after its expiry (4.5 s)");
    CHECK(ag_ttl_forget(&t, 44) == 0, "no TTL now: untracked");
    /* bound: 4 keys */
    for (uint64_t i = 100; i < 110; i++)
        ag_ttl_store(&t, i, 1, 0, 1);
    CHECK(t.count == 4 && t.untracked == 6, "bounded: count %llu untracked %llu",
          (unsigned long long)t.count, (unsigned long long)t.untracked);
    int n = 0;
    while (ag_ttl_next_expired(&t, 5000000, &k, &c))
        n++;
    CHECK(n == 4 && t.count == 0, "all tracked expire (%d)", n);
    /* many deletes/inserts keep lookups right (backward-shift deletion) */
    ag_ttl_free(&t);
    ag_ttl_init(&t, 1000);
    for (uint64_t i = 1; i <= 1000; i++)
        ag_ttl_store(&t, i, 1, 0, (int32_t)i);
    for (uint64_t i = 1; i <= 1000; i += 2)
        ag_ttl_forget(&t, i);
    n = 0;
    int order_ok = 1;
    uint64_t prev = 0;
    while (ag_ttl_next_expired(&t, 2000000000, &k, &c)) {
        order_ok &= k > prev && k % 2 == 0;
        prev = k;
        n++;
    }
    CHECK(n == 500 && order_ok, "500 even keys expire in TTL order, got %d", n);
    ag_ttl_free(&t);
}

static void test_trace(void)
{
    ag_trace t;
    CHECK(ag_trace_init(&t, 1.0, 1000, 42) == 0, "init");
    /* 100 keys x 50 requests = 5000 records > 1000: the rate halves until they fit, and the
     * kept records are exactly all requests of the kept keys. */
    for (int r = 0; r < 50; r++)
        for (uint64_t k = 0; k < 100; k++) {
            ag_trace_rec rec = {r, k * 7919 + 1, 10, -1, -1, 1, 2};
            ag_trace_add(&t, &rec);
        }
    CHECK(t.n <= 1000 && t.rate < 1.0, "bounded (%u records, rate %g)", t.n, t.rate);
    int per_key[100] = {0};
    for (uint32_t i = 0; i < t.n; i++)
        per_key[(t.recs[i].key - 1) / 7919]++;
    int keys = 0, whole = 1;
    for (int k = 0; k < 100; k++) {
        if (per_key[k]) {
            keys++;
            whole &= per_key[k] == 50;
        }
    }
    CHECK(whole && keys * 50 == (int)t.n, "spatial: every kept key has all its requests");
    json_t *j = ag_trace_chunk(&t, "id", 3, "h:1", "i", 0, 1000000);
    CHECK(j && json_array_size(json_object_get(json_object_get(j, "records"), "key")) == t.n &&
              json_real_value(json_object_get(j, "sample_rate")) == t.rate,
          "chunk json");
    json_decref(j);
    double r = t.rate;
    ag_trace_next_window(&t); /* a full window: the rate stays */
    CHECK(t.n == 0 && t.rate == r, "busy window keeps the rate");
    ag_trace_next_window(&t); /* an empty one: it doubles back towards the configured rate */
    CHECK(t.rate == r * 2, "a quiet window raises the rate again");
    ag_trace_free(&t);
}

static void test_costs(void)
{
    static ag_costs c;
    ag_costs_init(&c, 1);
    for (int i = 1; i <= 1000; i++)
        ag_costs_add(&c, 5, i);
    double mean, p50, p90, p99;
    CHECK(ag_costs_summary(&c, 5, &mean, &p50, &p90, &p99) == 1000, "count");
    CHECK(mean == 500.5 && p50 == 500 && p90 == 900 && p99 == 990, "percentiles %g %g %g %g",
          mean, p50, p90, p99);
    for (int i = 0; i < 100000; i++)
        ag_costs_add(&c, 6, i % 100);
    ag_costs_summary(&c, 6, &mean, &p50, &p90, &p99);
    CHECK(mean == 49.5 && p50 >= 45 && p50 <= 54 && p90 >= 85 && p90 <= 94,
          "reservoir: %g %g %g", mean, p50, p90);
    CHECK(ag_costs_summary(&c, 7, &mean, &p50, &p90, &p99) == 0, "empty class");
}

static void test_stats_parse(void)
{
    static mc_stats s;
    memset(&s, 0, sizeof s);
    mc_stats_apply(&s, "", "get_hits", "10");
    mc_stats_apply(&s, "", "log_worker_dropped", "51835");
    mc_stats_apply(&s, "", "version", "1.6.18");
    mc_stats_apply(&s, "items", "items:12:number", "6195");
    mc_stats_apply(&s, "items", "items:12:evicted", "13805");
    mc_stats_apply(&s, "slabs", "12:chunk_size", "1184");
    mc_stats_apply(&s, "slabs", "12:total_pages", "7");
    mc_stats_apply(&s, "slabs", "12:total_chunks", "6195");
    mc_stats_apply(&s, "slabs", "active_slabs", "2");
    mc_stats_apply(&s, "settings", "growth_factor", "1.25");
    CHECK(s.get_hits == 10 && s.log_worker_dropped == 51835 && !strcmp(s.version, "1.6.18"),
          "globals");
    CHECK(s.cls[12].present && s.cls[12].items == 6195 && s.cls[12].evicted == 13805 &&
              s.cls[12].chunk_size == 1184 && s.cls[12].total_pages == 7 &&
              s.cls[12].total_chunks == 6195,
          "class 12");
    CHECK(s.nsettings == 1 && !strcmp(s.set_name[0], "growth_factor") &&
              !strcmp(s.set_value[0], "1.25"),
          "settings");
}

static void test_spool_and_gzip(void)
{
    char dir[] = "/tmp/agent-spool-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    static ag_spool s;
    CHECK(ag_spool_open(&s, dir, 1 << 20, 3) == 0, "open");
    const char *text = "{\"hello\": \"world\", \"n\": 12345678901234}";
    unsigned char *gz;
    size_t gl;
    CHECK(ag_gzip(text, strlen(text), &gz, &gl) == 0, "gzip");
    /* independent check: zlib's inflate with gzip decoding */
    char back[256];
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 16 + MAX_WBITS);
    z.next_in = gz;
    z.avail_in = (uInt)gl;
    z.next_out = (Bytef *)back;
    z.avail_out = sizeof back;
    int rc = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    CHECK(rc == Z_STREAM_END && z.total_out == strlen(text) && !memcmp(back, text, strlen(text)),
          "gzip round trip");
    uint64_t seqs[5];
    for (int i = 0; i < 5; i++) {
        seqs[i] = ag_spool_next_seq(&s);
        char id[16];
        snprintf(id, sizeof id, "id%d", i);
        ag_spool_put(&s, seqs[i], i % 2 ? "trace" : "snapshot", id, gz, gl);
    }
    CHECK(ag_spool_pending(&s, NULL) == 3 && s.dropped == 2, "bound keeps 3, dropped %llu",
          (unsigned long long)s.dropped);
    /* the counters the main thread reads agree with the directory listing */
    uint64_t pend, pbytes, drop, rej, sent, lbytes;
    ag_spool_counts(&s, &pend, &pbytes, &drop, &rej, &sent);
    CHECK(pend == ag_spool_pending(&s, &lbytes) && pbytes == lbytes && pbytes == 3 * gl &&
              drop == 2, "counted %llu entries %llu bytes, listed %llu bytes",
          (unsigned long long)pend, (unsigned long long)pbytes, (unsigned long long)lbytes);
    char name[256];
    CHECK(ag_spool_oldest(&s, name, sizeof name) && strstr(name, "-snapshot-id2.json.gz"),
          "oldest kept is #2: %s", name);
    ag_spool_done(&s, name);
    CHECK(ag_spool_oldest(&s, name, sizeof name) && strstr(name, "-trace-id3.json.gz"), "then #3");
    ag_spool_reject(&s, name);
    char p[512];
    snprintf(p, sizeof p, "%s/rejected/%s", dir, name);
    CHECK(access(p, F_OK) == 0 && s.rejected == 1, "rejected moved");
    ag_spool_counts(&s, &pend, &pbytes, &drop, &rej, &sent);
    CHECK(pend == 1 && pbytes == gl && sent == 1 && rej == 1, "counts after done and reject");
    ag_spool_close(&s);
    /* reopen: the sequence continues after a restart */
    static ag_spool s2;
    ag_spool_open(&s2, dir, 1 << 20, 3);
    CHECK(ag_spool_next_seq(&s2) == seqs[4] + 1, "seq persists");
    CHECK(ag_spool_oldest(&s2, name, sizeof name) && strstr(name, "id4"), "resume queue");
    ag_spool_counts(&s2, &pend, &pbytes, &drop, &rej, &sent);
    CHECK(pend == 1 && pbytes == gl, "counts rebuilt at open");
    ag_spool_close(&s2);
    free(gz);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
}

/* Versions disagree on stats: unknown names and text values must neither crash nor leak into
 * the numbers (1.6.40 slab_reassign_last_busy_status is text; 1.5.16 lacks keys). */
static void test_stats_versions(void)
{
    mc_stats *s = calloc(1, sizeof *s);
    mc_stats_apply(s, "", "slab_reassign_last_busy_status", "from_lru");
    mc_stats_apply(s, "", "no_such_stat_yet", "42");
    mc_stats_apply(s, "", "get_hits", "17");
    mc_stats_apply(s, "", "get_misses", "not-a-number");
    mc_stats_apply(s, "items", "items:3:brand_new_field", "x");
    mc_stats_apply(s, "slabs", "999:chunk_size", "96");
    CHECK(s->get_hits == 17 && s->get_misses == 0 && !s->has_watcher_skipped,
          "unknown and text stats ignored");
    mc_stats_apply(s, "", "log_watcher_skipped", "5");
    CHECK(s->has_watcher_skipped && s->log_watcher_skipped == 5, "watcher skipped seen");
    free(s);
}

/* Page-move evictions: pages lost x chunks per page, capped by the class's evictions, and only
 * where memcached counts them as evictions (>= 1.6.34). */
static void test_page_moves(void)
{
    CHECK(!ag_page_moves_evict("1.5.16") && !ag_page_moves_evict("1.6.33") &&
              ag_page_moves_evict("1.6.34") && ag_page_moves_evict("1.6.45") &&
              ag_page_moves_evict("1.7.0") && ag_page_moves_evict("2.0.0") &&
              ag_page_moves_evict("unknown"),
          "version gate");
    mc_stats *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    snprintf(b->version, sizeof b->version, "1.6.45");
    a->cls[5] = (mc_class_stats){.present = 1, .chunk_size = 240, .total_pages = 30,
                                 .total_chunks = 30 * 4369, .evicted = 1000};
    b->cls[5] = a->cls[5];
    b->cls[5].total_pages = 25;
    b->cls[5].total_chunks = 25 * 4369;
    b->cls[5].evicted = 1000 + 5 * 4369 + 10; /* five pages moved, ten evictions of pressure */
    CHECK(ag_page_move_evictions(a, b, 5) == 5 * 4369, "five pages: %llu",
          (unsigned long long)ag_page_move_evictions(a, b, 5));
    b->cls[5].evicted = 1000 + 300; /* fewer evictions than the pages held: capped */
    CHECK(ag_page_move_evictions(a, b, 5) == 300, "capped by evictions");
    b->cls[5].total_pages = 31; /* gained a page: none */
    CHECK(ag_page_move_evictions(a, b, 5) == 0, "a class that gained pages");
    b->cls[5].total_pages = 25;
    snprintf(b->version, sizeof b->version, "1.6.24");
    CHECK(ag_page_move_evictions(a, b, 5) == 0, "before 1.6.34 they are not evictions");
    CHECK(ag_page_move_evictions(a, b, 0) == 0 && ag_page_move_evictions(a, b, MC_MAX_CLASSES) == 0,
          "class ids out of range");
    free(a);
    free(b);
}

/* Stats-only model: a cache that behaves exactly as Che's model (Zipf 0.9 over 10^6 keys)
 * is recovered from its three stats figures, and its curve passes through them. */
static void test_stats_model(void)
{
    double occ, h;
    double t = 3e5;
    sm_che(0.9, 1e6, t, &occ, &h);
    sm_fit f;
    sm_fit_curve(occ, h, 10000.0, t / 10000.0, 1, 4, &f);
    CHECK(f.ok && fabs(f.alpha - 0.9) < 0.01 && fabs(f.keys / 1e6 - 1) < 0.05,
          "fit alpha %.4f keys %.0f (want 0.9, 1e6)", f.alpha, f.keys);
    CHECK(fabs(f.hit[24] - h) < 0.002 && fabs(f.size_items[24] - occ) < 1,
          "curve passes through today's point: %.4f at %.0f vs %.4f at %.0f", f.hit[24],
          f.size_items[24], h, occ);
    int mono = 1;
    for (int k = 1; k < SM_POINTS; k++)
        mono &= f.hit[k] >= f.hit[k - 1] && f.size_items[k] > f.size_items[k - 1];
    CHECK(mono && f.hit[0] < h && f.hit[SM_POINTS - 1] > h, "monotone, below and above today");
    sm_fit_curve(occ, h, 10000.0, t / 10000.0, 0, 4, &f);
    CHECK(!f.ok && !strcmp(f.why, "not_evicting"), "no curve while memcached has room");
    sm_fit_curve(occ, h, 10000.0, 0, 1, 4, &f);
    CHECK(!f.ok && !strcmp(f.why, "no_age"), "no curve without an eviction age");
}

/* The writer thread stores every queued document once, in queue order, as a file and as a
 * spool entry; the spool's counter file follows; more documents than the queue bound all
 * arrive (the producer waits for room, nothing is dropped). */
static void test_writer(void)
{
    char dir[] = "/tmp/agent-writer-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char sdir[600];
    snprintf(sdir, sizeof sdir, "%s/spool", dir);
    static ag_spool s;
    CHECK(ag_spool_open(&s, sdir, 1 << 30, 100000) == 0, "open");
    static ag_writer w;
    CHECK(ag_writer_start(&w, &s) == 0, "writer start");
    enum { N = 3 * AG_WRITER_MAX_DOCS };
    for (int i = 0; i < N; i++) {
        ag_wdoc *d = calloc(1, sizeof *d);
        char *text = malloc(64);
        int len = snprintf(text, 64, "{\"i\": %d}", i);
        d->text = text;
        d->len = (size_t)len;
        d->what = "snapshot";
        snprintf(d->path, sizeof d->path, "%s/snapshot-%04d.json", dir, i);
        snprintf(d->spool_kind, sizeof d->spool_kind, "snapshot");
        snprintf(d->spool_id, sizeof d->spool_id, "id%d", i);
        d->spool_seq = ag_spool_next_seq(&s);
        ag_writer_put(&w, d);
    }
    ag_writer_stop(&w);
    CHECK(w.written == N && w.failed == 0, "written %llu of %d", (unsigned long long)w.written, N);
    CHECK(ag_spool_pending(&s, NULL) == N, "every entry spooled");
    int in_order = 1;
    for (int i = 0; i < N; i++) {
        char name[256], p[700];
        if (!ag_spool_oldest(&s, name, sizeof name)) {
            in_order = 0;
            break;
        }
        char want[32];
        snprintf(want, sizeof want, "-snapshot-id%d.json.gz", i);
        if (!strstr(name, want))
            in_order = 0;
        ag_spool_done(&s, name);
        snprintf(p, sizeof p, "%s/snapshot-%04d.json", dir, i);
        if (access(p, F_OK) != 0)
            in_order = 0;
    }
    CHECK(in_order, "spool order is the queue order, and every file is there");
    char p[700];
    snprintf(p, sizeof p, "%s/next_seq", sdir);
    FILE *f = fopen(p, "r");
    unsigned long long next = 0;
    CHECK(f && fscanf(f, "%llu", &next) == 1 && next == (unsigned long long)N, "next_seq %llu",
          next);
    if (f)
        fclose(f);
    ag_spool_close(&s);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
}

/* Other commands' lookups out of the reads, from memcached's counters (lookups.h). */
static void test_lookups(void)
{
    static mc_stats s0, s1;
    ag_window_counts win;
    memset(&win, 0, sizeof win);
    /* a rate limiter's first hits: 594 get hits, 6 get misses, 400 incr misses */
    s1.get_hits = 594, s1.get_misses = 6, s1.incr_misses = 400;
    s1.cls[1].present = 1, s1.cls[1].get_hits = 300, s1.cls[1].delete_hits = 100;
    s1.cls[2].present = 1, s1.cls[2].get_hits = 294, s1.cls[2].touch_hits = 98;
    s1.delete_hits = 100, s1.touch_hits = 98;
    ag_lookups lk;
    ag_lookups_window(&lk, &s0, &s1, 1, &win);
    CHECK(fabs(lk.miss_share - 400.0 / 406) < 1e-9, "miss share %g", lk.miss_share);
    CHECK(fabs(lk.found_share[1] - 0.25) < 1e-9 && fabs(lk.found_share[2] - 0.25) < 1e-9,
          "found shares %g %g", lk.found_share[1], lk.found_share[2]);
    /* the stream saw every lookup: 594 + 198 found, 406 missing -> memcached's 0.99 exactly */
    double h = ag_lookups_hit_ratio(&lk, 792, 406);
    CHECK(fabs(h - 0.99) < 1e-9, "agent hit ratio %.6f", h);
    CHECK(fabs(ag_lookups_reads(&lk, 792, 406) - 600) < 1e-6, "reads %g", ag_lookups_reads(&lk, 792, 406));
    /* the same with a tenth of the lines lost alike: the ratio is the same */
    CHECK(fabs(ag_lookups_hit_ratio(&lk, 713, 365) - 0.99) < 0.002, "lossy");
    /* deletes the stream told apart (`deleted` lines) are not removed twice */
    win.told_deletes = 100, win.told_deletes_cls[1] = 100;
    ag_lookups_window(&lk, &s0, &s1, 1, &win);
    CHECK(lk.found_share[1] == 0 && lk.other_found == 98, "told deletes: %g %llu",
          lk.found_share[1], (unsigned long long)lk.other_found);
    /* the 400 incr misses were refilled by adds into class 1: they come out of class 1's
     * misses, none of class 2's (a get's refill is a set) */
    win.misses = 406, win.add_refills_cls[1] = 400;
    ag_lookups_window(&lk, &s0, &s1, 1, &win);
    CHECK(lk.miss_by_class && fabs(lk.add_removed[1] - 400) < 1e-6 && lk.add_removed[2] == 0 &&
              fabs(lk.miss_share_rest) < 1e-9,
          "by class: %g %g rest %g", lk.add_removed[1], lk.add_removed[2], lk.miss_share_rest);
    {
        hc_curve c2;
        memset(&c2, 0, sizeof c2);
        c2.capacity_items = 100, c2.reads = 100, c2.hits_observed = 90, c2.npoints = 2;
        c2.size_items[0] = 100, c2.size_items[1] = 200, c2.hit_ratio[0] = 0.9, c2.hit_ratio[1] = 0.95;
        lk.found_share[2] = 0;
        double e2;
        ag_lookups_correct_curve(&lk, 2, &c2, 0.9, &e2);
        CHECK(c2.reads == 100 && fabs(c2.hit_ratio[1] - 0.95) < 1e-9, "class 2 keeps its misses");
        c2.reads = 450, c2.hits_observed = 0, c2.hit_ratio[0] = 0, c2.hit_ratio[1] = 50.0 / 450;
        ag_lookups_correct_curve(&lk, 1, &c2, 0, &e2);
        CHECK(c2.reads == 50 && fabs(c2.hit_ratio[1] - 1.0) < 1e-9,
              "class 1: 400 of its 450 misses out, from the cold ones: reads %llu, 2N %g",
              (unsigned long long)c2.reads, c2.hit_ratio[1]);
    }
    win.misses = 0, win.add_refills_cls[1] = 0;
    /* off: every lookup a read */
    ag_lookups_window(&lk, &s0, &s1, 0, &win);
    CHECK(fabs(ag_lookups_hit_ratio(&lk, 792, 406) - 792.0 / 1198) < 1e-9, "off");

    /* a class's curve: N = 100, reads 1000, 500 hits at N, 100 ghost hits out to 2N; a fifth
     * of the found lookups and half the missing ones were other commands' */
    hc_curve cv;
    memset(&cv, 0, sizeof cv);
    cv.capacity_items = 100, cv.reads = 1000, cv.hits_observed = 500, cv.npoints = 4;
    double sz[4] = {50, 100, 150, 200}, hr[4] = {0.4, 0.5, 0.6, 0.6};
    memcpy(cv.size_items, sz, sizeof sz);
    memcpy(cv.hit_ratio, hr, sizeof hr);
    memset(&lk, 0, sizeof lk);
    lk.enabled = 1, lk.found_share[1] = 0.2, lk.miss_share = 0.5;
    double err;
    ag_lookups_correct_curve(&lk, 1, &cv, 0.5, &err);
    /* 100 found and 250 missing lookups leave (the 250 from the 400 cold misses): 650 reads */
    CHECK(cv.reads == 650, "reads %llu", (unsigned long long)cv.reads);
    CHECK(fabs(cv.hit_ratio[0] - 320.0 / 650) < 1e-9 && fabs(cv.hit_ratio[1] - 400.0 / 650) < 1e-9 &&
              fabs(cv.hit_ratio[3] - 500.0 / 650) < 1e-9,
          "curve %g %g %g", cv.hit_ratio[0], cv.hit_ratio[1], cv.hit_ratio[3]);
    /* bound: the 100 ghost hits could all have been other commands' (100 / 650) */
    CHECK(fabs(err - 100.0 * 100 / 650) < 1e-6, "error bound %g pp", err);
    /* more other misses than cold ones: the rest come out of the ghost's hits */
    cv.reads = 1000, cv.hits_observed = 500;
    memcpy(cv.hit_ratio, hr, sizeof hr);
    lk.found_share[1] = 0, lk.miss_share = 0.9;
    ag_lookups_correct_curve(&lk, 1, &cv, 0.5, &err);
    CHECK(cv.reads == 550 && fabs(cv.hit_ratio[3] - 550.0 / 550) < 1e-9,
          "450 misses out, 50 of them ghost hits: reads %llu, 2N %g", (unsigned long long)cv.reads,
          cv.hit_ratio[3]);
}

/* Prefix ids on the reader (keys.c): a prefix keeps the id of its first line through the
 * reader's memo of recent raw prefixes, with more distinct prefixes than memo slots, escaped,
 * longer than the memo holds and cut to HC_PREFIX_MAX; each id names what hc_prefix_of says. */
static void test_keys(void)
{
    ag_keys k;
    char err[200];
    CHECK(ag_keys_init(&k, ':', 1, "", 0, err, sizeof err) == 0, "keys init: %s", err);
    enum { P = 600 };
    static char pfx[P + 3][100];
    for (int i = 0; i < P; i++)
        snprintf(pfx[i], sizeof pfx[i], "p%d", i);
    snprintf(pfx[P], sizeof pfx[P], "a b%%c");                  /* escaped: %20, %25 */
    snprintf(pfx[P + 1], sizeof pfx[P + 1], "twenty-bytes-prefix!");  /* past the memo's 16 */
    memset(pfx[P + 2], 'x', 70);                                /* cut to 64 characters */
    pfx[P + 2][70] = 0;
    uint16_t first[P + 3];
    int same = 1, named = 1;
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < P + 3; i++) {
            char key[200], want[HC_PREFIX_MAX + 1], got[HC_PREFIX_MAX + 1];
            int n = snprintf(key, sizeof key, "%s:%d", pfx[i], pass);
            uint16_t id = ag_keys_line(&k, (uint64_t)i, (const unsigned char *)key, (size_t)n);
            if (pass == 0)
                first[i] = id;
            same &= id == first[i] && id != AG_PFX_NONE && id != AG_PFX_FULL;
            hc_prefix_of(&k.rule, (const unsigned char *)key, (size_t)n, want);
            ag_keys_prefix_name(&k, id, got, sizeof got);
            named &= strcmp(want, got) == 0;
        }
    }
    int distinct = 1;
    for (int i = 0; i < P + 3; i++)
        for (int j = 0; j < i; j++)
            distinct &= first[i] != first[j];
    CHECK(same && distinct, "a prefix keeps its first id (same %d, distinct %d)", same, distinct);
    CHECK(named, "ids name the rule's prefix");
    CHECK(atomic_load(&k.cut) == 3, "every cut line counted: %llu", (unsigned long long)atomic_load(&k.cut));
    CHECK(ag_keys_line(&k, 1, (const unsigned char *)"nodelim", 7) == AG_PFX_NONE, "no prefix");
    ag_keys_free(&k);
}

/* ---- the watch reader against a scripted memcached ---------------------------------------- */

/* One watcher connection on a loopback port: answers the watch command with OK, then sends
 * `lines` item lines (gid 1..lines) with a skipped=N line after every 97th, in pieces of odd
 * sizes. Some pieces end inside a line (a skipped=N line among them) and are followed by a
 * pause longer than the reader's 200 ms receive timeout, so one recv returns half a line and
 * the next the rest; the rest arrives in pieces that split lines across the reader's chunks. */
typedef struct fake_mc {
    int lfd, port, lines;
    uint64_t skipped_sent;
    int splits;  /* pieces that ended inside a line, with a pause after */
} fake_mc;

static void *fake_mc_main(void *arg)
{
    fake_mc *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char cmd[256];
    size_t got = 0;
    while (got < sizeof cmd - 1 && !memmem(cmd, got, "\r\n", 2)) {
        ssize_t n = read(fd, cmd + got, sizeof cmd - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    size_t cap = (size_t)f->lines * 128 + 64, len = 0;
    char *out = malloc(cap);
    len += (size_t)snprintf(out + len, cap - len, "OK\r\n");
    uint64_t sk = 0;
    for (int g = 1; g <= f->lines; g++) {
        len += (size_t)snprintf(out + len, cap - len,
                                "ts=1700000000.%d gid=%d type=item_get key=k%d status=found "
                                "clsid=1 cfd=7 size=10\n", g % 1000000, g, g);
        if (g % 97 == 0) {
            uint64_t n = (uint64_t)g * 3 + 1;
            sk += n;
            len += (size_t)snprintf(out + len, cap - len, "skipped=%llu\n", (unsigned long long)n);
        }
    }
    f->skipped_sent = sk;
    static const size_t piece[] = {1, 7, 13, 331, 4093, 65537, 17, 70001};
    size_t off = 0;
    for (int i = 0; off < len; i++) {
        size_t n = piece[i % 8];
        if (n > len - off)
            n = len - off;
        char *k = f->splits < 4 && i % 8 == 3 ? memmem(out + off, len - off, "skipped=", 8) : NULL;
        if (k) { /* end this piece inside the next skipped=N line */
            n = (size_t)(k - (out + off)) + 5;
            f->splits++;
        }
        if (write(fd, out + off, n) != (ssize_t)n)
            break;
        off += n;
        if (k)
            usleep(300000);
    }
    free(out);
    close(fd);
    return NULL;
}

static int fake_mc_listen(fake_mc *f)
{
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(f->lfd, 1) < 0 ||
        getsockname(f->lfd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    f->port = ntohs(a.sin_port);
    return 0;
}

/* Runs the reader on `lines` lines into a ring of ring_size; the consumer pops nothing until
 * the whole stream is read (a small ring is then full for most of it). */
static void watch_once(int lines, uint32_t ring_size, const char *what)
{
    fake_mc f = {.lines = lines};
    CHECK(fake_mc_listen(&f) == 0, "%s: listen", what);
    pthread_t th;
    pthread_create(&th, NULL, fake_mc_main, &f);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", f.port);
    ag_ring ring;
    ag_ring_init(&ring, ring_size);
    ag_watch w;
    ag_watch_start(&w, addr, &ring, NULL, 0);
    pthread_join(th, NULL);
    /* every line parsed, kept or dropped */
    uint64_t want = (uint64_t)lines + (uint64_t)(lines / 97);
    for (int i = 0; i < 1000 && atomic_load(&w.lines) < want; i++)
        usleep(10000);
    CHECK(atomic_load(&w.lines) == want, "%s: %llu of %llu lines read", what,
          (unsigned long long)atomic_load(&w.lines), (unsigned long long)want);
    ag_item *batch = malloc(4096 * sizeof *batch);
    uint64_t items = 0, next_gid = 1, in_order = 1, skipped_items = 0, starts = 0, ends = 0;
    for (int i = 0; i < 1000 && !ends; i++) {
        uint32_t n = ag_ring_pop(&ring, batch, 4096);
        for (uint32_t j = 0; j < n; j++) {
            const wl_line *l = &batch[j].line;
            if (l->type == AG_MARK_STREAM_START)
                starts++;
            else if (l->type == AG_MARK_STREAM_END)
                ends++;
            else if (l->type == WL_SKIPPED)
                skipped_items++;
            else {
                in_order &= l->type == WL_GET && l->gid == next_gid && l->cfd == 7;
                next_gid = l->gid + 1;
                items++;
            }
        }
        if (!n)
            usleep(10000);
    }
    free(batch);
    ag_watch_stop(&w);
    close(f.lfd);
    uint64_t dropped = atomic_load(&ring.dropped);
    CHECK(f.splits > 0, "%s: the stream split a skipped=N line across reads", what);
    CHECK(starts == 1 && ends == 1, "%s: one start and one end marker (%llu, %llu)", what,
          (unsigned long long)starts, (unsigned long long)ends);
    CHECK(in_order, "%s: the kept lines are gid 1.. in order, each once", what);
    CHECK(items + dropped == (uint64_t)lines, "%s: kept %llu + dropped %llu = %d item lines", what,
          (unsigned long long)items, (unsigned long long)dropped, lines);
    CHECK(skipped_items == 0, "%s: skipped=N never queued as an item", what);
    CHECK(atomic_load(&w.skipped) == f.skipped_sent, "%s: skipped counted %llu, sent %llu", what,
          (unsigned long long)atomic_load(&w.skipped), (unsigned long long)f.skipped_sent);
    ag_ring_free(&ring);
}

static void test_watch_reader(void)
{
    watch_once(20000, 1u << 16, "ring with room");
    /* 1,024 slots for 20,000 lines: all but the first ~1,023 dropped, the counts still whole */
    watch_once(20000, 1024, "full ring");
}

int main(void)
{
    test_watch_reader();
    test_keys();
    test_lookups();
    test_stats_versions();
    test_page_moves();
    test_stats_model();
    test_ttl();
    test_trace();
    test_costs();
    test_stats_parse();
    test_spool_and_gzip();
    test_writer();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
