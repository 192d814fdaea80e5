/*
 * memcached's extstore as two tiers (memcached 1.6 storage.c storage_write, extstore.c,
 * slab_automove_extstore.c, items.c): RAM of `capacity` bytes and a flash log of extstore.flash
 * bytes.
 *
 * RAM is charged memcached's chunk sizes and kept as two LRUs by bytes, not the segmented
 * HOT/WARM/COLD per slab class of mcslru. The classes memcached flushes (chunks of at least the
 * class of extstore.item_size, memcached's ext_item_size, 512 B) hold whole items on their way to
 * flash: memcached's storage thread flushes their COLD tails ahead of eviction, and its extstore
 * automover takes their pages back, down to MIN_PAGES_FOR_SOURCE = 2 pages each, for the classes
 * that evict. So the flushable items share extstore.buffer bytes per flushable class that has held
 * an item (2 MiB: two 1 MiB slab pages); past that the oldest of them goes to flash. Everything
 * else, headers and items too small to flush, is one LRU in the rest of RAM, whose tail is
 * evicted when the flushable items are within their buffer. The segmented LRU's protection of
 * twice-read items in WARM is not modelled; the live comparison with memcached (bench/extstore)
 * measures what the model misses.
 *
 * A flushed item's whole item (48 B header + object) is appended to the flash log and a header
 * item of extstore.header bytes (memcached's item_hdr item, a 96 B chunk for keys up to ~27 B)
 * takes its place at the head of the main LRU, as memcached links the header item into HOT. A
 * header evicted from RAM loses its flash copy (memcached cannot find it without the header).
 *
 * Flash is written as a log in pages of extstore.page bytes (ext_page_size, 64 MiB), floor(flash
 * / page) of them as memcached counts them. When the write page is full and no page is free,
 * memcached's compaction (ext_compact_under = 1 page free by default) first rewrites the live
 * items of the most fragmented page whose live bytes are under extstore.frag x page (ext_max_frag,
 * 0.8); if no page is that fragmented the oldest page is reclaimed and every item on it is lost.
 * A header whose flash copy was lost stays in RAM until read: the read is a miss
 * (memcached's miss_from_extstore), the header is dropped and the item is filled again.
 *
 * A hit is a whole item in RAM or a header whose flash copy lives (a flash hit). memcached
 * recaches a flash hit into RAM only for items hit twice recently and then 1 in ext_recache_rate
 * (2000) of them, so recache is not modelled. ext_item_age is not modelled either (logical time
 * here): items are flushed when RAM needs room, as memcached does at its default of no age limit.
 *
 * Parameters: extstore.flash (bytes, 0: no flash tier, plain LRU), extstore.page (67108864),
 * extstore.item_size (512), extstore.header (96), extstore.frag (0.8), extstore.buffer (2097152
 * bytes per flushable class). Bytes mode only when flash > 0. In a mini-simulation the flash, its
 * pages and the buffer shrink by the sample rate.
 */
#include "../cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F_HDR 0x01   /* in RAM as a header; its value is on flash (aux = page) or lost (aux = NIL) */

typedef struct {
    uint64_t version;    /* 0: free */
    uint64_t used;       /* bytes written into the page */
    uint64_t live;       /* bytes of items whose header still points here */
    uint32_t *rec;       /* object index per record, SIM_NIL once dead */
    uint32_t *bytes;
    uint32_t n, cap;
} ext_page;

typedef struct {
    sim_list q;     /* headers and items too small to flush */
    sim_list buf;   /* whole items of the flushable classes, on their way to flash */
    uint64_t large_seen;      /* flushable slab classes that have held an item (bit per class) */
    uint64_t buffer;          /* RAM bytes a flushable class keeps for whole items */
    ext_page *pages;
    uint32_t npages, wpage;   /* wpage: the page being written, SIM_NIL before the first write */
    uint64_t page_bytes, version;
    uint32_t header, min_chunk;
    double frag;
    int slab;
    /* counters for tests and benchmarks */
    uint64_t flash_hits, flash_misses, flushed, page_evictions, compactions, header_evictions;
} ext_state;

static int ext_init(sim_cache *c, char *err, size_t errlen)
{
    ext_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    sim_list_init(&s->q);
    sim_list_init(&s->buf);
    s->wpage = SIM_NIL;
    double flash = sim_param(c, "flash", 0), page = sim_param(c, "page", 64.0 * 1024 * 1024);
    double item_size = sim_param(c, "item_size", 512), header = sim_param(c, "header", 96);
    s->frag = sim_param(c, "frag", 0.8);
    double buffer = sim_param(c, "buffer", 2.0 * SIM_PAGE_SIZE);
    s->slab = c->cfg->slab;
    const char *bad = NULL;
    if (flash < 0 || page < 1 || item_size < 0 || header < 1 || s->frag < 0 || s->frag > 1 || buffer < 0)
        bad = "extstore: need flash >= 0, page >= 1, item_size >= 0, header >= 1, 0 <= frag <= 1, buffer >= 0";
    else if (flash > 0 && !c->cfg->unit_bytes)
        bad = "extstore: a flash tier needs the bytes unit (headers and values are charged in bytes)";
    else if (flash > 0 && flash < page)
        bad = "extstore: flash is smaller than one page (memcached refuses an ext_path of zero pages)";
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        free(s);
        return -1;
    }
    s->npages = (uint32_t)floor(flash / page + 1e-9);
    s->buffer = (uint64_t)llround(buffer * c->scale);
    s->page_bytes = (uint64_t)llround(page * c->scale);
    if (s->page_bytes < 1)
        s->page_bytes = 1;
    s->header = s->slab ? (uint32_t)sim_slab_charge(header > SIM_ITEM_HEADER ? header - SIM_ITEM_HEADER : 0)
                        : (uint32_t)header;
    /* memcached flushes the classes from slabs_clsid(ext_item_size) up */
    s->min_chunk = s->slab ? sim_slab_chunk(sim_slab_class_of((uint32_t)item_size)) : (uint32_t)item_size;
    if (s->npages && !(s->pages = calloc(s->npages, sizeof *s->pages))) {
        free(s);
        return -1;
    }
    c->priv = s;
    return 0;
}

static void ext_free(sim_cache *c)
{
    ext_state *s = c->priv;
    for (uint32_t p = 0; p < s->npages; p++) {
        free(s->pages[p].rec);
        free(s->pages[p].bytes);
    }
    free(s->pages);
    free(s);
}

/* the item's flash copy is dead (header gone, item replaced or its page reclaimed) */
static void flash_drop(ext_state *s, sim_obj *o)
{
    if (!(o->flags & F_HDR) || o->aux == SIM_NIL)
        return;
    ext_page *p = &s->pages[o->aux];
    p->rec[o->prio] = SIM_NIL;
    p->live -= p->bytes[o->prio];
    o->aux = SIM_NIL;
}

static void page_free(ext_state *s, uint32_t pid)
{
    ext_page *p = &s->pages[pid];
    p->version = 0;
    p->used = p->live = 0;
    p->n = 0;
}

static void page_append(ext_state *s, sim_cache *c, uint32_t pid, uint32_t idx, uint32_t bytes)
{
    ext_page *p = &s->pages[pid];
    if (p->n == p->cap) {
        uint32_t n = p->cap ? p->cap * 2 : 256;
        uint32_t *r = realloc(p->rec, n * sizeof *r), *b = r ? realloc(p->bytes, n * sizeof *b) : NULL;
        if (!r || !b) {
            fprintf(stderr, "hcsim: out of memory growing a flash page\n");
            abort();
        }
        p->rec = r;
        p->bytes = b;
        p->cap = n;
    }
    p->rec[p->n] = idx;
    p->bytes[p->n] = bytes;
    c->objs[idx].aux = pid;
    c->objs[idx].prio = p->n;
    p->n++;
    p->used += bytes;
    p->live += bytes;
}

/* A fresh write page: a free one, else the most fragmented closed page compacted (its live items
 * rewritten at the start of the page it frees), else the oldest page reclaimed. */
static void page_next(ext_state *s, sim_cache *c)
{
    uint32_t pick = SIM_NIL, oldest = SIM_NIL, frag = SIM_NIL;
    for (uint32_t p = 0; p < s->npages; p++) {
        if (s->pages[p].version == 0) {
            pick = p;
            break;
        }
        if (p == s->wpage)
            continue;
        if (oldest == SIM_NIL || s->pages[p].version < s->pages[oldest].version)
            oldest = p;
        if ((double)s->pages[p].live < s->frag * (double)s->page_bytes &&
            (frag == SIM_NIL || s->pages[p].live < s->pages[frag].live))
            frag = p;
    }
    if (pick != SIM_NIL) {
        s->pages[pick].version = ++s->version;
        s->wpage = pick;
        return;
    }
    if (frag != SIM_NIL) {
        ext_page *p = &s->pages[frag];
        uint32_t n = p->n, k = 0;
        /* keep the live records in order, then rewrite them as a new page's first writes */
        for (uint32_t i = 0; i < n; i++)
            if (p->rec[i] != SIM_NIL) {
                p->rec[k] = p->rec[i];
                p->bytes[k] = p->bytes[i];
                k++;
            }
        p->n = k;
        p->used = p->live = 0;
        for (uint32_t i = 0; i < k; i++) {
            c->objs[p->rec[i]].prio = i;
            p->used += p->bytes[i];
            p->live += p->bytes[i];
        }
        p->version = ++s->version;
        s->wpage = frag;
        s->compactions++;
        return;
    }
    if (oldest == SIM_NIL)
        oldest = s->wpage;   /* a single page: reclaim it */
    ext_page *p = &s->pages[oldest];
    for (uint32_t i = 0; i < p->n; i++)
        if (p->rec[i] != SIM_NIL)
            c->objs[p->rec[i]].aux = SIM_NIL;
    page_free(s, oldest);
    s->page_evictions++;
    s->pages[oldest].version = ++s->version;
    s->wpage = oldest;
}

enum { Q_MAIN = 0, Q_BUF = 1 };

static sim_list *list_of(ext_state *s, const sim_obj *o) { return o->qid == Q_BUF ? &s->buf : &s->q; }

/* memcached flushes the classes from slabs_clsid(ext_item_size) up, never a header */
static int flushable(const ext_state *s, const sim_obj *o)
{
    return s->npages && !(o->flags & F_HDR) && o->charge >= s->min_chunk && o->charge > s->header &&
           SIM_ITEM_HEADER + (uint64_t)o->size <= s->page_bytes;
}

/* RAM the flushable classes keep for whole items: `buffer` bytes for each that has held one */
static uint64_t buffer_cap(const ext_state *s)
{
    return s->buffer * (uint64_t)__builtin_popcountll(s->large_seen);
}

/* The oldest whole item on its way to flash: its value appended to the flash log, a header in
 * its place at the head of the main LRU (memcached links the header item into HOT). */
static void flush(ext_state *s, sim_cache *c, uint32_t idx)
{
    sim_obj *o = &c->objs[idx];
    uint64_t bytes = SIM_ITEM_HEADER + (uint64_t)o->size;
    if (s->wpage == SIM_NIL || s->pages[s->wpage].used + bytes > s->page_bytes)
        page_next(s, c);
    sim_list_unlink(c, &s->buf, idx);
    c->used -= o->charge;
    o->charge = s->header;
    c->used += o->charge;
    o->flags |= F_HDR;
    o->qid = Q_MAIN;
    page_append(s, c, s->wpage, idx, (uint32_t)bytes);
    sim_list_push_head(c, &s->q, idx);
    s->flushed++;
}

static void ext_remove(sim_cache *c, uint32_t idx)
{
    ext_state *s = c->priv;
    sim_obj *o = &c->objs[idx];
    flash_drop(s, o);
    sim_list_unlink(c, list_of(s, o), idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

/* Room in RAM: while the flushable classes hold more than their buffer (memcached's automover
 * takes their pages down to MIN_PAGES_FOR_SOURCE = 2 and gives them to the classes that evict:
 * headers and small items), their oldest item goes to flash; else the main LRU's tail (a header
 * or a small item) is evicted. */
static void ext_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    ext_state *s = c->priv;
    if (s->buf.count && (s->buf.bytes > buffer_cap(s) || !s->q.count)) {
        flush(s, c, s->buf.tail);
        return;
    }
    uint32_t t = s->q.tail;
    if (c->objs[t].flags & F_HDR)
        s->header_evictions++;
    ext_remove(c, t);
    c->evictions++;
}

static uint32_t ext_insert(sim_cache *c, const sim_req *r)
{
    ext_state *s = c->priv;
    uint32_t i = sim_obj_alloc(c, r);
    sim_obj *o = &c->objs[i];
    o->qid = flushable(s, o) ? Q_BUF : Q_MAIN;
    if (o->qid == Q_BUF)
        s->large_seen |= 1ull << (s->slab ? (o->cls & 63) : 0);
    sim_list_push_head(c, list_of(s, o), i);
    sim_charge(c, i);
    return i;
}

static void ext_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    ext_state *s = c->priv;
    sim_list_move_head(c, list_of(s, &c->objs[idx]), idx);
}

static bool ext_get(sim_cache *c, const sim_req *r)
{
    ext_state *s = c->priv;
    uint32_t idx = sim_find(c, r->key);
    if (idx != SIM_NIL && (c->objs[idx].flags & F_HDR)) {
        if (c->objs[idx].aux != SIM_NIL) {
            s->flash_hits++;
            ext_hit(c, idx, r);
            return true;
        }
        /* the flash copy was reclaimed: memcached unlinks the header and misses */
        s->flash_misses++;
        ext_remove(c, idx);
        idx = SIM_NIL;
    }
    return sim_get_default(c, r);
}

/* exported for unit tests and benchmarks: flash hits, flash misses (copy reclaimed), items
 * flushed, flash pages reclaimed, pages compacted, headers evicted from RAM, live flash bytes */
void sim_extstore_counts(const sim_cache *c, uint64_t out[7])
{
    const ext_state *s = c->priv;
    out[0] = s->flash_hits;
    out[1] = s->flash_misses;
    out[2] = s->flushed;
    out[3] = s->page_evictions;
    out[4] = s->compactions;
    out[5] = s->header_evictions;
    out[6] = 0;
    for (uint32_t p = 0; p < s->npages; p++)
        out[6] += s->pages[p].live;
}

static int ext_verify(sim_cache *c, char *why, size_t n)
{
    ext_state *s = c->priv;
    if (sim_list_check(c, &s->q, "extstore", why, n) < 0 || sim_list_check(c, &s->buf, "extstore buffer", why, n) < 0)
        return -1;
    if (s->q.count + s->buf.count != c->nresident)
        return snprintf(why, n, "list counts != residents"), -1;
    for (uint32_t i = s->buf.head; i != SIM_NIL; i = c->objs[i].next)
        if (c->objs[i].qid != Q_BUF || !flushable(s, &c->objs[i]))
            return snprintf(why, n, "an item in the flush buffer that cannot be flushed"), -1;
    uint64_t pointing = 0;
    for (uint32_t i = s->q.head; i != SIM_NIL; i = c->objs[i].next) {
        const sim_obj *o = &c->objs[i];
        if (o->qid != Q_MAIN)
            return snprintf(why, n, "an item of the main LRU marked otherwise"), -1;
        if (!(o->flags & F_HDR))
            continue;
        if (o->charge != s->header)
            return snprintf(why, n, "a header charged %u, not %u", o->charge, s->header), -1;
        if (o->aux == SIM_NIL)
            continue;
        if (o->aux >= s->npages || o->prio >= s->pages[o->aux].n || s->pages[o->aux].rec[o->prio] != i)
            return snprintf(why, n, "a header's flash record does not point back at it"), -1;
        pointing++;
    }
    uint64_t live_recs = 0;
    for (uint32_t p = 0; p < s->npages; p++) {
        const ext_page *pg = &s->pages[p];
        uint64_t live = 0, used = 0;
        for (uint32_t k = 0; k < pg->n; k++) {
            used += pg->bytes[k];
            if (pg->rec[k] != SIM_NIL) {
                live += pg->bytes[k];
                live_recs++;
            }
        }
        if (live != pg->live || used != pg->used || pg->used > s->page_bytes || (pg->version == 0 && pg->n))
            return snprintf(why, n, "flash page %u: live %llu/%llu used %llu/%llu of %llu", p,
                            (unsigned long long)live, (unsigned long long)pg->live, (unsigned long long)used,
                            (unsigned long long)pg->used, (unsigned long long)s->page_bytes), -1;
    }
    if (live_recs != pointing)
        return snprintf(why, n, "%llu live flash records, %llu headers pointing at flash",
                        (unsigned long long)live_recs, (unsigned long long)pointing), -1;
    return 0;
}

const sim_policy_ops sim_policy_extstore = {
    .name = "extstore",
    .describe = "memcached extstore: RAM LRU by bytes whose large items leave a header and go to a paged flash log",
    .init = ext_init, .free = ext_free, .get = ext_get, .hit = ext_hit,
    .insert = ext_insert, .evict = ext_evict, .verify = ext_verify, .remove = ext_remove,
};
