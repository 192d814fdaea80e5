/* Key -> uint32 index map used by the cache base and by the exact-LRU reference. */
#ifndef HC_TABLE_H
#define HC_TABLE_H
#include "cache.h"

int hc_table_init(hc_table *t, uint64_t expected);
/* dense mode over ids 0..n-1 */
int hc_table_init_direct(hc_table *t, uint64_t n);
void hc_table_free(hc_table *t);
static inline uint64_t hc_table_hash(const hc_table *t, uint64_t key)
{
    /* keys are usually XXH3 hashes already, but tests use small integers: mix anyway */
    return (key * 0x9E3779B97F4A7C15ull) >> (64 - t->bits);
}
static inline uint32_t hc_table_get(const hc_table *t, uint64_t key)
{
    if (t->direct)
        return key < t->direct_n ? t->direct[key] : HC_NIL;
    uint64_t i = hc_table_hash(t, key);
    for (;;) {
        const hc_slot *s = &t->slots[i];
        if (s->idx == HC_NIL)
            return HC_NIL;
        if (s->key == key)
            return s->idx;
        i = (i + 1) & t->mask;
    }
}
/* Insert or overwrite; returns 0, or -1 on allocation failure. */
int hc_table_put(hc_table *t, uint64_t key, uint32_t idx);
/* Returns 1 if the key was present. */
int hc_table_remove(hc_table *t, uint64_t key);
#endif
