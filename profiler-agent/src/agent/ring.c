#include "ring.h"

#include <stdlib.h>

int ag_ring_init(ag_ring *r, uint32_t size)
{
    uint32_t n = 1024;
    while (n < size && n < (1u << 30))
        n <<= 1;
    r->items = malloc((size_t)n * sizeof *r->items);
    if (!r->items)
        return -1;
    r->mask = n - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->dropped, 0);
    return 0;
}

void ag_ring_free(ag_ring *r)
{
    free(r->items);
    r->items = NULL;
}
