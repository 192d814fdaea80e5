/* Indexed binary min-heap over cache objects (see heap.h). */
#include "heap.h"

#include <stdlib.h>

static inline int less(const sim_heap_ent *x, const sim_heap_ent *y)
{
    return x->pri < y->pri || (x->pri == y->pri && x->seq < y->seq);
}

static inline void place(sim_cache *c, sim_heap *h, uint32_t pos, sim_heap_ent e)
{
    h->a[pos] = e;
    c->objs[e.idx].aux = pos;
}

static void sift_up(sim_cache *c, sim_heap *h, uint32_t pos)
{
    sim_heap_ent e = h->a[pos];
    while (pos > 0) {
        uint32_t p = (pos - 1) / 2;
        if (!less(&e, &h->a[p]))
            break;
        place(c, h, pos, h->a[p]);
        pos = p;
    }
    place(c, h, pos, e);
}

static void sift_down(sim_cache *c, sim_heap *h, uint32_t pos)
{
    sim_heap_ent e = h->a[pos];
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

void sim_heap_free(sim_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

int sim_heap_push(sim_cache *c, sim_heap *h, uint32_t idx, double pri, uint64_t seq)
{
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? h->cap * 2 : 1024;
        sim_heap_ent *a = realloc(h->a, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        h->a = a;
        h->cap = cap;
    }
    h->a[h->n] = (sim_heap_ent){pri, seq, idx};
    c->objs[idx].aux = h->n;
    sift_up(c, h, h->n++);
    return 0;
}

void sim_heap_update(sim_cache *c, sim_heap *h, uint32_t pos, double pri, uint64_t seq)
{
    sim_heap_ent old = h->a[pos];
    h->a[pos].pri = pri;
    h->a[pos].seq = seq;
    if (less(&h->a[pos], &old))
        sift_up(c, h, pos);
    else
        sift_down(c, h, pos);
}

void sim_heap_remove(sim_cache *c, sim_heap *h, uint32_t pos)
{
    if (--h->n == pos)
        return;
    sim_heap_ent last = h->a[h->n], old = h->a[pos];
    place(c, h, pos, last);
    if (less(&last, &old))
        sift_up(c, h, pos);
    else
        sift_down(c, h, pos);
}

int sim_heap_check(const sim_cache *c, const sim_heap *h)
{
    for (uint32_t i = 0; i < h->n; i++) {
        if (c->objs[h->a[i].idx].aux != i)
            return -1;
        if (i > 0 && less(&h->a[i], &h->a[(i - 1) / 2]))
            return -1;
    }
    return 0;
}
