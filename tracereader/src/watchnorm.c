/*
 * Normaliser: parsed watch lines in, HIT/MISS/SET/DELETE/EVICT events out, in gid order.
 *
 * Two stages:
 *  1. Reorder: a min-heap on gid holds up to reorder_lines lines (and, live, each line at
 *     most reorder_us after it arrived). memcached's logger drains one worker buffer at a
 *     time, so lines arrive grouped per worker, up to ~1 s / 60k gids late. A line arriving
 *     after a higher gid was already released is passed through as is (counted as late).
 *  2. Pairing: an item_get cannot be classified when it arrives, because a store's internal
 *     lookup looks exactly like a read. It waits as "pending" for the next line of the same
 *     connection (cfd): an item_store of the same key means it was internal (dropped);
 *     anything else means it was a real read. Gets that stay unresolved for pair_gids gids
 *     (or, live, too long) are real reads. Output keeps gid order: a pending get blocks the
 *     queue behind it until resolved, which is at most those bounds.
 */
#include "watchline.h"

#include <stdlib.h>
#include <string.h>

typedef struct held {
    wl_line line;
    int64_t arrival;
    uint64_t seq;    /* ties on gid (lines without one) keep arrival order */
} held;

enum slot_state { SLOT_READY = 0, SLOT_PENDING, SLOT_DROPPED };

typedef struct slot {
    uint8_t state;
    uint8_t nev, next;     /* events in ev[], next to pop */
    wn_event ev[2];
    wl_line get;           /* SLOT_PENDING: the item_get */
    int64_t arrival;
} slot;

#define FAIL_RING 16

struct wn_norm {
    wn_config cfg;
    wn_stats st;
    /* stage 1 */
    held *heap;
    size_t hn, hcap;
    uint64_t seq;
    uint64_t released_max;     /* highest gid passed to stage 2 */
    int released_any;
    uint64_t pushed_max;
    /* stage 2 */
    slot *q;
    size_t qcap, qhead, qn;    /* ring */
    uint64_t qbase;            /* absolute index of q[qhead] */
    uint64_t *pend;            /* per cfd: absolute slot index + 1, 0 = none */
    size_t pcap;
    struct { uint64_t key, gid; int used; } fail[FAIL_RING];
    unsigned fail_next;
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
    return n;
}

void wn_free(wn_norm *n)
{
    if (!n)
        return;
    free(n->heap);
    free(n->q);
    free(n->pend);
    free(n);
}

const wn_stats *wn_get_stats(const wn_norm *n) { return &n->st; }

void wn_reset(wn_norm *n)
{
    n->hn = 0;
    n->released_max = 0;
    n->released_any = 0;
    n->pushed_max = 0;
    n->qhead = n->qn = 0;
    n->qbase = 0;
    if (n->pend)
        memset(n->pend, 0, n->pcap * sizeof *n->pend);
    memset(n->fail, 0, sizeof n->fail);
}

/* ---- stage 1: heap ---- */

static int held_less(const held *a, const held *b)
{
    if (a->line.gid != b->line.gid)
        return a->line.gid < b->line.gid;
    return a->seq < b->seq;
}

static int heap_push(wn_norm *n, const wl_line *l, int64_t now)
{
    if (n->hn == n->hcap) {
        size_t nc = n->hcap ? n->hcap * 2 : 1024;
        held *nh = realloc(n->heap, nc * sizeof *nh);
        if (!nh)
            return -1;
        n->heap = nh;
        n->hcap = nc;
    }
    size_t i = n->hn++;
    held h = {*l, now, n->seq++};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!held_less(&h, &n->heap[p]))
            break;
        n->heap[i] = n->heap[p];
        i = p;
    }
    n->heap[i] = h;
    return 0;
}

static held heap_pop(wn_norm *n)
{
    held top = n->heap[0];
    held last = n->heap[--n->hn];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n->hn)
            break;
        if (c + 1 < n->hn && held_less(&n->heap[c + 1], &n->heap[c]))
            c++;
        if (!held_less(&n->heap[c], &last))
            break;
        n->heap[i] = n->heap[c];
        i = c;
    }
    if (n->hn > 0)
        n->heap[i] = last;
    return top;
}

/* ---- stage 2: pairing queue ---- */

static slot *q_at(wn_norm *n, uint64_t abs)
{
    return &n->q[(n->qhead + (size_t)(abs - n->qbase)) % n->qcap];
}

static slot *q_append(wn_norm *n)
{
    if (n->qn == n->qcap) {
        size_t nc = n->qcap ? n->qcap * 2 : 1024;
        slot *nq = malloc(nc * sizeof *nq);
        if (!nq)
            return NULL;
        for (size_t i = 0; i < n->qn; i++)
            nq[i] = n->q[(n->qhead + i) % n->qcap];
        free(n->q);
        n->q = nq;
        n->qcap = nc;
        n->qhead = 0;
    }
    slot *s = &n->q[(n->qhead + n->qn) % n->qcap];
    n->qn++;
    memset(s, 0, sizeof *s);
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
    for (unsigned i = 0; i < FAIL_RING; i++) {
        if (n->fail[i].used && n->fail[i].key == l->key && l->gid > n->fail[i].gid &&
            l->gid - n->fail[i].gid <= 64) {
            n->fail[i].used = 0;
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
        if (h->state != SLOT_PENDING || !(l->gid > h->get.gid + n->cfg.pair_gids))
            break;
        take_pending(n, h->get.cfd);
        resolve_read(n, h);
    }
    switch (l->type) {
    case WL_GET: {
        slot *p = take_pending(n, l->cfd);
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
        uint64_t *ref = pend_ref(n, l->cfd);
        if (ref)
            *ref = n->qbase + n->qn; /* abs index + 1 */
        else
            resolve_read(n, s);
        break;
    }
    case WL_STORE:
        if (l->status == WS_TOO_LARGE || l->status == WS_NO_MEMORY) {
            /* cfd/clsid are garbage on these lines (varargs bug): pair by key only. */
            n->fail[n->fail_next].key = l->key;
            n->fail[n->fail_next].gid = l->gid;
            n->fail[n->fail_next].used = 1;
            n->fail_next = (n->fail_next + 1) % FAIL_RING;
            n->st.failed_stores++;
            break;
        }
        {
            slot *p = take_pending(n, l->cfd);
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
    if (l->type == WL_OTHER || !l->has_gid) {
        n->st.other_lines++;
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
    if (heap_push(n, l, now_us) < 0)
        return -1;
    while (n->hn > n->cfg.reorder_lines) {
        held h = heap_pop(n);
        n->released_max = h.line.gid;
        n->released_any = 1;
        stage2(n, &h.line, h.arrival);
    }
    return 0;
}

static void release_all(wn_norm *n)
{
    while (n->hn > 0) {
        held h = heap_pop(n);
        n->released_max = h.line.gid;
        n->released_any = 1;
        stage2(n, &h.line, h.arrival);
    }
}

void wn_flush(wn_norm *n)
{
    release_all(n);
    for (size_t i = 0; i < n->qn; i++) {
        slot *s = &n->q[(n->qhead + i) % n->qcap];
        if (s->state == SLOT_PENDING) {
            take_pending(n, s->get.cfd);
            resolve_read(n, s);
        }
    }
}

int wn_pop(wn_norm *n, int64_t now_us, wn_event *out)
{
    if (n->cfg.reorder_us > 0) {
        while (n->hn > 0 && n->heap[0].arrival + n->cfg.reorder_us <= now_us) {
            held h = heap_pop(n);
            n->released_max = h.line.gid;
            n->released_any = 1;
            stage2(n, &h.line, h.arrival);
        }
    }
    while (n->qn > 0) {
        slot *h = &n->q[n->qhead];
        if (h->state == SLOT_PENDING) {
            /* Live: a read whose connection went quiet is a real read after a while. */
            if (n->cfg.reorder_us > 0 && h->arrival + 2 * n->cfg.reorder_us <= now_us) {
                take_pending(n, h->get.cfd);
                resolve_read(n, h);
            } else {
                return 0;
            }
        }
        if (h->state == SLOT_READY && h->next < h->nev) {
            *out = h->ev[h->next++];
            if (h->next == h->nev) {
                n->qhead = (n->qhead + 1) % n->qcap;
                n->qn--;
                n->qbase++;
            }
            return 1;
        }
        n->qhead = (n->qhead + 1) % n->qcap; /* dropped or empty */
        n->qn--;
        n->qbase++;
    }
    return 0;
}
