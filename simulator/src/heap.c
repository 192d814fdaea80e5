/* Indexed binary min-heap over cache objects (see heap.h). */
#include "heap.h"

#include <stdlib.h>

static inline int less(const hc_heap_ent *x, const hc_heap_ent *y)
{
    return x->pri < y->pri || (x->pri == y->pri && x->seq < y->seq);
}

static inline void place(hc_cache *c, hc_heap *h, uint32_t pos, hc_heap_ent e)
{
    h->a[pos] = e;
    c->objs[e.idx].aux = pos;
}

static void sift_up(hc_cache *c, hc_heap *h, uint32_t pos)
{
    hc_heap_ent e = h->a[pos];
    while (pos > 0) {
        uint32_t p = (pos - 1) / 2;
        if (!less(&e, &h->a[p]))
            break;
        place(c, h, pos, h->a[p]);
        pos = p;
    }
    place(c, h, pos, e);
}

static void sift_down(hc_cache *c, hc_heap *h, uint32_t pos)
{
    hc_heap_ent e = h->a[pos];
    for (;;) {
        uint32_t l = 2 * pos + 1, m;
        if (l >= h->n)
            break;
        m = (l + 1 < h->n && less(&h->a[l + 1], &h->a[l])) ? l + 1 : l;
        if (!less(&h->a[m], &e))
            break;
        place(c, h, pos, h->a[m]);
        pos = m;
    }
    place(c, h, pos, e);
}

void hc_heap_free(hc_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

int hc_heap_push(hc_cache *c, hc_heap *h, uint32_t idx, double pri, uint64_t seq)
{
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? h->cap * 2 : 1024;
        hc_heap_ent *a = realloc(h->a, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        h->a = a;
        h->cap = cap;
    }
    h->a[h->n] = (hc_heap_ent){pri, seq, idx};
    c->objs[idx].aux = h->n;
    sift_up(c, h, h->n++);
    return 0;
}

void hc_heap_update(hc_cache *c, hc_heap *h, uint32_t pos, double pri, uint64_t seq)
{
    hc_heap_ent old = h->a[pos];
    h->a[pos].pri = pri;
    h->a[pos].seq = seq;
    if (less(&h->a[pos], &old))
        sift_up(c, h, pos);
    else
        sift_down(c, h, pos);
}

void hc_heap_remove(hc_cache *c, hc_heap *h, uint32_t pos)
{
    if (--h->n == pos)
        return;
    hc_heap_ent last = h->a[h->n], old = h->a[pos];
    place(c, h, pos, last);
    if (less(&last, &old))
        sift_up(c, h, pos);
    else
        sift_down(c, h, pos);
}

int hc_heap_check(const hc_cache *c, const hc_heap *h)
{
    for (uint32_t i = 0; i < h->n; i++) {
        if (c->objs[h->a[i].idx].aux != i)
            return -1;
        if (i > 0 && less(&h->a[i], &h->a[(i - 1) / 2]))
            return -1;
    }
    return 0;
}
