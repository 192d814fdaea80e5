/*
 * Normaliser: parsed watch lines in, HIT/MISS/SET/DELETE/EVICT events out, in gid order.
 *
 * Two stages:
 *  1. Reorder: holds up to reorder_lines lines (and, live, each line at most reorder_us after
 *     it arrived) and releases them in gid order. memcached's logger drains one worker
 *     buffer at a time, so the stream is a concatenation of sorted runs (one per worker
 *     pass), up to ~1 s / 60k gids late. Lines are dealt onto a few sorted FIFO "piles"
 *     (patience sorting: each line goes on the pile whose last gid is the largest one below
 *     it), and the minimum is taken over the pile heads: O(piles) per line with sequential
 *     memory access, instead of a 17-level heap walk. A line that fits no pile when all
 *     piles are in use goes to a small min-heap. A line arriving after a higher gid was
 *     already released is passed through as is (counted as late).
 *  2. Pairing: an item_get cannot be classified when it arrives, because a store's internal
 *     lookup looks exactly like a read. It waits as "pending" for the next line of the same
 *     connection (cfd): an item_store of the same key means it was internal (dropped);
 *     anything else means it was a real read. Gets that stay unresolved for pair_gids gids
 *     (or, live, too long) are real reads. Output keeps gid order: a pending get blocks the
 *     queue behind it until resolved, which is at most those bounds.
     Lines without cfd= (memcached 1.5.x) are paired by key instead: a store (or, >= 1.6.20,
     a `deleted` line) of the same key marks the latest pending get of that key internal,
     and a second get of a key resolves the first as a real read. A client's miss and its
     refill are then one miss, not two (1.5.16 read 17 pp low without this).
 */
#include "watchline.h"

#include <stdlib.h>
#include <string.h>

typedef struct held {
    wl_line line;
    int64_t arrival;
} held;

/* Heap nodes stay small (16 bytes) so the ~17 levels of a 100k-line heap move little memory;
 * the lines themselves sit still in a pool. */
typedef struct hnode {
    uint64_t gid;
    uint32_t seq;    /* ties on gid keep arrival order */
    uint32_t idx;    /* pool slot */
} hnode;

enum slot_state { SLOT_READY = 0, SLOT_PENDING, SLOT_DROPPED };

typedef struct slot {
    uint8_t state;
    uint8_t nev, next;     /* events in ev[], next to pop */
    wn_event ev[2];
    wl_line get;           /* SLOT_PENDING: the item_get */
    int64_t arrival;
} slot;

#define FAIL_RING 16
#define KPEND_BITS 14  /* key-paired pending gets (no cfd): direct-mapped, 16K entries */
#define WN_MAX_PILES 24

struct wn_norm {
    wn_config cfg;
    wn_stats st;
    /* stage 1: piles, then the overflow heap */
    struct pile { held *buf; size_t cap, head, n; } piles[WN_MAX_PILES];
    uint64_t pile_head[WN_MAX_PILES], pile_tail[WN_MAX_PILES];
    int npiles;
    size_t held_count;
    hnode *heap;
    size_t hn, hcap;
    held *pool;
    uint32_t *freelist;
    size_t pool_cap, nfree;
    uint32_t seq;
    uint64_t released_max;     /* highest gid passed to stage 2 */
    int released_any;
    uint64_t pushed_max;
    /* stage 2 */
    slot *q;
    size_t qcap, qhead, qn;    /* ring */
    uint64_t qbase;            /* absolute index of q[qhead] */
    uint64_t *pend;            /* per cfd: absolute slot index + 1, 0 = none */
    size_t pcap;
    uint64_t *kpend_key, *kpend_slot; /* no cfd: key -> absolute slot index + 1 */
    struct { uint64_t key, gid; int used; } fail[FAIL_RING];
    unsigned fail_next;
    unsigned fail_used;        /* entries of fail[] in use: every item_get skips the scan at 0 */
};

wn_norm *wn_new(const wn_config *cfg)
{
    wn_norm *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    if (cfg)
        n->cfg = *cfg;
    if (!n->cfg.reorder_lines)
        n->cfg.reorder_lines = 65536;
    if (!n->cfg.pair_gids)
        n->cfg.pair_gids = 65536;
    if (!n->cfg.pair_gids_nocfd)
        n->cfg.pair_gids_nocfd = 4096;
    n->kpend_key = calloc((size_t)1 << KPEND_BITS, sizeof *n->kpend_key);
    n->kpend_slot = calloc((size_t)1 << KPEND_BITS, sizeof *n->kpend_slot);
    if (!n->kpend_key || !n->kpend_slot) {
        wn_free(n);
        return NULL;
    }
    return n;
}

void wn_free(wn_norm *n)
{
    if (!n)
        return;
    for (int i = 0; i < WN_MAX_PILES; i++)
        free(n->piles[i].buf);
    free(n->heap);
    free(n->pool);
    free(n->freelist);
    free(n->q);
    free(n->pend);
    free(n->kpend_key);
    free(n->kpend_slot);
    free(n);
}

const wn_stats *wn_get_stats(const wn_norm *n) { return &n->st; }

void wn_reset(wn_norm *n)
{
    for (int i = 0; i < n->npiles; i++)
        n->piles[i].n = 0;
    n->npiles = 0;
    n->held_count = 0;
    n->hn = 0;
    n->nfree = 0;
    for (size_t i = n->pool_cap; i > 0; i--)
        n->freelist[n->nfree++] = (uint32_t)(i - 1);
    n->released_max = 0;
    n->released_any = 0;
    n->pushed_max = 0;
    n->qhead = n->qn = 0;
    n->qbase = 0;
    if (n->pend)
        memset(n->pend, 0, n->pcap * sizeof *n->pend);
    memset(n->kpend_slot, 0, ((size_t)1 << KPEND_BITS) * sizeof *n->kpend_slot);
    memset(n->fail, 0, sizeof n->fail);
    n->fail_used = 0;
}

/* ---- stage 1: heap ---- */

static int node_less(const hnode *a, const hnode *b)
{
    if (a->gid != b->gid)
        return a->gid < b->gid;
    return (int32_t)(a->seq - b->seq) < 0;
}

static int heap_push(wn_norm *n, const wl_line *l, int64_t now)
{
    if (n->hn == n->hcap) {
        size_t nc = n->hcap ? n->hcap * 2 : 1024;
        hnode *nh = realloc(n->heap, nc * sizeof *nh);
        held *np = realloc(n->pool, nc * sizeof *np);
        uint32_t *nf = realloc(n->freelist, nc * sizeof *nf);
        if (nh)
            n->heap = nh;
        if (np)
            n->pool = np;
        if (nf)
            n->freelist = nf;
        if (!nh || !np || !nf)
            return -1;
        /* new pool slots are free (pushed so the lowest index is taken first) */
        for (size_t i = nc; i > n->pool_cap; i--)
            n->freelist[n->nfree++] = (uint32_t)(i - 1);
        n->pool_cap = nc;
        n->hcap = nc;
    }
    uint32_t slot = n->freelist[--n->nfree];
    n->pool[slot].line = *l;
    n->pool[slot].arrival = now;
    hnode h = {l->gid, n->seq++, slot};
    size_t i = n->hn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!node_less(&h, &n->heap[p]))
            break;
        n->heap[i] = n->heap[p];
        i = p;
    }
    n->heap[i] = h;
    return 0;
}

static int64_t heap_top_arrival(const wn_norm *n)
{
    return n->pool[n->heap[0].idx].arrival;
}

/* Pops the smallest gid; *out is valid until the next push. */
static const held *heap_pop(wn_norm *n)
{
    hnode top = n->heap[0];
    hnode last = n->heap[--n->hn];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n->hn)
            break;
        if (c + 1 < n->hn && node_less(&n->heap[c + 1], &n->heap[c]))
            c++;
        if (!node_less(&n->heap[c], &last))
            break;
        n->heap[i] = n->heap[c];
        i = c;
    }
    if (n->hn > 0)
        n->heap[i] = last;
    n->freelist[n->nfree++] = top.idx;
    return &n->pool[top.idx];
}

/* ---- stage 1: piles + overflow heap ---- */

/* Pile and queue capacities are powers of two (they start at 4096 and 1024 and double), so
 * ring positions are masked: a division per position was a few percent of the line path's
 * cycles (a 64-bit div is tens of cycles; callgrind counts it as one instruction). */

static int pile_append(struct pile *p, const wl_line *l, int64_t now)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 4096;
        held *nb = malloc(nc * sizeof *nb);
        if (!nb)
            return -1;
        for (size_t i = 0; i < p->n; i++)
            nb[i] = p->buf[(p->head + i) & (p->cap - 1)];
        free(p->buf);
        p->buf = nb;
        p->cap = nc;
        p->head = 0;
    }
    held *h = &p->buf[(p->head + p->n) & (p->cap - 1)];
    h->line = *l;
    h->arrival = now;
    p->n++;
    return 0;
}

static int reorder_push(wn_norm *n, const wl_line *l, int64_t now)
{
    int best = -1;
    for (int i = 0; i < n->npiles; i++)
        if (n->pile_tail[i] < l->gid && (best < 0 || n->pile_tail[i] > n->pile_tail[best]))
            best = i;
    if (best < 0 && n->npiles < WN_MAX_PILES) {
        best = n->npiles++;
        n->piles[best].n = 0;
        n->piles[best].head = 0;
        n->pile_head[best] = l->gid;
    }
    if (best >= 0) {
        if (pile_append(&n->piles[best], l, now) < 0)
            return -1;
        n->pile_tail[best] = l->gid;
    } else if (heap_push(n, l, now) < 0) {
        return -1;
    }
    n->held_count++;
    return 0;
}

/* Where the smallest gid is: pile index, or -1 for the heap; -2 if nothing is held. */
static int reorder_min(const wn_norm *n)
{
    int m = -2;
    uint64_t g = UINT64_MAX;
    for (int i = 0; i < n->npiles; i++)
        if (n->pile_head[i] < g || m == -2) {
            g = n->pile_head[i];
            m = i;
        }
    if (n->hn > 0 && (m == -2 || n->heap[0].gid < g))
        m = -1;
    return m;
}

static int64_t reorder_min_arrival(const wn_norm *n, int m)
{
    if (m == -1)
        return heap_top_arrival(n);
    const struct pile *p = &n->piles[m];
    return p->buf[p->head].arrival;
}

/* Pops the smallest gid; the result is valid until the next push. */
static const held *reorder_pop(wn_norm *n, int m)
{
    n->held_count--;
    if (m == -1)
        return heap_pop(n);
    struct pile *p = &n->piles[m];
    const held *h = &p->buf[p->head];
    p->head = (p->head + 1) & (p->cap - 1);
    p->n--;
    if (p->n > 0) {
        n->pile_head[m] = p->buf[p->head].line.gid;
    } else {
        /* retire the pile: swap with the last one (buffers are kept for reuse) */
        int last = --n->npiles;
        if (m != last) {
            struct pile t = n->piles[m];
            n->piles[m] = n->piles[last];
            n->piles[last] = t;
            n->pile_head[m] = n->pile_head[last];
            n->pile_tail[m] = n->pile_tail[last];
            h = &n->piles[last].buf[(n->piles[last].head + n->piles[last].cap - 1) &
                                    (n->piles[last].cap - 1)];
        }
    }
    return h;
}

/* ---- stage 2: pairing queue ---- */

static slot *q_at(wn_norm *n, uint64_t abs)
{
    return &n->q[(n->qhead + (size_t)(abs - n->qbase)) & (n->qcap - 1)];
}

static slot *q_append(wn_norm *n)
{
    if (n->qn == n->qcap) {
        size_t nc = n->qcap ? n->qcap * 2 : 1024;
        slot *nq = malloc(nc * sizeof *nq);
        if (!nq)
            return NULL;
        for (size_t i = 0; i < n->qn; i++)
            nq[i] = n->q[(n->qhead + i) & (n->qcap - 1)];
        free(n->q);
        n->q = nq;
        n->qcap = nc;
        n->qhead = 0;
    }
    slot *s = &n->q[(n->qhead + n->qn) & (n->qcap - 1)];
    n->qn++;
    /* not a memset of the whole slot (184 bytes a line): ev[] is read up to nev, get only
     * while the slot is pending, and each is written before that */
    s->state = SLOT_READY;
    s->nev = 0;
    s->next = 0;
    return s;
}

static wn_event make_event(const wl_line *l, uint8_t op, uint8_t cause)
{
    wn_event e;
    memset(&e, 0, sizeof e);
    e.req.key = l->key;
    e.req.op = op;
    e.req.size = l->size;
    e.req.clsid = l->clsid;
    e.req.ts_us = l->ts_us;
    e.req.ttl = op == TR_SET || op == TR_EVICT ? l->ttl : -1;
    e.gid = l->gid;
    e.cfd = l->cfd;
    e.cause = cause;
    e.nosize = !(l->fields & WLF_SIZE);
    e.add = op == TR_SET && !strcmp(l->cmd, "add");
    return e;
}

/* A pending item_get turns out to be a real read. */
static void resolve_read(wn_norm *n, slot *s)
{
    const wl_line *g = &s->get;
    s->state = SLOT_READY;
    switch (g->status) {
    case WS_FOUND:
        s->ev[0] = make_event(g, TR_HIT, WN_PLAIN);
        s->nev = 1;
        n->st.hits++;
        break;
    case WS_EXPIRED:
    case WS_FLUSHED: {
        /* The read found a dead item: memcached unlinks it and answers a miss. */
        uint8_t cause = g->status == WS_EXPIRED ? WN_EXPIRED : WN_FLUSHED;
        s->ev[0] = make_event(g, TR_DELETE, cause);
        s->ev[1] = make_event(g, TR_MISS, cause);
        s->nev = 2;
        n->st.deletes++;
        n->st.misses++;
        break;
    }
    default:
        s->ev[0] = make_event(g, TR_MISS, WN_PLAIN);
        s->nev = 1;
        n->st.misses++;
        break;
    }
}

static uint64_t *pend_ref(wn_norm *n, int32_t cfd)
{
    if (cfd < 0 || cfd >= (1 << 22))
        return NULL;
    if ((size_t)cfd >= n->pcap) {
        size_t nc = n->pcap ? n->pcap : 256;
        while (nc <= (size_t)cfd)
            nc *= 2;
        uint64_t *np = realloc(n->pend, nc * sizeof *np);
        if (!np)
            return NULL;
        memset(np + n->pcap, 0, (nc - n->pcap) * sizeof *np);
        n->pend = np;
        n->pcap = nc;
    }
    return &n->pend[cfd];
}

/* The pending get of this cfd, if any, is resolved as a real read and forgotten. */
static slot *take_pending(wn_norm *n, int32_t cfd)
{
    uint64_t *p = pend_ref(n, cfd);
    if (!p || !*p)
        return NULL;
    uint64_t abs = *p - 1;
    *p = 0;
    if (abs < n->qbase) /* already left the queue (timed out) */
        return NULL;
    slot *s = q_at(n, abs);
    return s->state == SLOT_PENDING ? s : NULL;
}

/* No cfd: the pending get of this key, if any, is taken out of the key table. */
static slot *take_pending_key(wn_norm *n, uint64_t key)
{
    size_t i = (size_t)(key >> (64 - KPEND_BITS));
    if (n->kpend_key[i] != key || !n->kpend_slot[i])
        return NULL;
    uint64_t abs = n->kpend_slot[i] - 1;
    n->kpend_slot[i] = 0;
    if (abs < n->qbase)
        return NULL;
    slot *s = q_at(n, abs);
    return s->state == SLOT_PENDING && s->get.key == key ? s : NULL;
}

static void remember_pending(wn_norm *n, slot *s, uint64_t abs1)
{
    /* Every pending get is findable by key (deleted lines carry no cfd); lines with a cfd
     * are paired by it. */
    size_t i = (size_t)(s->get.key >> (64 - KPEND_BITS));
    n->kpend_key[i] = s->get.key;
    n->kpend_slot[i] = abs1;
    if (s->get.cfd >= 0) {
        uint64_t *ref = pend_ref(n, s->get.cfd);
        if (ref)
            *ref = abs1;
        else
            resolve_read(n, s);
    }
}

/* The pending get that is the head of the queue times out: forget its table entry. */
static void forget_pending(wn_norm *n, slot *s)
{
    if (s->get.cfd >= 0)
        take_pending(n, s->get.cfd);
    else
        take_pending_key(n, s->get.key);
}

static slot *take_pending_of(wn_norm *n, const wl_line *l)
{
    return l->cfd >= 0 ? take_pending(n, l->cfd) : take_pending_key(n, l->key);
}

static void emit_simple(wn_norm *n, const wl_line *l, uint8_t op, uint8_t cause)
{
    slot *s = q_append(n);
    if (!s)
        return;
    s->state = SLOT_READY;
    s->ev[0] = make_event(l, op, cause);
    s->nev = 1;
}

static int fail_match(wn_norm *n, const wl_line *l)
{
    if (!n->fail_used) /* failed stores are rare: no scan of 16 entries per read */
        return 0;
    for (unsigned i = 0; i < FAIL_RING; i++) {
        if (n->fail[i].used && n->fail[i].key == l->key && l->gid > n->fail[i].gid &&
            l->gid - n->fail[i].gid <= 64) {
            n->fail[i].used = 0;
            n->fail_used--;
            return 1;
        }
    }
    return 0;
}

static void stage2(wn_norm *n, const wl_line *l, int64_t arrival)
{
    /* Old pending gets at the head are real reads once the stream moved far past them. */
    while (n->qn > 0) {
        slot *h = &n->q[n->qhead];
        if (h->state != SLOT_PENDING)
            break;
        uint32_t bound = h->get.cfd >= 0 ? n->cfg.pair_gids : n->cfg.pair_gids_nocfd;
        if (!(l->gid > h->get.gid + bound))
            break;
        forget_pending(n, h);
        resolve_read(n, h);
    }
    switch (l->type) {
    case WL_GET: {
        if (l->cfd < 0)
            n->st.nocfd_lines++;
        slot *p = take_pending_of(n, l);
        if (p)
            resolve_read(n, p);
        if (fail_match(n, l)) {
            /* Internal unlink after a failed oversized store: the old value is gone. */
            n->st.internal_gets++;
            if (l->status == WS_FOUND) {
                emit_simple(n, l, TR_DELETE, WN_FAILED_STORE);
                n->st.deletes++;
            }
            break;
        }
        slot *s = q_append(n);
        if (!s)
            break;
        s->state = SLOT_PENDING;
        s->get = *l;
        s->arrival = arrival;
        remember_pending(n, s, n->qbase + n->qn); /* abs index + 1 */
        break;
    }
    case WL_STORE:
        if (l->status == WS_TOO_LARGE || l->status == WS_NO_MEMORY) {
            /* cfd/clsid are garbage on these lines (varargs bug): pair by key only. */
            n->fail[n->fail_next].key = l->key;
            n->fail[n->fail_next].gid = l->gid;
            n->fail_used += !n->fail[n->fail_next].used;
            n->fail[n->fail_next].used = 1;
            n->fail_next = (n->fail_next + 1) % FAIL_RING;
            n->st.failed_stores++;
            break;
        }
        if (l->cfd < 0)
            n->st.nocfd_lines++;
        {
            slot *p = take_pending_of(n, l);
            if (p) {
                if (p->get.key == l->key) {
                    p->state = SLOT_DROPPED;
                    n->st.internal_gets++;
                } else {
                    resolve_read(n, p);
                }
            }
        }
        if (l->status == WS_STORED) {
            emit_simple(n, l, TR_SET, WN_PLAIN);
            n->st.sets++;
        } else {
            n->st.failed_stores++;
        }
        break;
    case WL_EVICTION:
        emit_simple(n, l, TR_EVICT, WN_PLAIN);
        n->st.evictions++;
        break;
    case WL_DELETED: {
        /* `delete`/`md` looked the key up first (an item_get found on 1.6.20+): that lookup
         * was the delete's, not a read. deleted lines carry no cfd: paired by key. */
        slot *p = take_pending_key(n, l->key);
        if (p) {
            p->state = SLOT_DROPPED;
            n->st.internal_gets++;
        }
        emit_simple(n, l, TR_DELETE, WN_DELETED);
        n->st.deletes++;
        break;
    }
    default:
        break;
    }
}

int wn_push(wn_norm *n, const wl_line *l, int64_t now_us)
{
    if (l->type == WL_SKIPPED) {
        n->st.stream_skipped += l->skipped;
        return 0;
    }
    n->st.lines++;
    if (l->type == WL_OTHER || l->type == WL_UNKNOWN || l->type == WL_EXTWRITE || !l->has_gid) {
        n->st.other_lines++;
        if (l->type == WL_UNKNOWN)
            n->st.unknown_lines++;
        return 0;
    }
    if (l->gid < n->pushed_max)
        n->st.out_of_order++;
    else
        n->pushed_max = l->gid;
    if (n->released_any && l->gid < n->released_max) {
        n->st.late_lines++;
        stage2(n, l, now_us);
        return 0;
    }
    if (reorder_push(n, l, now_us) < 0)
        return -1;
    while (n->held_count > n->cfg.reorder_lines) {
        const held *h = reorder_pop(n, reorder_min(n));
        n->released_max = h->line.gid;
        n->released_any = 1;
        stage2(n, &h->line, h->arrival);
    }
    return 0;
}

static void release_all(wn_norm *n)
{
    while (n->held_count > 0) {
        const held *h = reorder_pop(n, reorder_min(n));
        n->released_max = h->line.gid;
        n->released_any = 1;
        stage2(n, &h->line, h->arrival);
    }
}

void wn_flush(wn_norm *n)
{
    release_all(n);
    for (size_t i = 0; i < n->qn; i++) {
        slot *s = &n->q[(n->qhead + i) & (n->qcap - 1)];
        if (s->state == SLOT_PENDING) {
            forget_pending(n, s);
            resolve_read(n, s);
        }
    }
}

int wn_pop(wn_norm *n, int64_t now_us, wn_event *out)
{
    if (n->cfg.reorder_us > 0) {
        int m;
        while ((m = reorder_min(n)) != -2 &&
               reorder_min_arrival(n, m) + n->cfg.reorder_us <= now_us) {
            const held *h = reorder_pop(n, m);
            n->released_max = h->line.gid;
            n->released_any = 1;
            stage2(n, &h->line, h->arrival);
        }
    }
    while (n->qn > 0) {
        slot *h = &n->q[n->qhead];
        if (h->state == SLOT_PENDING) {
            /* Live: a read whose connection went quiet is a real read after a while. */
            if (n->cfg.reorder_us > 0 && h->arrival + 2 * n->cfg.reorder_us <= now_us) {
                forget_pending(n, h);
                resolve_read(n, h);
            } else {
                return 0;
            }
        }
        if (h->state == SLOT_READY && h->next < h->nev) {
            *out = h->ev[h->next++];
            if (h->next == h->nev) {
                n->qhead = (n->qhead + 1) & (n->qcap - 1);
                n->qn--;
                n->qbase++;
            }
            return 1;
        }
        n->qhead = (n->qhead + 1) & (n->qcap - 1); /* dropped or empty */
        n->qn--;
        n->qbase++;
    }
    return 0;
}
