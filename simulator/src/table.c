#include "table.h"

#include <stdlib.h>

static int alloc_slots(sim_table *t, uint32_t bits)
{
    size_t n = (size_t)1 << bits;
    sim_slot *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++)
        s[i].idx = SIM_NIL;
    t->slots = s;
    t->bits = bits;
    t->mask = n - 1;
    return 0;
}

int sim_table_init_direct(sim_table *t, uint64_t n)
{
    t->slots = NULL;
    t->count = 0;
    t->bits = 0;
    t->mask = 0;
    t->direct_n = n;
    t->direct = malloc((n ? n : 1) * sizeof *t->direct);
    if (!t->direct)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        t->direct[i] = SIM_NIL;
    return 0;
}

int sim_table_init(sim_table *t, uint64_t expected)
{
    t->direct = NULL;
    t->direct_n = 0;
    uint32_t bits = 10;
    while (((uint64_t)1 << bits) < expected * 2 && bits < 40)
        bits++;
    t->count = 0;
    return alloc_slots(t, bits);
}

void sim_table_free(sim_table *t)
{
    free(t->direct);
    t->direct = NULL;
    free(t->slots);
    t->slots = NULL;
}

static int grow(sim_table *t)
{
    sim_table old = *t;
    if (alloc_slots(t, old.bits + 1) < 0) {
        *t = old;
        return -1;
    }
    for (uint64_t i = 0; i <= old.mask; i++) {
        if (old.slots[i].idx == SIM_NIL)
            continue;
        uint64_t j = sim_table_hash(t, old.slots[i].key);
        while (t->slots[j].idx != SIM_NIL)
            j = (j + 1) & t->mask;
        t->slots[j] = old.slots[i];
    }
    free(old.slots);
    return 0;
}

int sim_table_put(sim_table *t, uint64_t key, uint32_t idx)
{
    if (t->direct) {
        if (key >= t->direct_n)
            return -1;
        t->count += t->direct[key] == SIM_NIL;
        t->direct[key] = idx;
        return 0;
    }
    /* keep the load at or below 1/2 so probe sequences stay short */
    if ((t->count + 1) * 2 > t->mask + 1 && grow(t) < 0)
        return -1;
    uint64_t i = sim_table_hash(t, key);
    for (;;) {
        sim_slot *s = &t->slots[i];
        if (s->idx == SIM_NIL) {
            s->key = key;
            s->idx = idx;
            t->count++;
            return 0;
        }
        if (s->key == key) {
            s->idx = idx;
            return 0;
        }
        i = (i + 1) & t->mask;
    }
}

int sim_table_remove(sim_table *t, uint64_t key)
{
    if (t->direct) {
        if (key >= t->direct_n || t->direct[key] == SIM_NIL)
            return 0;
        t->direct[key] = SIM_NIL;
        t->count--;
        return 1;
    }
    uint64_t i = sim_table_hash(t, key);
    for (;;) {
        sim_slot *s = &t->slots[i];
        if (s->idx == SIM_NIL)
            return 0;
        if (s->key == key)
            break;
        i = (i + 1) & t->mask;
    }
    /* backward-shift deletion: no tombstones, so lookups never slow down over time */
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        sim_slot *sj = &t->slots[j];
        if (sj->idx == SIM_NIL)
            break;
        uint64_t home = sim_table_hash(t, sj->key);
        /* move sj into the hole at i if its home is not in the cyclic range (i, j] */
        if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
            t->slots[i] = *sj;
            i = j;
        }
    }
    t->slots[i].idx = SIM_NIL;
    t->count--;
    return 1;
}
