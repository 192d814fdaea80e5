/*
 * memcached 1.6 default slab classes, computed the way slabs_init does: start at
 * sizeof(item) (48) + chunk_size (48) = 96, multiply by the growth factor 1.25 (truncating),
 * align to 8 bytes, stop when the size reaches slab_chunk_max / factor; the last class is
 * slab_chunk_max = page size / 2 = 512 KiB. That yields 39 classes, 96 ... 394840, 524288.
 */
#include "hcsim.h"

#include <pthread.h>

#define MAX_CLASSES 64
#define CHUNK_MAX (SIM_PAGE_SIZE / 2)

static uint32_t chunk[MAX_CLASSES + 1];
static int nclasses;

static void compute_classes(void)
{
    unsigned int size = SIM_ITEM_HEADER + 48;
    const double factor = 1.25;
    int i = 0;
    uint32_t tmp[MAX_CLASSES + 1];
    while (++i < MAX_CLASSES - 1) {
        if (size >= CHUNK_MAX / factor)
            break;
        if (size % 8)
            size += 8 - (size % 8);
        tmp[i] = size;
        size = (unsigned int)(size * factor);
    }
    tmp[i] = CHUNK_MAX;
    for (int k = 1; k <= i; k++)
        chunk[k] = tmp[k];
    nclasses = i;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_classes(void)
{
    pthread_once(&once, compute_classes);
}

int sim_slab_nclasses(void)
{
    init_classes();
    return nclasses;
}

uint32_t sim_slab_chunk(int cls)
{
    init_classes();
    if (cls < 1 || cls > nclasses)
        return 0;
    return chunk[cls];
}

int sim_slab_class_of(uint32_t item_bytes)
{
    init_classes();
    int lo = 1, hi = nclasses;
    if (item_bytes > chunk[hi])
        return nclasses;   /* chunked item: charged in whole largest chunks */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (chunk[mid] >= item_bytes)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

uint64_t sim_slab_charge(uint64_t size)
{
    init_classes();
    uint64_t item = SIM_ITEM_HEADER + size;
    if (item > CHUNK_MAX)
        return (item + CHUNK_MAX - 1) / CHUNK_MAX * CHUNK_MAX;
    return chunk[sim_slab_class_of((uint32_t)item)];
}
