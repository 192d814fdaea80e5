#include "ttl.h"

#include <stdlib.h>
#include <string.h>

static uint64_t norm_key(uint64_t k) { return k ? k : 1; }

int ag_ttl_init(ag_ttl *t, uint64_t max_keys)
{
    memset(t, 0, sizeof *t);
    t->max_keys = max_keys;
    if (max_keys == 0)
        return 0;
    uint64_t n = 1024;
    while (n < max_keys * 2)
        n <<= 1;
    t->keys = calloc(n, sizeof *t->keys);
    t->exp = calloc(n, sizeof *t->exp);
    t->cls = calloc(n, sizeof *t->cls);
    if (!t->keys || !t->exp || !t->cls) {
        ag_ttl_free(t);
        return -1;
    }
    t->mask = n - 1;
    return 0;
}

void ag_ttl_free(ag_ttl *t)
{
    free(t->keys);
    free(t->exp);
    free(t->cls);
    free(t->heap);
    memset(t, 0, sizeof *t);
}

void ag_ttl_clear(ag_ttl *t)
{
    if (t->keys) {
        memset(t->keys, 0, (t->mask + 1) * sizeof *t->keys);
    }
    t->count = 0;
    t->hn = 0;
}

static uint64_t home(const ag_ttl *t, uint64_t k)
{
    return (k * 0x9E3779B97F4A7C15ULL >> 20) & t->mask;
}

void ag_ttl_prefetch(const ag_ttl *t, uint64_t key)
{
    uint64_t i = home(t, norm_key(key));
    __builtin_prefetch(&t->keys[i]);
    __builtin_prefetch(&t->exp[i]);
    __builtin_prefetch(&t->cls[i]);
}

static uint64_t find(const ag_ttl *t, uint64_t k)
{
    uint64_t i = home(t, k);
    while (t->keys[i] && t->keys[i] != k)
        i = (i + 1) & t->mask;
    return i;
}

static void del_at(ag_ttl *t, uint64_t i)
{
    /* backward-shift deletion keeps probe chains intact without tombstones */
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        if (!t->keys[j])
            break;
        uint64_t h = home(t, t->keys[j]);
        /* can the entry at j move to i? yes if h is not cyclically in (i, j] */
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            t->keys[i] = t->keys[j];
            t->exp[i] = t->exp[j];
            t->cls[i] = t->cls[j];
            i = j;
        }
    }
    t->keys[i] = 0;
    t->count--;
}

static void heap_push(ag_ttl *t, ag_ttl_entry e)
{
    if (t->hn == t->hcap) {
        uint64_t nc = t->hcap ? t->hcap * 2 : 1024;
        ag_ttl_entry *nh = realloc(t->heap, nc * sizeof *nh);
        if (!nh)
            return;
        t->heap = nh;
        t->hcap = nc;
    }
    uint64_t i = t->hn++;
    while (i > 0) {
        uint64_t p = (i - 1) / 2;
        if (t->heap[p].expire_us <= e.expire_us)
            break;
        t->heap[i] = t->heap[p];
        i = p;
    }
    t->heap[i] = e;
}

static ag_ttl_entry heap_pop(ag_ttl *t)
{
    ag_ttl_entry top = t->heap[0], last = t->heap[--t->hn];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= t->hn)
            break;
        if (c + 1 < t->hn && t->heap[c + 1].expire_us < t->heap[c].expire_us)
            c++;
        if (t->heap[c].expire_us >= last.expire_us)
            break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (t->hn)
        t->heap[i] = last;
    return top;
}

/* Stale heap entries pile up when keys are re-stored; rebuild from the map when the heap is
 * much bigger than the live set. */
static void compact(ag_ttl *t)
{
    t->hn = 0;
    for (uint64_t i = 0; i <= t->mask; i++)
        if (t->keys[i])
            heap_push(t, (ag_ttl_entry){t->exp[i], t->keys[i], t->cls[i]});
}

int ag_ttl_store(ag_ttl *t, uint64_t key, int clsid, int64_t ts_us, int32_t ttl_s)
{
    if (!t->keys)
        return 0;
    key = norm_key(key);
    uint64_t i = find(t, key);
    int passed = t->keys[i] && t->exp[i] <= ts_us;
    if (ttl_s <= 0) {
        if (t->keys[i])
            del_at(t, i);
        return passed;
    }
    if (!t->keys[i]) {
        if (t->count >= t->max_keys) {
            t->untracked++;
            return 0;
        }
        t->keys[i] = key;
        t->count++;
    }
    int64_t e = ts_us + (int64_t)ttl_s * 1000000;
    t->exp[i] = e;
    t->cls[i] = (int16_t)clsid;
    heap_push(t, (ag_ttl_entry){e, key, (int16_t)clsid});
    if (t->hn > 4 * t->max_keys + 1024)
        compact(t);
    return passed;
}

int ag_ttl_forget(ag_ttl *t, uint64_t key)
{
    if (!t->keys)
        return 0;
    uint64_t i = find(t, norm_key(key));
    if (!t->keys[i])
        return 0;
    del_at(t, i);
    return 1;
}

int ag_ttl_next_expired(ag_ttl *t, int64_t now_us, uint64_t *key, int *clsid)
{
    while (t->hn > 0 && t->heap[0].expire_us <= now_us) {
        ag_ttl_entry e = heap_pop(t);
        uint64_t i = find(t, e.key);
        if (t->keys[i] && t->exp[i] == e.expire_us) {
            *key = e.key;
            *clsid = t->cls[i];
            del_at(t, i);
            t->expired++;
            return 1;
        }
    }
    return 0;
}
