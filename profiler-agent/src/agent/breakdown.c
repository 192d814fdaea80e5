#include "breakdown.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define PFX_TABLE_BITS 19     /* 512K keys (2^16 sets x 8 ways), 4 MiB */
#define DEFER_BITS 14         /* 16K deferred misses, 144 KiB: misses wait a few ms for their set */

static hc_sdc *mk(const ag_bd *b, uint32_t keys, int ttl, double range, uint32_t cells)
{
    hc_sdc_config c;
    hc_sdc_config_default(&c);
    c.max_keys = keys;
    c.ttl_aware = ttl;
    c.max_size = range;
    c.cells = cells;
    c.seed = b->cfg.seed;
    return hc_sdc_new(&c, NULL);
}

int ag_bd_init(ag_bd *b, const ag_bd_config *c, const char **err)
{
    memset(b, 0, sizeof *b);
    b->cfg = *c;
    if (!c->enabled)
        return 0;
    hc_prefixes_config pc;
    hc_prefixes_config_default(&pc);
    pc.top_n = c->prefix_top;
    pc.keys_per_prefix = c->prefix_keys;
    pc.seed = c->seed;
    b->pfx = hc_prefixes_new(&pc, err);
    if (!b->pfx)
        return -1;
    b->all_ttl = mk(b, c->merged_keys, 1, 64.0 * 1048576, 2000);
    b->all_obl = mk(b, c->merged_keys, 0, 64.0 * 1048576, 2000);
    b->hot = hc_topk_new(AG_HOT_SLOTS);
    b->hot_bytes = hc_topk_new(AG_HOT_SLOTS);
    if (b->hot && b->hot_bytes) {
        /* Every read reaches both sketches and most are of keys in neither (a long tail):
         * randomized admission (topk.h) skips the replacement and heap walk for nearly all
         * of them (~300 instructions a read with plain space-saving). */
        hc_topk_set_admission(b->hot, c->seed + 1);
        hc_topk_set_admission(b->hot_bytes, c->seed + 2);
    }
    b->tw = hc_ttlw_new(&(hc_ttlw_config){.max_keys = AG_TTLW_KEYS, .seed = c->seed});
    b->pmask = ((size_t)1 << PFX_TABLE_BITS) / AG_BD_PWAYS - 1;
    b->pset = aligned_alloc(64, (b->pmask + 1) * sizeof *b->pset);
    if (b->pset)
        memset(b->pset, 0, (b->pmask + 1) * sizeof *b->pset);
    b->dkey = calloc((size_t)1 << DEFER_BITS, sizeof *b->dkey);
    b->dset = calloc((size_t)1 << DEFER_BITS, sizeof *b->dset);
    if (!b->all_ttl || !b->all_obl || !b->hot || !b->hot_bytes || !b->tw || !b->pset || !b->dkey || !b->dset) {
        *err = "out of memory";
        ag_bd_free(b);
        return -1;
    }
    return 0;
}

void ag_bd_free(ag_bd *b)
{
    for (int c = 0; c < HC_MAX_CLASSES; c++)
        hc_sdc_free(b->cls[c]);
    hc_sdc_free(b->all_ttl);
    hc_sdc_free(b->all_obl);
    hc_prefixes_free(b->pfx);
    hc_topk_free(b->hot);
    hc_topk_free(b->hot_bytes);
    hc_ttlw_free(b->tw);
    free(b->pset);
    free(b->dkey);
    free(b->dset);
    memset(b, 0, sizeof *b);
}

void ag_bd_set_class(ag_bd *b, int cls, uint64_t items, uint32_t chunk)
{
    if (!b->cfg.enabled || cls <= 0 || cls >= HC_MAX_CLASSES || items == 0)
        return;
    b->chunk[cls] = chunk;
    double range = b->cfg.ghost_factor * (double)items;
    if (!b->cls[cls])
        b->cls[cls] = mk(b, b->cfg.class_keys, 1, range, 1000);
    else if (hc_sdc_max_size(b->cls[cls]) != range)
        hc_sdc_set_range(b->cls[cls], range);
}

void ag_bd_set_memory(ag_bd *b, uint64_t limit_bytes)
{
    if (!b->cfg.enabled || limit_bytes == 0)
        return;
    double range = b->cfg.ghost_factor * (double)limit_bytes;
    if (b->have_range && hc_sdc_max_size(b->all_ttl) == range)
        return;
    hc_sdc_set_range(b->all_ttl, range);
    hc_sdc_set_range(b->all_obl, range);
    hc_prefixes_set_range(b->pfx, range);
    b->have_range = 1;
}

static uint32_t tag_of(uint64_t key) { return (uint32_t)(key >> 32) | 1; }

void ag_bd_prefetch(const ag_bd *b, uint64_t key)
{
    if (b->cfg.enabled)
        __builtin_prefetch(&b->pset[tr_mix64(key) & b->pmask]);
}

void ag_bd_note_prefix(ag_bd *b, uint64_t key, uint16_t pfx)
{
    if (!b->cfg.enabled)
        return;
    ag_bd_pset *st = &b->pset[tr_mix64(key) & b->pmask];
    uint32_t tag = tag_of(key);
    int w = 0;
    while (w < AG_BD_PWAYS - 1 && st->tag[w] != tag)
        w++; /* found, or the last (least recently noted) way is replaced */
    /* move to the front: ways stay in noting order */
    memmove(&st->tag[1], &st->tag[0], (size_t)w * sizeof st->tag[0]);
    memmove(&st->pid[1], &st->pid[0], (size_t)w * sizeof st->pid[0]);
    st->tag[0] = tag;
    st->pid[0] = pfx;
}

/* Prefix of a key as last seen on the ring; 0 ("no prefix") if the table lost it. */
static uint16_t prefix_of(const ag_bd *b, uint64_t key, int *lost)
{
    const ag_bd_pset *st = &b->pset[tr_mix64(key) & b->pmask];
    uint32_t tag = tag_of(key);
    for (int i = 0; i < AG_BD_PWAYS; i++)
        if (st->tag[i] == tag)
            return st->pid[i];
    *lost = 1;
    return 0;
}

/* The same for an event just out of the normaliser (its line was noted moments ago): a loss
 * here is the table's, counted in diagnostics.prefix_lost. */
static uint16_t prefix_now(ag_bd *b, uint64_t key)
{
    int lost = 0;
    uint16_t p = prefix_of(b, key, &lost);
    b->pfx_lost += (uint64_t)lost;
    return p;
}

static void left(ag_bd *b, uint64_t key, int cls, int how)
{
    if (cls > 0 && cls < HC_MAX_CLASSES) {
        hc_leave_counts *l = &b->left[cls];
        if (how == 0) l->expired++;
        else if (how == 1) l->evicted++;
        else l->deleted++;
    }
    int lost = 0; /* a silent expiry comes long after the key's last line: not counted */
    hc_prefixes_left(b->pfx, how == 0 ? prefix_of(b, key, &lost) : prefix_now(b, key), key, how);
}

static void hot(ag_bd *b, uint64_t key, uint32_t size)
{
    int rep;
    /* NULL: randomized admission turned the key away (HC_TOPK_NONE is past every slot) */
    hc_topk_slot *sl = hc_topk_slot_at(b->hot, hc_topk_add(b->hot, key, 1.0, &rep));
    if (sl && size)
        sl->aux = size;
    double w = (double)(size ? size : sl && sl->aux ? sl->aux : 1);
    sl = hc_topk_slot_at(b->hot_bytes, hc_topk_add(b->hot_bytes, key, w, &rep));
    if (sl)
        sl->aux = (uint64_t)w;
}

void ag_bd_event(ag_bd *b, const wn_event *ev, int cls)
{
    if (!b->cfg.enabled)
        return;
    const tr_request *q = &ev->req;
    hc_sdc *cc = cls > 0 && cls < HC_MAX_CLASSES ? b->cls[cls] : NULL;
    /* bytes an item takes: its class's chunk when known (memcached allocates chunks) */
    uint32_t w = q->size ? (cls > 0 && cls < HC_MAX_CLASSES && b->chunk[cls] ? b->chunk[cls]
                                                                              : q->size)
                         : 0;
    uint64_t k = q->key;
    int64_t t = q->ts_us;
    switch (q->op) {
    case TR_HIT:
    case TR_MISS: {
        int h = q->op == TR_HIT;
        hc_sdc_read(b->all_ttl, k, w, t);
        hc_sdc_read(b->all_obl, k, w, t);
        if (cc) {
            hc_sdc_read(cc, k, h ? 1 : 0, t);
        } else if (!h) {
            uint64_t d = tr_mix64(k) & (((uint64_t)1 << DEFER_BITS) - 1);
            b->dkey[d] = k;
            b->dset[d] = 1;
        }
        uint16_t pf = prefix_now(b, k);
        hc_prefixes_read(b->pfx, pf, k, h, w, t);
        hc_ttlw_read(b->tw, k, pf, h, t);
        hot(b, k, q->size);
        b->reads_since_publish++;
        break;
    }
    case TR_SET: {
        int64_t exp = q->ttl > 0 ? t + (int64_t)q->ttl * 1000000 : 0;
        hc_sdc_write(b->all_ttl, k, w, t, exp);
        hc_sdc_write(b->all_obl, k, w, t, exp);
        if (cc) {
            uint64_t d = tr_mix64(k) & (((uint64_t)1 << DEFER_BITS) - 1);
            if (b->dset[d] && b->dkey[d] == k) {  /* the miss this set refills */
                hc_sdc_read(cc, k, 0, t);
                b->dset[d] = 0;
            }
            hc_sdc_write(cc, k, 1, t, exp);
        }
        uint16_t pf = prefix_now(b, k);
        hc_prefixes_write(b->pfx, pf, k, w, t, exp);
        hc_ttlw_store(b->tw, k, pf, w, q->ttl, t);
        break;
    }
    case TR_DELETE:
        if (ev->cause == WN_EXPIRED) {
            /* memcached's 1 s clock can expire an item just before our heap does; the
             * oblivious model keeps it by definition. Counted when the TTL tracker fires. */
            b->expired_reads++;
            hc_sdc_remove(b->all_ttl, k);
            if (cc)
                hc_sdc_remove(cc, k);
            break;
        }
        hc_sdc_remove(b->all_ttl, k);
        hc_sdc_remove(b->all_obl, k);
        if (cc)
            hc_sdc_remove(cc, k);
        hc_ttlw_remove(b->tw, k, t); /* an expired read is its MISS event there */
        if (ev->cause == WN_PLAIN)
            left(b, k, cls, 2);
        break;
    case TR_EVICT:
        hc_sdc_evicted(b->all_ttl, k);
        hc_sdc_evicted(b->all_obl, k);
        left(b, k, cls, 1);
        break;
    default:
        break;
    }
}

void ag_bd_silent_expiry(ag_bd *b, uint64_t key, int cls)
{
    if (b->cfg.enabled)
        left(b, key, cls, 0);
}

void ag_bd_expire(ag_bd *b, int64_t now_us)
{
    if (!b->cfg.enabled)
        return;
    hc_sdc_expire(b->all_ttl, now_us);
    for (int c = 1; c < HC_MAX_CLASSES; c++)
        if (b->cls[c])
            hc_sdc_expire(b->cls[c], now_us);
}

uint32_t ag_bd_hot_candidates(const ag_bd *b, uint64_t *out, uint32_t n)
{
    if (!b->cfg.enabled)
        return 0;
    uint32_t idx[2 * AG_HOT_MAX], m = 0;
    uint32_t half = n / 2 > AG_HOT_MAX ? AG_HOT_MAX : n / 2;
    uint32_t a = hc_topk_sorted(b->hot, idx, half);
    for (uint32_t i = 0; i < a; i++)
        out[m++] = hc_topk_slot_at(b->hot, idx[i])->key;
    a = hc_topk_sorted(b->hot_bytes, idx, half);
    for (uint32_t i = 0; i < a; i++)
        out[m++] = hc_topk_slot_at(b->hot_bytes, idx[i])->key;
    return m;
}

void ag_bd_window(ag_bd *b)
{
    if (!b->cfg.enabled)
        return;
    for (int c = 0; c < HC_MAX_CLASSES; c++)
        if (b->cls[c])
            hc_sdc_reset(b->cls[c]);
    memset(b->left, 0, sizeof b->left);
    hc_sdc_reset(b->all_ttl);
    hc_sdc_reset(b->all_obl);
    hc_prefixes_window(b->pfx);
    hc_topk_scale(b->hot, 0);
    hc_topk_scale(b->hot_bytes, 0);
    hc_ttlw_window(b->tw);
    b->expired_reads = 0;
    b->pfx_lost = 0;
}

void ag_bd_clear(ag_bd *b)
{
    if (!b->cfg.enabled)
        return;
    ag_bd_window(b);
    for (int c = 0; c < HC_MAX_CLASSES; c++)
        if (b->cls[c])
            hc_sdc_clear(b->cls[c]);
    hc_sdc_clear(b->all_ttl);
    hc_sdc_clear(b->all_obl);
    hc_prefixes_clear(b->pfx);
    hc_ttlw_clear(b->tw);
    memset(b->pset, 0, (b->pmask + 1) * sizeof *b->pset);
    memset(b->dset, 0, (size_t)1 << DEFER_BITS);
}

size_t ag_bd_bytes(const ag_bd *b)
{
    if (!b->cfg.enabled)
        return 0;
    size_t n = sizeof *b + (b->pmask + 1) * sizeof *b->pset + ((size_t)1 << DEFER_BITS) * 9 +
               hc_topk_bytes(b->hot) +
               hc_topk_bytes(b->hot_bytes) +
               hc_prefixes_bytes(b->pfx) + hc_ttlw_bytes(b->tw);
    hc_sdc_stats st;
    hc_sdc_stats_get(b->all_ttl, &st);
    n += st.bytes;
    hc_sdc_stats_get(b->all_obl, &st);
    n += st.bytes;
    for (int c = 0; c < HC_MAX_CLASSES; c++)
        if (b->cls[c]) {
            hc_sdc_stats_get(b->cls[c], &st);
            n += st.bytes;
        }
    return n;
}
