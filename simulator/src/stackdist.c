/*
 * Exact LRU hit counts by Mattson's stack algorithm. Each access at time t to a key last
 * seen at time p has stack distance 1 + (number of distinct keys touched in (p, t)), which a
 * Fenwick tree over "time of each key's latest access" answers in O(log n). An LRU cache of
 * C objects hits exactly the accesses with distance <= C. This shares no code with the LRU
 * policy and is the reference the tests hold it to.
 */
#include "cache.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

int64_t sim_exact_lru_hits(const sim_trace *t, const uint64_t *sizes, int ns, uint64_t *hits_out)
{
    size_t n = t->n;
    int32_t *fen = calloc(n + 2, sizeof *fen);
    uint64_t *hist = calloc(n + 2, sizeof *hist);   /* hist[d] = accesses at distance d */
    sim_table tab;   /* key -> time (1-based) of its latest access */
    if (!fen || !hist || sim_table_init(&tab, 1024) < 0) {
        free(fen);
        free(hist);
        return -1;
    }
    int64_t gets = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t now = (uint32_t)(i + 1);
        uint32_t prev = sim_table_get(&tab, t->keys[i]);
        gets++;
        if (prev != SIM_NIL) {
            /* distinct keys with latest access in (prev, now) = prefix(now-1) - prefix(prev) */
            int64_t s = 0;
            for (uint32_t k = now - 1; k > 0; k -= k & (~k + 1))
                s += fen[k];
            for (uint32_t k = prev; k > 0; k -= k & (~k + 1))
                s -= fen[k];
            hist[s + 1]++;
            for (uint32_t k = prev; k <= n; k += k & (~k + 1))
                fen[k]--;
        }
        for (uint32_t k = now; k <= n; k += k & (~k + 1))
            fen[k]++;
        if (sim_table_put(&tab, t->keys[i], now) < 0) {
            gets = -1;
            break;
        }
    }
    if (gets >= 0) {
        for (size_t d = 1; d <= n; d++)
            hist[d] += hist[d - 1];
        for (int j = 0; j < ns; j++)
            hits_out[j] = hist[sizes[j] < n ? sizes[j] : n];
    }
    free(fen);
    free(hist);
    sim_table_free(&tab);
    return gets;
}
