/*
 * Cost of the breakdown in the agent's core, on one thread's CPU time: the same event
 * stream (an exact LRU of N items turns a Zipf key stream with 30 prefixes, three value sizes
 * and TTLs into HIT / MISS+EVICT+SET events) fed to the LRU profile alone, and to the profile
 * plus what breakdown.c adds per event: the merged TTL-aware and oblivious byte curves (32768
 * sampled keys each), the class's TTL-aware curve (1024 keys), the prefix tracker (top 20 in 40
 * slots, 1024 keys per prefix curve) and the two hot-key sketches (256 slots each), with the
 * agent's sizes; and a third pass adding the TTL what-if replay (core/ttlwhatif, 8192 keys).
 * Prints events/s with and without, and memory per prefix and per hot-key slot.
 * usage: breakdown [--requests R] [--keys K] [--cache N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/lruemu.h"
#include "core/prefixes.h"
#include "core/profile.h"
#include "core/sdcurve.h"
#include "core/topk.h"
#include "core/ttlwhatif.h"
#include "../ref/workload.h"

typedef struct { uint64_t key; uint8_t op; uint16_t pfx; uint32_t size; int64_t ts, exp; } event;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct bd {
    hc_sdc *aware, *obl, *cls;
    hc_prefixes *pfx;
    hc_topk *hot, *hotb;
    hc_ttlw *tw;
} bd;

static hc_sdc *mk(uint32_t keys, int ttl, double range)
{
    hc_sdc_config c;
    hc_sdc_config_default(&c);
    c.max_keys = keys;
    c.ttl_aware = ttl;
    c.max_size = range;
    return hc_sdc_new(&c, NULL);
}

static void bd_event(bd *b, const event *e)
{
    int rep;
    switch (e->op) {
    case HC_EV_HIT:
    case HC_EV_MISS: {
        uint32_t w = e->op == HC_EV_HIT ? e->size : 0;
        hc_sdc_read(b->aware, e->key, w, e->ts);
        hc_sdc_read(b->obl, e->key, w, e->ts);
        hc_sdc_read(b->cls, e->key, e->op == HC_EV_HIT, e->ts);
        hc_prefixes_read(b->pfx, e->pfx, e->key, e->op == HC_EV_HIT, w, e->ts);
        uint32_t s = hc_topk_add(b->hot, e->key, 1, &rep);
        hc_topk_slot_at(b->hot, s)->aux = e->size;
        hc_topk_add(b->hotb, e->key, e->size, &rep);
        if (b->tw)
            hc_ttlw_read(b->tw, e->key, e->pfx, e->op == HC_EV_HIT, e->ts);
        break;
    }
    case HC_EV_SET:
        hc_sdc_write(b->aware, e->key, e->size, e->ts, e->exp);
        hc_sdc_write(b->obl, e->key, e->size, e->ts, e->exp);
        hc_sdc_write(b->cls, e->key, 1, e->ts, e->exp);
        hc_prefixes_write(b->pfx, e->pfx, e->key, e->size, e->ts, e->exp);
        if (b->tw)
            hc_ttlw_store(b->tw, e->key, e->pfx, e->size, e->exp ? (int32_t)((e->exp - e->ts) / 1000000) : 0, e->ts);
        break;
    case HC_EV_EVICT:
        hc_sdc_evicted(b->aware, e->key);
        hc_sdc_evicted(b->obl, e->key);
        hc_prefixes_left(b->pfx, e->pfx, e->key, 1);
        break;
    }
}

int main(int argc, char **argv)
{
    uint64_t R = 4000000, K = 1000000, N = 100000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--requests")) R = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--keys")) K = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--cache")) N = strtoull(argv[i + 1], NULL, 10);
    }
    workload w;
    refwl_zipf(&w, "z", R, K, 0.9, 5);
    lruemu lru;
    lruemu_init(&lru, N);
    event *ev = malloc(3 * R * sizeof *ev);
    uint64_t n = 0;
    for (uint64_t i = 0; i < R; i++) {
        uint64_t k = w.keys[i], h = k * 0x9E3779B97F4A7C15ULL;
        uint16_t pfx = (uint16_t)(h >> 59) % 30 + 1;
        uint32_t size = pfx % 3 == 0 ? 1500 : pfx % 3 == 1 ? 300 : 100;
        int64_t ts = (int64_t)i * 100, exp = pfx % 2 ? ts + 30000000 : 0; /* 10k req/s; TTL 30 s */
        uint64_t victim;
        int hit = lruemu_access(&lru, k);
        ev[n++] = (event){k, hit ? HC_EV_HIT : HC_EV_MISS, pfx, size, ts, 0};
        if (!hit) {
            if (lruemu_insert(&lru, k, &victim))
                ev[n++] = (event){victim, HC_EV_EVICT, 0, 0, ts, 0};
            ev[n++] = (event){k, HC_EV_SET, pfx, size, ts, exp};
        }
    }
    hc_profile_config pc;
    hc_profile_config_default(&pc);
    pc.sampling = HC_SAMPLE_FIXED_SIZE;
    pc.sample_max_keys = 1u << 20;
    double t_base = 0, t_full = 0, t_tw = 0;
    size_t bd_bytes = 0, pfx_bytes = 0, hot_bytes = 0, tw_bytes = 0;
    for (int pass = 0; pass < 3; pass++) {
        hc_profile *p = hc_profile_new(&pc, NULL);
        hc_profile_set_capacity(p, 1, N, 384);
        bd b = {0};
        if (pass) {
            double range = 2.0 * N * 384;
            b.aware = mk(32768, 1, range);
            b.obl = mk(32768, 0, range);
            b.cls = mk(1024, 1, 2.0 * N);
            hc_prefixes_config c;
            hc_prefixes_config_default(&c);
            c.keys_per_prefix = 1024;
            c.max_bytes = range;
            b.pfx = hc_prefixes_new(&c, NULL);
            b.hot = hc_topk_new(256);
            b.hotb = hc_topk_new(256);
            if (pass == 2)
                b.tw = hc_ttlw_new(&(hc_ttlw_config){.max_keys = 8192, .seed = 1});
        }
        double t0 = now_s();
        for (uint64_t i = 0; i < n; i++) {
            hc_profile_event(p, ev[i].op, 1, ev[i].key, ev[i].size);
            if (pass)
                bd_event(&b, &ev[i]);
        }
        double dt = now_s() - t0;
        if (pass == 2) {
            t_tw = dt;
            tw_bytes = hc_ttlw_bytes(b.tw);
            hc_ttlw_free(b.tw);
        }
        if (pass) {
            if (pass == 1)
                t_full = dt;
            hc_sdc_stats s;
            size_t sum = 0;
            hc_sdc_stats_get(b.aware, &s); sum += s.bytes;
            hc_sdc_stats_get(b.obl, &s); sum += s.bytes;
            hc_sdc_stats_get(b.cls, &s); sum += s.bytes;
            pfx_bytes = hc_prefixes_bytes(b.pfx);
            hot_bytes = hc_topk_bytes(b.hot);
            bd_bytes = sum + pfx_bytes + 2 * hot_bytes;
            hc_prefix_stat top[20];
            uint32_t m = hc_prefixes_top(b.pfx, top, 20);
            printf("prefixes ranked: %u; ", m);
            hc_sdc_free(b.aware); hc_sdc_free(b.obl); hc_sdc_free(b.cls);
            hc_prefixes_free(b.pfx); hc_topk_free(b.hot); hc_topk_free(b.hotb);
        } else {
            t_base = dt;
        }
        hc_profile_free(p);
    }
    printf("%llu events (%llu requests, Zipf 0.9 over %llu keys, LRU of %llu)\n", (unsigned long long)n,
           (unsigned long long)R, (unsigned long long)K, (unsigned long long)N);
    printf("| core | events/s (thread CPU) | ns/event |\n|---|---|---|\n");
    printf("| LRU profile only | %.2f M | %.0f |\n", n / t_base / 1e6, t_base / n * 1e9);
    printf("| + breakdown (TTL curves, prefixes, hot keys) | %.2f M | %.0f |\n", n / t_full / 1e6, t_full / n * 1e9);
    printf("| + TTL what-if replay (8192 keys, 32 TTLs) | %.2f M | %.0f |\n", n / t_tw / 1e6, t_tw / n * 1e9);
    printf("TTL what-if: %.0f ns/event (+%.0f %% over the breakdown); %.2f MiB (%zu B per sampled key in a table "
           "of 2 x 8192, %zu B per prefix id seen)\n", (t_tw - t_full) / n * 1e9, 100 * (t_tw / t_full - 1),
           tw_bytes / 1048576.0, hc_ttlw_key_bytes(), hc_ttlw_prefix_bytes());
    printf("breakdown cost: %.0f ns/event (+%.0f %%); memory %.1f MiB in all: prefixes %.1f MiB for 40 "
           "slots = %.0f KiB per prefix (1024 sampled keys), hot keys %zu B per sketch = %zu B per slot\n",
           (t_full - t_base) / n * 1e9, 100 * (t_full / t_base - 1), bd_bytes / 1048576.0, pfx_bytes / 1048576.0,
           pfx_bytes / 40.0 / 1024, hot_bytes, hot_bytes / 256);
    free(ev);
    lruemu_free(&lru);
    refwl_free(&w);
    return 0;
}
