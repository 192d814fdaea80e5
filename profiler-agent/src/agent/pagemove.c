#include "pagemove.h"

#include <stdio.h>

int ag_page_moves_evict(const char *version)
{
    int maj = 0, min = 0, pat = 0;
    if (!version || sscanf(version, "%d.%d.%d", &maj, &min, &pat) < 2)
        return 1;
    if (maj != 1)
        return maj > 1;
    if (min != 6)
        return min > 6;
    return pat >= 34;
}

uint64_t ag_page_move_evictions(const mc_stats *s0, const mc_stats *s1, int c)
{
    if (c <= 0 || c >= MC_MAX_CLASSES || !ag_page_moves_evict(s1->version))
        return 0;
    const mc_class_stats *a = &s0->cls[c], *b = &s1->cls[c];
    if (!a->present || !b->present || b->evicted <= a->evicted || b->total_pages >= a->total_pages)
        return 0;
    /* chunks per page from the class's own figures (stats slabs total_chunks / total_pages):
     * the slab page size is a setting (-o slab_page_size) and the largest class holds one
     * chunk per page. */
    uint64_t per_page = a->total_pages ? a->total_chunks / a->total_pages : 0;
    uint64_t moved = (a->total_pages - b->total_pages) * per_page;
    uint64_t evicted = b->evicted - a->evicted;
    return moved < evicted ? moved : evicted;
}
