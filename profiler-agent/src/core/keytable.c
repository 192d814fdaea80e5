#include "keytable.h"
#include <stdlib.h>
#include <string.h>

static int alloc_slots(keytable *t, uint64_t nslots)
{
    t->tag = calloc(nslots, sizeof(uint64_t));
    t->act = calloc(nslots, sizeof(uint32_t));
    if (!t->tag || !t->act) { free(t->tag); free(t->act); t->tag = NULL; t->act = NULL; return -1; }
    t->nslots = nslots;
    t->mask = nslots - 1;
    int lg = 0;
    while (((uint64_t)1 << lg) < nslots) lg++;
    t->shift = 64 - lg;
    if (lg == 0) t->shift = 63; /* never used: nslots >= 16 */
    t->count = 0;
    return 0;
}

int kt_init(keytable *t, uint64_t min_keys, uint64_t max_slots)
{
    memset(t, 0, sizeof(*t));
    uint64_t n = 16;
    while (n * KT_LOAD_NUM / KT_LOAD_DEN < min_keys) n <<= 1;
    if (max_slots && n > max_slots) max_slots = n;
    t->max_slots = max_slots;
    return alloc_slots(t, n);
}

void kt_free(keytable *t)
{
    free(t->tag); free(t->act);
    memset(t, 0, sizeof(*t));
}

void kt_clear(keytable *t)
{
    memset(t->tag, 0, t->nslots * sizeof(uint64_t));
    t->count = 0;
}

static void place(keytable *t, uint64_t tag, uint32_t act)
{
    uint64_t i = kt_home(t, tag & ~(uint64_t)0xFF);
    while (t->tag[i]) i = (i + 1) & t->mask;
    t->tag[i] = tag;
    t->act[i] = act;
    t->count++;
}

static int grow(keytable *t)
{
    keytable old = *t;
    if (alloc_slots(t, old.nslots * 2) != 0) { *t = old; return -1; }
    t->max_slots = old.max_slots;
    for (uint64_t i = 0; i < old.nslots; i++)
        if (old.tag[i]) place(t, old.tag[i], old.act[i]);
    free(old.tag); free(old.act);
    return 0;
}

int kt_has_room(const keytable *t)
{
    if ((t->count + 1) * KT_LOAD_DEN <= t->nslots * KT_LOAD_NUM) return 1;
    return !t->max_slots || t->nslots * 2 <= t->max_slots;
}

uint64_t kt_insert(keytable *t, uint64_t h, int cls, uint32_t act)
{
    if ((t->count + 1) * KT_LOAD_DEN > t->nslots * KT_LOAD_NUM) {
        if (t->max_slots && t->nslots * 2 > t->max_slots) return KT_NONE;
        if (grow(t) != 0) return KT_NONE;
    }
    uint64_t id = kt_ident(h);
    uint64_t i = kt_home(t, id);
    while (t->tag[i]) i = (i + 1) & t->mask;
    t->tag[i] = id | (uint64_t)(cls & 0xFF);
    t->act[i] = act;
    t->count++;
    return i;
}

void kt_remove_slot(keytable *t, uint64_t slot)
{
    uint64_t i = slot, j = slot;
    t->tag[i] = 0;
    t->count--;
    for (;;) {
        j = (j + 1) & t->mask;
        if (t->tag[j] == 0) return;
        uint64_t home = kt_home(t, t->tag[j] & ~(uint64_t)0xFF);
        /* move j back to i unless its home lies cyclically in (i, j] */
        int stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        t->tag[i] = t->tag[j];
        t->act[i] = t->act[j];
        t->tag[j] = 0;
        i = j;
    }
}

size_t kt_bytes(const keytable *t)
{
    return (size_t)t->nslots * (sizeof(uint64_t) + sizeof(uint32_t));
}
