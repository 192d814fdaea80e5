/* Key -> uint32 index map used by the cache base and by the exact-LRU reference. */
#ifndef SIM_TABLE_H
#define SIM_TABLE_H
#include "cache.h"

int sim_table_init(sim_table *t, uint64_t expected);
/* dense mode over ids 0..n-1 */
int sim_table_init_direct(sim_table *t, uint64_t n);
void sim_table_free(sim_table *t);
static inline uint64_t sim_table_hash(const sim_table *t, uint64_t key)
{
    /* keys are usually XXH3 hashes already, but tests use small integers: mix anyway */
    return (key * 0x9E3779B97F4A7C15ull) >> (64 - t->bits);
}
static inline uint32_t sim_table_get(const sim_table *t, uint64_t key)
{
    if (t->direct)
        return key < t->direct_n ? t->direct[key] : SIM_NIL;
    uint64_t i = sim_table_hash(t, key);
    for (;;) {
        const sim_slot *s = &t->slots[i];
        if (s->idx == SIM_NIL)
            return SIM_NIL;
        if (s->key == key)
            return s->idx;
        i = (i + 1) & t->mask;
    }
}
/* Insert or overwrite; returns 0, or -1 on allocation failure. */
int sim_table_put(sim_table *t, uint64_t key, uint32_t idx);
/* Returns 1 if the key was present. */
int sim_table_remove(sim_table *t, uint64_t key);
#endif
