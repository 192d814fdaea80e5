/*
 * Unit tests of the simulator core and of each policy's tricky transitions. Expected values
 * come from hand-worked sequences (commented step by step), from the paper rules, or from
 * independent reference implementations written here (exact LRU via stack distances,
 * brute-force GreedyDual with a linear scan).
 */
#include "cache.h"
#include "table.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
        }                                                                  \
    } while (0)

/* test-only accessors exported by the policy files */
void sim_clockpro_debug(const sim_cache *c, double *mc, uint64_t *hot, uint64_t *cold, uint64_t *nonres);
uint64_t sim_gdwheel_L(const sim_cache *c);
uint64_t sim_gdwheel_migrations(const sim_cache *c);
void sim_baglru_debug(const sim_cache *c, uint32_t *nbags, uint64_t *rot, uint64_t *moves, uint64_t *merges);
int sim_baglru_bag_of_key(const sim_cache *c, uint64_t key);
void sim_mcslru_counts(const sim_cache *c, int k, uint64_t out[3]);
void sim_extstore_counts(const sim_cache *c, uint64_t out[7]);

static sim_config items_cfg(const char *params)
{
    sim_config c;
    sim_config_default(&c);
    c.params = params;
    return c;
}

static int get(sim_cache *c, uint64_t k) { return sim_cache_access(c, k, 0, 1.0, SIM_GET); }
static int getc_(sim_cache *c, uint64_t k, double cost) { return sim_cache_access(c, k, 0, cost, SIM_GET); }

/* ---------------------------------------------------------------- core */

static void test_slab_classes(void)
{
    /* memcached 1.6 -vv with defaults prints classes 96, 120, 152, ... 394840, 524288 */
    CHECK(sim_slab_nclasses() == 39, "39 classes, got %d", sim_slab_nclasses());
    CHECK(sim_slab_chunk(1) == 96 && sim_slab_chunk(2) == 120 && sim_slab_chunk(3) == 152,
          "first classes 96/120/152");
    CHECK(sim_slab_chunk(38) == 394840 && sim_slab_chunk(39) == 524288, "last classes");
    CHECK(sim_slab_charge(100) == 152, "48+100=148 -> 152, got %llu", (unsigned long long)sim_slab_charge(100));
    CHECK(sim_slab_charge(272) == 384, "GD-Wheel item 16+256: 320 -> 384");
    CHECK(sim_slab_charge(48) == 96, "48+48=96 fits class 1");
    CHECK(sim_slab_charge(2u << 20) == 5u * 524288, "2 MiB item charged in 512 KiB chunks");
}

static void test_table(void)
{
    /* random put/remove against a direct-mapped shadow over a small key universe */
    sim_table t;
    sim_table_init(&t, 16);
    uint32_t shadow[5000];
    for (int i = 0; i < 5000; i++)
        shadow[i] = SIM_NIL;
    sim_rng r;
    sim_rng_seed(&r, 7);
    int bad = 0;
    for (int step = 0; step < 200000; step++) {
        uint64_t k = sim_rng_next(&r) % 5000;
        if (sim_rng_next(&r) & 1) {
            sim_table_put(&t, k + 1, (uint32_t)step);
            shadow[k] = (uint32_t)step;
        } else {
            int was = sim_table_remove(&t, k + 1);
            if (was != (shadow[k] != SIM_NIL))
                bad++;
            shadow[k] = SIM_NIL;
        }
    }
    uint64_t cnt = 0;
    for (int i = 0; i < 5000; i++) {
        if (sim_table_get(&t, (uint64_t)i + 1) != shadow[i])
            bad++;
        cnt += shadow[i] != SIM_NIL;
    }
    CHECK(bad == 0 && cnt == t.count, "table agrees with shadow (%d mismatches)", bad);
    sim_table_free(&t);
}

static void test_sampling(void)
{
    int in1 = 0, in10 = 0, nested = 1;
    for (uint64_t k = 0; k < 1000000; k++) {
        int a = sim_sampled(k, 0.01, 1), b = sim_sampled(k, 0.1, 1);
        in1 += a;
        in10 += b;
        if (a && !b)
            nested = 0;
    }
    CHECK(fabs(in1 / 1e6 - 0.01) < 0.0005, "R=0.01 samples %.4f", in1 / 1e6);
    CHECK(fabs(in10 / 1e6 - 0.1) < 0.002, "R=0.1 samples %.4f", in10 / 1e6);
    CHECK(nested, "a key sampled at R=0.01 is sampled at R=0.1 (same hash threshold)");
}

/* LRU must equal the Mattson stack-distance reference exactly */
static void test_lru_exact(void)
{
    size_t n = 300000;
    uint64_t *k = sim_wl_zipf(n, 50000, 0.8, 11);
    sim_trace t = {.n = n, .keys = k};
    uint64_t sizes[] = {1, 10, 100, 1000, 5000, 20000, 60000};
    int ns = 7;
    uint64_t hits[7];
    int64_t gets = sim_exact_lru_hits(&t, sizes, ns, hits);
    sim_config cfg = items_cfg(NULL);
    for (int i = 0; i < ns; i++) {
        sim_result r;
        char err[128];
        sim_simulate(&t, "lru", sizes[i], &cfg, &r, err, sizeof err);
        CHECK(r.hits == hits[i] && (int64_t)r.requests == gets, "LRU@%llu hits %llu, exact %llu",
              (unsigned long long)sizes[i], (unsigned long long)r.hits, (unsigned long long)hits[i]);
    }
    /* bytes mode with one object size is the same cache */
    cfg.unit_bytes = 1;
    cfg.default_size = 100;
    sim_result r;
    char err[128];
    sim_simulate(&t, "lru", 1000 * 100, &cfg, &r, err, sizeof err);
    CHECK(r.hits == hits[3], "bytes-mode LRU = items-mode LRU at equal object size");
    free(k);
}

/* GCLOCK with K=0 is FIFO and with K=1 is CLOCK: three separate implementations agree */
static void test_gclock_degenerate(void)
{
    size_t n = 200000;
    uint64_t *k = sim_wl_zipf(n, 20000, 0.9, 3);
    sim_trace t = {.n = n, .keys = k};
    char err[128];
    for (int s = 0; s < 3; s++) {
        uint64_t size = (uint64_t[]){100, 1000, 5000}[s];
        sim_result a, b, c2, d;
        sim_config c0 = items_cfg("gclock.k=0"), c1 = items_cfg("gclock.k=1"), cn = items_cfg("nbq-clock.max=1");
        sim_simulate(&t, "fifo", size, &c0, &a, err, sizeof err);
        sim_simulate(&t, "gclock", size, &c0, &b, err, sizeof err);
        CHECK(a.hits == b.hits, "gclock k=0 == fifo at %llu", (unsigned long long)size);
        sim_simulate(&t, "clock", size, &c1, &c2, err, sizeof err);
        sim_simulate(&t, "gclock", size, &c1, &d, err, sizeof err);
        CHECK(c2.hits == d.hits, "gclock k=1 == clock at %llu", (unsigned long long)size);
        sim_simulate(&t, "nbq-clock", size, &cn, &d, err, sizeof err);
        CHECK(c2.hits == d.hits, "nbq-clock max=1 == clock (footnote 2) at %llu", (unsigned long long)size);
    }
    free(k);
}

static void test_clock_second_chance(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("clock", 3, &cfg);
    get(c, 1); get(c, 2); get(c, 3);   /* hand at 1; all bits clear */
    CHECK(get(c, 1) == 1, "hit sets 1's bit");
    get(c, 4);                         /* 1 has its bit: cleared, passed; 2 evicted */
    CHECK(sim_cache_resident(c, 1) && !sim_cache_resident(c, 2), "second chance spares 1, evicts 2");
    get(c, 5);                         /* queue 3,1(0),4: evict 3 */
    CHECK(!sim_cache_resident(c, 3) && sim_cache_resident(c, 1), "then 3 goes");
    get(c, 6);                         /* queue 1(0),4,5: evict 1 */
    CHECK(!sim_cache_resident(c, 1), "1 lost its bit and goes next");
    sim_cache_free(c);

    /* FIFO ignores hits */
    c = sim_cache_new("fifo", 3, &cfg);
    get(c, 1); get(c, 2); get(c, 3); get(c, 1); get(c, 4);
    CHECK(!sim_cache_resident(c, 1) && sim_cache_resident(c, 2), "FIFO evicts 1 despite its hit");
    sim_cache_free(c);
}

static void test_nbq_reenqueue(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("nbq-clock", 3, &cfg);
    get(c, 1); get(c, 2); get(c, 3);        /* queue head->tail: 1 2 3, counters 0 */
    get(c, 1); get(c, 1);                   /* 1.ref = 2 */
    CHECK(sim_cache_obj(c, 1)->freq == 2, "two hits -> counter 2");
    get(c, 4);                              /* pop 1 (2->1, re-enqueue), pop 2 (0) evict */
    CHECK(!sim_cache_resident(c, 2) && sim_cache_resident(c, 1), "1 re-enqueued, 2 evicted");
    CHECK(sim_cache_obj(c, 1)->freq == 1, "re-enqueue decrements 2 -> 1");
    get(c, 5);                              /* queue 3 1(1) 4: pop 3 (0) evict */
    CHECK(!sim_cache_resident(c, 3), "3 evicted next");
    get(c, 6);                              /* queue 1(1) 4 5: 1 -> 0 re-enqueued; 4 evicted */
    CHECK(!sim_cache_resident(c, 4) && sim_cache_resident(c, 1) && sim_cache_obj(c, 1)->freq == 0,
          "second pass: 1 decremented to 0 and re-enqueued, 4 evicted");
    /* lazy delete: the bytes stay until the sweep reaches the node */
    uint64_t used = c->used, ev = c->evictions;
    sim_cache_access(c, 5, 0, 1, SIM_DELETE);  /* queue 5(del) 1(0) 6 */
    CHECK(!sim_cache_resident(c, 5) && c->used == used, "delete marks only; capacity still held");
    get(c, 7);                              /* pop 5: deleted -> freed, no eviction */
    CHECK(sim_cache_resident(c, 1) && sim_cache_resident(c, 6) && c->evictions == ev,
          "the sweep frees the deleted node instead of evicting a live one");
    for (int i = 0; i < 300; i++)
        get(c, 6);
    CHECK(sim_cache_obj(c, 6)->freq == 255, "8-bit counter saturates at 255 (no wrap to 0)");
    sim_cache_free(c);
}

/* ---------------------------------------------------------------- GD-Wheel */

/* brute-force GreedyDual: linear scan for min (H, enqueue order) */
typedef struct { uint64_t key, H, seq; int used; } bf_ent;

static void test_gdwheel_vs_bruteforce(void)
{
    /* small wheels (N=4, 3 levels: costs up to 48) force many migrations at every level */
    sim_config cfg = items_cfg("gdwheel.n=4,gdwheel.levels=3");
    const int cap = 20, nkeys = 60;
    sim_cache *c = sim_cache_new("gdwheel", cap, &cfg);
    bf_ent e[64];
    memset(e, 0, sizeof e);
    double kcost[64];
    sim_rng r;
    sim_rng_seed(&r, 99);
    for (int i = 0; i < nkeys; i++)
        kcost[i] = 1 + (double)(sim_rng_next(&r) % 48);
    uint64_t L = 0, seq = 0;
    int nres = 0, mismatch = 0, lmismatch = 0;
    sim_zipf z;
    sim_zipf_init(&z, nkeys, 0.7);
    for (int step = 0; step < 200000; step++) {
        int k = (int)sim_zipf_draw(&z, &r);
        int hit_bf = e[k].used;
        if (hit_bf) {
            e[k].H = L + (uint64_t)kcost[k];
            e[k].seq = ++seq;
        } else {
            if (nres == cap) {
                int v = -1;
                for (int j = 0; j < nkeys; j++)
                    if (e[j].used && (v < 0 || e[j].H < e[v].H || (e[j].H == e[v].H && e[j].seq < e[v].seq)))
                        v = j;
                L = e[v].H;
                e[v].used = 0;
                nres--;
            }
            e[k].used = 1;
            e[k].H = L + (uint64_t)kcost[k];
            e[k].seq = ++seq;
            nres++;
        }
        int hit = getc_(c, (uint64_t)k + 1, kcost[k]);
        if (hit != hit_bf)
            mismatch++;
        if (sim_gdwheel_L(c) != L)
            lmismatch++;
    }
    CHECK(mismatch == 0 && lmismatch == 0, "GD-Wheel == brute-force GreedyDual (%d hit, %d L mismatches)",
          mismatch, lmismatch);
    CHECK(L > 1000 && sim_gdwheel_migrations(c) > 1000, "L wrapped many wheel windows (L=%llu, %llu migrations)",
          (unsigned long long)L, (unsigned long long)sim_gdwheel_migrations(c));
    sim_zipf_free(&z);
    sim_cache_free(c);
}

static void test_gdwheel_migration_levels(void)
{
    /* N=4, 3 levels. From L=0: H=2 -> level 0 slot 2; H=5 -> level 1 slot 1 (5/4=1);
     * H=17 -> level 2 slot 1 (17/16=1). Evictions must come out 2, 5, 17 with L following. */
    sim_config cfg = items_cfg("gdwheel.n=4,gdwheel.levels=3");
    sim_cache *c = sim_cache_new("gdwheel", 3, &cfg);
    getc_(c, 1, 2); getc_(c, 2, 5); getc_(c, 3, 17);
    CHECK(sim_cache_obj(c, 1)->aux == 0 * 4 + 2, "H=2 in level 0 slot 2");
    CHECK(sim_cache_obj(c, 2)->aux == 1 * 4 + 1, "H=5 in level 1 slot 1");
    CHECK(sim_cache_obj(c, 3)->aux == 2 * 4 + 1, "H=17 in level 2 slot 1");
    getc_(c, 4, 40);   /* evicts H=2 (L=2); new H=42 -> level 2 slot 2 */
    CHECK(!sim_cache_resident(c, 1) && sim_gdwheel_L(c) == 2, "min H=2 evicted, L=2");
    getc_(c, 5, 40);   /* level 0 empty -> level 1 slot 1 migrates H=5 down; evict it, L=5 */
    CHECK(!sim_cache_resident(c, 2) && sim_gdwheel_L(c) == 5 && sim_gdwheel_migrations(c) == 1,
          "level-1 -> level-0 migration, L=5");
    getc_(c, 6, 40);   /* level 2 slot 1 -> level 0 slot 1 (17 = 16+1): evict, L=17 */
    CHECK(!sim_cache_resident(c, 3) && sim_gdwheel_L(c) == 17 && sim_gdwheel_migrations(c) == 2,
          "level-2 -> level-0 migration, L=17");
    /* a hit re-prices relative to the current L: H(4) = 17 + 40 = 57 */
    getc_(c, 4, 40);
    CHECK(sim_cache_obj(c, 4)->prio == 57, "hit sets H = L + c (got %llu)",
          (unsigned long long)sim_cache_obj(c, 4)->prio);
    sim_cache_free(c);
}

static void test_gdwheel_cost_tradeoff(void)
{
    /* equal costs: GreedyDual is LRU */
    size_t n = 200000;
    uint64_t *k = sim_wl_zipf(n, 20000, 0.9, 5);
    sim_trace t = {.n = n, .keys = k};
    sim_config cfg = items_cfg(NULL);
    sim_result a, b;
    char err[128];
    sim_simulate(&t, "lru", 2000, &cfg, &a, err, sizeof err);
    sim_simulate(&t, "gdwheel", 2000, &cfg, &b, err, sizeof err);
    CHECK(a.hits == b.hits, "GD-Wheel with equal costs == LRU");
    free(k);
    /* GD-Wheel workload 1, built like the paper's YCSB run (all keys SET in a warm-up, then
     * zipf GETs), at a size where LRU hits ~95 %: much lower recompute cost, ~same hit rate */
    uint64_t *keys;
    double *costs;
    uint8_t *ops;
    size_t N;
    sim_wl_gdwheel1_ycsb(n * 2, 20000, 0.99, 6, &keys, &costs, &ops, &N);
    sim_trace t2 = {.n = N, .keys = keys, .costs = costs, .ops = ops};
    sim_simulate(&t2, "lru", 15000, &cfg, &a, err, sizeof err);
    sim_simulate(&t2, "gdwheel", 15000, &cfg, &b, err, sizeof err);
    CHECK(a.hit_ratio > 0.94 && b.miss_cost_total < 0.5 * a.miss_cost_total &&
              fabs(a.hit_ratio - b.hit_ratio) < 0.01,
          "GD-Wheel cost %.0f vs LRU %.0f, hit %.4f vs %.4f", b.miss_cost_total, a.miss_cost_total,
          b.hit_ratio, a.hit_ratio);
    CHECK(b.miss_cost_p99_misses < 0.2 * a.miss_cost_p99_misses, "p99 miss cost %.0f vs LRU %.0f",
          b.miss_cost_p99_misses, a.miss_cost_p99_misses);
    free(keys);
    free(costs);
    free(ops);
}

/* ---------------------------------------------------------------- Bag-LRU */

static void test_baglru_rotation(void)
{
    sim_config cfg = items_cfg("baglru.items=2,baglru.interval=1,baglru.clean_every=1,baglru.merge=0");
    sim_cache *c = sim_cache_new("baglru", 6, &cfg);
    uint32_t nb;
    uint64_t rot, moves, merges;
    get(c, 1); get(c, 2);       /* bag0 = {1,2} full -> cleaner opens bag1 */
    sim_baglru_debug(c, &nb, &rot, &moves, &merges);
    CHECK(nb == 2, "full newest bag rotates: %u bags", nb);
    get(c, 3); get(c, 4);       /* bag1 = {3,4} -> bag2 opens */
    get(c, 5);                  /* bag2 = {5} */
    CHECK(sim_baglru_bag_of_key(c, 1) == 0 && sim_baglru_bag_of_key(c, 5) == 2, "items filed by time");
    get(c, 1);                  /* hit: 1 marked with bag2 (newest); cleaner moves it to newest_alt */
    sim_baglru_debug(c, &nb, &rot, &moves, &merges);
    CHECK(sim_baglru_bag_of_key(c, 1) == 1 && moves == 1,
          "touched item moves to newest_alt, not newest (bag %d, moves %llu)",
          sim_baglru_bag_of_key(c, 1), (unsigned long long)moves);
    get(c, 6);                  /* bag2 = {5,6} full -> bag3 */
    get(c, 7);                  /* full: evict oldest of the oldest bag before newest_alt: 2 */
    CHECK(!sim_cache_resident(c, 2) && sim_cache_resident(c, 1), "evicts 2 (bag0), keeps touched 1");
    sim_baglru_debug(c, &nb, &rot, &moves, &merges);
    CHECK(merges >= 1, "emptied bag0 is reclaimed (merged into its newer neighbour)");
    sim_cache_free(c);

    /* Intel's criterion is not recency: a touched item not yet moved can be evicted.
     * Bags rotate (interval 1) but the cleaner never cleans (clean_every 1000). */
    cfg = items_cfg("baglru.items=2,baglru.interval=1,baglru.clean_every=1000");
    c = sim_cache_new("baglru", 2, &cfg);
    get(c, 1); get(c, 2);               /* bag0 = {1,2}, bag1 opens */
    get(c, 1);                          /* 1 marked with bag1, still filed in bag0 */
    get(c, 3);                          /* no bag before newest_alt: add two; evict bag0's oldest */
    sim_baglru_debug(c, &nb, &rot, &moves, &merges);
    CHECK(!sim_cache_resident(c, 1) && sim_cache_resident(c, 2) && rot == 4,
          "no eligible bag: two bags added (rot=%llu), the oldest item (touched 1) evicted",
          (unsigned long long)rot);
    sim_cache_free(c);

    /* with lazy re-filing (variant) the touched item is moved instead and 2 goes */
    cfg = items_cfg("baglru.items=2,baglru.interval=1,baglru.clean_every=1000,baglru.lazy=1");
    c = sim_cache_new("baglru", 2, &cfg);
    get(c, 1); get(c, 2); get(c, 1); get(c, 3);
    CHECK(sim_cache_resident(c, 1) && !sim_cache_resident(c, 2), "lazy variant evicts 2, keeps 1");
    sim_cache_free(c);
}

static void test_baglru_approaches_lru(void)
{
    size_t n = 300000;
    uint64_t *k = sim_wl_zipf(n, 50000, 0.8, 21);
    sim_trace t = {.n = n, .keys = k};
    sim_config cl = items_cfg(NULL), cb = items_cfg("baglru.items=16,baglru.interval=1,baglru.clean_every=1,baglru.merge=4");
    sim_result a, b;
    char err[128];
    sim_simulate(&t, "lru", 5000, &cl, &a, err, sizeof err);
    sim_simulate(&t, "baglru", 5000, &cb, &b, err, sizeof err);
    CHECK(fabs(a.hit_ratio - b.hit_ratio) < 0.005, "small bags + eager cleaner ~ LRU: %.4f vs %.4f",
          b.hit_ratio, a.hit_ratio);
    free(k);
}

/* ---------------------------------------------------------------- CLOCK-Pro */

static void test_clockpro_periods(void)
{
    sim_config cfg = items_cfg("clockpro.cold=0.5,clockpro.min=0.1");
    sim_cache *c = sim_cache_new("clockpro", 10, &cfg);   /* m = 10, m_c = 5, bounds [1, 9] */
    double mc;
    uint64_t hot, cold, nonres;
    for (int k = 1; k <= 10; k++)
        get(c, (uint64_t)k);                            /* 10 resident cold pages in test */
    sim_clockpro_debug(c, &mc, &hot, &cold, &nonres);
    CHECK(hot == 0 && cold == 10 && nonres == 0 && mc == 5, "new pages are cold, in test");
    CHECK(sim_cache_obj(c, 1)->flags & 0x04, "test bit set on a new page");
    get(c, 11);   /* HAND_cold at 1: ref 0, in test -> non-resident test page */
    sim_obj *o = sim_cache_obj(c, 1);
    CHECK(o && (o->flags & SIM_F_GHOST) && !sim_cache_resident(c, 1), "evicted in-test page stays as non-resident");
    /* a miss on it during its test period: m_c += 1, it comes back hot */
    CHECK(get(c, 1) == 0, "non-resident re-access is a miss");
    sim_clockpro_debug(c, &mc, &hot, &cold, &nonres);
    CHECK(sim_cache_resident(c, 1) && (sim_cache_obj(c, 1)->flags & 0x01) && hot == 1 && mc == 6,
          "re-used within its test period -> hot, m_c 5 -> 6 (hot=%llu mc=%g)", (unsigned long long)hot, mc);
    /* page 3 is resident cold in test; a hit sets ref; when HAND_cold reaches it, it turns hot */
    CHECK(get(c, 3) == 1, "resident hit");
    get(c, 12);   /* HAND_cold: 2 (ref 0, test) evicted to non-resident */
    get(c, 13);   /* HAND_cold: 3 (ref 1, test) -> hot, m_c 7; then 4 evicted */
    sim_clockpro_debug(c, &mc, &hot, &cold, &nonres);
    CHECK((sim_cache_obj(c, 3)->flags & 0x01) && mc == 7 && hot == 2,
          "resident cold page hit in its test period -> hot when HAND_cold passes (mc=%g hot=%llu)", mc,
          (unsigned long long)hot);
    /* a long scan of new keys: test periods end without re-use, m_c falls to its floor,
     * and the non-resident pages never exceed m */
    uint64_t maxnr = 0;
    for (int k = 100; k < 400; k++) {
        get(c, (uint64_t)k);
        sim_clockpro_debug(c, &mc, &hot, &cold, &nonres);
        if (nonres > maxnr)
            maxnr = nonres;
    }
    CHECK(maxnr <= 10, "non-resident test pages bounded by m (max %llu)", (unsigned long long)maxnr);
    CHECK(mc == 1, "test periods ending unused shrink m_c to its floor (mc=%g)", mc);
    CHECK(sim_cache_resident(c, 1) && sim_cache_resident(c, 3), "hot pages survive the scan");
    CHECK(c->used <= 10, "capacity respected");
    sim_cache_free(c);
}

static void test_clockpro_loop(void)
{
    /* a loop slightly larger than the cache: LRU/CLOCK hit nothing, CLOCK-Pro keeps a hot set */
    size_t n = 60000, L = 120;
    uint64_t *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = i % L + 1;
    sim_trace t = {.n = n, .keys = k};
    sim_config cfg = items_cfg(NULL);
    sim_result a, b;
    char err[128];
    sim_simulate(&t, "lru", 100, &cfg, &a, err, sizeof err);
    sim_simulate(&t, "clockpro", 100, &cfg, &b, err, sizeof err);
    CHECK(a.hit_ratio == 0 && b.hit_ratio > 0.6, "loop 120 in 100: LRU %.3f, CLOCK-Pro %.3f", a.hit_ratio,
          b.hit_ratio);
    free(k);
}

/* ---------------------------------------------------------------- ARC, S3-FIFO */

static void test_arc(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("arc", 4, &cfg);
    get(c, 1); get(c, 2);
    get(c, 1);                                 /* 1 -> T2 */
    CHECK(sim_cache_obj(c, 1)->qid == 2 && sim_cache_obj(c, 2)->qid == 1, "second access moves to T2");
    get(c, 3); get(c, 4); get(c, 5);           /* full: REPLACE takes T1's LRU (2) into B1 */
    sim_obj *o = sim_cache_obj(c, 2);
    CHECK(o && (o->flags & SIM_F_GHOST) && o->qid == 3, "T1 victim kept as B1 ghost");
    get(c, 2);                                 /* B1 hit: p grows, 2 fetched into T2 */
    CHECK(sim_cache_resident(c, 2) && sim_cache_obj(c, 2)->qid == 2, "B1 ghost hit -> T2");
    sim_cache_free(c);
    /* scan resistance: a hot set survives a one-time scan */
    size_t n = 0;
    uint64_t *k = malloc(40000 * sizeof *k);
    for (int rep = 0; rep < 50; rep++)
        for (int i = 0; i < 50; i++)
            k[n++] = (uint64_t)i + 1;
    for (int i = 0; i < 2000; i++)
        k[n++] = 100000 + (uint64_t)i;
    for (int rep = 0; rep < 10; rep++)
        for (int i = 0; i < 50; i++)
            k[n++] = (uint64_t)i + 1;
    sim_trace t = {.n = n, .keys = k};
    sim_result a, b;
    char err[128];
    sim_simulate(&t, "lru", 100, &cfg, &a, err, sizeof err);
    sim_simulate(&t, "arc", 100, &cfg, &b, err, sizeof err);
    CHECK(b.hits >= a.hits + 40, "ARC keeps the hot set through a scan (%llu vs LRU %llu hits)",
          (unsigned long long)b.hits, (unsigned long long)a.hits);
    free(k);
}

static void test_s3fifo(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("s3fifo", 10, &cfg);   /* S target 1, ghost 9 */
    for (int k = 1; k <= 10; k++)
        get(c, (uint64_t)k);
    get(c, 11);   /* S over target: its oldest (1, freq 0) goes to the ghost queue */
    sim_obj *o = sim_cache_obj(c, 1);
    CHECK(o && (o->flags & SIM_F_GHOST), "one-hit object leaves S for G");
    get(c, 1);    /* ghost hit: inserted straight into M */
    CHECK(sim_cache_resident(c, 1) && sim_cache_obj(c, 1)->qid == 2, "ghost hit goes to M");
    get(c, 3); get(c, 3);   /* 3 read twice while in S */
    for (int k = 20; k < 40; k++)
        get(c, (uint64_t)k);
    CHECK(sim_cache_resident(c, 3) && sim_cache_obj(c, 3)->qid == 2, "S object read twice promoted to M");
    sim_cache_free(c);
}

/* ---------------------------------------------------------------- memcached SLRU */

static void test_mcslru_activation(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("mcslru", 100, &cfg);
    for (int k = 1; k <= 100; k++)
        get(c, (uint64_t)k);
    uint64_t q[3];
    sim_mcslru_counts(c, 0, q);
    CHECK(q[0] <= 20 && q[0] + q[1] + q[2] == 100, "HOT capped at 20%% (HOT %llu)", (unsigned long long)q[0]);
    get(c, 50);    /* first hit: FETCHED only */
    get(c, 60); get(c, 60);   /* second hit: ACTIVE -> moves to WARM (it is in COLD now) */
    CHECK(sim_cache_obj(c, 60)->qid == 1, "second hit activates: COLD -> WARM");
    CHECK(sim_cache_obj(c, 50)->qid == 2, "a single hit does not move the item");
    for (int k = 1000; k < 1200; k++)
        get(c, (uint64_t)k);   /* flood of new keys */
    CHECK(!sim_cache_resident(c, 50), "hit once, then evicted FIFO through COLD");
    CHECK(sim_cache_resident(c, 60), "activated item survives in WARM");
    sim_mcslru_counts(c, 0, q);
    CHECK(q[1] <= 40, "WARM capped at 40%% (WARM %llu)", (unsigned long long)q[1]);
    sim_cache_free(c);
}

static void test_mcslru_pages(void)
{
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    sim_cache *c = sim_cache_new("mcslru", 1u << 20, &cfg);   /* one 1 MiB page */
    int small = sim_slab_class_of(48 + 100), big = sim_slab_class_of(48 + 5000);
    uint32_t per_small = (1u << 20) / sim_slab_chunk(small), per_big = (1u << 20) / sim_slab_chunk(big);
    for (uint32_t k = 0; k < per_small; k++)
        sim_cache_access(c, k + 1, 100, 1, SIM_GET);
    CHECK(c->evictions == 0, "the first page holds %u chunks of %u B", per_small, sim_slab_chunk(small));
    sim_cache_access(c, 999999, 100, 1, SIM_GET);
    CHECK(c->evictions == 1, "a full class evicts within itself");
    /* memcached gives a class with no page its first page even beyond the limit */
    sim_cache_access(c, 5000000, 5000, 1, SIM_GET);
    CHECK(c->evictions == 1 && sim_cache_resident(c, 5000000), "first page of a new class granted");
    for (uint32_t k = 1; k <= per_big; k++)
        sim_cache_access(c, 5000000 + k, 5000, 1, SIM_GET);
    uint64_t q[3], qs[3];
    sim_mcslru_counts(c, big, q);
    sim_mcslru_counts(c, small, qs);
    CHECK(q[0] + q[1] + q[2] == per_big && qs[0] + qs[1] + qs[2] == per_small,
          "big class evicts its own items only (%llu big, %llu small)",
          (unsigned long long)(q[0] + q[1] + q[2]), (unsigned long long)(qs[0] + qs[1] + qs[2]));
    sim_cache_free(c);
}

/* mcslru.base: memcached at B items plus a ghost of its last S - B evictions (the agent's view
 * above today's memory), against plain mcslru at B */
static void test_mcslru_base_ghost(void)
{
    sim_config plain = items_cfg(NULL), ghost = items_cfg("mcslru.base=100");
    sim_cache *b = sim_cache_new("mcslru", 100, &plain), *g = sim_cache_new("mcslru", 120, &ghost);
    for (uint64_t k = 1; k <= 150; k++) {
        CHECK(get(b, k) == 0 && get(g, k) == 0, "first reads miss");
    }
    /* no hits yet: keys leave through COLD in insertion order, 1..50 evicted, the ghost of 20
     * holds the last 20 (31..50) */
    CHECK(b->evictions == 50 && g->evictions == 50, "50 evictions (%llu, %llu)",
          (unsigned long long)b->evictions, (unsigned long long)g->evictions);
    CHECK(g->nresident == 100, "the resident part holds base = 100 items, not 120 (%llu)",
          (unsigned long long)g->nresident);
    CHECK(get(g, 40) == 1 && get(b, 40) == 0, "a recently evicted key hits in the ghost only");
    CHECK(get(g, 25) == 0, "a key evicted 26 evictions ago is past the ghost of 20");
    CHECK(sim_cache_resident(g, 40), "the ghost hit stored the key again, as memcached at base does");
    CHECK(get(g, 40) == 1, "then it hits as a resident item");
    char why[160];
    CHECK(g->ops->verify(g, why, sizeof why) == 0, "verify: %s", why);
    sim_cache_free(b);
    sim_cache_free(g);
    /* S <= base: plain mcslru at S */
    sim_config big = items_cfg("mcslru.base=500");
    sim_cache *p = sim_cache_new("mcslru", 100, &plain), *q = sim_cache_new("mcslru", 100, &big);
    uint64_t x = 12345, hp = 0, hq = 0;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t k = (x >> 33) % 400;
        hp += (uint64_t)get(p, k);
        hq += (uint64_t)get(q, k);
    }
    CHECK(hp == hq && p->evictions == q->evictions, "base above the size changes nothing");
    sim_cache_free(p);
    sim_cache_free(q);
}

/* ---------------------------------------------------------------- metrics and ops */

static void test_metrics_and_ops(void)
{
    /* byte hit ratio: sizes 100 and 900, LRU big enough for both */
    uint64_t keys[] = {1, 2, 1, 2, 1};
    uint32_t sizes[] = {100, 900, 100, 900, 100};
    double costs[] = {5, 50, 5, 50, 5};
    sim_trace t = {.n = 5, .keys = keys, .sizes = sizes, .costs = costs};
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    sim_result r;
    char err[128];
    sim_simulate(&t, "lru", 10000, &cfg, &r, err, sizeof err);
    CHECK(r.hits == 3 && fabs(r.byte_hit_ratio - 1100.0 / 2100.0) < 1e-12, "byte hit ratio %.4f",
          r.byte_hit_ratio);
    CHECK(r.miss_cost_total == 55 && r.miss_cost_p99_misses == 50 && r.miss_cost_p99 == 50,
          "cost total %.0f p99 %.0f", r.miss_cost_total, r.miss_cost_p99);
    /* p99 over requests: 1000 GETs, 5 misses -> p99 is 0 (hits dominate) */
    uint64_t *k = malloc(1000 * sizeof *k);
    for (int i = 0; i < 1000; i++)
        k[i] = (uint64_t)(i % 5);
    sim_trace t2 = {.n = 1000, .keys = k};
    sim_config ci = items_cfg(NULL);
    sim_simulate(&t2, "lru", 10, &ci, &r, err, sizeof err);
    CHECK(r.hits == 995 && r.miss_cost_p99 == 0 && r.miss_cost_p99_misses == 1, "p99 over all GETs");
    free(k);

    /* SET replaces, DELETE removes, ADD keeps, --no-fill */
    sim_cache *c = sim_cache_new("lru", 3, &ci);
    sim_cache_access(c, 1, 0, 1, SIM_SET);
    CHECK(get(c, 1) == 1, "SET stores");
    sim_cache_access(c, 1, 0, 1, SIM_DELETE);
    CHECK(get(c, 1) == 0, "DELETE removes (then the GET refills)");
    sim_cache_access(c, 2, 0, 1, SIM_ADD);
    sim_cache_access(c, 3, 0, 1, SIM_ADD);
    sim_cache_access(c, 1, 0, 1, SIM_ADD);   /* present: no-op, no reorder */
    get(c, 4);                             /* LRU order 1(oldest) 2 3: evicts 1 */
    CHECK(!sim_cache_resident(c, 1), "ADD on a present key does not touch it");
    sim_cache_free(c);
    ci.fill_on_miss = 0;
    c = sim_cache_new("lru", 3, &ci);
    CHECK(get(c, 9) == 0 && !sim_cache_resident(c, 9), "no-fill GET miss does not insert");
    sim_cache_free(c);
}

/* a Zipf 0.9 trace whose object sizes are base + (key mod span) */
static sim_trace sized_zipf(size_t n, uint64_t nkeys, uint64_t seed, uint32_t base, uint32_t span, uint64_t **k,
                            uint32_t **sz)
{
    *k = sim_wl_zipf(n, nkeys, 0.9, seed);
    *sz = malloc(n * sizeof **sz);
    for (size_t i = 0; i < n; i++)
        (*sz)[i] = (uint32_t)(base + (*k)[i] % span);
    return (sim_trace){.n = n, .keys = *k, .sizes = *sz};
}

static void test_every_policy_sane(void)
{
    /* every policy: capacity respected in bytes+slab mode, deterministic, hit ratio in (0,1) */
    size_t n = 100000;
    uint64_t *k;
    uint32_t *sz;
    sim_trace t = sized_zipf(n, 20000, 8, 50, 3000, &k, &sz);
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    cfg.slab = 1;
    for (const char *const *p = sim_policy_names(); *p; p++) {
        sim_cache *c = sim_cache_new(*p, 4u << 20, &cfg);
        int over = 0;
        for (size_t i = 0; i < n; i++) {
            sim_cache_access(c, k[i], sz[i], 1, SIM_GET);
            if (strcmp(*p, "mcslru") != 0 && c->used > c->capacity)
                over = 1;
        }
        CHECK(!over, "%s never exceeds its byte capacity", *p);
        sim_cache_free(c);
        sim_result a, b;
        char err[128];
        sim_simulate(&t, *p, 4u << 20, &cfg, &a, err, sizeof err);
        sim_simulate(&t, *p, 4u << 20, &cfg, &b, err, sizeof err);
        CHECK(a.hits == b.hits && a.hit_ratio > 0.1 && a.hit_ratio < 1, "%s deterministic, hr %.3f", *p,
              a.hit_ratio);
    }
    free(k);
    free(sz);
}

/* Randomised stress: every policy, tiny to large caches, mixed ops and sizes, with the
 * structural invariants (sim_cache_verify) checked as it runs. */
static void test_stress_invariants(void)
{
    struct { int bytes, slab; uint64_t cap; const char *params; } cfgs[] = {
        {0, 0, 1, NULL}, {0, 0, 7, NULL}, {0, 0, 100, NULL}, {0, 0, 2000, NULL},
        {0, 0, 300, "baglru.items=4,baglru.interval=1,baglru.clean_every=2,baglru.merge=2,"
                    "gdwheel.n=4,gdwheel.levels=3,gclock.k=3,clockpro.cold=0.3"},
        {1, 1, 256 * 1024, NULL}, {1, 1, 4u << 20, "baglru.lazy=1"}, {1, 0, 200000, NULL},
    };
    sim_zipf z;
    sim_zipf_init(&z, 5000, 0.8);
    for (const char *const *p = sim_policy_names(); *p; p++) {
        int bad = 0;
        char why[256] = "";
        for (size_t ci = 0; ci < sizeof cfgs / sizeof cfgs[0] && !bad; ci++) {
            sim_config cfg;
            sim_config_default(&cfg);
            cfg.unit_bytes = cfgs[ci].bytes;
            cfg.slab = cfgs[ci].slab;
            cfg.policy_metadata = cfgs[ci].slab;
            cfg.params = cfgs[ci].params;
            sim_cache *c = sim_cache_new(*p, cfgs[ci].cap, &cfg);
            sim_rng r;
            sim_rng_seed(&r, 1000 + ci);
            for (int step = 0; step < 30000 && !bad; step++) {
                uint64_t key = sim_zipf_draw(&z, &r) + 1;
                double u = sim_rng_unit(&r);
                int op = u < 0.8 ? SIM_GET : u < 0.88 ? SIM_SET : u < 0.95 ? SIM_DELETE : SIM_ADD;
                uint32_t size = (uint32_t)(20 + (key * 2654435761u) % 5000) + (sim_rng_next(&r) % 8 == 0 ? 300 : 0);
                double cost = 1 + (double)(key % 400);
                sim_cache_access(c, key, size, cost, op);
                if (step % 250 == 0 || step == 29999)
                    bad = sim_cache_verify(c, why, sizeof why) != 0;
            }
            if (bad)
                printf("  %s config %zu: %s\n", *p, ci, why);
            sim_cache_free(c);
        }
        CHECK(!bad, "%s keeps its invariants under random GET/SET/DELETE/ADD", *p);
    }
    sim_zipf_free(&z);
}

/* the grid runner remaps keys to dense ids: results must equal the hashed single runs */
static void test_dense_ids_equal_hashing(void)
{
    size_t n = 60000;
    uint64_t *k = sim_wl_zipf(n, 8000, 0.9, 77);
    uint32_t *sz = malloc(n * sizeof *sz);
    uint8_t *ops = malloc(n);
    sim_rng r;
    sim_rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++) {
        sz[i] = (uint32_t)(100 + k[i] % 2000);
        double u = sim_rng_unit(&r);
        ops[i] = u < 0.9 ? SIM_GET : u < 0.95 ? SIM_SET : SIM_DELETE;
    }
    sim_trace t = {.n = n, .keys = k, .sizes = sz, .ops = ops};
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    cfg.slab = 1;
    const char *const *names = sim_policy_names();
    int np = 0;
    while (names[np])
        np++;
    uint64_t sizes[2] = {1u << 20, 3u << 20};
    sim_result *grid = calloc((size_t)np * 2, sizeof *grid);
    char err[256];
    sim_simulate_many(&t, names, np, sizes, 2, &cfg, 2, grid, err, sizeof err);
    int same = 1;
    for (int p = 0; p < np; p++)
        for (int s = 0; s < 2; s++) {
            sim_result one;
            sim_simulate(&t, names[p], sizes[s], &cfg, &one, err, sizeof err);
            if (one.hits != grid[p * 2 + s].hits || one.evictions != grid[p * 2 + s].evictions) {
                same = 0;
                printf("  %s@%llu: %llu vs %llu\n", names[p], (unsigned long long)sizes[s],
                       (unsigned long long)one.hits, (unsigned long long)grid[p * 2 + s].hits);
            }
        }
    CHECK(same, "grid (dense ids, 2 threads) == single hashed runs for every policy");
    free(grid);
    free(k);
    free(sz);
    free(ops);
}

/* the SHARDS_adj correction: over independent samples it is closer to the full result */
static void test_sample_adjust(void)
{
    size_t n = 300000;
    uint64_t *k = sim_wl_zipf(n, 30000, 1.0, 31);
    sim_trace t = {.n = n, .keys = k};
    sim_config cfg = items_cfg(NULL);
    sim_result full, mini;
    char err[128];
    sim_simulate(&t, "lru", 3000, &cfg, &full, err, sizeof err);
    double e_adj = 0, e_raw = 0;
    cfg.sample_rate = 0.05;
    for (int s = 0; s < 10; s++) {
        cfg.sample_salt = 1000 + (uint64_t)s;
        sim_simulate(&t, "lru", 3000, &cfg, &mini, err, sizeof err);
        e_adj += fabs(mini.hit_ratio - full.hit_ratio) / 10;
        e_raw += fabs(mini.hit_ratio_raw - full.hit_ratio) / 10;
        CHECK(fabs(mini.expected_requests - 0.05 * n) < 1e-6, "expected requests = R x GETs");
    }
    CHECK(e_adj < e_raw && e_adj < 0.02, "adjusted mean error %.4f < raw %.4f", e_adj, e_raw);
    cfg.sample_adjust = 0;
    sim_simulate(&t, "lru", 3000, &cfg, &mini, err, sizeof err);
    CHECK(mini.hit_ratio == mini.hit_ratio_raw, "sample_adjust=0 reports the raw ratio");
    free(k);
}


/* ------------------- SIEVE, LFU, GDSF, 2Q, OPT, LIRS, W-TinyLFU, LHD and multi-level CLOCK */

static void test_sieve_hand(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("sieve", 3, &cfg);
    get(c, 1); get(c, 2); get(c, 3);   /* queue (old->new) 1 2 3, hand unset */
    CHECK(get(c, 1) == 1, "hit marks 1 visited");
    get(c, 4);   /* hand at 1: visited -> cleared, hand to 2: evict 2, hand stays at 3 */
    CHECK(sim_cache_resident(c, 1) && !sim_cache_resident(c, 2), "1 spared, 2 evicted");
    CHECK(sim_cache_obj(c, 1)->freq == 0, "the hand cleared 1's bit");
    get(c, 1);   /* 1 visited again, still at the old end */
    get(c, 5);   /* hand at 3 (not back at the tail): 3 evicted although 1 is older */
    CHECK(!sim_cache_resident(c, 3) && sim_cache_resident(c, 1), "hand resumes where it stopped");
    get(c, 6);   /* hand at 4 (unvisited): 4 evicted; 1 survives without moving */
    CHECK(!sim_cache_resident(c, 4) && sim_cache_resident(c, 1), "survivors are not moved");
    char why[128];
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "sieve verify: %s", why);
    sim_cache_free(c);
}

static void test_lfu_order(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("lfu", 2, &cfg);
    get(c, 1); get(c, 2); get(c, 3);   /* tie at count 1: the first to reach it (1) goes */
    CHECK(!sim_cache_resident(c, 1) && sim_cache_resident(c, 2), "FIFO among equal counts");
    get(c, 2); get(c, 2); get(c, 4);   /* 2 has 3 hits, 3 has 1: 3 goes */
    CHECK(sim_cache_resident(c, 2) && !sim_cache_resident(c, 3), "fewest hits evicted");
    get(c, 4); get(c, 4); get(c, 4); get(c, 5);  /* 4 reached 4 after 2 reached 3: 2 goes */
    CHECK(!sim_cache_resident(c, 2) && sim_cache_resident(c, 4), "counts are not aged");
    sim_cache_free(c);
}

static void test_gdsf_size_and_aging(void)
{
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    sim_cache *c = sim_cache_new("gdsf", 1000, &cfg);
    sim_cache_access(c, 1, 600, 1, SIM_GET);   /* H = 0 + 1/600 */
    sim_cache_access(c, 2, 100, 1, SIM_GET);   /* H = 1/100 */
    sim_cache_access(c, 3, 300, 1, SIM_GET);   /* 1000 bytes: full */
    sim_cache_access(c, 4, 100, 1, SIM_GET);   /* lowest H = the 600-byte object */
    CHECK(!sim_cache_resident(c, 1) && sim_cache_resident(c, 2) && sim_cache_resident(c, 3),
          "the large object goes first at equal frequency");
    /* a costly object survives a cheap one of the same size */
    sim_cache_access(c, 5, 600, 100, SIM_GET);  /* 500 used + 600: evicts 3 (H 1/300, lowest) */
    CHECK(!sim_cache_resident(c, 3) && sim_cache_resident(c, 5), "lowest H evicted");
    sim_cache_access(c, 6, 300, 1, SIM_GET);    /* 800 + 300: one eviction; H(5) = L + 100/600 */
    CHECK(sim_cache_resident(c, 5) && !sim_cache_resident(c, 2) && sim_cache_resident(c, 4),
          "a costly large object outlives cheap small ones (cost x freq / size)");
    sim_cache_free(c);
    /* items mode: GDSF = LFU with dynamic aging; L rises, so a once-hot object ages out */
    sim_config ic = items_cfg(NULL);
    c = sim_cache_new("gdsf", 2, &ic);
    for (int i = 0; i < 5; i++)
        get(c, 1);                             /* H(1) = 5 */
    for (uint64_t k = 10; k < 20; k++) {
        get(c, k); get(c, k);                  /* each newcomer reaches L + 2 */
    }
    CHECK(!sim_cache_resident(c, 1), "aging evicts the once-hot object eventually");
    char why[128];
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "gdsf verify: %s", why);
    sim_cache_free(c);
}

static void test_twoq_queues(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("twoq", 4, &cfg);   /* Kin 1, Kout 2, Am 3 */
    get(c, 1); get(c, 2); get(c, 3); get(c, 4);    /* all in A1in */
    CHECK(get(c, 1) == 1 && sim_cache_obj(c, 1)->qid == 1, "a hit in A1in stays in A1in");
    get(c, 5);                                     /* A1in over Kin: 1 -> A1out */
    CHECK(!sim_cache_resident(c, 1) && sim_cache_obj(c, 1) != NULL, "1 is a ghost on A1out");
    CHECK(get(c, 1) == 0 && sim_cache_obj(c, 1)->qid == 2, "a ghost hit enters Am");
    get(c, 6); get(c, 7);                          /* 2, 3 -> A1out; 2 drops off (Kout 2) */
    CHECK(sim_cache_obj(c, 2) == NULL && sim_cache_obj(c, 3) != NULL, "A1out is a bounded FIFO");
    char why[128];
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "twoq verify: %s", why);
    sim_cache_free(c);
}

/* brute-force Belady: scan residents for the furthest next use */
static uint64_t opt_reference(const uint64_t *k, size_t n, uint64_t cap)
{
    uint64_t *res = malloc(cap * sizeof *res), hits = 0;
    size_t nres = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < nres && res[j] != k[i]; j++)
            ;
        if (j < nres) {
            hits++;
            continue;
        }
        if (nres == cap) {
            size_t worst = 0, far = 0;
            for (size_t r = 0; r < nres; r++) {
                size_t t = i + 1;
                while (t < n && k[t] != res[r])
                    t++;
                if (t > far) {
                    far = t;
                    worst = r;
                }
            }
            res[worst] = k[i];
        } else {
            res[nres++] = k[i];
        }
    }
    free(res);
    return hits;
}

static void test_opt_bound(void)
{
    size_t n = 6000;
    uint64_t *k = sim_wl_zipf(n, 800, 0.7, 21);
    sim_trace t = {.n = n, .keys = k};
    sim_config cfg = items_cfg(NULL);
    char err[128];
    for (int s = 0; s < 3; s++) {
        uint64_t size = (uint64_t[]){10, 60, 300}[s];
        sim_result o;
        sim_simulate(&t, "opt", size, &cfg, &o, err, sizeof err);
        uint64_t ref = opt_reference(k, n, size);
        CHECK(o.hits == ref, "opt@%llu hits %llu, brute force %llu", (unsigned long long)size,
              (unsigned long long)o.hits, (unsigned long long)ref);
        for (const char *const *p = sim_policy_names(); *p; p++) {
            sim_result r;
            sim_simulate(&t, *p, size, &cfg, &r, err, sizeof err);
            CHECK(r.hits <= o.hits, "%s@%llu beats OPT (%llu > %llu)", *p, (unsigned long long)size,
                  (unsigned long long)r.hits, (unsigned long long)o.hits);
        }
    }
    free(k);
}

static void test_lirs_states(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("lirs", 3, &cfg);   /* HIR share 1 object, LIR 2 */
    get(c, 1); get(c, 2);                          /* warm-up: both LIR */
    get(c, 3);                                     /* LIR full: 3 is resident HIR (S and Q) */
    CHECK(sim_cache_obj(c, 1)->qid == 1 && sim_cache_obj(c, 3)->qid == 2, "1 LIR, 3 HIR");
    get(c, 4);                                     /* evicts Q's front 3: a ghost on S */
    CHECK(!sim_cache_resident(c, 3) && sim_cache_obj(c, 3) != NULL, "3 is a non-resident ghost");
    CHECK(get(c, 3) == 0, "ghost access is a miss");
    /* 3 came back within S's span: LIR; the bottom LIR (1) is demoted to Q */
    CHECK(sim_cache_obj(c, 3)->qid == 1 && sim_cache_obj(c, 1)->qid == 2 && !sim_cache_resident(c, 4),
          "ghost -> LIR, bottom LIR -> HIR, Q's front (4) evicted");
    CHECK(get(c, 2) == 1, "LIR hit");              /* 2 to the top; S bottom now 3 */
    char why[128];
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "lirs verify: %s", why);
    sim_cache_free(c);

    /* a loop just larger than the cache: LRU never hits, LIRS keeps its LIR set */
    size_t n = 120 * 50;
    uint64_t *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = i % 120 + 1;
    sim_trace t = {.n = n, .keys = k};
    sim_result a, b;
    char err[128];
    sim_simulate(&t, "lru", 100, &cfg, &a, err, sizeof err);
    sim_simulate(&t, "lirs", 100, &cfg, &b, err, sizeof err);
    CHECK(a.hits == 0 && b.hit_ratio > 0.75, "loop 120 on 100: LRU %.3f, LIRS %.3f", a.hit_ratio, b.hit_ratio);
    free(k);
}

static void test_wtinylfu_admission(void)
{
    sim_config cfg = items_cfg(NULL);
    sim_cache *c = sim_cache_new("wtinylfu", 100, &cfg);   /* window 1, main 99 */
    for (uint64_t k = 500; k < 600; k++)                 /* fill: the window drains into main */
        get(c, k);
    for (int round = 0; round < 6; round++)              /* 50 hot keys, counted in main */
        for (uint64_t k = 1; k <= 50; k++)
            get(c, k);
    for (uint64_t k = 1000; k < 1500; k++)               /* one-hit wonders */
        get(c, k);
    int kept = 0;
    for (uint64_t k = 1; k <= 50; k++)
        kept += sim_cache_resident(c, k);
    CHECK(kept >= 45, "frequent keys survive a stream of one-hit wonders (%d/50 kept)", kept);
    sim_cache *l = sim_cache_new("lru", 100, &cfg);
    for (uint64_t k = 1000; k < 1500; k++)
        get(l, k);
    CHECK(!sim_cache_resident(l, 1), "(LRU keeps none of them)");
    sim_cache_free(l);
    char why[128];
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "wtinylfu verify: %s", why);
    sim_cache_free(c);
}

static void test_lhd_prefers_small(void)
{
    /* equal popularity, sizes 100 B vs 5000 B: hit density per byte favours the small ones,
     * so LHD's object hit ratio beats LRU's */
    size_t n = 200000;
    uint64_t *k = sim_wl_zipf(n, 2000, 0.6, 41);
    uint32_t *sz = malloc(n * sizeof *sz);
    for (size_t i = 0; i < n; i++)
        sz[i] = k[i] % 2 ? 5000 : 100;
    sim_trace t = {.n = n, .keys = k, .sizes = sz};
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.unit_bytes = 1;
    sim_result a, b;
    char err[128];
    sim_simulate(&t, "lru", 500000, &cfg, &a, err, sizeof err);
    sim_simulate(&t, "lhd", 500000, &cfg, &b, err, sizeof err);
    CHECK(b.hit_ratio > a.hit_ratio + 0.05, "LHD %.3f vs LRU %.3f object hit ratio", b.hit_ratio, a.hit_ratio);
    free(k);
    free(sz);
}

void sim_mlclock_debug(const sim_cache *c, double w[3], uint64_t *learned, uint64_t *spared);

static void test_mlclock(void)
{
    size_t n = 150000;
    uint64_t *k = sim_wl_zipf(n, 20000, 0.9, 5);
    sim_trace t = {.n = n, .keys = k};
    sim_result a, b;
    char err[128];
    /* a model that never learns and never says "keep" is CLOCK exactly */
    sim_config frozen = items_cfg("mlclock.lr=0");
    sim_config plain = items_cfg(NULL);
    sim_simulate(&t, "clock", 2000, &plain, &a, err, sizeof err);
    sim_simulate(&t, "mlclock", 2000, &frozen, &b, err, sizeof err);
    CHECK(a.hits == b.hits, "mlclock with lr=0 == clock (%llu vs %llu)", (unsigned long long)b.hits,
          (unsigned long long)a.hits);
    /* learning: hits teach "keep" until the model spares unreferenced objects */
    sim_cache *c = sim_cache_new("mlclock", 2000, &plain);
    for (size_t i = 0; i < n; i++)
        get(c, k[i]);
    double w[3];
    uint64_t learned, spared;
    sim_mlclock_debug(c, w, &learned, &spared);
    CHECK(learned > n / 2 && spared > 0, "the perceptron learned (%llu updates) and gated (%llu spares)",
          (unsigned long long)learned, (unsigned long long)spared);
    CHECK(w[1] > 0, "more references -> keep (w_count %.3f)", w[1]);
    char why[128];
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "mlclock verify: %s", why);
    sim_cache_free(c);
    free(k);
}

/* ---------------------------------------------------------------- extstore (two tiers) */

/* Plain bytes (no slab rounding) so every charge can be followed by hand: whole items of 100 B
 * (flushable: item_size 100), small items of 50 B, headers of 10 B, flash pages of 300 B (two
 * flushed items of 48 + 100 B each), two pages. In the comments: buf = the flushable whole items,
 * main = headers and small items, newest first; p0, p1 the flash pages. */
static sim_config ext_cfg(const char *params)
{
    sim_config c;
    sim_config_default(&c);
    c.unit_bytes = 1;
    c.params = params;
    return c;
}
#define EXT_TINY "extstore.flash=600,extstore.page=300,extstore.item_size=100,extstore.header=10"
static int eget(sim_cache *c, uint64_t k) { return sim_cache_access(c, k, 100, 1.0, SIM_GET); }
static int is_header(sim_cache *c, uint64_t k)
{
    sim_obj *o = sim_cache_obj(c, k);
    return o && (o->flags & 0x01) && o->charge == 10;
}
static int is_whole(sim_cache *c, uint64_t k)
{
    sim_obj *o = sim_cache_obj(c, k);
    return o && !(o->flags & 0x01) && sim_cache_resident(c, k);
}
enum { XA = 1, XB, XC, XD, XE, XF, XG };

static void test_extstore_flush_and_flash_hits(void)
{
    /* RAM 250 B; the flushable class keeps 100 B of whole items before it flushes */
    sim_config cfg = ext_cfg(EXT_TINY ",extstore.buffer=100");
    sim_cache *c = sim_cache_new("extstore", 250, &cfg);
    uint64_t k[7];
    CHECK(eget(c, XA) == 0 && eget(c, XB) == 0, "cold misses: buf [b a] 200");
    CHECK(eget(c, XC) == 0 && is_header(c, XA) && c->used == 210, "buf over 100 B: a flushed to p0, not evicted");
    CHECK(eget(c, XA) == 1, "a header whose flash copy lives is a hit");
    /* d (50 B) is under item_size: it goes to main and is never flushed */
    CHECK(sim_cache_access(c, XD, 50, 1, SIM_GET) == 0 && is_header(c, XB) && c->used == 170,
          "b flushed to p0 [a b]; main [d bh ah]");
    /* e: buf holds 100 B (c), not over its 100 B, so main's tail goes: headers a, b (copies die) */
    CHECK(eget(c, XE) == 0 && !sim_cache_resident(c, XA) && !sim_cache_resident(c, XB) && is_whole(c, XC) &&
          c->used == 250, "headers evicted before the buffer shrinks under its 100 B");
    sim_extstore_counts(c, k);
    CHECK(k[5] == 2 && c->evictions == 2 && k[6] == 0, "two header evictions, no live copy (%llu B)",
          (unsigned long long)k[6]);
    /* f: c flushed (p0 full: p1), then main's tail, the small d, evicted */
    CHECK(eget(c, XF) == 0 && is_header(c, XC) && !sim_cache_resident(c, XD) && c->used == 210, "c to p1, d evicted");
    sim_extstore_counts(c, k);
    CHECK(k[2] == 3 && k[6] == 148 && c->evictions == 3, "three flushed, c live (%llu, %llu)",
          (unsigned long long)k[2], (unsigned long long)k[6]);
    CHECK(eget(c, XC) == 1, "c: a flash hit");
    CHECK(eget(c, XA) == 0 && is_whole(c, XA) && is_header(c, XE) && c->used == 220,
          "a, header gone: a miss, stored whole; e flushed to p1");
    sim_extstore_counts(c, k);
    CHECK(k[0] == 2 && k[1] == 0, "two flash hits (%llu)", (unsigned long long)k[0]);
    char why[256] = "";
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "invariants: %s", why);
    sim_cache_free(c);
}

static void test_extstore_page_reclaim(void)
{
    /* RAM 230 B, no buffer (every flushable item goes to flash first when room is needed), frag 0:
     * no page is ever fragmented enough to compact, the oldest page is reclaimed */
    sim_config cfg = ext_cfg(EXT_TINY ",extstore.buffer=0,extstore.frag=0");
    sim_cache *c = sim_cache_new("extstore", 230, &cfg);
    int r = eget(c, XA) | eget(c, XB);   /* buf [b a] 200 */
    r |= eget(c, XC);                    /* a -> p0; main [ah]; buf [c b] 210 */
    r |= eget(c, XD);                    /* b -> p0 [a b]; buf [d c] 220 */
    r |= eget(c, XE);                    /* c -> p1; main [ch bh ah]; buf [e d] 230 */
    CHECK(r == 0 && c->used == 230 && is_header(c, XA) && is_header(c, XB) && is_header(c, XC), "prefix");
    /* f: d -> p1 [c d]; still 240 > 230: e flushed, no page free -> p0 (a, b) reclaimed, p0 [e] */
    CHECK(eget(c, XF) == 0 && c->used == 150, "f stored, RAM 150 B");
    uint64_t k[7];
    sim_extstore_counts(c, k);
    CHECK(k[3] == 1 && k[4] == 0 && k[6] == 3 * 148, "one page reclaimed, none compacted, c d e live");
    CHECK(is_header(c, XA) && is_header(c, XB), "a and b keep their headers in RAM, their copies gone");
    CHECK(eget(c, XA) == 0 && is_whole(c, XA) && is_header(c, XF) && c->used == 150,
          "a reclaimed: a miss (header dropped), stored whole; f flushed to p0 [e f]");
    CHECK(eget(c, XC) == 1, "c still on p1: a flash hit");
    sim_extstore_counts(c, k);
    CHECK(k[0] == 1 && k[1] == 1, "one flash hit, one flash miss (%llu %llu)", (unsigned long long)k[0],
          (unsigned long long)k[1]);
    char why[256] = "";
    CHECK(sim_cache_verify(c, why, sizeof why) == 0, "invariants: %s", why);
    sim_cache_free(c);
}

static void test_extstore_compaction(void)
{
    /* the same start with b deleted: p0 keeps 148 of 300 B live, under 0.8 x 300, so when p1 is
     * full the next flush compacts p0 (a rewritten) instead of reclaiming it; with frag 0, p0 is
     * reclaimed and a lost */
    for (int frag = 0; frag < 2; frag++) {
        sim_config cfg = ext_cfg(frag ? EXT_TINY ",extstore.buffer=0" : EXT_TINY ",extstore.buffer=0,extstore.frag=0");
        sim_cache *c = sim_cache_new("extstore", 230, &cfg);
        for (uint64_t x = XA; x <= XE; x++)
            eget(c, x);                            /* main [ch bh ah]; buf [e d] 230 */
        sim_cache_access(c, XB, 0, 1, SIM_DELETE);   /* main [ch ah] 220, p0 live 148 */
        CHECK(eget(c, XF) == 0 && c->used == 230, "f: d -> p1 [c d]; buf [f e] 230");
        /* g: e flushed: p1 full -> p0 compacted to [a e] (frag 0: reclaimed to [e]); f flushed: with
         * compaction p0 is full too and p1 (c, d, all live) is reclaimed; without, f joins p0 */
        CHECK(eget(c, XG) == 0 && c->used == 150, "g: RAM 150 B");
        uint64_t k[7];
        sim_extstore_counts(c, k);
        CHECK(k[4] == (uint64_t)frag && k[3] == 1, "frag %d: %llu compactions, %llu reclaims", frag,
              (unsigned long long)k[4], (unsigned long long)k[3]);
        /* (c first: a miss refills a whole item, whose room may reclaim another page) */
        CHECK(eget(c, XC) == !frag, "frag %d: c %s", frag, frag ? "lost with p1" : "still on p1");
        CHECK(eget(c, XA) == frag, "frag %d: a %s", frag, frag ? "survives compaction" : "lost with p0");
        char why[256] = "";
        CHECK(sim_cache_verify(c, why, sizeof why) == 0, "invariants: %s", why);
        sim_cache_free(c);
    }
}

static void test_extstore_bounds_and_lru(void)
{
    /* without flash it is LRU by bytes, exactly */
    uint64_t *k;
    uint32_t *sz;
    sim_trace t = sized_zipf(60000, 8000, 3, 100, 1400, &k, &sz);
    sim_config cfg = ext_cfg(NULL);
    cfg.slab = 1;
    sim_result a, b, f, g;
    char err[160];
    sim_simulate(&t, "lru", 1u << 20, &cfg, &a, err, sizeof err);
    sim_simulate(&t, "extstore", 1u << 20, &cfg, &b, err, sizeof err);
    CHECK(a.hits == b.hits, "flash 0 is LRU (%llu, %llu)", (unsigned long long)a.hits, (unsigned long long)b.hits);
    /* flash adds hits, and more flash no fewer here (headers cost RAM: it is not monotone in general) */
    cfg.params = "extstore.flash=4194304,extstore.page=1048576,extstore.buffer=65536";
    sim_simulate(&t, "extstore", 1u << 20, &cfg, &f, err, sizeof err);
    cfg.params = "extstore.flash=16777216,extstore.page=1048576,extstore.buffer=65536";
    sim_simulate(&t, "extstore", 1u << 20, &cfg, &g, err, sizeof err);
    CHECK(f.hits > a.hits && g.hits >= f.hits, "flash helps: %.3f -> %.3f -> %.3f", a.hit_ratio, f.hit_ratio,
          g.hit_ratio);
    /* a flash tier in items mode, or smaller than a page, is refused with a reason */
    sim_config items = items_cfg("extstore.flash=1000");
    CHECK(sim_simulate(&t, "extstore", 100, &items, &a, err, sizeof err) < 0 && strstr(err, "bytes unit"), "%s", err);
    cfg.params = "extstore.flash=1000,extstore.page=4096";
    CHECK(sim_simulate(&t, "extstore", 1u << 20, &cfg, &a, err, sizeof err) < 0 && strstr(err, "one page"), "%s", err);
    /* random GET/SET/DELETE/ADD with a small flash: every structure stays consistent */
    cfg.params = "extstore.flash=65536,extstore.page=16384";
    sim_cache *c = sim_cache_new("extstore", 40000, &cfg);
    sim_rng r;
    sim_rng_seed(&r, 77);
    int bad = 0;
    char why[256] = "";
    for (int step = 0; step < 40000 && !bad; step++) {
        uint64_t key = 1 + sim_rng_next(&r) % 3000;
        double u = sim_rng_unit(&r);
        int op = u < 0.8 ? SIM_GET : u < 0.9 ? SIM_SET : u < 0.96 ? SIM_DELETE : SIM_ADD;
        sim_cache_access(c, key, (uint32_t)(20 + key % 1800), 1, op);
        if (c->used > c->capacity)
            bad = snprintf(why, sizeof why, "RAM over capacity");
        else if (step % 200 == 0)
            bad = sim_cache_verify(c, why, sizeof why) != 0;
    }
    uint64_t cnt[7];
    sim_extstore_counts(c, cnt);
    CHECK(!bad && cnt[0] > 0 && cnt[3] + cnt[4] > 0, "stress: %s (flash hits %llu, reclaims %llu, compactions %llu)",
          why, (unsigned long long)cnt[0], (unsigned long long)cnt[3], (unsigned long long)cnt[4]);
    sim_cache_free(c);
    free(k);
    free(sz);
}

int main(void)
{
    test_sample_adjust();
    test_dense_ids_equal_hashing();
    test_stress_invariants();
    test_slab_classes();
    test_table();
    test_sampling();
    test_lru_exact();
    test_gclock_degenerate();
    test_clock_second_chance();
    test_nbq_reenqueue();
    test_gdwheel_vs_bruteforce();
    test_gdwheel_migration_levels();
    test_gdwheel_cost_tradeoff();
    test_baglru_rotation();
    test_baglru_approaches_lru();
    test_clockpro_periods();
    test_clockpro_loop();
    test_arc();
    test_s3fifo();
    test_mcslru_activation();
    test_mcslru_pages();
    test_mcslru_base_ghost();
    test_metrics_and_ops();
    test_every_policy_sane();
    test_sieve_hand();
    test_lfu_order();
    test_gdsf_size_and_aging();
    test_twoq_queues();
    test_opt_bound();
    test_lirs_states();
    test_wtinylfu_admission();
    test_lhd_prefers_small();
    test_mlclock();
    test_extstore_flush_and_flash_hits();
    test_extstore_page_reclaim();
    test_extstore_compaction();
    test_extstore_bounds_and_lru();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
