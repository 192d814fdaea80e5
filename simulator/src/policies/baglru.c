/*
 * Bag-LRU (Wiggins & Langston, Intel 2012; digest_nbq_intel B.4), single-threaded:
 *  - time-ordered bags, each a list of items in append order; insert appends to the
 *    newest bag; a hit only records "the newest bag at the time of access" in the item
 *    (no lock, no move);
 *  - a cleaner runs every `interval` requests: if the newest bag is full (`items`), it
 *    opens a new one (the old newest becomes newest_alt); every `clean_every`-th run it
 *    cleans: each item that was accessed since it was filed moves to its access bag, or to
 *    newest_alt if that is the newest; then bags smaller than `merge` items are merged
 *    into the next newer bag (older items first);
 *  - evict takes the oldest item of the oldest non-empty bag before newest_alt (Intel's
 *    criterion is "in use", never recency, so a touched but unmoved item can go); if there
 *    is none it adds two bags and looks again. baglru.lazy=1 instead re-files touched items
 *    at eviction time (a variant, not Intel's).
 * Bags carry sequence ranges [lo, hi] so that an item's access mark survives merges.
 * Parameters (objects / requests): baglru.items (capacity/16, min 16), baglru.interval
 * (items/16, min 1), baglru.clean_every (16), baglru.merge (items/4), baglru.lazy (0).
 */
#include "../cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sim_list items;
    uint32_t lo, hi;
} bag_t;

typedef struct {
    bag_t *bags;       /* oldest first */
    uint32_t nb, cap;
    uint32_t seq;
    uint64_t items, interval, clean_every, merge;
    int lazy;
    uint64_t ticks;
    uint64_t rotations, moves, merges;   /* for tests and curiosity */
} bag_state;

static int add_bag(bag_state *s)
{
    if (s->nb == s->cap) {
        uint32_t n = s->cap ? s->cap * 2 : 16;
        bag_t *b = realloc(s->bags, n * sizeof *b);
        if (!b)
            return -1;
        s->bags = b;
        s->cap = n;
    }
    bag_t *b = &s->bags[s->nb++];
    sim_list_init(&b->items);
    b->lo = b->hi = ++s->seq;
    s->rotations++;
    return 0;
}

static int bag_init(sim_cache *c, char *err, size_t errlen)
{
    uint64_t cap = sim_capacity_objects(c);
    double items = sim_param(c, "items", cap / 16 < 16 ? 16 : (double)(cap / 16));
    double interval = sim_param(c, "interval", items / 16 < 1 ? 1 : items / 16);
    double every = sim_param(c, "clean_every", 16);
    double merge = sim_param(c, "merge", items / 4);
    if (items < 1 || interval < 1 || every < 1 || merge < 0) {
        snprintf(err, errlen, "bag: need items>=1, interval>=1, clean_every>=1, merge>=0");
        return -1;
    }
    bag_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->items = (uint64_t)items;
    s->interval = (uint64_t)interval;
    s->clean_every = (uint64_t)every;
    s->merge = (uint64_t)merge;
    s->lazy = sim_param(c, "lazy", 0) != 0;
    if (add_bag(s) < 0) {
        free(s);
        return -1;
    }
    c->priv = s;
    return 0;
}

static void bag_free(sim_cache *c)
{
    bag_state *s = c->priv;
    free(s->bags);
    free(s);
}

/* index of the bag whose range holds seq (ranges are disjoint, sorted and contiguous) */
static uint32_t bag_of(const bag_state *s, uint32_t seq)
{
    uint32_t lo = 0, hi = s->nb - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (s->bags[mid].hi < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void file_into(sim_cache *c, bag_state *s, uint32_t b, uint32_t i)
{
    sim_list_push_head(c, &s->bags[b].items, i);
    c->objs[i].prio = s->bags[b].hi;   /* location */
}

/* merge bag b (older) into bag b+1: older items go to the old end of the newer bag */
static void merge_into_next(sim_cache *c, bag_state *s, uint32_t b)
{
    bag_t *o = &s->bags[b], *n = &s->bags[b + 1];
    if (o->items.count) {
        if (n->items.count) {
            c->objs[n->items.tail].next = o->items.head;
            c->objs[o->items.head].prev = n->items.tail;
            n->items.tail = o->items.tail;
            n->items.count += o->items.count;
            n->items.bytes += o->items.bytes;
        } else {
            n->items = o->items;
        }
    }
    n->lo = o->lo;
    memmove(&s->bags[b], &s->bags[b + 1], (s->nb - b - 1) * sizeof *s->bags);
    s->nb--;
    s->merges++;
}

static void clean(sim_cache *c, bag_state *s)
{
    if (s->nb < 3)
        return;
    uint32_t alt = s->nb - 2;
    for (uint32_t b = 0; b < alt; b++) {
        uint32_t i = s->bags[b].items.tail;
        while (i != SIM_NIL) {
            uint32_t newer = c->objs[i].prev;
            uint32_t acc = c->objs[i].aux;
            if (acc > s->bags[b].hi) {
                uint32_t t = bag_of(s, acc);
                if (t == s->nb - 1)
                    t = alt;
                sim_list_unlink(c, &s->bags[b].items, i);
                file_into(c, s, t, i);
                s->moves++;
            }
            i = newer;
        }
    }
    for (uint32_t b = 0; b + 2 < s->nb;) {
        if (s->bags[b].items.count < s->merge && b + 3 <= s->nb)
            merge_into_next(c, s, b);   /* the next bag may itself be below the minimum */
        else
            b++;
    }
}

static void tick(sim_cache *c, bag_state *s)
{
    if (c->now % s->interval)
        return;
    if (s->bags[s->nb - 1].items.count >= s->items)
        add_bag(s);
    if (++s->ticks % s->clean_every == 0)
        clean(c, s);
}

static void bag_hit(sim_cache *c, uint32_t idx, const sim_req *r)
{
    (void)r;
    bag_state *s = c->priv;
    c->objs[idx].aux = s->bags[s->nb - 1].hi;
    tick(c, s);
}

static uint32_t bag_insert(sim_cache *c, const sim_req *r)
{
    bag_state *s = c->priv;
    uint32_t i = sim_obj_alloc(c, r);
    c->objs[i].aux = s->bags[s->nb - 1].hi;
    file_into(c, s, s->nb - 1, i);
    sim_charge(c, i);
    tick(c, s);
    return i;
}

static void bag_remove(sim_cache *c, uint32_t idx)
{
    bag_state *s = c->priv;
    uint32_t b = bag_of(s, (uint32_t)c->objs[idx].prio);
    sim_list_unlink(c, &s->bags[b].items, idx);
    sim_uncharge(c, idx);
    sim_obj_release(c, idx);
}

static void bag_evict(sim_cache *c, const sim_req *r)
{
    (void)r;
    bag_state *s = c->priv;
    for (int round = 0; round < 3; round++) {
        for (uint32_t b = 0; b + 2 < s->nb; b++) {
            bag_t *bg = &s->bags[b];
            while (bg->items.count) {
                uint32_t i = bg->items.tail;
                if (s->lazy && c->objs[i].aux > bg->hi) {
                    uint32_t t = bag_of(s, c->objs[i].aux);
                    if (t == s->nb - 1)
                        t = s->nb - 2;
                    sim_list_unlink(c, &bg->items, i);
                    file_into(c, s, t, i);
                    s->moves++;
                    continue;
                }
                bag_remove(c, i);
                c->evictions++;
                /* an emptied old bag is reclaimed into its newer neighbour */
                if (bg->items.count == 0 && b + 2 < s->nb)
                    merge_into_next(c, s, b);
                return;
            }
        }
        /* nothing before newest_alt: add two new bags and look again */
        add_bag(s);
        add_bag(s);
    }
}

/* exported for unit tests */
void sim_baglru_debug(const sim_cache *c, uint32_t *nbags, uint64_t *rotations, uint64_t *moves,
                     uint64_t *merges)
{
    const bag_state *s = c->priv;
    *nbags = s->nb;
    *rotations = s->rotations;
    *moves = s->moves;
    *merges = s->merges;
}
/* bag index (0 = oldest) holding key's item, or -1 */
int sim_baglru_bag_of_key(const sim_cache *c, uint64_t key)
{
    uint32_t i = sim_find(c, key);
    if (i == SIM_NIL)
        return -1;
    return (int)bag_of(c->priv, (uint32_t)c->objs[i].prio);
}

static int bag_verify(sim_cache *c, char *why, size_t n)
{
    bag_state *s = c->priv;
    uint64_t total = 0;
    for (uint32_t b = 0; b < s->nb; b++) {
        if (sim_list_check(c, &s->bags[b].items, "bag", why, n) < 0)
            return -1;
        if (s->bags[b].lo > s->bags[b].hi || (b && s->bags[b].lo != s->bags[b - 1].hi + 1))
            return snprintf(why, n, "bag ranges not contiguous at %u", b), -1;
        for (uint32_t i = s->bags[b].items.head; i != SIM_NIL; i = c->objs[i].next)
            if (bag_of(s, (uint32_t)c->objs[i].prio) != b || c->objs[i].aux < s->bags[b].lo)
                return snprintf(why, n, "item filed in bag %u has wrong location/access", b), -1;
        total += s->bags[b].items.count;
    }
    return total == c->nresident ? 0 : (snprintf(why, n, "bag total != residents"), -1);
}

const sim_policy_ops sim_policy_baglru = {
    .name = "baglru", .describe = "Bag-LRU (Intel 2012): time-ordered bags, cleaner thread",
    .init = bag_init, .free = bag_free, .hit = bag_hit,
    .insert = bag_insert, .evict = bag_evict, .verify = bag_verify, .remove = bag_remove,
};
