#include "extstore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The flushed-key table: two ways per set, sized at the first extwrite to twice the items
 * memcached held then (headers are a part of them), 256K to 4M entries (3 to 48 MiB; nothing
 * without a flash tier). A key pushed out of both ways leaves the header count: the count is
 * then a lower bound, and `stream.untracked_headers` says by how many. */
#define TABLE_MIN_BITS 18
#define TABLE_MAX_BITS 22

/* sizeof(item) + 1 (the key's NUL) + sizeof(item_hdr) + 8 (CAS) on 64-bit memcached 1.5/1.6
 * (items.c item_make_header; memcached.h item_hdr: two unsigned ints and a short) */
#define HDR_FIXED_BYTES (48 + 1 + 12 + 8)

static uint32_t tag_of(uint64_t key) { return (uint32_t)(key >> 32) | 1; }

void ag_ext_init(ag_ext *x) { memset(x, 0, sizeof *x); }

void ag_ext_free(ag_ext *x)
{
    free(x->tab);
    free(x->pend);
    memset(x, 0, sizeof *x);
}

void ag_ext_clear(ag_ext *x)
{
    ag_ext_free(x);
    ag_ext_init(x);
}

/* The class a header of a key this long lands in: learned from the stream, else the smallest
 * class whose chunk holds the header (a guess that misses client flags and -C). */
static int header_class(const ag_ext *x, const mc_stats *s, uint16_t keylen)
{
    if (keylen <= WL_MAX_KEY && x->hdr_by_len[keylen])
        return x->hdr_by_len[keylen];
    uint32_t need = HDR_FIXED_BYTES + keylen;
    for (int c = 1; c < MC_MAX_CLASSES && c < AG_EXT_CLASSES; c++)
        if (s->cls[c].present && s->cls[c].chunk_size >= need)
            return c;
    return 0;
}

static void header_gone(ag_ext *x, ag_ext_entry *e)
{
    if (e->hdr && e->hdr < AG_EXT_CLASSES && x->headers[e->hdr] > 0)
        x->headers[e->hdr]--;
    memset(e, 0, sizeof *e);
}

static ag_ext_entry *find(const ag_ext *x, uint64_t key)
{
    ag_ext_entry *w = &x->tab[key & x->mask & ~(uint64_t)1];
    uint32_t tag = tag_of(key);
    return w[0].tag == tag ? &w[0] : w[1].tag == tag ? &w[1] : NULL;
}

static void apply(ag_ext *x, hc_profile *prof, const mc_stats *s, const ag_ext_pending *p)
{
    ag_ext_entry *e = find(x, p->key);
    if (e) {
        header_gone(x, e); /* flushed again after a recache: one header, not two */
    } else {
        ag_ext_entry *w = &x->tab[p->key & x->mask & ~(uint64_t)1];
        e = !w[0].tag ? &w[0] : !w[1].tag ? &w[1] : &w[(p->key >> 40) & 1];
        if (e->tag) {      /* both ways hold live headers: one leaves the count */
            x->untracked++;
            header_gone(x, e);
        }
    }
    uint32_t tag = tag_of(p->key);
    int h = header_class(x, s, p->keylen);
    e->tag = tag;
    e->gid32 = (uint32_t)p->gid;
    e->cls = p->cls > 0 && p->cls < 256 ? (uint8_t)p->cls : 0;
    e->hdr = (uint8_t)h;
    e->keylen = p->keylen;
    if (h > 0)
        x->headers[h]++;
    /* The profile is left alone: the key stays in C's LRU until its first flash hit moves it
     * to H (the profile's "tracked under another class" path). Moving it to the head of H's LRU
     * here, as memcached links the header, read the curve at today's size 1.7 and 3.5 pp above
     * memcached's hit ratio (memcached 1.6.18 -m 32, 256 MiB flash, zipf 0.9; leaving it: within
     * 0.1 pp), so it is not done until the flash what-if models the two tiers (README). */
    (void)prof;
}

void ag_ext_line(ag_ext *x, hc_profile *prof, const mc_stats *s, const wl_line *l, int64_t arrival_us)
{
    if (!x->tab) {
        int bits = TABLE_MIN_BITS;
        while (bits < TABLE_MAX_BITS && (1ull << bits) < 2 * s->curr_items)
            bits++;
        x->mask = (1ull << bits) - 1;
        x->tab = calloc(x->mask + 1, sizeof *x->tab);
        x->pend = calloc(AG_EXT_PENDING, sizeof *x->pend);
        if (!x->tab || !x->pend) {
            ag_ext_free(x);
            return;
        }
    }
    x->win_extwrites++;
    x->extwrites_total++;
    if (x->phead - x->ptail >= AG_EXT_PENDING) { /* the normaliser is far behind: apply now */
        apply(x, prof, s, &x->pend[x->ptail++ % AG_EXT_PENDING]);
        x->pending_overflow++;
    }
    ag_ext_pending *p = &x->pend[x->phead++ % AG_EXT_PENDING];
    p->gid = l->gid;
    p->key = l->key;
    p->cls = l->clsid;
    p->keylen = l->keylen;
    p->arrival_us = arrival_us;
}

void ag_ext_release(ag_ext *x, hc_profile *prof, const mc_stats *s, uint64_t gid,
                    int64_t arrived_before_us)
{
    while (x->tab && x->ptail != x->phead) {
        const ag_ext_pending *p = &x->pend[x->ptail % AG_EXT_PENDING];
        if (p->gid >= gid && p->arrival_us >= arrived_before_us)
            break;
        apply(x, prof, s, p);
        x->ptail++;
    }
}

/* The first header of keys this long found in its class: the headers flushed before, while no
 * class could hold them yet (memcached creates the small class with the first header), go there
 * too. Once per key length and instance: one pass over the table. */
static void learn(ag_ext *x, uint16_t keylen, int cls)
{
    x->hdr_by_len[keylen] = (uint8_t)cls;
    for (uint64_t i = 0; i <= x->mask; i++) {
        ag_ext_entry *e = &x->tab[i];
        if (e->tag && !e->hdr && e->keylen == keylen) {
            e->hdr = (uint8_t)cls;
            x->headers[cls]++;
        }
    }
}

void ag_ext_event(ag_ext *x, int op, uint64_t key, int clsid, uint64_t gid)
{
    if (!x->tab)
        return;
    ag_ext_entry *e = find(x, key);
    if (!e || (int32_t)((uint32_t)gid - e->gid32) < 0)
        return; /* not a flushed key, or a line from before the flush */
    switch (op) {
    case TR_HIT:
        if (clsid > 0 && clsid == e->cls) { /* recached: whole in RAM again, no header */
            header_gone(x, e);
            return;
        }
        if (clsid > 0 && e->keylen <= WL_MAX_KEY && x->hdr_by_len[e->keylen] &&
            clsid != x->hdr_by_len[e->keylen]) {
            /* found whole in a third class (a store the stream lost): no header any more */
            x->win_hdr_other++;
            header_gone(x, e);
            return;
        }
        x->win_flash_hits_seen++;
        if (clsid > 0 && clsid < AG_EXT_CLASSES && clsid != e->hdr) {
            x->win_hdr_guess_wrong++;
            if (e->hdr && x->headers[e->hdr] > 0)
                x->headers[e->hdr]--;
            x->headers[clsid]++;
            e->hdr = (uint8_t)clsid;
        }
        if (clsid > 0 && clsid < AG_EXT_CLASSES && e->keylen <= WL_MAX_KEY &&
            !x->hdr_by_len[e->keylen])
            learn(x, e->keylen, clsid);
        return;
    case TR_EVICT:
        if (clsid != e->cls)
            x->win_header_evictions++;
        header_gone(x, e);
        return;
    case TR_SET: case TR_DELETE: case TR_MISS: /* replaced, deleted, or dropped unseen */
        header_gone(x, e);
        return;
    default:
        return;
    }
}

static uint64_t delta(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

static double setting(const mc_stats *s, const char *name)
{
    for (int i = 0; i < s->nsettings; i++)
        if (!strcmp(s->set_name[i], name))
            return strtod(s->set_value[i], NULL);
    return -1;
}

static json_t *per_second(uint64_t n, double secs)
{
    return secs > 0 ? json_real(round((double)n / secs * 1000) / 1000) : json_null();
}

json_t *ag_ext_json(const ag_ext *x, const mc_stats *s0, const mc_stats *s1)
{
    const mc_ext_stats *a = &s0->ext, *b = &s1->ext;
    if (!b->present)
        return NULL;
    double secs = (double)(s1->wall_us - s0->wall_us) / 1e6;
    uint64_t reads = delta(a->get_extstore, b->get_extstore);
    uint64_t misses = delta(a->miss_from_extstore, b->miss_from_extstore);
    uint64_t aborted = delta(a->get_aborted_extstore, b->get_aborted_extstore);
    uint64_t flash_hits = reads > misses + aborted ? reads - misses - aborted : 0;
    uint64_t get_hits = delta(s0->get_hits, s1->get_hits);

    /* Headers in RAM, per class. Every live object on flash has its header in RAM
     * (extstore_objects_used, loss-free); headers whose flash page was evicted stay until a read,
     * the LRU or the crawler drops them, and only the stream's count sees those. So: the stream's
     * count, scaled up to objects_used where the stream lost extwrites, at most each class's
     * items. */
    int64_t tracked = 0;
    for (int c = 1; c < AG_EXT_CLASSES; c++)
        tracked += x->headers[c];
    double scale = tracked > 0 && (double)b->objects_used > (double)tracked
                       ? (double)b->objects_used / (double)tracked : 1.0;
    json_t *classes = json_array();
    uint64_t hdr_items = 0, hdr_bytes = 0;
    for (int c = 1; c < AG_EXT_CLASSES && c < MC_MAX_CLASSES; c++) {
        if (x->headers[c] <= 0 || !s1->cls[c].present)
            continue;
        uint64_t n = (uint64_t)llround((double)x->headers[c] * scale);
        if (n > s1->cls[c].items)
            n = s1->cls[c].items;
        hdr_items += n;
        hdr_bytes += n * s1->cls[c].chunk_size;
        json_array_append_new(classes, json_pack("{s:i,s:I,s:I}", "id", c, "chunk_size",
                                                 (json_int_t)s1->cls[c].chunk_size,
                                                 "header_items", (json_int_t)n));
    }
    json_t *ram = json_pack("{s:I,s:I,s:I,s:o}", "header_items", (json_int_t)hdr_items,
                            "header_bytes", (json_int_t)hdr_bytes, "whole_items",
                            (json_int_t)(s1->curr_items > hdr_items ? s1->curr_items - hdr_items : 0),
                            "classes", classes);
    json_t *flash = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I}", "limit_bytes", (json_int_t)b->limit_maxbytes, "bytes_used",
        (json_int_t)b->bytes_used, "bytes_fragmented", (json_int_t)b->bytes_fragmented,
        "pages_used", (json_int_t)b->pages_used, "pages_free", (json_int_t)b->pages_free,
        "objects_used", (json_int_t)b->objects_used);
    uint64_t wr = delta(a->objects_written, b->objects_written);
    uint64_t wb = delta(a->bytes_written, b->bytes_written);
    uint64_t rd = delta(a->objects_read, b->objects_read);
    uint64_t rb = delta(a->bytes_read, b->bytes_read);
    json_t *win = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "flash_reads",
        (json_int_t)reads, "flash_hits", (json_int_t)flash_hits, "flash_misses", (json_int_t)misses,
        "badcrc", (json_int_t)delta(a->badcrc_from_extstore, b->badcrc_from_extstore), "aborted",
        (json_int_t)aborted, "recached",
        (json_int_t)delta(a->recache_from_extstore, b->recache_from_extstore), "objects_written",
        (json_int_t)wr, "bytes_written", (json_int_t)wb, "objects_read", (json_int_t)rd,
        "bytes_read", (json_int_t)rb, "page_evictions",
        (json_int_t)delta(a->page_evictions, b->page_evictions), "objects_evicted",
        (json_int_t)delta(a->objects_evicted, b->objects_evicted), "compact_rescues",
        (json_int_t)delta(a->compact_rescues, b->compact_rescues), "compact_lost",
        (json_int_t)delta(a->compact_lost, b->compact_lost), "compact_skipped",
        (json_int_t)delta(a->compact_skipped, b->compact_skipped));
    json_object_set_new(win, "writes_per_s", per_second(wr, secs));
    json_object_set_new(win, "write_bytes_per_s", per_second(wb, secs));
    json_object_set_new(win, "reads_per_s", per_second(rd, secs));
    json_object_set_new(win, "read_bytes_per_s", per_second(rb, secs));
    /* memcached counts a flash read that found nothing as a get_hit: the share of get_hits the
     * flash tier served, and the hit ratio the clients got */
    json_object_set_new(win, "flash_hit_share",
                        get_hits ? json_real(round((double)flash_hits / (double)get_hits * 1e6) / 1e6)
                                 : json_null());
    json_t *set = json_object();
    static const char *const names[][2] = {{"ext_item_size", "item_size"},
                                           {"ext_item_age", "item_age"},
                                           {"ext_wbuf_size", "wbuf_size"},
                                           {"ext_recache_rate", "recache_rate"},
                                           {"ext_low_ttl", "low_ttl"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        double v = setting(s1, names[i][0]);
        if (v >= 0)
            json_object_set_new(set, names[i][1], json_integer((json_int_t)v));
    }
    json_t *stream = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "headers_tracked", (json_int_t)tracked,
                               "found_elsewhere", (json_int_t)x->win_hdr_other,
                               "extwrite_lines",
                               (json_int_t)x->win_extwrites, "flash_hits_seen",
                               (json_int_t)x->win_flash_hits_seen, "header_evictions",
                               (json_int_t)x->win_header_evictions, "header_class_learned",
                               (json_int_t)x->win_hdr_guess_wrong, "untracked_headers",
                               (json_int_t)x->untracked);
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "settings", set, "ram", ram, "flash", flash,
                     "window", win, "stream", stream);
}

void ag_ext_window_reset(ag_ext *x)
{
    x->win_extwrites = x->win_flash_hits_seen = x->win_header_evictions = 0;
    x->win_hdr_guess_wrong = x->win_hdr_other = 0;
}
